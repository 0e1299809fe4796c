"""``ui.live_slider``'s data for the browser: JSON as the component reads it, NaN as null.

The encoder's fast path (JSON's C encoder, numpy values through ``default``) and its slow path (the
spec walked in Python, for a NaN or an infinity) must write the same text; the expected texts here
are written out by hand.
"""

from __future__ import annotations

import json
from types import MappingProxyType

import numpy as np
import pytest

from ui import live_slider


def test_numbers_lists_arrays_and_numpy_scalars_are_written_compactly():
    spec = {"x": [0.5, 1.0, 2.0], "a": np.array([1.5, -2.0]), "n": np.int64(7), "f": np.float32(0.25)}
    assert live_slider._dumps(spec) == '{"x":[0.5,1.0,2.0],"a":[1.5,-2.0],"n":7,"f":0.25}'


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        ({"y": [1.0, float("nan"), 3.0]}, '{"y":[1.0,null,3.0]}'),
        ({"y": np.array([np.inf, 2.0])}, '{"y":[null,2.0]}'),
        ({"v": np.float64(-np.inf), "t": (1, "a")}, '{"v":null,"t":[1,"a"]}'),
        ({"m": MappingProxyType({"k": [float("nan")]})}, '{"m":{"k":[null]}}'),
    ],
)
def test_a_nan_or_an_infinity_is_written_as_null(spec, text):
    assert live_slider._dumps(spec) == text
    json.loads(live_slider._dumps(spec))  # strict JSON: no NaN / Infinity tokens


def test_finite_data_are_not_walked_in_python(monkeypatch):
    """The models' thousands of numbers go straight to the C encoder (the walk is for NaN only)."""

    def walk(_):
        raise AssertionError("finite data walked in Python")

    monkeypatch.setattr(live_slider, "_jsonable", walk)
    spec = {"x": [float(i) for i in range(1000)], "grid": np.linspace(0, 1, 300), "titles": {"t": "h={h}"}}
    assert json.loads(live_slider._dumps(spec))["x"][999] == 999.0
