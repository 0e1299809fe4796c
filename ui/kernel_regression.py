"""Streamlit helpers of the Kernel Regression page: cached calls into core, grids, messages.

Every cached function takes all it depends on as arguments (never a module global) and keeps a
bounded number of entries. Shapes follow ``core``: x, y (N,), query grids (Q,), weights (Q, N).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st

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
from ui.i18n import t

#: Largest sample count (slider and uploaded rows): the LOO-CV curve costs N² per bandwidth.
MAX_N = 2000
#: Points of the fitted curve, as in the post (``np.linspace(-3, 3, 500)``).
FIT_POINTS = 500
#: Query rows of the weight-matrix heatmap.
HEATMAP_QUERIES = 60
#: The bandwidths of the sweep (small multiples), in units of the built-in data's x.
SWEEP = (0.1, 0.3, 1.0, 2.0)
#: The post's claim: LOO-CV picks h in [0.2, 0.4] (section 4.1).
POST_CLAIM = (0.2, 0.4)
#: The bandwidth the post plots with (section 2.4).
POST_H = 0.3
#: E24 preferred numbers: 24 log-spaced steps per decade (ratio ≈ 1.1), all "nice" values.
E24 = (1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.7, 3.0,
       3.3, 3.6, 3.9, 4.3, 4.7, 5.1, 5.6, 6.2, 6.8, 7.5, 8.2, 9.1)  # fmt: skip


def bandwidth_grid(scale: float = 1.0) -> list[float]:
    """The bandwidth control's options: E24 values from 0.01 to 3 (60 values), times ``scale``.

    ``scale`` is (spread of x) / 6 for uploaded data, so the grid covers the same relative range as
    for the built-in data on [-3, 3]. Values are rounded to 3 significant digits.
    """
    base = [m * 10.0**e for e in (-2, -1, 0) for m in E24 if m * 10.0**e <= 3.0 + 1e-9]
    out: list[float] = []
    for v in base:
        r = float(f"{v * scale:.3g}")
        if r > 0 and (not out or r > out[-1]):
            out.append(r)
    return out


def snap(value: float, grid: list[float]) -> float:
    """The grid value nearest to ``value`` on a log scale."""
    logs = np.log(np.asarray(grid))
    return grid[int(np.argmin(np.abs(logs - math.log(value))))]


def fmt_h(h: float) -> str:
    """A bandwidth as shown on the slider (3 significant digits)."""
    return f"{h:.3g}"


@dataclass(frozen=True)
class PageData:
    """What the page fits: x, y (N,) sorted by x, the truth on the fit grid (or None), and scale."""

    x: np.ndarray
    y: np.ndarray
    grid: np.ndarray  # (FIT_POINTS,) where the fit is drawn
    truth: np.ndarray | None  # (FIT_POINTS,) the noiseless target, None for uploaded data
    scale: float  # spread / 6: 1 for built-in data
    uploaded: bool


@st.cache_data(max_entries=32, show_spinner=False)
def synthetic(n: int, noise: float, seed: int, target: str) -> PageData:
    """The built-in data set (``core.data.make_data``) with its true curve on the post's grid."""
    d = make_data(n=n, noise=noise, seed=seed, target=target)
    grid = np.linspace(X_LOW, X_HIGH, FIT_POINTS)
    return PageData(x=d.x, y=d.y, grid=grid, truth=d.truth(grid), scale=1.0, uploaded=False)


@st.cache_data(max_entries=8, show_spinner=False)
def uploaded(content: bytes, max_rows: int) -> PageData:
    """An uploaded CSV as page data. Raises ``core.csv_data.CsvError`` (a ValueError) on a bad file,
    including a file whose x values are all equal."""
    x, y = parse_xy_csv(content, max_rows=max_rows)
    spread = float(x[-1] - x[0])
    if spread <= 0:
        raise CsvError("no_spread", "all x values are equal")
    grid = np.linspace(x[0], x[-1], FIT_POINTS)
    return PageData(x=x, y=y, grid=grid, truth=None, scale=spread / 6.0, uploaded=True)


def fingerprint(content: bytes) -> str:
    """A short digest identifying an uploaded file's content."""
    return hashlib.sha256(content).hexdigest()[:16]


def csv_error_message(err: CsvError) -> str:
    """The translated message for a refused CSV file (``kr.csv_error_<code>``)."""
    return t(f"kr.csv_error_{err.code}", **err.params)


def show_csv_error(err: CsvError, where=None) -> None:
    """Render the refusal of an uploaded file, and say that the built-in data is used instead."""
    (where or st).error(t("kr.csv_error", reason=csv_error_message(err)), icon=":material/error:")


@st.cache_data(max_entries=64, show_spinner=False)
def fit(x: np.ndarray, y: np.ndarray, grid: np.ndarray, kernel: str, h: float) -> np.ndarray:
    """NW fit on ``grid``, (Q,); NaN where no sample is within reach."""
    return nw_predict(x, y, grid, kernel=kernel, bandwidth=h)


@st.cache_data(max_entries=64, show_spinner=False)
def weights(x: np.ndarray, queries: np.ndarray, kernel: str, h: float) -> np.ndarray:
    """NW weight matrix (Q, N), rows = queries."""
    return nw_weights(x, queries, kernel=kernel, bandwidth=h)


@st.cache_data(max_entries=32, show_spinner=False)
def cv_curve(x: np.ndarray, y: np.ndarray, kernel: str, hs: tuple[float, ...]) -> np.ndarray:
    """LOO-CV error at each bandwidth, (M,); NaN where undefined."""
    return loo_cv_errors(x, y, kernel=kernel, bandwidths=np.asarray(hs))


@st.cache_data(max_entries=32, show_spinner=False)
def best_bandwidth(x: np.ndarray, y: np.ndarray, kernel: str) -> tuple[float, float]:
    """(h*, CV(h*)) from ``core.nadaraya_watson.select_bandwidth``."""
    h = select_bandwidth(x, y, kernel=kernel)
    return h, float(loo_cv_errors(x, y, kernel=kernel, bandwidths=np.array([h]))[0])


def turning_points(values: np.ndarray) -> int:
    """How many local maxima and minima a curve has (``core.nadaraya_watson.count_turning_points``)."""
    return count_turning_points(values)


@st.cache_data(max_entries=2, show_spinner=False)
def post_claims() -> dict:
    """The numbers behind the post's claims, on the post's own data (200 points, seed 42).

    Returns a dict with
    ``kernels``: {name: (h*, CV(h*))};
    ``claim_cv``: [(h, CV(h))] for the Gaussian at h = 0.2, 0.3, 0.4;
    ``truth_tp``: turning points of the true curve on [-3, 3];
    ``at_post_h``: {name: turning points of the fit at h = 0.3} for uniform and Gaussian;
    ``sweep``: [(h, turning points, CV(h))] for the Gaussian at h in ``SWEEP``.
    """
    d = post_data()
    grid = np.linspace(X_LOW, X_HIGH, FIT_POINTS)
    kernels = {}
    for name in KERNELS:
        h = select_bandwidth(d.x, d.y, name)
        kernels[name] = (h, float(loo_cv_errors(d.x, d.y, name, np.array([h]))[0]))
    at_post_h = {
        name: count_turning_points(nw_predict(d.x, d.y, grid, name, POST_H))
        for name in ("uniform", "gaussian")
    }
    sweep = [
        (
            h,
            count_turning_points(nw_predict(d.x, d.y, grid, "gaussian", h)),
            float(loo_cv_errors(d.x, d.y, "gaussian", np.array([h]))[0]),
        )
        for h in SWEEP
    ]
    claim_cv = [
        (h, float(loo_cv_errors(d.x, d.y, "gaussian", np.array([h]))[0]))
        for h in (POST_CLAIM[0], POST_H, POST_CLAIM[1])
    ]
    return {
        "kernels": kernels,
        "claim_cv": claim_cv,
        "truth_tp": count_turning_points(d.truth(grid)),
        "at_post_h": at_post_h,
        "sweep": sweep,
    }


def in_post_range(h: float) -> bool:
    """Whether h lies in the post's claimed range [0.2, 0.4]."""
    return POST_CLAIM[0] <= h <= POST_CLAIM[1]


def time_loop_vs_matrix(x: np.ndarray, y: np.ndarray, grid: np.ndarray, h: float, repeat: int = 3) -> dict:
    """Time the post's per-point loop and the vectorised ``nw_predict`` on the same data and grid.

    Not cached (it is a measurement). Returns seconds per call (best of ``repeat``) for both, the
    largest difference where both are defined, and how many grid points the loop left NaN.
    """

    def best(fn) -> tuple[float, np.ndarray]:
        times, out = [], None
        for _ in range(repeat):
            start = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - start)
        return min(times), out

    t_loop, loop = best(lambda: nw_predict_loop(x, y, grid, h))
    t_vec, vec = best(lambda: nw_predict(x, y, grid, "gaussian", h))
    both = ~np.isnan(loop) & ~np.isnan(vec)
    return {
        "loop_s": t_loop,
        "vector_s": t_vec,
        "speedup": t_loop / t_vec if t_vec > 0 else math.inf,
        "max_diff": float(np.max(np.abs(loop[both] - vec[both]))) if both.any() else math.nan,
        "loop_nan": int(np.isnan(loop).sum()),
        "vector_nan": int(np.isnan(vec).sum()),
        "points": int(grid.size),
        "samples": int(x.size),
    }


def kernel_shapes(u: np.ndarray) -> dict[str, np.ndarray]:
    """K(u) of every kernel on ``u``, {name: (len(u),)}."""
    return {name: KERNELS[name](u) for name in KERNELS}


def heatmap_queries(grid: np.ndarray) -> np.ndarray:
    """``HEATMAP_QUERIES`` evenly spaced query points over the fit grid's range, (Q,)."""
    return np.linspace(grid[0], grid[-1], HEATMAP_QUERIES)


def undefined_fraction(values: np.ndarray) -> tuple[int, int]:
    """(how many values are NaN, how many values) of a fit."""
    return int(np.isnan(values).sum()), int(values.size)
