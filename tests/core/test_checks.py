"""core.checks: the shared input checks accept what they promise and refuse the rest by name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core import checks


def test_as_1d_and_as_2d_return_float64_copies_of_good_input():
    a = checks.as_1d("x", [1, 2, 3])
    assert a.dtype == np.float64
    assert a.tolist() == [1.0, 2.0, 3.0]
    b = checks.as_2d("q", np.ones((2, 3), dtype=np.float32))
    assert b.dtype == np.float64
    assert b.shape == (2, 3)


@pytest.mark.parametrize(
    ("fn", "value", "match"),
    [
        (checks.as_1d, ["a", "b"], "x must be an array of real numbers"),
        (checks.as_1d, np.ones((2, 2)), "x must be 1-D"),
        (checks.as_1d, 3.0, "x must be 1-D"),
        (checks.as_1d, [], "x is empty"),
        (checks.as_1d, [0.0, math.nan], "x contains NaN or inf"),
        (checks.as_1d, [0.0, -math.inf], "x contains NaN or inf"),
        (checks.as_2d, [1.0, 2.0], r"x must be a non-empty 2-D array \(n, D\)"),
        (checks.as_2d, np.ones((0, 2)), "non-empty 2-D"),
        (checks.as_2d, [[1.0, math.inf]], "x contains NaN or inf"),
        (checks.as_2d, [["a"]], "x must be an array of real numbers"),
    ],
)
def test_array_checks_refuse_by_name(fn, value, match):
    with pytest.raises(ValueError, match=match):
        fn("x", value)


def test_scalar_checks_accept_python_and_numpy_numbers():
    assert checks.positive("h", 2) == 2.0
    assert checks.positive("h", np.float32(0.5)) == 0.5
    assert checks.finite("x0", -3) == -3.0
    assert checks.finite("x0", np.float64(1.5)) == 1.5
    assert checks.int_in("n", np.int64(3), 1, 3) == 3
    assert type(checks.int_in("n", np.int64(3), 1, 3)) is int
    assert checks.seed(0) == 0
    assert checks.is_real(np.float32(1.0))
    assert not checks.is_real(True)
    assert not checks.is_real(math.nan)
    assert not checks.is_real("1")
    assert checks.is_int(np.int8(1))
    assert not checks.is_int(True)
    assert not checks.is_int(1.0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: checks.positive("bandwidth", 0.0), "bandwidth must be finite and > 0"),
        (lambda: checks.positive("bandwidth", -1), "bandwidth must be finite and > 0"),
        (lambda: checks.positive("bandwidth", math.inf), "bandwidth must be finite and > 0"),
        (lambda: checks.positive("bandwidth", math.nan), "bandwidth must be finite and > 0"),
        (lambda: checks.positive("bandwidth", True), "bandwidth must be a real number"),
        (lambda: checks.positive("bandwidth", "0.3"), "bandwidth must be a real number"),
        (lambda: checks.positive("bandwidth", [0.3]), "bandwidth must be a real number"),
        (lambda: checks.finite("x0", math.inf), "x0 must be finite"),
        (lambda: checks.finite("x0", None), "x0 must be a real number"),
        (lambda: checks.int_in("n", 0, 1, 5), r"n must be an integer in 1\.\.5"),
        (lambda: checks.int_in("n", 6, 1, 5), r"n must be an integer in 1\.\.5"),
        (lambda: checks.int_in("n", 2.0, 1, 5), "n must be an integer"),
        (lambda: checks.int_in("n", True, 1, 5), "n must be an integer"),
        (lambda: checks.seed(-1), "seed must be an integer >= 0"),
        (lambda: checks.seed(False), "seed must be an integer >= 0"),
        (lambda: checks.seed(1.5), "seed must be an integer >= 0"),
    ],
)
def test_scalar_checks_refuse_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()
