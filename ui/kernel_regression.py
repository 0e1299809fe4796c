"""Streamlit helpers of the Kernel Regression page: cached calls into core, grids, messages.

Every cached function takes all it depends on as arguments (never a module global) and keeps a
bounded number of entries. Shapes follow ``core``: x, y (N,), query grids (Q,), weights (Q, N).
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from core import csv_data
from core.csv_data import CsvError
from core.lessons import kernel_regression as lesson
from core.nadaraya_watson import count_turning_points, loo_cv_errors, nw_predict, nw_weights
from figures import kernel_regression as fkr
from ui import caching
from ui.i18n import t
from ui.layout import cached_figure

#: The post's constants (``core.lessons.kernel_regression``), as the page reads them.
POST_CLAIM, POST_H, SWEEP, FIT_POINTS = lesson.POST_CLAIM, lesson.POST_H, lesson.SWEEP, lesson.FIT_POINTS
#: Largest sample count (slider and uploaded rows): the LOO-CV curve costs N² per bandwidth.
MAX_N = 2000
#: Largest upload in MB (``core.csv_data.MAX_UPLOAD_MB``): the uploader says and enforces it.
MAX_UPLOAD_MB = csv_data.MAX_UPLOAD_MB
#: The built-in data's N slider stops here: a new N or noise draws new data, and the fresh
#: leave-one-out curve (60 bandwidths) and h* cost ~0.2 s of a core at N = 1,000 but ~1.5 s at
#: 2,000, which a class sharing one server cannot afford on every step. Uploads go up to MAX_N.
MAX_BUILTIN_N = 1000
#: Query rows of the weight-matrix heatmap.
HEATMAP_QUERIES = lesson.HEATMAP_QUERIES
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


#: The grid value nearest to a value on a log scale (``core.lessons.kernel_regression.snap``).
snap = lesson.snap


def fmt_h(h: float) -> str:
    """A bandwidth as shown on the slider (3 significant digits)."""
    return f"{h:.3g}"


PageData = lesson.PageData


@caching.data(max_entries=32)
def synthetic(n: int, noise: float, seed: int, target: str) -> PageData:
    """:func:`core.lessons.kernel_regression.synthetic_data`, cached."""
    return lesson.synthetic_data(n, noise, seed, target)


@caching.data(max_entries=8)
def uploaded(content: bytes, max_rows: int) -> PageData:
    """:func:`core.lessons.kernel_regression.uploaded_data`, cached. Raises ``core.csv_data.CsvError``
    (a ValueError) on a bad file, including a file whose x values are all equal."""
    return lesson.uploaded_data(content, max_rows)


def fingerprint(content: bytes) -> str:
    """A short digest identifying an uploaded file's content."""
    return hashlib.sha256(content).hexdigest()[:16]


def csv_error_message(err: CsvError) -> str:
    """The translated message for a refused CSV file (``kr.csv_error_<code>``)."""
    return t(f"kr.csv_error_{err.code}", **err.params)


def show_csv_error(err: CsvError, where=None) -> None:
    """Render the refusal of an uploaded file, and say that the built-in data is used instead."""
    (where or st).error(t("kr.csv_error", reason=csv_error_message(err)), icon=":material/error:")


@caching.data(max_entries=64)
def fit(x: np.ndarray, y: np.ndarray, grid: np.ndarray, kernel: str, h: float) -> np.ndarray:
    """NW fit on ``grid``, (Q,); NaN where no sample is within reach."""
    return nw_predict(x, y, grid, kernel=kernel, bandwidth=h)


@caching.data(max_entries=64)
def weights(x: np.ndarray, queries: np.ndarray, kernel: str, h: float) -> np.ndarray:
    """NW weight matrix (Q, N), rows = queries."""
    return nw_weights(x, queries, kernel=kernel, bandwidth=h)


@caching.data(max_entries=32)
def cv_curve(x: np.ndarray, y: np.ndarray, kernel: str, hs: tuple[float, ...]) -> np.ndarray:
    """LOO-CV error at each bandwidth, (M,); NaN where undefined."""
    return loo_cv_errors(x, y, kernel=kernel, bandwidths=np.asarray(hs))


@caching.data(max_entries=32)
def best_bandwidth(x: np.ndarray, y: np.ndarray, kernel: str) -> tuple[float, float]:
    """:func:`core.lessons.kernel_regression.best_bandwidth`, cached: (h*, CV(h*))."""
    return lesson.best_bandwidth(x, y, kernel)


#: The bandwidth choice's figures (LOO-CV against h, the fit along h), cached on their inputs.
cv_figure = cached_figure(fkr.cv_figure)
sweep_figure = cached_figure(fkr.sweep_figure)


def turning_points(values: np.ndarray) -> int:
    """How many local maxima and minima a curve has (``core.nadaraya_watson.count_turning_points``)."""
    return count_turning_points(values)


@caching.data(max_entries=2)
def post_claims() -> lesson.PostClaims:
    """:func:`core.lessons.kernel_regression.post_claims`, cached (the post's data never changes)."""
    return lesson.post_claims()


#: Measured on every press (not cached): :func:`core.lessons.kernel_regression.time_loop_vs_matrix`.
time_loop_vs_matrix = lesson.time_loop_vs_matrix

QueryRow = lesson.QueryRow


@caching.data(max_entries=64)
def query_row(x: np.ndarray, y: np.ndarray, xq: float, kernel: str, h: float) -> QueryRow:
    """:func:`core.lessons.kernel_regression.query_row` (the attention map's row for x*), cached."""
    return lesson.query_row(x, y, xq, kernel, h)


# The page's arithmetic around its fit, from core (``core.lessons.kernel_regression``).
nearest_row = lesson.nearest_row
KERNEL_U = lesson.KERNEL_U
kernel_shapes = lesson.kernel_shapes
heatmap_queries = lesson.heatmap_queries
undefined_fraction = lesson.undefined_fraction


# The fit's and the weights' figure builders, each cached on its inputs (``ui.layout.cached_figure``:
# same signature as the builder, one bounded cache per builder shared by every session).
fit_figure = cached_figure(fkr.fit_figure)
attention_row_figure = cached_figure(fkr.attention_row_figure)
weight_matrix_figure = cached_figure(fkr.weight_matrix_figure)
kernel_shapes_figure = cached_figure(fkr.kernel_shapes_figure)
