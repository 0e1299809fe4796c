"""Scaled dot-product attention, taken apart: QKᵀ -> ÷ τ -> mask -> softmax -> × V.

Thin page: controls -> ``ui.scaled_dot_product`` (cached calls into ``core.lessons.scaled_dot_product``) ->
cached ``figures.scaled_dot_product`` builders. Every claim is printed next to the number that backs it,
computed on the current inputs. One convention: the scores are divided by the temperature τ
(τ = √d_k in the Transformer); the scale factor 1/τ is the inverse temperature.

``render`` is the table of contents. The controls at the top drive every section; the
kernel-regression comparison has its own sliders and reruns alone (``st.fragment``).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import attention as attn
from core.lessons import scaled_dot_product as lesson
from figures.attention_shared import vline_marks
from figures.scaled_dot_product import LinePanel, panel_axes
from ui import classroom, questions
from ui import controls as uc
from ui import scaled_dot_product as lesson_ui
from ui.i18n import t
from ui.layout import page_header, show_figure, table
from ui.plotly_spec import Marks
from ui.sections import Section, run_sections

TEMPERATURES = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
NW_BANDWIDTHS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2)
#: Height of one row of Streamlit's data editor (px), to size the mask editor to every row.
EDITOR_ROW_PX = 35


# ----------------------------------------------------------------------------------------------
# callbacks (run before the next script run, so they may set bound controls)
# ----------------------------------------------------------------------------------------------


def _set(**values: object) -> None:
    for key, value in values.items():
        st.session_state[key] = value


def _empty_row_mask(L: int) -> None:
    """Custom mask = causal with every key of query 0 masked (the NaN trap)."""
    _set(sdp_mask="custom", sdp_cmask="0" + lesson_ui.default_custom_mask(L)[1:])


def _on_mask_edit(editor_key: str, L: int, labels: tuple[str, ...]) -> None:
    edits = st.session_state.get(editor_key) or {}
    text = st.session_state.get("sdp_cmask", "") or lesson_ui.default_custom_mask(L)
    st.session_state["sdp_cmask"] = lesson_ui.apply_editor_edits(
        text, L, edits.get("edited_rows", {}), labels
    )


# ----------------------------------------------------------------------------------------------
# page-wide controls and the setup every section uses
# ----------------------------------------------------------------------------------------------


def _input_controls(where) -> tuple[str, int, int]:
    source = uc.radio(
        "sdp.input",
        key="sdp_input",
        options=lesson_ui.SOURCES,
        option_prefix="sdp.input_",
        horizontal=False,
        where=where,
    )
    length = 8
    if source == "random":
        length = int(
            uc.slider("sdp.length", key="sdp_len", min_value=2, max_value=32, value=8, step=1, where=where)
        )
    return source, length, uc.seed("sdp_seed", value=0, where=where)


def _scale_controls(where) -> tuple[int, str, float]:
    dk = int(
        uc.select_slider(
            "sdp.dk",
            key="sdp_dk",
            options=lesson_ui.DK_OPTIONS,
            value=16,
            help_key="sdp.dk_help",
            where=where,
        )
    )
    mode = uc.radio(
        "sdp.scale", key="sdp_scale", options=lesson_ui.SCALE_MODES, option_prefix="sdp.scale_", where=where
    )
    temperature = 1.0
    if mode == "custom":
        temperature = float(
            uc.select_slider(
                "sdp.temperature",
                key="sdp_temp",
                options=TEMPERATURES,
                value=4.0,
                help_key="sdp.temperature_help",
                where=where,
            )
        )
    return dk, mode, temperature


def _mask_controls(where) -> tuple[str, int]:
    mode = uc.radio(
        "sdp.mask",
        key="sdp_mask",
        options=lesson_ui.MASK_MODES,
        option_prefix="sdp.mask_",
        horizontal=False,
        where=where,
    )
    n_pad = 0
    if mode == "padding":
        n_pad = int(
            uc.slider(
                "sdp.pad",
                key="sdp_pad",
                min_value=0,
                max_value=32,
                value=2,
                step=1,
                help_key="sdp.pad_help",
                where=where,
            )
        )
    return mode, n_pad


def controls_section() -> lesson_ui.SdpControls:
    """The page-wide controls: inputs, d_k and the temperature, the mask."""
    c1, c2, c3 = st.columns(3)
    source, length, seed = _input_controls(c1)
    dk, scale_mode, temperature = _scale_controls(c2)
    mask_mode, n_pad = _mask_controls(c3)
    return lesson_ui.SdpControls(source, length, seed, dk, scale_mode, temperature, mask_mode, n_pad)


def mask_editor_section(L: int, labels: tuple[str, ...]) -> str:
    """The custom mask: a bound text (the URL form) and a grid of checkboxes that edits it."""
    st.subheader(t("sdp.editor_title"))
    st.markdown(t("sdp.editor_body"))
    text = lesson_ui.text_control("sdp.editor_text", key="sdp_cmask", help_key="sdp.editor_text_help")
    try:
        mask = lesson_ui.sdp_mask("custom", L, 0, text)
    except ValueError:
        st.warning(t("sdp.mask_invalid", L=L))
        mask = lesson_ui.sdp_mask("causal", L, 0, None)
    current = text.strip() if text and text.strip() else lesson_ui.default_custom_mask(L)
    editor_key = f"sdp_mask_editor_{L}_{current}"
    st.data_editor(
        lesson_ui.mask_frame(mask, labels),
        key=editor_key,
        on_change=_on_mask_edit,
        args=(editor_key, L, labels),
        width="stretch",
        height=EDITOR_ROW_PX * (L + 1) + 3,  # header + every row: the last row is never hidden
    )
    st.caption(t("sdp.editor_caption", text=lesson_ui.mask_text(mask)))
    return text


def setup_section(c: lesson_ui.SdpControls) -> lesson_ui.SdpSetup | None:
    """Build Q, K, V, the mask (with its editor) and the pipeline; None (and an error) on bad sizes."""
    try:
        inp = lesson_ui.sdp_inputs(c.source, c.length, c.dk, c.seed, c.n_pad)
        scale = lesson_ui.scale_for(c.scale_mode, c.dk, c.temperature)
    except ValueError:
        st.error(t("sdp.input_error"))
        return None
    L = len(inp.labels)
    if c.mask_mode == "padding":
        st.caption(t("sdp.pad_caption", n=inp.n_pad, L=L))
    text = mask_editor_section(L, inp.labels) if c.mask_mode == "custom" else None
    try:
        mask = lesson_ui.sdp_mask(c.mask_mode, L, inp.n_pad, text)
    except ValueError:
        mask = lesson_ui.sdp_mask("causal", L, 0, None)
    return lesson_ui.SdpSetup(c, inp, mask, scale, lesson_ui.sdp_steps(inp, mask, scale))


# ----------------------------------------------------------------------------------------------
# sections
# ----------------------------------------------------------------------------------------------


def qkv_section(s: lesson_ui.SdpSetup) -> None:
    """Q, K and V themselves: one row per token, one column per dimension."""
    st.markdown(t("sdp.qkv_body_sentence" if s.inputs.tokens else "sdp.qkv_body_random"))
    fig = lesson_ui.qkv_heatmaps(
        s.inputs.q,
        s.inputs.k,
        s.inputs.v,
        labels=s.labels,
        titles=(t("sdp.fig_q", dk=s.controls.dk), t("sdp.fig_k", dk=s.controls.dk), t("sdp.fig_v")),
        x_titles=(t("sdp.axis_dk"), t("sdp.axis_dv")),
        y_title=t("sdp.axis_token"),
        height=max(320, 60 + 22 * len(s.labels)),
    )
    show_figure(fig, key="sdp_fig_qkv", look_for_key="sdp.look_qkv", code=lesson.make_inputs)


def _heat(kind: str, z, s: lesson_ui.SdpSetup, title: str, key: str, **look: object) -> None:
    kx, qy = t("sdp.axis_key"), t("sdp.axis_query")
    builder = {"scores": lesson_ui.score_heatmap, "weights": lesson_ui.weights_heatmap}[kind]
    fig = builder(z, x_labels=s.labels, y_labels=s.labels, title=title, x_title=kx, y_title=qy)
    look_key = f"sdp.look_{key.removeprefix('sdp_fig_')}"
    show_figure(fig, key=key, look_for_key=look_key, code=attn.attention_steps, **look)


def pipeline_section(s: lesson_ui.SdpSetup) -> None:
    """The steps as heatmaps (one figure of four panels), with the scale, spread, peak and entropy."""
    st.markdown(t("sdp.pipeline_body"))
    stats = lesson_ui.row_stats(s.steps.weights)
    m = st.columns(5)
    m[0].metric(t("sdp.metric_temperature"), f"{s.temperature:.4g}", help=t("sdp.metric_temperature_help"))
    m[1].metric(t("sdp.metric_scale"), f"{s.scale:.4g}", help=t("sdp.metric_scale_help"))
    m[2].metric(t("sdp.metric_raw_std"), f"{lesson_ui.score_std(s.steps.raw):.3g}")
    m[3].metric(t("sdp.metric_max_weight"), f"{stats.max_weight:.3f}")
    m[4].metric(t("sdp.metric_entropy"), f"{stats.entropy:.3f}", help=t("sdp.metric_entropy_help"))
    tau, factor = f"{s.temperature:.3g}", f"{s.scale:.3g}"
    titles = {
        "raw": t("sdp.fig_raw"),
        "scaled": t("sdp.fig_scaled", tau=tau, scale=factor),
        "masked": t("sdp.fig_masked", mask=t(f"sdp.mask_{s.controls.mask_mode}")),
        "weights": t("sdp.fig_weights"),
    }
    z = {"raw": s.steps.raw, "scaled": s.steps.scaled, "masked": s.steps.masked, "weights": s.steps.weights}
    fig = lesson_ui.pipeline_heatmaps(
        tuple((titles[k], z[k], "weights" if k == "weights" else "scores") for k in titles),
        x_labels=s.labels,
        y_labels=s.labels,
        x_title=t("sdp.axis_key"),
        y_title=t("sdp.axis_query"),
        panel_height=max(300, 80 + 24 * len(s.labels)),
    )  # one chart: a step of a page-wide control redraws one chart, not four
    show_figure(
        fig,
        key="sdp_fig_pipeline",
        looks=[(titles[k], f"sdp.look_{k}") for k in titles],
        code=attn.attention_steps,
        max_weight=f"{stats.max_weight:.3f}",
    )
    c5, c6 = st.columns(2)
    with c5:
        fig = lesson_ui.output_heatmap(
            s.steps.output,
            y_labels=s.labels,
            title=t("sdp.fig_output"),
            x_title=t("sdp.axis_dv"),
            y_title=t("sdp.axis_query"),
        )
        show_figure(fig, key="sdp_fig_output", look_for_key="sdp.look_output", code=attn.attention_steps)
    with c6:
        _repeated_tokens(s)


def _repeated_tokens(s: lesson_ui.SdpSetup) -> None:
    if not s.inputs.tokens:
        st.markdown(t("sdp.random_inputs_note"))
        return
    st.markdown(t("sdp.repeated_tokens"))
    rep = lesson_ui.repeated_token_rows(s.inputs.tokens, s.steps.weights)
    if rep:
        table(
            {
                t("sdp.col_token"): [r.token for r in rep],
                t("sdp.col_positions"): [", ".join(map(str, r.positions)) for r in rep],
                t("sdp.col_max_row_diff"): [f"{r.max_diff:.1e}" for r in rep],
            },
            hide_index=True,
        )


#: The d_k figures: name -> (series ids, extra arguments of the line figure).
DK_FIGURES = {
    "var": (("var_measured", "var_theory", "var_scaled"), {"log_y": True, "dashed_ids": ("var_theory",)}),
    "entropy": (("entropy_scaled", "entropy_unscaled"), {"uniform": True}),
    "max": (("max_scaled", "max_unscaled", "sat_unscaled"), {"dashed_ids": ("sat_unscaled",)}),
    "grad": (("grad_scaled", "grad_unscaled"), {"log_y": True}),
}
Y_TITLES = {
    "var": "sdp.axis_variance",
    "entropy": "sdp.axis_entropy",
    "max": "sdp.axis_weight",
    "grad": "sdp.axis_grad",
}


def _dk_figure(e, dk: int) -> None:
    """The four d_k curves in one figure (cached per seed and language); the current d_k is a
    marker drawn over it, so moving d_k rebuilds nothing and redraws one chart."""
    values = lesson_ui.dk_series(e)
    panels = tuple(
        LinePanel(
            title=t(f"sdp.fig_dk_{name}"),
            series={t(f"sdp.series_{i}"): values[i] for i in ids},
            y_title=t(Y_TITLES[name]),
            log_y=extra.get("log_y", False),
            dashed=tuple(t(f"sdp.series_{i}") for i in extra.get("dashed_ids", ())),
            hlines={t("sdp.uniform_entropy"): e.log_s} if extra.get("uniform") else None,
        )
        for name, (ids, extra) in DK_FIGURES.items()
    )
    fig = lesson_ui.line_panels(e.d_k, panels, x_title="d_k", log_x=True)
    axes = panel_axes(len(panels))
    marker = Marks(*(tuple(part) for part in vline_marks(dk, t("sdp.current_dk"), log_x=True, axes=axes)))
    looks = [(t(f"sdp.fig_dk_{name}"), f"sdp.look_dk_{name}") for name in DK_FIGURES]
    show_figure(fig, key="sdp_fig_dk", looks=looks, code=lesson.dk_experiment, marks=marker)


def dk_section(c: lesson_ui.SdpControls) -> None:
    """Why √d_k: variance, entropy, peak weight and gradients against d_k (cached per seed)."""
    with st.spinner(t("sdp.dk_running")):
        e = lesson_ui.sdp_dk_experiment(c.seed)
    i = list(e.d_k).index(c.dk)
    _dk_question(e, i, c.dk)
    questions.reveal("sdp_dk_peak", partial(_dk_results, e, i, c.dk))


def _dk_results(e, i: int, dk: int) -> None:
    """The reason, the four curves, the numbers at this d_k and the table (they answer the question)."""
    st.markdown(t("sdp.dk_body"))
    st.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k")
    _dk_figure(e, dk)
    st.markdown(
        t(
            "sdp.dk_claim",
            dk=dk,
            var=f"{e.var_measured[i]:.1f}",
            max_u=f"{e.max_weight_unscaled[i]:.2f}",
            max_s=f"{e.max_weight_scaled[i]:.2f}",
            sat_u=f"{100 * e.saturated_unscaled[i]:.0f}",
            grad_u=f"{e.grad_scores_unscaled[i]:.2g}",
            grad_s=f"{e.grad_scores_scaled[i]:.2g}",
            cv_u=f"{e.grad_query_cv_unscaled[i]:.2f}",
            cv_s=f"{e.grad_query_cv_scaled[i]:.2f}",
        )
    )
    table(lesson_ui.dk_table(e))  # a static table wraps to the page width (a grid scrolls sideways)


def _dk_question(e, i: int, dk: int) -> None:
    """Without scaling, is the peak weight at this d_k nearer one-hot or uniform? (the experiment's)"""
    length = e.length
    peak = float(e.max_weight_unscaled[i])
    questions.ask(
        "sdp_dk_peak",
        prompt_key="q.sdp_dk_prompt",
        prompt_kwargs={"dk": dk, "L": length},
        choices={"one": "q.sdp_dk_one", "uniform": "q.sdp_dk_uniform"},
        choice_kwargs={"L": length},
        answer="one" if abs(peak - 1) < abs(peak - 1 / length) else "uniform",
        explain_key="q.sdp_dk_explain",
        explain_kwargs={
            "dk": dk,
            "L": length,
            "peak": f"{peak:.2f}",
            "scaled": f"{e.max_weight_scaled[i]:.2f}",
        },
    )


def nan_section(s: lesson_ui.SdpSetup) -> None:
    """A query with every key masked: the additive -inf gives NaN, the safe version zeros."""
    w_naive = lesson_ui.sdp_naive(s.inputs, s.mask, s.scale)
    empty = lesson_ui.count_fully_masked(s.mask)
    _empty_row_questions(s, w_naive, empty)
    questions.reveal(("sdp_empty_naive", "sdp_empty_safe"), partial(_nan_results, s, w_naive, empty))


def _nan_results(s: lesson_ui.SdpSetup, w_naive, empty: int) -> None:
    """Why NaN, the rows it hits on the page's mask, and the two weight maps side by side."""
    st.markdown(t("sdp.nan_body"))
    st.latex(
        r"\text{softmax}(z)_j=\frac{e^{z_j-\max_k z_k}}{\sum_l e^{z_l-\max_k z_k}},\qquad "
        r"z\equiv-\infty\ \Rightarrow\ z_j-\max_k z_k=-\infty-(-\infty)=\text{NaN}"
    )
    naive, safe = lesson_ui.row_stats(w_naive), lesson_ui.row_stats(s.steps.weights)
    m1, m2, m3 = st.columns(3)
    m1.metric(t("sdp.metric_empty_rows"), empty)
    m2.metric(t("sdp.metric_naive_nan"), naive.nan_rows)
    m3.metric(
        t("sdp.metric_safe_nan"), safe.nan_rows, help=t("sdp.metric_safe_nan_help", zero=safe.zero_rows)
    )
    if empty == 0:
        st.info(t("sdp.nan_none"))
        st.button(t("sdp.nan_make"), key="sdp_btn_empty_row", on_click=_empty_row_mask, args=(len(s.labels),))
    c1, c2 = st.columns(2)
    with c1:
        _heat("weights", w_naive, s, t("sdp.fig_naive"), "sdp_fig_naive")
    with c2:
        _heat("weights", s.steps.weights, s, t("sdp.fig_safe"), "sdp_fig_safe")
    st.markdown(t("sdp.nan_why"))


def _row_outcome(weights) -> str:
    """What one weight row (1, S) holds: NaN, all zeros, or weights (spread over the keys)."""
    stats = lesson_ui.row_stats(weights)
    return "nan" if stats.nan_rows else "zeros" if stats.zero_rows else "uniform"


def _empty_row_questions(s: lesson_ui.SdpSetup, w_naive, empty: int) -> None:
    """Naive and safe softmax on a row with every key masked: the page's row, or the button's mask."""
    if empty:
        row = next(i for i, allowed in enumerate(s.mask) if not allowed.any())
        naive, safe = w_naive[row : row + 1], s.steps.weights[row : row + 1]
    else:  # no such row yet: the mask the "make one" button builds (query 0 sees no key)
        L = len(s.labels)
        probe = lesson_ui.sdp_mask("custom", L, 0, "0" + lesson_ui.default_custom_mask(L)[1:])
        row = 0
        naive = lesson_ui.sdp_naive(s.inputs, probe, s.scale)[:1]
        safe = lesson_ui.sdp_steps(s.inputs, probe, s.scale).weights[:1]
    choices = {"nan": "q.sdp_row_nan", "zeros": "q.sdp_row_zeros", "uniform": "q.sdp_row_uniform"}
    label = s.labels[row]
    for name, weights in (("naive", naive), ("safe", safe)):
        questions.ask(
            f"sdp_empty_{name}",
            prompt_key=f"q.sdp_empty_{name}_prompt",
            prompt_kwargs={"query": label},
            choices=choices,
            answer=_row_outcome(weights),
            explain_key=f"q.sdp_empty_{name}_explain",
            explain_kwargs={"query": label, "row": ", ".join(f"{w:.2g}" for w in weights[0][:6])},
        )


def torch_section(s: lesson_ui.SdpSetup) -> None:
    """Ours against ``torch.nn.functional.scaled_dot_product_attention`` (measured once per input)."""
    st.markdown(t("sdp.torch_body"))
    cmp = lesson_ui.sdp_compare_torch(s.inputs, s.mask, s.scale)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(t("sdp.metric_max_diff"), f"{cmp.max_abs_diff:.1e}")
    m2.metric(t("sdp.metric_time_ours"), f"{1e6 * cmp.seconds_ours:.0f} µs")
    m3.metric(t("sdp.metric_time_torch"), f"{1e6 * cmp.seconds_torch:.0f} µs")
    m4.metric(t("sdp.metric_torch_nan"), cmp.torch_nan_rows)
    ratio = f"{cmp.seconds_ours / cmp.seconds_torch:.2f}"
    st.caption(t("sdp.torch_caption", rows=cmp.rows_compared, ratio=ratio, version=lesson_ui.TORCH_VERSION))


def normalizer_section(s: lesson_ui.SdpSetup) -> None:
    """Softmax, sparsemax and entmax-1.5 on the page's scores: which weights become exactly zero."""
    res = lesson_ui.normalizer_weights(s.inputs, s.mask, s.scale)
    soft = res[[r.name for r in res].index("softmax")]
    questions.ask(
        "sdp_softmax_zero",
        prompt_key="q.sdp_zero_prompt",
        prompt_kwargs={"tau": f"{s.temperature:.3g}"},
        choices={"yes": "common.yes", "no": "common.no"},
        answer="yes" if soft.zeros else "no",
        explain_key="q.sdp_zero_explain",
        explain_kwargs={"zeros": soft.zeros, "allowed": soft.allowed, "underflow": soft.underflow},
    )
    questions.reveal("sdp_softmax_zero", partial(_normalizer_results, s, res))


def _normalizer_results(s: lesson_ui.SdpSetup, res) -> None:
    """What each normaliser does, its exact zeros on the page's scores, and the three maps."""
    st.markdown(t("sdp.sparse_body"))
    st.latex(
        r"\mathrm{sparsemax}(z)_j=\max(z_j-\theta,0),\quad \sum_j \max(z_j-\theta,0)=1;\qquad"
        r"\mathrm{entmax}_{1.5}(z)_j=\max(z_j/2-\theta,0)^2"
    )
    names = {r.name: t(f"sdp.norm_{r.name}") for r in res}
    for col, r in zip(st.columns(len(res)), res, strict=True):
        col.metric(t("sdp.metric_zeros", name=names[r.name]), f"{r.zeros} / {r.allowed}")
    under = {r.name: r.underflow for r in res}
    st.caption(
        t("sdp.zeros_caption", soft=under["softmax"], sparse=under["sparsemax"], ent=under["entmax15"])
    )
    fig = lesson_ui.heatmap_row(
        tuple((names[r.name], r.weights) for r in res),
        x_labels=s.labels,
        y_labels=s.labels,
        x_title=t("sdp.axis_key"),
        y_title=t("sdp.axis_query"),
    )
    show_figure(
        fig, key="sdp_fig_normalizers", look_for_key="sdp.look_normalizers", code=lesson.normalizer_weights
    )
    nw_normalizer_section()  # the same on kernel regression's scores: softmax's zeros again


@st.fragment
def nw_normalizer_section() -> None:
    """The same in kernel regression: one query's weights; its own sliders rerun only this section."""
    st.subheader(t("sdp.sparse_nw_title"))
    st.markdown(t("sdp.sparse_nw_body"))
    c1, c2 = st.columns(2)
    h = float(
        uc.select_slider(
            "sdp.nw_h", key="sdp_nw_h", options=NW_BANDWIDTHS, value=0.3, help_key="sdp.nw_h_help", where=c1
        )
    )
    x0 = float(
        uc.slider("sdp.nw_x0", key="sdp_nw_x0", min_value=-3.0, max_value=3.0, value=0.5, step=0.1, where=c2)
    )
    nw = lesson_ui.nw_normalizers(h, x0)
    names = {n: t(f"sdp.norm_{n}") for n in nw.rows}
    n = len(nw.x)
    m = st.columns(4)
    for col, name in zip(m, names, strict=False):
        col.metric(t("sdp.metric_nonzero", name=names[name]), f"{nw.nonzero[name]} / {n}")
    m[3].metric(t("sdp.metric_radius"), f"{nw.radius:.3f}")
    struct = n - nw.nonzero["sparsemax"] - nw.underflow["sparsemax"]
    soft_zero, soft_uf = n - nw.nonzero["softmax"], nw.underflow["softmax"]
    st.caption(t("sdp.nw_zeros_caption", soft_zero=soft_zero, soft_uf=soft_uf, sparse_struct=struct))
    fig = lesson_ui.normaliser_rows(
        nw.x,
        {names[k]: w for k, w in nw.rows.items()},
        x0=x0,
        radius=nw.radius,
        title=t("sdp.fig_nw_normalizers", h=h),
        x_title=t("sdp.axis_x"),
        y_title=t("sdp.axis_weight"),
        query_name=t("sdp.query_point"),
        radius_name=t("sdp.radius_band"),
    )
    show_figure(
        fig, key="sdp_fig_nw_normalizers", look_for_key="sdp.look_nw_normalizers", code=lesson.nw_normalizers
    )
    st.markdown(t("sdp.sparse_epanechnikov", diff=f"{nw.max_diff_epanechnikov:.1e}", r=f"{nw.radius:.3f}"))


def _trouble_rows(s: lesson_ui.SdpSetup) -> list[tuple[str, str, dict | None, dict]]:
    """(name, measured now, controls that reproduce it (None: the empty-row mask), controls that fix it)."""
    c = s.controls
    stats, naive = (
        lesson_ui.row_stats(s.steps.weights),
        lesson_ui.row_stats(lesson_ui.sdp_naive(s.inputs, s.mask, s.scale)),
    )
    e = lesson_ui.sdp_dk_experiment(c.seed)
    i = list(e.d_k).index(c.dk)
    loss = t(
        "sdp.trouble_now_loss",
        dk=c.dk,
        cv_u=f"{e.grad_query_cv_unscaled[i]:.2f}",
        cv_s=f"{e.grad_query_cv_scaled[i]:.2f}",
        grad_u=f"{e.grad_scores_unscaled[i]:.2g}",
    )
    peak = t("sdp.trouble_now_peak", max_weight=f"{stats.max_weight:.3f}", entropy=f"{stats.entropy:.3f}")
    nan = t("sdp.trouble_now_nan", naive=naive.nan_rows, safe=stats.nan_rows)
    return [
        ("loss", loss, {"sdp_scale": "one", "sdp_dk": 512}, {"sdp_scale": "sqrt_dk"}),
        (
            "peak",
            peak,
            {"sdp_scale": "custom", "sdp_temp": 0.1, "sdp_mask": "none"},
            {"sdp_scale": "sqrt_dk"},
        ),
        ("nan", nan, None, {"sdp_mask": "causal"}),
    ]


def troubleshooting_section(s: lesson_ui.SdpSetup) -> None:
    """The post's table: each symptom measured now, with buttons that set the controls; the
    weights they produce are drawn right here, so the result of a click is in view."""
    st.markdown(t("sdp.trouble_body"))
    widths = [2, 2, 2, 3, 2]
    for col, key in zip(st.columns(widths), ("symptom", "cause", "fix", "now", "try"), strict=True):
        col.markdown("**" + t(f"sdp.trouble_col_{key}") + "**")
    for name, now, reproduce, fix in _trouble_rows(s):
        c = st.columns(widths)
        for j, part in enumerate(("symptom", "cause", "fix")):
            c[j].markdown(t(f"sdp.trouble_{name}_{part}"))
        c[3].markdown(now)
        key = f"sdp_btn_{name}_reproduce"
        if reproduce is None:
            c[4].button(t("sdp.trouble_reproduce"), key=key, on_click=_empty_row_mask, args=(len(s.labels),))
        else:
            c[4].button(t("sdp.trouble_reproduce"), key=key, on_click=_set, kwargs=reproduce)
        c[4].button(t("sdp.trouble_fix"), key=f"sdp_btn_{name}_fix", on_click=_set, kwargs=fix)
    c = s.controls
    scale_name = t(f"sdp.scale_{c.scale_mode}")
    st.caption(
        t(
            "sdp.trouble_now_controls",
            dk=c.dk,
            scale=scale_name,
            tau=f"{s.temperature:.3g}",
            mask=t(f"sdp.mask_{c.mask_mode}"),
        )
    )
    _heat("weights", s.steps.weights, s, t("sdp.fig_weights"), "sdp_fig_trouble_weights")  # a cache hit


def sparse_section(s: lesson_ui.SdpSetup) -> None:
    normalizer_section(s)  # draws nw_normalizer_section once its question is answered


def render() -> None:
    page_header("sdp.title", "sdp.intro")
    if classroom.on_title_slide():  # the page's formula: part of its header
        st.latex(
            r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\mathrm{mask}\!\left(\frac{QK^\top}{\tau}\right)\right)V,"
            r"\qquad \tau=\sqrt{d_k}"
        )
    with classroom.controls_area():
        controls = controls_section()
        setup = setup_section(controls)
    if setup is None:
        return
    run_sections(
        "scaled-dot-product",
        [
            Section("sdp.qkv_title", partial(qkv_section, setup)),
            Section("sdp.pipeline_title", partial(pipeline_section, setup)),
            Section("sdp.dk_title", partial(dk_section, controls)),
            Section("sdp.nan_title", partial(nan_section, setup), folded=True),
            Section("sdp.torch_title", partial(torch_section, setup), folded=True),
            Section("sdp.sparse_title", partial(sparse_section, setup), folded=True),
            Section("sdp.trouble_title", partial(troubleshooting_section, setup), folded=True),
        ],
    )


render()
