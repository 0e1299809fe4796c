"""Streamlit helpers of the Kernel Regression page: cached calls into core, grids, messages, the
sidebar's data controls and the upload, the figures' labels and the page's text-and-table sections.

Every cached function takes all it depends on as arguments (never a module global) and keeps a
bounded number of entries. Shapes follow ``core``: x, y (N,), query grids (Q,), weights (Q, N).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

from core import csv_data
from core.csv_data import CsvError
from core.data import TARGETS, X_HIGH, X_LOW
from core.kernels import FORMULAS, KERNELS, SUPPORT
from core.lessons import kernel_regression as lesson
from core.nadaraya_watson import count_turning_points, loo_cv_errors, nw_predict, nw_weights
from figures import kernel_regression as fkr
from figures.common import Labels
from ui import caching, controls
from ui import live_slider as live
from ui.i18n import t
from ui.layout import cached, dictionary_table, table

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
cv_figure = cached(fkr.cv_figure)
sweep_figure = cached(fkr.sweep_figure)


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


# The fit's and the weights' figure builders, each cached on its inputs (``ui.layout.cached``:
# same signature as the builder, one bounded cache per builder shared by every session).
fit_figure = cached(fkr.fit_figure)
attention_row_figure = cached(fkr.attention_row_figure)
weight_matrix_figure = cached(fkr.weight_matrix_figure)
kernel_shapes_figure = cached(fkr.kernel_shapes_figure)


# ----------------------------------------------------------------------------------------------
# live sliders (ui.live_slider): h and x* redraw the fit, the weight row, the map and the CV mark
# ----------------------------------------------------------------------------------------------


def bandwidth_control(key: str, grid: list[float], scale: float) -> live.Control:
    """The bandwidth slider: a select-slider over ``grid``, starting at the post's h (scaled)."""
    return live.Control(
        "kr.bandwidth",
        key=key,
        value=snap(POST_H * scale, grid),
        options=tuple(grid),
        help_key="kr.bandwidth_help",
        format_func=fmt_h,
    )


def query_control(data: PageData, key: str) -> live.Control:
    """The x* slider: over the built-in x range, or over an uploaded file's own x range."""
    if data.uploaded:
        lo, hi = float(data.x[0]), float(data.x[-1])
        step = float(f"{(hi - lo) / 200:.2g}")
        return live.Control(
            "kr.query", key=key, value=lo + (hi - lo) * 0.6, min_value=lo, max_value=hi, step=step,
            help_key="kr.query_help", decimals=max(2, live.decimals_of(step)),
        )  # fmt: skip
    return live.Control(
        "kr.query", key=key, value=0.5, min_value=X_LOW, max_value=X_HIGH, step=0.05, help_key="kr.query_help"
    )


def live_views(data: PageData, kernel: str, h: float, xq: float, kernel_name: str) -> dict[str, live.Live]:
    """What the browser redraws while h or x* moves: {"h": ..., "xq": ...} (``ui.live_slider``).

    The model holds the data and both committed values; each slider moves one of them.
    """
    model = {
        "kind": "kr",
        "x": live.numbers(data.x),
        "y": live.numbers(data.y),
        "grid": live.numbers(data.grid),
        "queries": live.numbers(heatmap_queries(data.grid)),
        "kernel": kernel,
        "h": float(h),
        "xq": float(xq),
    }
    fit = live.Target(
        "kr_fig_fit", "kr_fit", (("title", t("kr.fig_fit_title", kernel=kernel_name, h="{h:.3g}")),)
    )
    row = live.Target("kr_fig_row", "kr_row", (("title", t("kr.fig_row_title", xq="{xq:.3g}")),))
    matrix = live.Target(
        "kr_fig_matrix", "kr_matrix", (("title", t("kr.fig_matrix_title", kernel=kernel_name, h="{h:.3g}")),)
    )
    cv = live.Target("kr_fig_cv", "kr_cv")
    return {"h": live.Live(model, "h", (fit, row, matrix, cv)), "xq": live.Live(model, "xq", (fit, row))}


def cv_at(cv: np.ndarray, hs: list[float], h: float) -> float | None:
    """The CV curve's value at the bandwidth ``h`` of its grid ``hs`` (None when h is not on it)."""
    return float(cv[hs.index(h)]) if h in hs else None


# ----------------------------------------------------------------------------------------------
# the page's controls: the sidebar's data and upload, then kernel, h and x* above the figures
# ----------------------------------------------------------------------------------------------

#: Controls that only exist for uploaded data (their ranges follow the file's x range).
CSV_KEYS = ("kr_h_csv", "kr_xq_csv")
#: The built-in data's sliders, in the sidebar's order: (label key, widget key, min, max, default,
#: step); each one's help is ``<label key>_help``.
DATA_SLIDERS = (
    ("kr.n", "kr_n", 20, MAX_BUILTIN_N, 200, 10),
    ("kr.noise", "kr_noise", 0.0, 1.0, 0.1, 0.01),
)


@dataclass(frozen=True)
class View:
    """What every section of the page reads: the data and the page-wide controls."""

    data: PageData
    kernel: str
    h: float
    xq: float
    h_key: str
    h_grid: list[float]

    @property
    def kernel_name(self) -> str:
        return t(f"kr.kernel_{self.kernel}")


def choose(name: str, options: list[str], where) -> str:
    """The bound selectbox ``kr.<name>`` (key ``kr_<name>``, help ``kr.<name>_help``) over
    ``options``, each labelled ``kr.<name>_<option>``: the data's target and the kernel."""
    return str(
        controls.selectbox(
            f"kr.{name}",
            key=f"kr_{name}",
            options=options,
            option_prefix=f"kr.{name}_",
            help_key=f"kr.{name}_help",
            where=where,
        )
    )


def data_controls() -> PageData:
    """Sidebar: the built-in data's controls and the CSV upload. Returns the data to fit."""
    sb = st.sidebar
    sb.subheader(t("kr.data_header"))
    target = choose("target", list(TARGETS), sb)
    n, noise = (
        controls.slider(
            label,
            key=key,
            min_value=lo,
            max_value=hi,
            value=value,
            step=step,
            help_key=f"{label}_help",
            where=sb,
        )
        for label, key, lo, hi, value, step in DATA_SLIDERS
    )
    seed = controls.seed("kr_seed", where=sb)
    return uploaded_data(synthetic(int(n), float(noise), int(seed), target))


def uploaded_data(builtin: PageData) -> PageData:
    """Sidebar: the CSV upload. Returns its data, or ``builtin`` without a file (or a bad one)."""
    sb = st.sidebar
    sb.subheader(t("kr.upload_header"))
    upload = sb.file_uploader(
        t("kr.upload"),
        key="kr_upload",
        help=t("kr.upload_help", max=MAX_N),
        max_upload_size=MAX_UPLOAD_MB,  # the uploader's "Limit … per file" says the app's cap
    )
    if upload is None:
        return builtin
    try:
        data = uploaded(upload.getvalue(), MAX_N)
    except CsvError as err:
        show_csv_error(err, where=sb)
        st.warning(t("kr.using_builtin_after_error", name=upload.name), icon=":material/warning:")
        return builtin
    st.info(t("kr.using_upload", name=upload.name, n=data.x.size), icon=":material/upload_file:")
    digest = fingerprint(upload.getvalue())
    if st.session_state.get("kr_csv_fingerprint") != digest:
        # A new file: its x range differs, so the scaled controls start again from their defaults.
        st.session_state["kr_csv_fingerprint"] = digest
        for key in CSV_KEYS:
            st.session_state.pop(key, None)
    return data


def main_controls(data: PageData) -> tuple[str, float, float, str, list[float]]:
    """Kernel, bandwidth and query point, above the figures they drive: (kernel, h, x*, the h
    slider's key, its grid), the page's :class:`View` after its data.

    Uploaded data get their own bandwidth and x* controls, scaled to the data's x range.
    """
    h_key = "kr_h_csv" if data.uploaded else "kr_h"
    xq_key = "kr_xq_csv" if data.uploaded else "kr_xq"
    grid = bandwidth_grid(data.scale)
    c1, c2, c3 = st.columns([1, 2, 2])
    kernel = choose("kernel", list(KERNELS), c1)
    # live sliders: the fit, the weight row, the map and the CV mark follow the hand (ui.live_slider)
    h_control = bandwidth_control(h_key, grid, data.scale)
    xq_control = query_control(data, xq_key)
    views = live_views(data, kernel, live.value(h_control), live.value(xq_control), t(f"kr.kernel_{kernel}"))
    h = live.slider(h_control, views["h"], where=c2)
    xq = live.slider(xq_control, views["xq"], where=c3)
    return kernel, float(h), float(xq), h_key, grid


# ----------------------------------------------------------------------------------------------
# the figures' words (figures.common.Labels)
# ----------------------------------------------------------------------------------------------


def data_names() -> dict[str, str]:
    """The legend names of the samples, the true curve and the fit (the fit and the sweep)."""
    return {"data": t("kr.legend_data"), "truth": t("kr.legend_truth"), "fit": t("kr.legend_fit")}


def fit_labels(v: View) -> Labels:
    """The fit's words: the kernel and h in the title, the data's names, the gaps' and x*'s."""
    title = t("kr.fig_fit_title", kernel=v.kernel_name, h=fmt_h(v.h))
    return Labels.of(
        title=title, x="x", y="y", undefined=t("kr.legend_undefined"), query="x*", **data_names()
    )


def row_labels(xq: float) -> Labels:
    """The weight row's words: x* in the title; the samples, the estimate and the weights."""
    return Labels.of(
        title=t("kr.fig_row_title", xq=f"{xq:.3g}"),
        x="x",
        y="y",
        data=t("kr.legend_data"),
        estimate=t("kr.legend_estimate"),
        weights=t("kr.axis_weight"),
        weight_axis=t("kr.axis_weight"),
    )


def matrix_labels(v: View) -> Labels:
    """The weight matrix's words: samples across, queries down, a short colour bar title."""
    return Labels.of(
        title=t("kr.fig_matrix_title", kernel=v.kernel_name, h=fmt_h(v.h)),
        x=t("kr.axis_sample"),
        y=t("kr.axis_query"),
        z=t("common.weight"),  # short: the colour bar's margin holds it
        peak=t("a11y.kr_peak"),
    )


def kernel_labels() -> Labels:
    """The kernel shapes' words: each kernel's name by its id."""
    names = {k: t(f"kr.kernel_{k}") for k in KERNELS}
    return Labels.of(title=t("kr.fig_kernels_title"), x=t("kr.axis_u"), y="K(u)", **names)


def cv_labels(v: View, h_star: float) -> Labels:
    """The CV curve's words: the kernel in the title, h* in its legend entry, the post's claim."""
    return Labels.of(
        title=t("kr.fig_cv_title", kernel=v.kernel_name),
        x=t("kr.axis_h"),
        y=t("kr.axis_cv"),
        curve=t("kr.legend_cv"),
        star=t("kr.legend_hstar", h=f"{h_star:.3g}"),
        current=t("kr.legend_current_h"),
        claim=t("kr.legend_claim"),
    )


def sweep_labels(v: View) -> Labels:
    """The sweep's words: the kernel in the title and the data's names."""
    return Labels.of(title=t("kr.fig_sweep_title", kernel=v.kernel_name), x="x", y="y", **data_names())


def claim_range(v: View) -> tuple[float, float] | None:
    """The post's claimed range of h, shaded on the CV curve for its own data and kernel only."""
    return None if v.data.uploaded or v.kernel != "gaussian" else POST_CLAIM


def cv_outcome(cv: np.ndarray, cv_star: float) -> str:
    """As h -> 0: the CV curve at the grid's smallest h against its minimum: "rises", "falls" or
    "undefined" (NaN: no neighbour left)."""
    smallest = float(cv[0])
    return "undefined" if math.isnan(smallest) else "rises" if smallest > cv_star else "falls"


def cv_explain(v: View, cv: np.ndarray, cv_star: float) -> dict[str, str]:
    """What the CV question's explanation quotes: the smallest h, its CV, the minimum, the kernels
    whose weights are never zero."""
    return {
        "h_min": fmt_h(v.h_grid[0]),
        "cv_min": f"{float(cv[0]):.4f}",
        "cv_star": f"{cv_star:.4f}",
        "kernel": v.kernel_name,
        "never_zero": t("kr.list_sep").join(t(f"kr.kernel_{k}") for k, r in SUPPORT.items() if math.isinf(r)),
    }


def set_bandwidth(key: str, value: float) -> None:
    """on_click of the h* button: runs before the rerun, so the slider shows the new value."""
    st.session_state[key] = value


# ----------------------------------------------------------------------------------------------
# the page's text sections: the formula, the post's claims, the loop against the matrix
# ----------------------------------------------------------------------------------------------


def formula_section(kernel: str) -> None:
    """The NW estimator, the chosen kernel's formula, and the kernel-to-attention dictionary."""
    st.latex(
        r"\hat f(x) = \sum_{i=1}^{N} w_i(x)\, y_i, \qquad "
        r"w_i(x) = \frac{K\!\left(\frac{x - x_i}{h}\right)}{\sum_{j=1}^{N} K\!\left(\frac{x - x_j}{h}\right)}"
    )
    st.latex(FORMULAS[kernel])
    st.markdown(t("kr.formula_body"))
    st.latex(r"w_i(x) = \mathrm{softmax}_i\!\left(-\frac{(x - x_i)^2}{2h^2}\right)")
    with st.expander(t("kr.mapping_header"), expanded=True):
        dictionary_table()


def _names(kernels) -> str:
    """Kernel ids as a list of their names ("—" for none)."""
    return t("kr.list_sep").join(t(f"kr.kernel_{k}") for k in kernels) or "—"


def post_claims_section() -> None:
    """The post's claims, measured on its own data."""
    with st.spinner(t("kr.computing")):
        claims = post_claims()
    h_g, cv_g = claims.best["gaussian"]
    verdict = t("kr.claim_agrees" if claims.in_claimed_range("gaussian") else "kr.claim_disagrees")
    st.markdown(t("kr.claim_hstar", h=f"{h_g:.3f}", cv=f"{cv_g:.5f}", verdict=verdict))
    excess = t("kr.list_sep").join(
        t("kr.claim_excess_item", h=f"{h:g}", cv=f"{cv:.5f}", pct=f"{100 * (cv / cv_g - 1):.0f}")
        for h, cv in claims.claim_cv
    )
    st.markdown(t("kr.claim_excess", items=excess))
    inside = {k: claims.in_claimed_range(k) for k in claims.best}
    table(
        {
            t("kr.claims_col_kernel"): [t(f"kr.kernel_{k}") for k in claims.best],
            t("kr.claims_col_hstar"): [f"{v[0]:.3f}" for v in claims.best.values()],
            t("kr.claims_col_cv"): [f"{v[1]:.5f}" for v in claims.best.values()],
            t("kr.claims_col_in_range"): [
                t("common.yes") if inside[k] else t("common.no") for k in claims.best
            ],
        },
        hide_index=True,
    )
    in_range = _names(k for k in claims.best if inside[k])
    st.markdown(
        t("kr.claim_kernels_note", inside=in_range, outside=_names(k for k in claims.best if not inside[k]))
    )
    tp = claims.turning_points_at_post_h
    jagged = {"uniform": tp["uniform"], "gaussian": tp["gaussian"], "truth": claims.truth_turning_points}
    st.markdown(t("kr.claim_jagged", h=POST_H, **jagged))
    sweep = t("kr.list_sep").join(
        t("kr.claim_sweep_item", h=f"{p.h:g}", tp=p.turning_points, cv=f"{p.cv:.4f}") for p in claims.sweep
    )
    st.markdown(t("kr.claim_sweep", items=sweep))


def _request_timing() -> None:
    """on_click of the timing button: a flag read (and cleared) by the run it triggers."""
    st.session_state["kr_timing_requested"] = True


def timing_section(v: View) -> None:
    """The Python loop against the matrix form, timed on the page's data when the button is pressed."""
    data = v.data
    st.markdown(t("kr.timing_body", points=FIT_POINTS, n=data.x.size))
    st.button(t("kr.timing_button"), key="kr_time", icon=":material/timer:", on_click=_request_timing)
    if not st.session_state.pop("kr_timing_requested", False):
        return
    with st.spinner(t("kr.computing")):
        r = time_loop_vs_matrix(data.x, data.y, data.grid, v.h)
    c1, c2, c3 = st.columns(3)
    c1.metric(t("kr.timing_loop"), f"{r.loop_s * 1e3:.2f} ms")
    c2.metric(t("kr.timing_vector"), f"{r.vector_s * 1e3:.2f} ms")
    c3.metric(t("kr.timing_speedup"), f"{r.speedup:.0f}×")
    nan = {"loop_nan": r.loop_nan, "vector_nan": r.vector_nan}
    st.markdown(t("kr.timing_result", diff=f"{r.max_diff:.1e}", points=r.points, **nan))
