"""Input checks shared by the ``core`` modules: one definition of each, one wording of each message.

Every check either returns the value in the type the caller computes with (a float64 array, a
float, an int) or raises ``ValueError`` whose message starts with the argument's name, so a page can
show it as it is and a test can match on the name. Booleans are refused wherever a number is
expected (``True`` is an ``int`` in Python, never a meaningful bandwidth or count).

Shapes: :func:`as_1d` returns (N,), :func:`as_2d` returns (N, D).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def _as_float_array(name: str, a: object) -> np.ndarray:
    try:
        return np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of real numbers") from err


def as_1d(name: str, a: object) -> np.ndarray:
    """``a`` as a non-empty, finite float64 array of shape (N,).

    Raises:
        ValueError: "``name`` must be an array of real numbers", "must be 1-D", "is empty" or
            "contains NaN or inf".
    """
    arr = _as_float_array(name, a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def as_2d(name: str, a: object) -> np.ndarray:
    """``a`` as a non-empty, finite float64 array of shape (N, D), N >= 1 and D >= 1.

    Raises:
        ValueError: "``name`` must be an array of real numbers", "must be a non-empty 2-D array
            (n, D)" or "contains NaN or inf".
    """
    arr = _as_float_array(name, a)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (n, D), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def is_real(value: object) -> bool:
    """Whether ``value`` is a finite real number (Python or numpy scalar), not a bool."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer (Python or numpy scalar), not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def finite(name: str, value: object) -> float:
    """``value`` as a float, if it is a finite real number.

    Raises:
        ValueError: "``name`` must be a real number" (not a number, or a bool) or "must be finite".
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def positive(name: str, value: object) -> float:
    """``value`` as a float, if it is a finite real number > 0 (a bandwidth, a temperature, a rate).

    Raises:
        ValueError: "``name`` must be a real number" (not a number, or a bool) or "must be finite
            and > 0".
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def int_in(name: str, value: object, low: int, high: int) -> int:
    """``value`` as an int, if it is an integer in ``low..high`` (both included).

    Raises:
        ValueError: "``name`` must be an integer in low..high".
    """
    if not is_int(value) or not low <= value <= high:  # type: ignore[operator]
        raise ValueError(f"{name} must be an integer in {low}..{high}, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def seed(value: object) -> int:
    """``value`` as an int, if it is an integer >= 0 (a random seed).

    Raises:
        ValueError: "seed must be an integer >= 0".
    """
    if not is_int(value) or value < 0:  # type: ignore[operator]
        raise ValueError(f"seed must be an integer >= 0, got {value!r}")
    return int(value)  # type: ignore[call-overload]
