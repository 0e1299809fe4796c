"""The kernel regression lesson: the post's claims measured on its own data, the loop-vs-matrix
timing, and what the page computes around its fit (data, query row, grids).

Section 4.1 of the post says leave-one-out CV picks h in [0.2, 0.4]; section 2.4 plots h = 0.3 and
says the uniform kernel is jagged where the Gaussian is smooth; section 3 computes the fit with a
Python loop over query points. :func:`post_claims` and :func:`time_loop_vs_matrix` return the
numbers behind those claims as frozen dataclasses; the kernel-regression page turns them into
sentences. The rest is the page's arithmetic on the current data: the data set and its fit grid
(:class:`PageData`), the weights of one query (:class:`QueryRow`), the bandwidth at h* and the
query grids of the figures.

Shapes: x, y (N,) sorted by x; grids (Q,); weights (Q, N), rows = query points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.csv_data import CsvError, parse_xy_csv
from core.data import X_HIGH, X_LOW, make_data, post_data
from core.kernels import KERNELS
from core.nadaraya_watson import (
    count_turning_points,
    loo_cv_errors,
    nw_predict,
    nw_predict_loop,
    nw_weights,
    select_bandwidth,
)
from core.timing import best_of

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
        return POST_CLAIM[0] <= self.best[kernel][0] <= POST_CLAIM[1]


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
    x: np.ndarray, y: np.ndarray, grid: np.ndarray, bandwidth: float, repeat: int = 3
) -> LoopTiming:
    """Time the post's loop and ``nw_predict`` (Gaussian, h = ``bandwidth``) on x, y: (N,) and grid: (Q,).

    Raises:
        ValueError: if repeat < 1 (and whatever the two estimators raise on bad data).
    """
    t_loop, loop = best_of(lambda: nw_predict_loop(x, y, grid, bandwidth), repeat)
    t_vec, vec = best_of(lambda: nw_predict(x, y, grid, "gaussian", bandwidth), repeat)
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


# ----------------------------------------------------------------------------------------------
# the page's data and the arithmetic around its fit
# ----------------------------------------------------------------------------------------------

#: Query rows of the weight-matrix heatmap.
HEATMAP_QUERIES = 60
#: Where the kernel shapes are drawn: u in [-3, 3].
KERNEL_U = np.linspace(-3, 3, 601)


@dataclass(frozen=True)
class PageData:
    """What the page fits: x, y (N,) sorted by x, the truth on the fit grid (or None), and scale."""

    x: np.ndarray
    y: np.ndarray
    grid: np.ndarray  # (FIT_POINTS,) where the fit is drawn
    truth: np.ndarray | None  # (FIT_POINTS,) the noiseless target, None for uploaded data
    scale: float  # spread / 6: 1 for built-in data
    uploaded: bool


def synthetic_data(n: int, noise: float, seed: int, target: str) -> PageData:
    """The built-in data set (``core.data.make_data``) with its true curve on the post's grid.

    Raises:
        ValueError: on bad sizes, noise, seed or target (from ``make_data``).
    """
    d = make_data(n=n, noise=noise, seed=seed, target=target)
    grid = np.linspace(X_LOW, X_HIGH, FIT_POINTS)
    return PageData(x=d.x, y=d.y, grid=grid, truth=d.truth(grid), scale=1.0, uploaded=False)


def uploaded_data(content: bytes, max_rows: int) -> PageData:
    """An uploaded CSV as page data, its fit grid spanning its x range.

    Raises:
        CsvError: (a ValueError) on a bad file (``core.csv_data.parse_xy_csv``), including a file
            whose x values are all equal (code ``no_spread``).
    """
    x, y = parse_xy_csv(content, max_rows=max_rows)
    spread = float(x[-1] - x[0])
    if spread <= 0:
        raise CsvError("no_spread", "all x values are equal")
    grid = np.linspace(x[0], x[-1], FIT_POINTS)
    return PageData(x=x, y=y, grid=grid, truth=None, scale=spread / 6.0, uploaded=True)


def snap(value: float, grid: list[float]) -> float:
    """The grid value nearest to ``value`` on a log scale (values and grid > 0)."""
    logs = np.log(np.asarray(grid))
    return grid[int(np.argmin(np.abs(logs - math.log(value))))]


def best_bandwidth(x: np.ndarray, y: np.ndarray, kernel: str) -> tuple[float, float]:
    """(h*, CV(h*)): the leave-one-out bandwidth (``select_bandwidth``) and its CV error.

    Raises:
        ValueError: on bad data or an unknown kernel.
    """
    h = select_bandwidth(x, y, kernel=kernel)
    return h, float(loo_cv_errors(x, y, kernel=kernel, bandwidths=np.array([h]))[0])


@dataclass(frozen=True)
class QueryRow:
    """One query's weights over the samples (N,), its estimate (NaN: undefined) and how many
    samples carry more than 0.1% of the largest weight."""

    weights: np.ndarray
    y_hat: float
    active: int


def query_row(x: np.ndarray, y: np.ndarray, xq: float, kernel: str, bandwidth: float) -> QueryRow:
    """The row of the attention map for the query x*: weights (N,), estimate, active samples.

    Raises:
        ValueError: on bad data, an unknown kernel or a bad bandwidth.
    """
    q = np.array([xq])
    row = nw_weights(x, q, kernel=kernel, bandwidth=bandwidth)[0]
    y_hat = float(nw_predict(x, y, q, kernel=kernel, bandwidth=bandwidth)[0])
    active = 0 if math.isnan(y_hat) else int(np.count_nonzero(row > 1e-3 * np.nanmax(row)))
    return QueryRow(row, y_hat, active)


def nearest_row(queries: np.ndarray, xq: float) -> int:
    """Index of the query point (of ``queries``, (Q,)) nearest to x*."""
    return int(np.argmin(np.abs(np.asarray(queries) - xq)))


def kernel_shapes(u: np.ndarray) -> dict[str, np.ndarray]:
    """K(u) of every kernel on ``u``, {name: (len(u),)}."""
    return {name: KERNELS[name](u) for name in KERNELS}


def heatmap_queries(grid: np.ndarray) -> np.ndarray:
    """``HEATMAP_QUERIES`` evenly spaced query points over the fit grid's range, (Q,)."""
    return np.linspace(grid[0], grid[-1], HEATMAP_QUERIES)


def undefined_fraction(values: np.ndarray) -> tuple[int, int]:
    """(how many values are NaN, how many values) of a fit."""
    return int(np.isnan(values).sum()), int(values.size)
