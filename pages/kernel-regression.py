"""Kernel regression: Nadaraya-Watson on 1-D data, its weights as an attention map, and the bandwidth.

Thin page: read controls -> cached core calls (``ui.kernel_regression``) -> figures -> render.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import streamlit as st

from core import nadaraya_watson as nw
from core.csv_data import CsvError
from core.data import TARGETS, X_HIGH, X_LOW
from core.kernels import FORMULAS, KERNELS, SUPPORT
from ui import classroom, controls, questions
from ui import kernel_regression as lesson_ui
from ui.i18n import t
from ui.layout import dictionary_table, page_header, show_figure, table
from ui.sections import Section, run_sections

#: Controls that only exist for uploaded data (their ranges follow the file's x range).
CSV_KEYS = ("kr_h_csv", "kr_xq_csv")


def _set_bandwidth(key: str, value: float) -> None:
    """on_click of the h* button: runs before the rerun, so the slider shows the new value."""
    st.session_state[key] = value


def _request_timing() -> None:
    """on_click of the timing button: a flag read (and cleared) by the run it triggers."""
    st.session_state["kr_timing_requested"] = True


def data_controls() -> lesson_ui.PageData:
    """Sidebar: the built-in data's controls and the CSV upload. Returns the data to fit."""
    sb = st.sidebar
    sb.subheader(t("kr.data_header"))
    target = controls.selectbox(
        "kr.target",
        key="kr_target",
        options=list(TARGETS),
        option_prefix="kr.target_",
        help_key="kr.target_help",
        where=sb,
    )
    n = controls.slider(
        "kr.n",
        key="kr_n",
        min_value=20,
        max_value=lesson_ui.MAX_BUILTIN_N,
        value=200,
        step=10,
        help_key="kr.n_help",
        where=sb,
    )
    noise = controls.slider(
        "kr.noise",
        key="kr_noise",
        min_value=0.0,
        max_value=1.0,
        value=0.1,
        step=0.01,
        help_key="kr.noise_help",
        where=sb,
    )
    seed = controls.seed("kr_seed", where=sb)
    return uploaded_data(lesson_ui.synthetic(int(n), float(noise), int(seed), str(target)))


def uploaded_data(builtin: lesson_ui.PageData) -> lesson_ui.PageData:
    """Sidebar: the CSV upload. Returns its data, or ``builtin`` without a file (or a bad one)."""
    sb = st.sidebar
    sb.subheader(t("kr.upload_header"))
    upload = sb.file_uploader(
        t("kr.upload"),
        key="kr_upload",
        help=t("kr.upload_help", max=lesson_ui.MAX_N),
        max_upload_size=lesson_ui.MAX_UPLOAD_MB,  # the uploader's "Limit … per file" says the app's cap
    )
    if upload is None:
        return builtin
    try:
        data = lesson_ui.uploaded(upload.getvalue(), lesson_ui.MAX_N)
    except CsvError as err:
        lesson_ui.show_csv_error(err, where=sb)
        st.warning(t("kr.using_builtin_after_error", name=upload.name), icon=":material/warning:")
        return builtin
    st.info(t("kr.using_upload", name=upload.name, n=data.x.size), icon=":material/upload_file:")
    fingerprint = lesson_ui.fingerprint(upload.getvalue())
    if st.session_state.get("kr_csv_fingerprint") != fingerprint:
        # A new file: its x range differs, so the scaled controls start again from their defaults.
        st.session_state["kr_csv_fingerprint"] = fingerprint
        for key in CSV_KEYS:
            st.session_state.pop(key, None)
    return data


def main_controls(data: lesson_ui.PageData) -> tuple[str, float, float, str, list[float]]:
    """Kernel, bandwidth and query point, above the figures they drive.

    Uploaded data get their own bandwidth and x* controls, scaled to the data's x range.
    """
    h_key = "kr_h_csv" if data.uploaded else "kr_h"
    xq_key = "kr_xq_csv" if data.uploaded else "kr_xq"
    grid = lesson_ui.bandwidth_grid(data.scale)
    c1, c2, c3 = st.columns([1, 2, 2])
    kernel = controls.selectbox(
        "kr.kernel",
        key="kr_kernel",
        options=list(KERNELS),
        option_prefix="kr.kernel_",
        help_key="kr.kernel_help",
        where=c1,
    )
    h = controls.select_slider(
        "kr.bandwidth",
        key=h_key,
        options=grid,
        value=lesson_ui.snap(lesson_ui.POST_H * data.scale, grid),
        help_key="kr.bandwidth_help",
        format_func=lesson_ui.fmt_h,
        where=c2,
    )
    return str(kernel), float(h), query_control(data, xq_key, where=c3), h_key, grid


def query_control(data: lesson_ui.PageData, key: str, *, where) -> float:
    """The x* slider: over the built-in x range, or over an uploaded file's own x range."""
    if data.uploaded:
        lo, hi = float(data.x[0]), float(data.x[-1])
        low, high, value, step = lo, hi, lo + (hi - lo) * 0.6, float(f"{(hi - lo) / 200:.2g}")
    else:
        low, high, value, step = X_LOW, X_HIGH, 0.5, 0.05
    xq = controls.slider(
        "kr.query",
        key=key,
        min_value=low,
        max_value=high,
        value=value,
        step=step,
        help_key="kr.query_help",
        where=where,
    )
    return float(xq)


def formula_and_mapping(kernel: str) -> None:
    st.latex(
        r"\hat f(x) = \sum_{i=1}^{N} w_i(x)\, y_i, \qquad "
        r"w_i(x) = \frac{K\!\left(\frac{x - x_i}{h}\right)}{\sum_{j=1}^{N} K\!\left(\frac{x - x_j}{h}\right)}"
    )
    st.latex(FORMULAS[kernel])
    st.markdown(t("kr.formula_body"))
    st.latex(r"w_i(x) = \mathrm{softmax}_i\!\left(-\frac{(x - x_i)^2}{2h^2}\right)")
    with st.expander(t("kr.mapping_header"), expanded=True):
        dictionary_table()


def post_claims_section() -> None:
    """The post's claims, measured on its own data."""
    with st.spinner(t("kr.computing")):
        claims = lesson_ui.post_claims()
    h_g, cv_g = claims.best["gaussian"]
    agrees = claims.in_claimed_range("gaussian")
    verdict = t("kr.claim_agrees" if agrees else "kr.claim_disagrees")
    st.markdown(t("kr.claim_hstar", h=f"{h_g:.3f}", cv=f"{cv_g:.5f}", verdict=verdict))
    excess = t("kr.list_sep").join(
        t("kr.claim_excess_item", h=f"{h:g}", cv=f"{cv:.5f}", pct=f"{100 * (cv / cv_g - 1):.0f}")
        for h, cv in claims.claim_cv
    )
    st.markdown(t("kr.claim_excess", items=excess))
    table(
        {
            t("kr.claims_col_kernel"): [t(f"kr.kernel_{k}") for k in claims.best],
            t("kr.claims_col_hstar"): [f"{v[0]:.3f}" for v in claims.best.values()],
            t("kr.claims_col_cv"): [f"{v[1]:.5f}" for v in claims.best.values()],
            t("kr.claims_col_in_range"): [
                t("common.yes") if claims.in_claimed_range(k) else t("common.no") for k in claims.best
            ],
        },
        hide_index=True,
    )
    sep = t("kr.list_sep")
    inside = sep.join(t(f"kr.kernel_{k}") for k in claims.best if claims.in_claimed_range(k))
    outside = sep.join(t(f"kr.kernel_{k}") for k in claims.best if not claims.in_claimed_range(k))
    st.markdown(t("kr.claim_kernels_note", inside=inside or "—", outside=outside or "—"))
    tp = claims.turning_points_at_post_h
    st.markdown(
        t(
            "kr.claim_jagged",
            h=lesson_ui.POST_H,
            uniform=tp["uniform"],
            gaussian=tp["gaussian"],
            truth=claims.truth_turning_points,
        )
    )
    sweep = t("kr.list_sep").join(
        t("kr.claim_sweep_item", h=f"{p.h:g}", tp=p.turning_points, cv=f"{p.cv:.4f}") for p in claims.sweep
    )
    st.markdown(t("kr.claim_sweep", items=sweep))


def loop_vs_matrix(data: lesson_ui.PageData, h: float) -> None:
    st.markdown(t("kr.timing_body", points=lesson_ui.FIT_POINTS, n=data.x.size))
    st.button(t("kr.timing_button"), key="kr_time", icon=":material/timer:", on_click=_request_timing)
    if st.session_state.pop("kr_timing_requested", False):
        with st.spinner(t("kr.computing")):
            r = lesson_ui.time_loop_vs_matrix(data.x, data.y, data.grid, h)
        c1, c2, c3 = st.columns(3)
        c1.metric(t("kr.timing_loop"), f"{r.loop_s * 1e3:.2f} ms")
        c2.metric(t("kr.timing_vector"), f"{r.vector_s * 1e3:.2f} ms")
        c3.metric(t("kr.timing_speedup"), f"{r.speedup:.0f}×")
        st.markdown(
            t(
                "kr.timing_result",
                diff=f"{r.max_diff:.1e}",
                loop_nan=r.loop_nan,
                vector_nan=r.vector_nan,
                points=r.points,
            )
        )


@dataclass(frozen=True)
class View:
    """What every section reads: the data and the page-wide controls."""

    data: lesson_ui.PageData
    kernel: str
    h: float
    xq: float
    h_key: str
    h_grid: list[float]

    @property
    def kernel_name(self) -> str:
        return t(f"kr.kernel_{self.kernel}")


def fit_section(v: View) -> None:
    data, h = v.data, v.h
    fit = lesson_ui.fit(data.x, data.y, data.grid, v.kernel, h)
    fig = lesson_ui.fit_figure(
        data.x,
        data.y,
        data.grid,
        fit,
        truth=data.truth,
        x_query=v.xq,
        title=t("kr.fig_fit_title", kernel=v.kernel_name, h=lesson_ui.fmt_h(h)),
        x_title="x",
        y_title="y",
        data_name=t("kr.legend_data"),
        truth_name=t("kr.legend_truth"),
        fit_name=t("kr.legend_fit"),
        undefined_name=t("kr.legend_undefined"),
        query_name="x*",
    )
    show_figure(fig, key="kr_fig_fit", look_for_key="kr.look_fit", code=nw.nw_predict)
    missing, total = lesson_ui.undefined_fraction(fit)
    if missing:
        st.warning(
            t(
                "kr.undefined_warning",
                missing=missing,
                total=total,
                kernel=v.kernel_name,
                h=lesson_ui.fmt_h(h),
            ),
            icon=":material/block:",
        )
    st.caption(t("kr.turning_points", tp=lesson_ui.turning_points(fit)))


def row_section(v: View) -> None:
    """One query's weights: a row of the attention map (drawn once its question is answered)."""
    data, xq = v.data, v.xq
    q = lesson_ui.query_row(data.x, data.y, xq, v.kernel, v.h)
    active = q.active
    if active:
        questions.ask(
            "kr_active",
            prompt_key="q.kr_active_prompt",
            prompt_kwargs={"xq": f"{xq:.3g}", "h": lesson_ui.fmt_h(v.h), "n": data.x.size},
            answer=active,
            tolerance=0.2,
            relative=True,
            min_value=0,
            max_value=data.x.size,
            explain_key="q.kr_active_explain",
            explain_kwargs={"active": active, "n": data.x.size, "h": lesson_ui.fmt_h(v.h)},
        )
    questions.reveal("kr_active", partial(_row_figure, v, q))


def _row_figure(v: View, q: lesson_ui.QueryRow) -> None:
    """The weights of the query x* over the samples, and the estimate they give."""
    data, xq = v.data, v.xq
    row, y_hat, active = q.weights, q.y_hat, q.active
    fig = lesson_ui.attention_row_figure(
        data.x,
        data.y,
        row,
        x_query=xq,
        y_hat=y_hat,
        title=t("kr.fig_row_title", xq=f"{xq:.3g}"),
        x_title="x",
        y_title="y",
        weight_title=t("kr.axis_weight"),
        data_name=t("kr.legend_data"),
        estimate_name=t("kr.legend_estimate"),
        weight_name=t("kr.axis_weight"),
    )
    show_figure(fig, key="kr_fig_row", look_for_key="kr.look_row", code=nw.nw_weights)
    if math.isnan(y_hat):
        st.warning(t("kr.row_undefined", xq=f"{xq:.3g}"), icon=":material/block:")
    else:
        st.caption(t("kr.row_summary", y_hat=f"{y_hat:.4f}", active=active, n=data.x.size))


def matrix_section(v: View) -> None:
    queries = lesson_ui.heatmap_queries(v.data.grid)
    row = lesson_ui.nearest_row(queries, v.xq)  # the matrix row nearest to x*
    questions.ask(
        "kr_row",
        prompt_key="q.kr_row_prompt",
        prompt_kwargs={
            "q": queries.size,
            "lo": f"{queries[0]:.3g}",
            "hi": f"{queries[-1]:.3g}",
            "xq": f"{v.xq:.3g}",
        },
        answer=row,
        min_value=0,
        max_value=queries.size - 1,
        explain_key="q.kr_row_explain",
        explain_kwargs={
            "row": row,
            "step": f"{queries[1] - queries[0]:.3g}",
            "lo": f"{queries[0]:.3g}",
            "xq": f"{v.xq:.3g}",
            "x_row": f"{queries[row]:.3g}",
        },
    )
    fig = lesson_ui.weight_matrix_figure(
        lesson_ui.weights(v.data.x, queries, v.kernel, v.h),
        v.data.x,
        queries,
        title=t("kr.fig_matrix_title", kernel=v.kernel_name, h=lesson_ui.fmt_h(v.h)),
        x_title=t("kr.axis_sample"),
        y_title=t("kr.axis_query"),
        weight_title=t("common.weight"),  # short: the colour bar's margin holds it
        peak_name=t("a11y.kr_peak"),
    )
    show_figure(fig, key="kr_fig_matrix", look_for_key="kr.look_matrix", code=nw.nw_weights)


def kernels_section(v: View) -> None:
    u = lesson_ui.KERNEL_U
    fig = lesson_ui.kernel_shapes_figure(
        u,
        lesson_ui.kernel_shapes(u),
        names={k: t(f"kr.kernel_{k}") for k in KERNELS},
        selected=v.kernel,
        title=t("kr.fig_kernels_title"),
        x_title=t("kr.axis_u"),
        y_title="K(u)",
    )
    show_figure(fig, key="kr_fig_kernels", look_for_key="kr.look_kernels", code=KERNELS[v.kernel])


def cv_section(v: View) -> None:
    """Leave-one-out CV and h*, with a button that sets the slider to it."""
    data, kernel = v.data, v.kernel
    with st.spinner(t("kr.computing")):
        cv = lesson_ui.cv_curve(data.x, data.y, kernel, tuple(v.h_grid))
        h_star, cv_star = lesson_ui.best_bandwidth(data.x, data.y, kernel)
    _cv_question(v, cv, cv_star)
    questions.reveal("kr_cv_small_h", partial(_cv_figure, v, cv, h_star, cv_star))
    snapped = lesson_ui.snap(h_star, v.h_grid)
    st.markdown(t("kr.hstar_text", h=f"{h_star:.4f}", cv=f"{cv_star:.5f}", snapped=lesson_ui.fmt_h(snapped)))
    st.button(
        t("kr.set_hstar", h=lesson_ui.fmt_h(snapped)),
        key="kr_use_hstar",
        icon=":material/my_location:",
        on_click=_set_bandwidth,
        args=(v.h_key, snapped),
        disabled=snapped == v.h,
    )


def _cv_figure(v: View, cv: Sequence[float], h_star: float, cv_star: float) -> None:
    """The CV curve against h, with h* and the current h."""
    data, kernel = v.data, v.kernel
    fig = lesson_ui.cv_figure(
        tuple(v.h_grid),
        cv,
        h_star=h_star,
        cv_star=cv_star,
        h_current=v.h,
        title=t("kr.fig_cv_title", kernel=v.kernel_name),
        x_title=t("kr.axis_h"),
        y_title=t("kr.axis_cv"),
        curve_name=t("kr.legend_cv"),
        star_name=t("kr.legend_hstar", h=f"{h_star:.3g}"),
        current_name=t("kr.legend_current_h"),
        claim=None if data.uploaded or kernel != "gaussian" else lesson_ui.POST_CLAIM,
        claim_name=t("kr.legend_claim"),
    )
    show_figure(fig, key="kr_fig_cv", look_for_key="kr.look_cv", code=(nw.loo_cv_errors, nw.select_bandwidth))


def _cv_question(v: View, cv: Sequence[float], cv_star: float) -> None:
    """As h -> 0: the CV curve at the grid's smallest h against its minimum (NaN: no neighbour left)."""
    smallest = float(cv[0])
    outcome = "undefined" if math.isnan(smallest) else "rises" if smallest > cv_star else "falls"
    questions.ask(
        "kr_cv_small_h",
        prompt_key="q.kr_cv_prompt",
        prompt_kwargs={"kernel": v.kernel_name},
        choices={"rises": "q.kr_cv_rises", "falls": "q.kr_cv_falls", "undefined": "q.kr_cv_undefined"},
        answer=outcome,
        explain_key=f"q.kr_cv_explain_{outcome}",
        explain_kwargs={
            "h_min": lesson_ui.fmt_h(v.h_grid[0]),
            "cv_min": f"{smallest:.4f}",
            "cv_star": f"{cv_star:.4f}",
            "kernel": v.kernel_name,
            "never_zero": t("kr.list_sep").join(
                t(f"kr.kernel_{k}") for k, r in SUPPORT.items() if math.isinf(r)
            ),
        },
    )


def sweep_section(v: View) -> None:
    data = v.data
    sweep_h = [lesson_ui.snap(s * data.scale, v.h_grid) for s in lesson_ui.SWEEP]
    fits = [lesson_ui.fit(data.x, data.y, data.grid, v.kernel, s) for s in sweep_h]
    subtitles = [
        t("kr.sweep_subtitle", h=lesson_ui.fmt_h(s), tp=lesson_ui.turning_points(f))
        for s, f in zip(sweep_h, fits, strict=True)
    ]
    fig = lesson_ui.sweep_figure(
        data.x,
        data.y,
        data.grid,
        fits,
        subtitles=subtitles,
        truth=data.truth,
        title=t("kr.fig_sweep_title", kernel=v.kernel_name),
        x_title="x",
        y_title="y",
        data_name=t("kr.legend_data"),
        truth_name=t("kr.legend_truth"),
        fit_name=t("kr.legend_fit"),
    )
    show_figure(fig, key="kr_fig_sweep", look_for_key="kr.look_sweep", code=nw.nw_predict)


def render() -> None:
    page_header("kr.title", "kr.intro")
    data = data_controls()
    with classroom.controls_area():
        v = View(data, *main_controls(data))
    run_sections(
        "kernel-regression",
        [
            Section("kr.fit_header", partial(fit_section, v)),
            Section("kr.row_header", partial(row_section, v)),
            Section("kr.formula_header", partial(formula_and_mapping, v.kernel)),
            Section("kr.matrix_header", partial(matrix_section, v)),
            Section("kr.kernels_header", partial(kernels_section, v), folded=True),
            Section("kr.cv_header", partial(cv_section, v), folded=True),
            Section("kr.sweep_header", partial(sweep_section, v), folded=True),
            Section("kr.claims_header", post_claims_section, folded=True),
            Section("kr.timing_header", partial(loop_vs_matrix, v.data, v.h), folded=True),
        ],
    )


render()
