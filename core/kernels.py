"""Smoothing kernels K(u) for Nadaraya-Watson regression, looked up by name.

Each kernel is a pure, vectorised function of the *scaled distance* ``u = (x - x_i) / h``: it takes
an array of any shape and returns an array of the same shape. All are symmetric (K(-u) = K(u)),
non-negative and normalised (∫ K(u) du = 1), so they are probability densities in u; the
normalising constant cancels in Nadaraya-Watson weights but makes the shapes comparable on one plot.
Definitions follow Wand & Jones, *Kernel Smoothing* (1995), table 2.1, and statsmodels'
``nonparametric/kernels.py`` (its Gaussian is the standard normal pdf, as here).

``KERNELS`` maps a name to K; ``SUPPORT`` maps a name to the support radius r (K(u) = 0 for |u| > r;
``inf`` for the Gaussian). The post (section 2.1) compares uniform, Gaussian and Epanechnikov;
triangular, cosine and tricube are added as the other classic compact kernels, which show that the
shape matters far less than the bandwidth.
"""

from __future__ import annotations

import math
from collections.abc import Callable

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


def epanechnikov(u: np.ndarray) -> np.ndarray:
    """Epanechnikov kernel: 3/4 (1 - u²) for |u| <= 1, else 0. Same shape as ``u``."""
    u = np.asarray(u, dtype=float)
    return np.where(np.abs(u) <= 1.0, 0.75 * (1.0 - u * u), 0.0)


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


#: name -> K(u). The order is the order shown in the app.
KERNELS: dict[str, KernelFn] = {
    "gaussian": gaussian,
    "uniform": uniform,
    "epanechnikov": epanechnikov,
    "triangular": triangular,
    "cosine": cosine,
    "tricube": tricube,
}

#: name -> support radius r: K(u) = 0 whenever |u| > r (``math.inf`` when K is never 0).
SUPPORT: dict[str, float] = {
    "gaussian": math.inf,
    "uniform": 1.0,
    "epanechnikov": 1.0,
    "triangular": 1.0,
    "cosine": 1.0,
    "tricube": 1.0,
}

#: name -> LaTeX formula of K(u), for the page.
FORMULAS: dict[str, str] = {
    "gaussian": r"K(u) = \tfrac{1}{\sqrt{2\pi}}\, e^{-u^2/2}",
    "uniform": r"K(u) = \tfrac12\, \mathbf{1}\{|u| \le 1\}",
    "epanechnikov": r"K(u) = \tfrac34 (1 - u^2)\, \mathbf{1}\{|u| \le 1\}",
    "triangular": r"K(u) = (1 - |u|)\, \mathbf{1}\{|u| \le 1\}",
    "cosine": r"K(u) = \tfrac{\pi}{4} \cos\!\left(\tfrac{\pi u}{2}\right) \mathbf{1}\{|u| \le 1\}",
    "tricube": r"K(u) = \tfrac{70}{81} (1 - |u|^3)^3\, \mathbf{1}\{|u| \le 1\}",
}


def check_kernel(name: object) -> str:
    """Return ``name`` if it is a known kernel.

    Raises:
        ValueError: if ``name`` is not a key of ``KERNELS`` (the message lists the known ones).
    """
    if not isinstance(name, str) or name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; known kernels: {', '.join(KERNELS)}")
    return name


def get_kernel(name: str) -> KernelFn:
    """The kernel function K for ``name``.

    Raises:
        ValueError: on an unknown name (the message lists the known ones).
    """
    return KERNELS[check_kernel(name)]


def support_radius(name: str) -> float:
    """Support radius r of kernel ``name`` in units of u (``inf`` for the Gaussian).

    Raises:
        ValueError: on an unknown name.
    """
    return SUPPORT[check_kernel(name)]
