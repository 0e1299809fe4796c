"""Synthetic 1-D regression data: y = f(x) + noise · N(0, 1), x uniform on [-3, 3].

The default is exactly the post's data set (section 2.4)::

    rng = np.random.default_rng(42)
    X = np.sort(rng.uniform(-3, 3, 200))
    y = np.sinc(X) + 0.1 * rng.normal(0, 1, 200)

(``np.sinc`` is the normalised sinc, sin(πx)/(πx).) The other targets show what a single global
bandwidth struggles with: a jump (step), a kink (vee), a frequency that grows with |x| (chirp).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

#: The interval the inputs are drawn from (the post's [-3, 3]).
X_LOW, X_HIGH = -3.0, 3.0
#: Largest sample count make_data accepts (the page caps lower).
MAX_N = 1_000_000


def sine(x: np.ndarray) -> np.ndarray:
    """sin(x): one smooth wave over [-3, 3]."""
    return np.sin(x)


def step(x: np.ndarray) -> np.ndarray:
    """A jump from -0.5 to 0.5 at x = 0: every kernel smears it over about one bandwidth."""
    return np.where(x < 0.0, -0.5, 0.5)


def vee(x: np.ndarray) -> np.ndarray:
    """|x| / 3: a kink at 0 that a large bandwidth rounds off, and a bias at the edges."""
    return np.abs(x) / 3.0


def chirp(x: np.ndarray) -> np.ndarray:
    """sin(x²): slow near 0, fast near ±3, so no single bandwidth suits the whole curve."""
    return np.sin(x * x)


#: target id -> true function f. ``sinc`` (numpy's normalised sinc) is the post's.
TARGETS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sinc": np.sinc,
    "sine": sine,
    "step": step,
    "vee": vee,
    "chirp": chirp,
}


@dataclass(frozen=True)
class Dataset:
    """A synthetic data set and the function it was drawn from.

    Attributes:
        x: (N,) inputs, sorted ascending, in [-3, 3].
        y: (N,) noisy outputs f(x) + noise · N(0, 1).
        target: the id of f in ``TARGETS``.
        noise: the standard deviation of the added noise.
    """

    x: np.ndarray
    y: np.ndarray
    target: str
    noise: float

    def truth(self, x: np.ndarray) -> np.ndarray:
        """The noiseless f(x), same shape as ``x`` (to draw the true curve)."""
        return TARGETS[self.target](np.asarray(x, dtype=float))


def make_data(n: int = 200, noise: float = 0.1, seed: int = 42, target: str = "sinc") -> Dataset:
    """Draw n points x ~ U[-3, 3] (sorted) and y = f(x) + noise · N(0, 1), like the post.

    With the defaults this is bit-for-bit the post's data set: the random numbers are drawn in the
    post's order from ``np.random.default_rng(seed)``.

    Args:
        n: number of samples N, 1 <= n <= ``MAX_N``.
        noise: standard deviation of the Gaussian noise, >= 0 (in units of y).
        seed: seed of ``np.random.default_rng``, >= 0.
        target: a key of ``TARGETS``.

    Returns:
        A :class:`Dataset` with x, y of shape (N,).

    Raises:
        ValueError: on an unknown target, n outside [1, MAX_N], a negative or non-finite noise, or
            a negative or non-integer seed.
    """
    if not isinstance(target, str) or target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; known targets: {', '.join(TARGETS)}")
    if isinstance(n, bool) or not isinstance(n, Integral) or not 1 <= n <= MAX_N:
        raise ValueError(f"n must be an integer between 1 and {MAX_N}, got {n!r}")
    if isinstance(noise, bool) or not isinstance(noise, Real) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    n = int(n)
    rng = np.random.default_rng(int(seed))
    x = np.sort(rng.uniform(X_LOW, X_HIGH, n))
    y = TARGETS[target](x) + float(noise) * rng.normal(0, 1, n)
    return Dataset(x=x, y=y, target=target, noise=float(noise))


def post_data() -> Dataset:
    """The post's own data set: 200 points, sinc, noise 0.1, seed 42."""
    return make_data(n=200, noise=0.1, seed=42, target="sinc")
