"""The post's claims about kernel regression, measured on its own data; the loop-vs-matrix timing.

Section 4.1 of the post says leave-one-out CV picks h in [0.2, 0.4]; section 2.4 plots h = 0.3 and
says the uniform kernel is jagged where the Gaussian is smooth; section 3 computes the fit with a
Python loop over query points. Each function here returns the numbers behind one claim as a frozen
dataclass; the kernel-regression page turns them into sentences.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.data import X_HIGH, X_LOW, post_data
from core.kernels import KERNELS
from core.nadaraya_watson import (
    count_turning_points,
    loo_cv_errors,
    nw_predict,
    nw_predict_loop,
    select_bandwidth,
)

#: The post's claim: LOO-CV picks h in [0.2, 0.4] (section 4.1).
POST_CLAIM = (0.2, 0.4)
#: The bandwidth the post plots with (section 2.4).
POST_H = 0.3
#: The bandwidths of the post's sweep ("from 0.1 to 2.0").
SWEEP = (0.1, 0.3, 1.0, 2.0)
#: Points of the fitted curve, as in the post (``np.linspace(-3, 3, 500)``).
FIT_POINTS = 500


@dataclass(frozen=True)
class SweepPoint:
    """One bandwidth of the sweep: its fit's turning points and its CV error (Gaussian)."""

    h: float
    turning_points: int
    cv: float


@dataclass(frozen=True)
class PostClaims:
    """The numbers behind the post's claims, on its data (200 points, sinc, noise 0.1, seed 42).

    Attributes:
        best: kernel name -> (h*, CV(h*)) from leave-one-out CV, for every kernel of ``KERNELS``.
        claim_cv: (h, CV(h)) of the Gaussian at the claim's ends and at ``POST_H``.
        truth_turning_points: local extrema of the true curve on [-3, 3].
        turning_points_at_post_h: kernel -> local extrema of the fit at h = ``POST_H`` (uniform,
            Gaussian).
        sweep: the Gaussian fit at each h of ``SWEEP``.
    """

    best: dict[str, tuple[float, float]]
    claim_cv: tuple[tuple[float, float], ...]
    truth_turning_points: int
    turning_points_at_post_h: dict[str, int]
    sweep: tuple[SweepPoint, ...]

    def in_claimed_range(self, kernel: str) -> bool:
        """Whether the kernel's h* lies in the post's range [0.2, 0.4]."""
        return in_post_range(self.best[kernel][0])


def in_post_range(h: float) -> bool:
    """Whether h lies in the post's claimed range [0.2, 0.4]."""
    return POST_CLAIM[0] <= h <= POST_CLAIM[1]


def _cv(x: np.ndarray, y: np.ndarray, kernel: str, h: float) -> float:
    return float(loo_cv_errors(x, y, kernel, np.array([h]))[0])


def _turning_points(d, grid: np.ndarray, kernel: str, h: float) -> int:
    return count_turning_points(nw_predict(d.x, d.y, grid, kernel, h))


def post_claims() -> PostClaims:
    """Measure every claim on the post's own data (about 0.3 s)."""
    d = post_data()
    grid = np.linspace(X_LOW, X_HIGH, FIT_POINTS)
    best = {}
    for name in KERNELS:
        h = select_bandwidth(d.x, d.y, name)
        best[name] = (h, _cv(d.x, d.y, name, h))
    return PostClaims(
        best=best,
        claim_cv=tuple((h, _cv(d.x, d.y, "gaussian", h)) for h in (POST_CLAIM[0], POST_H, POST_CLAIM[1])),
        truth_turning_points=count_turning_points(d.truth(grid)),
        turning_points_at_post_h={k: _turning_points(d, grid, k, POST_H) for k in ("uniform", "gaussian")},
        sweep=tuple(
            SweepPoint(h, _turning_points(d, grid, "gaussian", h), _cv(d.x, d.y, "gaussian", h))
            for h in SWEEP
        ),
    )


@dataclass(frozen=True)
class LoopTiming:
    """The post's per-point loop against the vectorised ``nw_predict`` on the same data.

    Attributes:
        loop_s, vector_s: seconds per call (best of the repeats).
        max_diff: largest difference where both are defined (NaN if nowhere).
        loop_nan, vector_nan: grid points left undefined by each.
        points, samples: grid points Q and samples N.
    """

    loop_s: float
    vector_s: float
    max_diff: float
    loop_nan: int
    vector_nan: int
    points: int
    samples: int

    @property
    def speedup(self) -> float:
        return self.loop_s / self.vector_s if self.vector_s > 0 else math.inf


def time_loop_vs_matrix(
    x: np.ndarray, y: np.ndarray, grid: np.ndarray, h: float, repeat: int = 3
) -> LoopTiming:
    """Time the post's loop and ``nw_predict`` (Gaussian) on x, y: (N,) and grid: (Q,).

    Raises:
        ValueError: if repeat < 1 (and whatever the two estimators raise on bad data).
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")

    def best(fn: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
        times, out = [], None
        for _ in range(repeat):
            start = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - start)
        return min(times), out

    t_loop, loop = best(lambda: nw_predict_loop(x, y, grid, h))
    t_vec, vec = best(lambda: nw_predict(x, y, grid, "gaussian", h))
    both = ~np.isnan(loop) & ~np.isnan(vec)
    return LoopTiming(
        loop_s=t_loop,
        vector_s=t_vec,
        max_diff=float(np.max(np.abs(loop[both] - vec[both]))) if both.any() else math.nan,
        loop_nan=int(np.isnan(loop).sum()),
        vector_nan=int(np.isnan(vec).sum()),
        points=int(grid.size),
        samples=int(x.size),
    )
