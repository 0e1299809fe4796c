"""Kernel regression: Nadaraya-Watson on 1-D data, its weights as an attention map, and the bandwidth.

Thin page: controls -> View -> sections; cached core calls, labels and text sections in
``ui.kernel_regression``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import streamlit as st

from core import nadaraya_watson as nw
from core.kernels import KERNELS
from ui import classroom, questions
from ui import kernel_regression as lesson_ui
from ui.i18n import t
from ui.kernel_regression import View
from ui.layout import page_header, show_figure
from ui.questions import Question
from ui.sections import Section, run_sections

#: Before the weight row: how many samples get more than 0.1% of the largest weight? (Within 20%.)
ACTIVE = Question("kr_active", tolerance=0.2, relative=True, min_value=0)
#: Before the weight matrix: which of its rows is the query x*?
ROW = Question("kr_row", min_value=0)
#: Before the CV curve: as h -> 0, does the CV error rise, fall or become undefined? (The
#: explanation follows the outcome: ``q.kr_cv_explain_<outcome>``.)
SMALL_H = Question(
    "kr_cv_small_h",
    prompt_key="q.kr_cv_prompt",
    choices={"rises": "q.kr_cv_rises", "falls": "q.kr_cv_falls", "undefined": "q.kr_cv_undefined"},
)


def fit_section(v: View) -> None:
    data, h = v.data, v.h
    fit = lesson_ui.fit(data.x, data.y, data.grid, v.kernel, h)
    fig = lesson_ui.fit_figure(
        data.x, data.y, data.grid, fit, truth=data.truth, x_query=v.xq, labels=lesson_ui.fit_labels(v)
    )
    show_figure(fig, key="kr_fig_fit", look_for_key="kr.look_fit", code=nw.nw_predict)
    missing, total = lesson_ui.undefined_fraction(fit)
    if missing:
        where = {"kernel": v.kernel_name, "h": lesson_ui.fmt_h(h)}
        st.warning(t("kr.undefined_warning", missing=missing, total=total, **where), icon=":material/block:")
    st.caption(t("kr.turning_points", tp=lesson_ui.turning_points(fit)))


def row_section(v: View) -> None:
    """One query's weights: a row of the attention map (drawn once its question is answered)."""
    n, h = v.data.x.size, lesson_ui.fmt_h(v.h)
    q = lesson_ui.query_row(v.data.x, v.data.y, v.xq, v.kernel, v.h)
    if q.active:
        prompt = {"xq": f"{v.xq:.3g}", "h": h, "n": n}
        ACTIVE.ask(q.active, prompt=prompt, explain={"active": q.active, "n": n, "h": h}, max_value=n)
    questions.reveal("kr_active", partial(_row_figure, v, q))


def _row_figure(v: View, q: lesson_ui.QueryRow) -> None:
    """The weights of the query x* over the samples, and the estimate they give."""
    data, xq = v.data, v.xq
    labels = lesson_ui.row_labels(xq)
    fig = lesson_ui.attention_row_figure(data.x, data.y, q.weights, x_query=xq, y_hat=q.y_hat, labels=labels)
    show_figure(fig, key="kr_fig_row", look_for_key="kr.look_row", code=nw.nw_weights)
    if math.isnan(q.y_hat):
        st.warning(t("kr.row_undefined", xq=f"{xq:.3g}"), icon=":material/block:")
    else:
        st.caption(t("kr.row_summary", y_hat=f"{q.y_hat:.4f}", active=q.active, n=data.x.size))


def matrix_section(v: View) -> None:
    queries = lesson_ui.heatmap_queries(v.data.grid)
    row = lesson_ui.nearest_row(queries, v.xq)  # the matrix row nearest to x*
    lo, xq = f"{queries[0]:.3g}", f"{v.xq:.3g}"
    ROW.ask(
        row,
        prompt={"q": queries.size, "lo": lo, "hi": f"{queries[-1]:.3g}", "xq": xq},
        explain={
            "row": row,
            "step": f"{queries[1] - queries[0]:.3g}",
            "lo": lo,
            "xq": xq,
            "x_row": f"{queries[row]:.3g}",
        },
        max_value=queries.size - 1,
    )
    w = lesson_ui.weights(v.data.x, queries, v.kernel, v.h)
    fig = lesson_ui.weight_matrix_figure(w, v.data.x, queries, labels=lesson_ui.matrix_labels(v))
    show_figure(fig, key="kr_fig_matrix", look_for_key="kr.look_matrix", code=nw.nw_weights)


def kernels_section(v: View) -> None:
    u = lesson_ui.KERNEL_U
    fig = lesson_ui.kernel_shapes_figure(
        u, lesson_ui.kernel_shapes(u), selected=v.kernel, labels=lesson_ui.kernel_labels()
    )
    show_figure(fig, key="kr_fig_kernels", look_for_key="kr.look_kernels", code=KERNELS[v.kernel])


def cv_section(v: View) -> None:
    """Leave-one-out CV and h*, with a button that sets the slider to it."""
    with st.spinner(t("kr.computing")):
        cv = lesson_ui.cv_curve(v.data.x, v.data.y, v.kernel, tuple(v.h_grid))
        h_star, cv_star = lesson_ui.best_bandwidth(v.data.x, v.data.y, v.kernel)
    outcome = lesson_ui.cv_outcome(cv, cv_star)
    SMALL_H.ask(
        outcome,
        prompt={"kernel": v.kernel_name},
        explain=lesson_ui.cv_explain(v, cv, cv_star),
        explain_key=f"q.kr_cv_explain_{outcome}",
    )
    questions.reveal("kr_cv_small_h", partial(_cv_figure, v, cv, h_star, cv_star))
    snapped = lesson_ui.snap(h_star, v.h_grid)
    st.markdown(t("kr.hstar_text", h=f"{h_star:.4f}", cv=f"{cv_star:.5f}", snapped=lesson_ui.fmt_h(snapped)))
    st.button(
        t("kr.set_hstar", h=lesson_ui.fmt_h(snapped)),
        key="kr_use_hstar",
        icon=":material/my_location:",
        on_click=lesson_ui.set_bandwidth,
        args=(v.h_key, snapped),
        disabled=snapped == v.h,
    )


def _cv_figure(v: View, cv: Sequence[float], h_star: float, cv_star: float) -> None:
    """The CV curve against h, with h* and the current h."""
    fig = lesson_ui.cv_figure(
        tuple(v.h_grid),
        cv,
        h_star=h_star,
        cv_star=cv_star,
        h_current=v.h,
        cv_current=lesson_ui.cv_at(cv, v.h_grid, v.h),
        claim=lesson_ui.claim_range(v),
        labels=lesson_ui.cv_labels(v, h_star),
    )
    show_figure(fig, key="kr_fig_cv", look_for_key="kr.look_cv", code=(nw.loo_cv_errors, nw.select_bandwidth))


def sweep_section(v: View) -> None:
    data = v.data
    sweep_h = [lesson_ui.snap(s * data.scale, v.h_grid) for s in lesson_ui.SWEEP]
    fits = [lesson_ui.fit(data.x, data.y, data.grid, v.kernel, s) for s in sweep_h]
    subtitles = [
        t("kr.sweep_subtitle", h=lesson_ui.fmt_h(s), tp=lesson_ui.turning_points(f))
        for s, f in zip(sweep_h, fits, strict=True)
    ]
    labels = lesson_ui.sweep_labels(v)
    fig = lesson_ui.sweep_figure(
        data.x, data.y, data.grid, fits, subtitles=subtitles, truth=data.truth, labels=labels
    )
    show_figure(fig, key="kr_fig_sweep", look_for_key="kr.look_sweep", code=nw.nw_predict)


def render() -> None:
    page_header("kr.title", "kr.intro")
    data = lesson_ui.data_controls()
    with classroom.controls_area():
        v = View(data, *lesson_ui.main_controls(data))
    run_sections(
        "kernel-regression",
        [
            Section("kr.fit_header", partial(fit_section, v)),
            Section("kr.row_header", partial(row_section, v)),
            Section("kr.formula_header", partial(lesson_ui.formula_section, v.kernel)),
            Section("kr.matrix_header", partial(matrix_section, v)),
            Section("kr.kernels_header", partial(kernels_section, v), folded=True),
            Section("kr.cv_header", partial(cv_section, v), folded=True),
            Section("kr.sweep_header", partial(sweep_section, v), folded=True),
            Section("kr.claims_header", lesson_ui.post_claims_section, folded=True),
            Section("kr.timing_header", partial(lesson_ui.timing_section, v), folded=True),
        ],
    )


render()
