"""Smoothing kernels K(u) for Nadaraya-Watson regression: one registry of frozen records.

Each kernel is a pure, vectorised function of the *scaled distance* ``u = (x - x_i) / h``: it takes
an array of any shape and returns an array of the same shape. All are symmetric (K(-u) = K(u)),
non-negative and normalised (∫ K(u) du = 1), so they are probability densities in u; the
normalising constant cancels in Nadaraya-Watson weights but makes the shapes comparable on one plot.
Definitions follow Wand & Jones, *Kernel Smoothing* (1995), table 2.1, and statsmodels'
``nonparametric/kernels.py`` (its Gaussian is the standard normal pdf, as here).

``REGISTRY`` holds one :class:`Kernel` per kernel: its function, its support, its formula and the
properties the regression code branches on (never on the name):

* ``support``: the radius r with K(u) = 0 for |u| > r, or ``inf`` when K never vanishes;
* ``log_power``: p for the kernels of the form K(u) ∝ exp(-|u|^p / p) (Gaussian p = 2, Laplace
  p = 1), whose weights are a softmax of log-weights and are computed as a stable softmax
  (:func:`softmax_weights`); every kernel with infinite support must have one;
* ``piecewise_constant``: K takes finitely many values (the box), so the leave-one-out error is a
  step function of h.

The post (section 2.1) compares uniform, Gaussian and Epanechnikov; triangular, biweight, cosine and
tricube are added as the other classic compact kernels, which show that the shape matters far less
than the bandwidth, and Laplace as a second kernel that never vanishes, with heavier tails than the
Gaussian. ``KERNELS``, ``SUPPORT`` and ``FORMULAS`` are read-only views of the registry by name.

The shared Gaussian-weights helper lives here too: :func:`gaussian_weights` (softmax of
-d²/(2h²) over the keys) on top of :func:`softmax_weights`, used by ``core.nadaraya_watson``,
``core.kernel_attention`` and ``core.in_context``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

import numpy as np

KernelFn = Callable[[np.ndarray], np.ndarray]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def uniform(u: np.ndarray) -> np.ndarray:
    """Uniform (box) kernel: 1/2 for |u| <= 1, else 0. Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    return np.where(np.abs(u) <= 1.0, 0.5, 0.0)


def gaussian(u: np.ndarray) -> np.ndarray:
    """Gaussian kernel: the standard normal density exp(-u²/2) / √(2π). Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    return np.exp(-0.5 * u * u) / _SQRT_2PI


def laplace(u: np.ndarray) -> np.ndarray:
    """Laplace (double exponential) kernel: exp(-|u|) / 2, never 0. Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    return 0.5 * np.exp(-np.abs(u))


def epanechnikov(u: np.ndarray) -> np.ndarray:
    """Epanechnikov kernel: 3/4 (1 - u²) for |u| <= 1, else 0. Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    return np.where(np.abs(u) <= 1.0, 0.75 * (1.0 - u * u), 0.0)


def biweight(u: np.ndarray) -> np.ndarray:
    """Biweight (quartic) kernel: 15/16 (1 - u²)² for |u| <= 1, else 0. Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    inside = 1.0 - u * u
    return np.where(np.abs(u) <= 1.0, (15.0 / 16.0) * inside * inside, 0.0)


def triangular(u: np.ndarray) -> np.ndarray:
    """Triangular kernel: 1 - |u| for |u| <= 1, else 0. Same shape as ``u``."""
    a = np.abs(np.asarray(u, dtype=float))
    return np.where(a <= 1.0, 1.0 - a, 0.0)


def cosine(u: np.ndarray) -> np.ndarray:
    """Cosine kernel: π/4 cos(πu/2) for |u| <= 1, else 0. Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    return np.where(np.abs(u) <= 1.0, (math.pi / 4.0) * np.cos(0.5 * math.pi * u), 0.0)


def tricube(u: np.ndarray) -> np.ndarray:
    """Tricube kernel: 70/81 (1 - |u|³)³ for |u| <= 1, else 0 (as in LOESS). Same shape as ``u``."""
    a = np.abs(np.asarray(u, dtype=float))
    inside = np.clip(1.0 - a**3, 0.0, None)
    return np.where(a <= 1.0, (70.0 / 81.0) * inside**3, 0.0)


def power_of_abs(d: np.ndarray, p: float, *, overwrite: bool = False) -> np.ndarray:
    """|d|^p elementwise, same shape as ``d``; p = 1 and p = 2 without ``pow`` (several times faster).

    With ``overwrite`` the result is written into ``d`` (a float array the caller owns).
    """
    if p == 2.0:
        return np.multiply(d, d, out=d if overwrite else None)
    a = np.abs(d, out=d if overwrite else None)
    if p != 1.0:
        np.power(a, p, out=a)
    return a


@dataclass(frozen=True)
class Kernel:
    """One smoothing kernel and the properties regression code asks it for.

    Raises ValueError (in ``__post_init__``) on an inconsistent record: a kernel with infinite
    support needs ``log_power`` (regression code could not limit its window otherwise), a kernel with
    ``log_power`` never vanishes, and only a compact kernel can be piecewise constant.
    """

    name: str  # the id in URLs (?kr_kernel=<name>) and catalogues (kr.kernel_<name>)
    fn: KernelFn  # K(u): a density in u, vectorised, same shape out as in
    support: float  # r: K(u) = 0 for |u| > r; math.inf when K is never 0
    formula: str  # LaTeX of K(u), for the page
    log_power: float | None = None  # p when K(u) ∝ exp(-|u|^p / p) (Gaussian 2, Laplace 1): the
    # weights are then a softmax of -|x - x_i|^p / (p h^p); None for a compact kernel
    piecewise_constant: bool = False  # K takes finitely many values (the box): CV(h) is a step
    # function of h that only changes where h equals a pairwise distance

    def __post_init__(self) -> None:
        if not self.support > 0:
            raise ValueError(f"kernel {self.name!r}: support must be > 0, got {self.support}")
        if math.isinf(self.support) != (self.log_power is not None):
            raise ValueError(
                f"kernel {self.name!r}: a kernel has a log_power exactly when its support is infinite"
            )
        if self.log_power is not None and not self.log_power > 0:
            raise ValueError(f"kernel {self.name!r}: log_power must be > 0, got {self.log_power}")
        if self.piecewise_constant and math.isinf(self.support):
            raise ValueError(f"kernel {self.name!r}: only a compact kernel can be piecewise constant")

    @property
    def compact(self) -> bool:
        """Whether K(u) = 0 beyond a finite radius (the fit can be undefined: 0/0)."""
        return math.isfinite(self.support)

    @property
    def log_fn(self) -> KernelFn | None:
        """u -> log K(u) up to an additive constant (-|u|^p / p), or None for a compact kernel."""
        return None if self.log_power is None else partial(self.log_weights, h=1.0)

    def log_weights(self, d: np.ndarray, h: float, *, overwrite: bool = False) -> np.ndarray:
        """log K(d / h) up to an additive constant: -|d|^p / (p h^p), same shape as ``d``.

        Args:
            d: differences x - x_i, any shape (overwritten with ``overwrite``).
            h: bandwidth > 0.

        Raises:
            ValueError: for a compact kernel (its log-weight is -inf outside the support).
        """
        p = self.log_power
        if p is None:
            raise ValueError(f"kernel {self.name!r} is compact: it has no log-weight everywhere")
        out = power_of_abs(np.asarray(d, dtype=float), p, overwrite=overwrite)
        out *= -1.0 / (p * h**p)
        return out


#: Every kernel, in the order shown in the app (the first is the default).
REGISTRY: tuple[Kernel, ...] = (
    Kernel("gaussian", gaussian, math.inf, r"K(u) = \tfrac{1}{\sqrt{2\pi}}\, e^{-u^2/2}", log_power=2.0),
    Kernel("laplace", laplace, math.inf, r"K(u) = \tfrac12\, e^{-|u|}", log_power=1.0),
    Kernel("uniform", uniform, 1.0, r"K(u) = \tfrac12\, \mathbf{1}\{|u| \le 1\}", piecewise_constant=True),
    Kernel("epanechnikov", epanechnikov, 1.0, r"K(u) = \tfrac34 (1 - u^2)\, \mathbf{1}\{|u| \le 1\}"),
    Kernel("biweight", biweight, 1.0, r"K(u) = \tfrac{15}{16} (1 - u^2)^2\, \mathbf{1}\{|u| \le 1\}"),
    Kernel("triangular", triangular, 1.0, r"K(u) = (1 - |u|)\, \mathbf{1}\{|u| \le 1\}"),
    Kernel(
        "cosine",
        cosine,
        1.0,
        r"K(u) = \tfrac{\pi}{4} \cos\!\left(\tfrac{\pi u}{2}\right) \mathbf{1}\{|u| \le 1\}",
    ),
    Kernel("tricube", tricube, 1.0, r"K(u) = \tfrac{70}{81} (1 - |u|^3)^3\, \mathbf{1}\{|u| \le 1\}"),
)

_BY_NAME: Mapping[str, Kernel] = MappingProxyType({k.name: k for k in REGISTRY})
#: Kernel names in registry order.
NAMES: tuple[str, ...] = tuple(_BY_NAME)
#: Read-only views of the registry by name: K(u), support radius, LaTeX formula.
KERNELS: Mapping[str, KernelFn] = MappingProxyType({k.name: k.fn for k in REGISTRY})
SUPPORT: Mapping[str, float] = MappingProxyType({k.name: k.support for k in REGISTRY})
FORMULAS: Mapping[str, str] = MappingProxyType({k.name: k.formula for k in REGISTRY})


def check_kernel(name: object) -> str:
    """Return ``name`` if it is a known kernel.

    Raises:
        ValueError: if ``name`` is not the name of a registered kernel (the message lists them).
    """
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ValueError(f"unknown kernel {name!r}; known kernels: {', '.join(NAMES)}")
    return name


def get_kernel(name: str) -> Kernel:
    """The registry record of kernel ``name``.

    Raises:
        ValueError: on an unknown name (the message lists the known ones).
    """
    return _BY_NAME[check_kernel(name)]


def support_radius(name: str) -> float:
    """Support radius r of kernel ``name`` in units of u (``inf`` for Gaussian and Laplace).

    Raises:
        ValueError: on an unknown name.
    """
    return get_kernel(name).support


# ----------------------------------------------------------------------------------------------
# stable softmax weights: the one Gaussian-weights helper
# ----------------------------------------------------------------------------------------------


def softmax_weights(
    log_k: np.ndarray, *, normalise: bool = True, shift: bool = True, overwrite: bool = False
) -> np.ndarray:
    """Kernel weights from log-kernel values, along the last axis (the keys): (..., S) -> (..., S).

    exp(log_k - each row's max), divided by the row sum when ``normalise``: a stable softmax. The
    largest weight of a row is exp(0) = 1, so a row never underflows to 0/0 however narrow the
    kernel (the fit tends to the nearest sample's value instead of NaN).

    Args:
        log_k: (..., S) log-weights; -inf gives a weight of exactly 0 (a masked key). A row must
            have a finite maximum.
        normalise: divide by the row sums (rows sum to 1); False leaves the shifted kernel values
            (row maximum 1), for callers that divide later (Σ k y / Σ k).
        shift: subtract each row's maximum; False when the caller has already shifted every row
            so that its maximum is 0 (done once for many bandwidths).
        overwrite: work in ``log_k``'s memory (a float64 array the caller no longer needs).

    Returns:
        (..., S) weights, float64.
    """
    z = np.asarray(log_k, dtype=np.float64)
    if shift:
        top = z.max(axis=-1, keepdims=True)  # (..., 1)
        z = np.subtract(z, top, out=z if overwrite else None)
    z = np.exp(z, out=z if (overwrite or shift) else None)
    if normalise:
        z /= z.sum(axis=-1, keepdims=True)
    return z


def gaussian_weights(
    sq_dist: np.ndarray, h: float | np.ndarray, *, normalise: bool = True, shift: bool = True
) -> np.ndarray:
    """Gaussian Nadaraya-Watson weights softmax_i(-d²_i / (2h²)) over the keys: (..., S) -> (..., S).

    Args:
        sq_dist: (..., S) squared distances |x - x_i|² from each query to every key (+inf: a key
            left out, weight 0).
        h: bandwidth > 0, a float or an array broadcasting against ``sq_dist`` (one per row);
            ``inf`` gives equal weights (the plain mean).
        normalise, shift: as in :func:`softmax_weights`.

    Returns:
        (..., S) weights (rows sum to 1 when ``normalise``).
    """
    scale = -0.5 / np.square(h)  # -1/(2h²); -0.0 for h = inf
    return softmax_weights(np.multiply(sq_dist, scale), normalise=normalise, shift=shift, overwrite=True)
