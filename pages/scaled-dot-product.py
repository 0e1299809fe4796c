"""Scaled dot-product attention, taken apart: QKᵀ -> ÷ scale -> mask -> softmax -> × V.

Thin page: controls -> ``ui.attention`` (cached calls into ``core.attention``) -> ``figures.attention``.
Every claim is printed next to the number that backs it, computed on the current inputs.
"""

from __future__ import annotations

import streamlit as st

from figures import attention as fa
from ui import attention as ua
from ui import controls as uc
from ui.i18n import t
from ui.layout import page_header, show_figure

TEMPERATURES = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
NW_BANDWIDTHS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2)


# ----------------------------------------------------------------------------------------------
# callbacks (run before the next script run, so they may set bound controls)
# ----------------------------------------------------------------------------------------------


def _set(**values: object) -> None:
    for key, value in values.items():
        st.session_state[key] = value


def _empty_row_mask(L: int) -> None:
    """Custom mask = causal with every key of query 0 masked (the NaN trap)."""
    _set(sdp_mask="custom", sdp_cmask="0" + ua.default_custom_mask(L)[1:])


def _on_mask_edit(editor_key: str, L: int, labels: list[str]) -> None:
    edits = st.session_state.get(editor_key) or {}
    text = st.session_state.get("sdp_cmask", "") or ua.default_custom_mask(L)
    st.session_state["sdp_cmask"] = ua.apply_editor_edits(text, L, edits.get("edited_rows", {}), labels)


# ----------------------------------------------------------------------------------------------
# sections
# ----------------------------------------------------------------------------------------------


def _controls() -> dict:
    c1, c2, c3 = st.columns(3)
    source = uc.radio(
        "sdp.input",
        key="sdp_input",
        options=ua.SOURCES,
        option_prefix="sdp.input_",
        horizontal=False,
        where=c1,
    )
    length = 8
    if source == "random":
        length = int(
            uc.slider("sdp.length", key="sdp_len", min_value=2, max_value=32, value=8, step=1, where=c1)
        )
    seed = uc.seed("sdp_seed", value=0, where=c1)
    dk = int(
        uc.select_slider(
            "sdp.dk", key="sdp_dk", options=ua.DK_OPTIONS, value=16, help_key="sdp.dk_help", where=c2
        )
    )
    scale_mode = uc.radio(
        "sdp.scale", key="sdp_scale", options=ua.SCALE_MODES, option_prefix="sdp.scale_", where=c2
    )
    temperature = 1.0
    if scale_mode == "temperature":
        temperature = float(
            uc.select_slider(
                "sdp.temperature",
                key="sdp_temp",
                options=TEMPERATURES,
                value=4.0,
                help_key="sdp.temperature_help",
                where=c2,
            )
        )
    mask_mode = uc.radio(
        "sdp.mask",
        key="sdp_mask",
        options=ua.MASK_MODES,
        option_prefix="sdp.mask_",
        horizontal=False,
        where=c3,
    )
    n_pad = 0
    if mask_mode == "padding":
        n_pad = int(
            uc.slider(
                "sdp.pad",
                key="sdp_pad",
                min_value=0,
                max_value=32,
                value=2,
                step=1,
                help_key="sdp.pad_help",
                where=c3,
            )
        )
    return {
        "source": source,
        "length": length,
        "seed": seed,
        "dk": dk,
        "scale_mode": scale_mode,
        "temperature": temperature,
        "mask_mode": mask_mode,
        "n_pad": n_pad,
    }


def _mask_editor(L: int, labels: list[str]) -> str:
    """The custom mask: a bound text (the URL form) and a grid of checkboxes that edits it."""
    st.subheader(t("sdp.editor_title"))
    st.markdown(t("sdp.editor_body"))
    text = ua.text_control("sdp.editor_text", key="sdp_cmask", help_key="sdp.editor_text_help")
    try:
        mask = ua.build_mask("custom", L, 0, text)
    except ValueError:
        st.warning(t("sdp.mask_invalid", L=L))
        mask = ua.build_mask("causal", L, 0, None)
    current = text.strip() if text and text.strip() else ua.default_custom_mask(L)
    editor_key = f"sdp_mask_editor_{L}_{current}"
    st.data_editor(
        ua.mask_frame(mask, labels),
        key=editor_key,
        on_change=_on_mask_edit,
        args=(editor_key, L, labels),
        width="stretch",
    )
    st.caption(t("sdp.editor_caption", text=ua.mask_text(mask)))
    return text


def _pipeline(inp: ua.SdpInputs, steps: dict, scale: float, p: dict) -> None:
    st.header(t("sdp.pipeline_title"))
    st.markdown(t("sdp.pipeline_body"))
    labels = inp.labels
    kx, qy = t("sdp.axis_key"), t("sdp.axis_query")
    stats = ua.row_stats(steps["weights"])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(t("sdp.metric_scale"), f"{scale:.4g}")
    m2.metric(t("sdp.metric_raw_std"), f"{ua.score_std(steps['raw']):.3g}")
    m3.metric(t("sdp.metric_max_weight"), f"{stats['max_weight']:.3f}")
    m4.metric(t("sdp.metric_entropy"), f"{stats['entropy']:.3f}", help=t("sdp.metric_entropy_help"))
    c1, c2 = st.columns(2)
    with c1:
        show_figure(
            fa.score_heatmap(
                steps["raw"], x_labels=labels, y_labels=labels, title=t("sdp.fig_raw"), x_title=kx, y_title=qy
            ),
            key="sdp_fig_raw",
            look_for_key="sdp.look_raw",
        )
    with c2:
        show_figure(
            fa.score_heatmap(
                steps["scaled"],
                x_labels=labels,
                y_labels=labels,
                title=t("sdp.fig_scaled", scale=f"{scale:.3g}"),
                x_title=kx,
                y_title=qy,
            ),
            key="sdp_fig_scaled",
            look_for_key="sdp.look_scaled",
        )
    c3, c4 = st.columns(2)
    with c3:
        show_figure(
            fa.score_heatmap(
                steps["masked"],
                x_labels=labels,
                y_labels=labels,
                title=t("sdp.fig_masked", mask=t(f"sdp.mask_{p['mask_mode']}")),
                x_title=kx,
                y_title=qy,
            ),
            key="sdp_fig_masked",
            look_for_key="sdp.look_masked",
        )
    with c4:
        show_figure(
            fa.weights_heatmap(
                steps["weights"],
                x_labels=labels,
                y_labels=labels,
                title=t("sdp.fig_weights"),
                x_title=kx,
                y_title=qy,
            ),
            key="sdp_fig_weights",
            look_for_key="sdp.look_weights",
            max_weight=f"{stats['max_weight']:.3f}",
        )
    c5, c6 = st.columns(2)
    with c5:
        show_figure(
            fa.output_heatmap(
                steps["output"],
                y_labels=labels,
                title=t("sdp.fig_output"),
                x_title=t("sdp.axis_dv"),
                y_title=qy,
            ),
            key="sdp_fig_output",
            look_for_key="sdp.look_output",
        )
    with c6:
        if inp.tokens:
            st.markdown(t("sdp.repeated_tokens"))
            rep = ua.repeated_token_rows(inp.tokens, steps["weights"])
            if rep:
                st.table(
                    {
                        t("sdp.col_token"): [r["token"] for r in rep],
                        t("sdp.col_positions"): [r["positions"] for r in rep],
                        t("sdp.col_max_row_diff"): [f"{r['max_diff']:.1e}" for r in rep],
                    },
                    hide_index=True,
                )
        else:
            st.markdown(t("sdp.random_inputs_note"))


def _scale_section(p: dict, steps: dict) -> None:
    st.header(t("sdp.dk_title"))
    st.markdown(t("sdp.dk_body"))
    st.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k")
    with st.spinner(t("sdp.dk_running")):
        e = ua.sdp_dk_experiment(p["seed"])
    dk_now = p["dk"]
    c1, c2 = st.columns(2)
    with c1:
        show_figure(
            fa.line_figure(
                e.d_k,
                {
                    t("sdp.series_var_measured"): e.var_measured,
                    t("sdp.series_var_theory"): e.var_theory,
                    t("sdp.series_var_scaled"): e.var_scaled,
                },
                title=t("sdp.fig_dk_var"),
                x_title="d_k",
                y_title=t("sdp.axis_variance"),
                log_x=True,
                log_y=True,
                dashed=[t("sdp.series_var_theory")],
                vline=dk_now,
                vline_text=t("sdp.current_dk"),
            ),
            key="sdp_fig_dk_var",
            look_for_key="sdp.look_dk_var",
        )
    with c2:
        show_figure(
            fa.line_figure(
                e.d_k,
                {
                    t("sdp.series_entropy_scaled"): e.entropy_scaled,
                    t("sdp.series_entropy_unscaled"): e.entropy_unscaled,
                },
                title=t("sdp.fig_dk_entropy"),
                x_title="d_k",
                y_title=t("sdp.axis_entropy"),
                log_x=True,
                hlines={t("sdp.uniform_entropy"): e.log_s},
                vline=dk_now,
                vline_text=t("sdp.current_dk"),
            ),
            key="sdp_fig_dk_entropy",
            look_for_key="sdp.look_dk_entropy",
        )
    c3, c4 = st.columns(2)
    with c3:
        show_figure(
            fa.line_figure(
                e.d_k,
                {
                    t("sdp.series_max_scaled"): e.max_weight_scaled,
                    t("sdp.series_max_unscaled"): e.max_weight_unscaled,
                    t("sdp.series_sat_unscaled"): e.saturated_unscaled,
                },
                title=t("sdp.fig_dk_max"),
                x_title="d_k",
                y_title=t("sdp.axis_weight"),
                log_x=True,
                dashed=[t("sdp.series_sat_unscaled")],
                vline=dk_now,
                vline_text=t("sdp.current_dk"),
            ),
            key="sdp_fig_dk_max",
            look_for_key="sdp.look_dk_max",
        )
    with c4:
        show_figure(
            fa.line_figure(
                e.d_k,
                {
                    t("sdp.series_grad_scaled"): e.grad_scores_scaled,
                    t("sdp.series_grad_unscaled"): e.grad_scores_unscaled,
                },
                title=t("sdp.fig_dk_grad"),
                x_title="d_k",
                y_title=t("sdp.axis_grad"),
                log_x=True,
                log_y=True,
                vline=dk_now,
                vline_text=t("sdp.current_dk"),
            ),
            key="sdp_fig_dk_grad",
            look_for_key="sdp.look_dk_grad",
        )
    i = list(e.d_k).index(dk_now)
    st.markdown(
        t(
            "sdp.dk_claim",
            dk=dk_now,
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
    st.dataframe(
        {
            "d_k": e.d_k,
            t("sdp.col_var"): e.var_measured.round(2),
            t("sdp.series_entropy_scaled"): e.entropy_scaled.round(3),
            t("sdp.series_entropy_unscaled"): e.entropy_unscaled.round(3),
            t("sdp.series_max_unscaled"): e.max_weight_unscaled.round(3),
            t("sdp.series_grad_scaled"): e.grad_scores_scaled,
            t("sdp.series_grad_unscaled"): e.grad_scores_unscaled,
            t("sdp.col_cv_scaled"): e.grad_query_cv_scaled.round(2),
            t("sdp.col_cv_unscaled"): e.grad_query_cv_unscaled.round(2),
        },
        hide_index=True,
        key="sdp_dk_table",
    )


def _nan_section(inp: ua.SdpInputs, mask, steps: dict, scale: float) -> None:
    st.header(t("sdp.nan_title"))
    st.markdown(t("sdp.nan_body"))
    st.latex(
        r"\text{softmax}(z)_j=\frac{e^{z_j-\max_k z_k}}{\sum_l e^{z_l-\max_k z_k}},\qquad "
        r"z\equiv-\infty\ \Rightarrow\ z_j-\max_k z_k=-\infty-(-\infty)=\text{NaN}"
    )
    _, w_naive = ua.sdp_naive(inp, mask, scale)
    naive = ua.row_stats(w_naive)
    safe = ua.row_stats(steps["weights"])
    labels = inp.labels
    m1, m2, m3 = st.columns(3)
    m1.metric(t("sdp.metric_empty_rows"), ua.count_fully_masked(mask))
    m2.metric(t("sdp.metric_naive_nan"), naive["nan_rows"])
    m3.metric(
        t("sdp.metric_safe_nan"), safe["nan_rows"], help=t("sdp.metric_safe_nan_help", zero=safe["zero_rows"])
    )
    if ua.count_fully_masked(mask) == 0:
        st.info(t("sdp.nan_none"))
        st.button(t("sdp.nan_make"), key="sdp_btn_empty_row", on_click=_empty_row_mask, args=(len(labels),))
    c1, c2 = st.columns(2)
    kx, qy = t("sdp.axis_key"), t("sdp.axis_query")
    with c1:
        show_figure(
            fa.weights_heatmap(
                w_naive, x_labels=labels, y_labels=labels, title=t("sdp.fig_naive"), x_title=kx, y_title=qy
            ),
            key="sdp_fig_naive",
            look_for_key="sdp.look_naive",
        )
    with c2:
        show_figure(
            fa.weights_heatmap(
                steps["weights"],
                x_labels=labels,
                y_labels=labels,
                title=t("sdp.fig_safe"),
                x_title=kx,
                y_title=qy,
            ),
            key="sdp_fig_safe",
            look_for_key="sdp.look_safe",
        )
    st.markdown(t("sdp.nan_why"))


def _torch_section(inp: ua.SdpInputs, mask, scale: float) -> None:
    st.header(t("sdp.torch_title"))
    st.markdown(t("sdp.torch_body"))
    cmp = ua.sdp_compare_torch(inp, mask, scale)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(t("sdp.metric_max_diff"), f"{cmp.max_abs_diff:.1e}")
    m2.metric(t("sdp.metric_time_ours"), f"{1e6 * cmp.seconds_ours:.0f} µs")
    m3.metric(t("sdp.metric_time_torch"), f"{1e6 * cmp.seconds_torch:.0f} µs")
    m4.metric(t("sdp.metric_torch_nan"), cmp.torch_nan_rows)
    st.caption(
        t(
            "sdp.torch_caption",
            rows=cmp.rows_compared,
            ratio=f"{cmp.seconds_ours / cmp.seconds_torch:.2f}",
            version=ua.torch_version(),
        )
    )


def _sparse_section(inp: ua.SdpInputs, mask, scale: float) -> None:
    st.header(t("sdp.sparse_title"))
    st.markdown(t("sdp.sparse_body"))
    st.latex(
        r"\mathrm{sparsemax}(z)_j=\max(z_j-\tau,0),\quad \sum_j \max(z_j-\tau,0)=1;\qquad"
        r"\mathrm{entmax}_{1.5}(z)_j=\max(z_j/2-\tau,0)^2"
    )
    res = ua.normalizer_weights(inp, mask, scale)
    names = {n: t(f"sdp.norm_{n}") for n in res}
    cols = st.columns(len(res))
    for col, (name, r) in zip(cols, res.items(), strict=True):
        col.metric(t("sdp.metric_zeros", name=names[name]), f"{r['zeros']} / {r['allowed']}")
    st.caption(
        t(
            "sdp.zeros_caption",
            soft=res["softmax"]["underflow"],
            sparse=res["sparsemax"]["underflow"],
            ent=res["entmax15"]["underflow"],
        )
    )
    show_figure(
        fa.heatmap_row(
            [(names[n], r["weights"]) for n, r in res.items()],
            x_labels=inp.labels,
            y_labels=inp.labels,
            x_title=t("sdp.axis_key"),
            y_title=t("sdp.axis_query"),
        ),
        key="sdp_fig_normalizers",
        look_for_key="sdp.look_normalizers",
    )
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
    nw = ua.nw_normalizers(h, x0)
    m = st.columns(4)
    for col, name in zip(m, ("softmax", "sparsemax", "entmax15"), strict=False):
        col.metric(t("sdp.metric_nonzero", name=names[name]), f"{nw['nonzero'][name]} / {len(nw['x'])}")
    m[3].metric(t("sdp.metric_radius"), f"{nw['radius']:.3f}")
    n_samples = len(nw["x"])
    st.caption(
        t(
            "sdp.nw_zeros_caption",
            soft_zero=n_samples - nw["nonzero"]["softmax"],
            soft_uf=nw["underflow"]["softmax"],
            sparse_struct=n_samples - nw["nonzero"]["sparsemax"] - nw["underflow"]["sparsemax"],
        )
    )
    show_figure(
        fa.normaliser_rows(
            nw["x"],
            {names[n]: w for n, w in nw["rows"].items()},
            x0=x0,
            radius=nw["radius"],
            title=t("sdp.fig_nw_normalizers", h=h),
            x_title=t("sdp.axis_x"),
            y_title=t("sdp.axis_weight"),
            query_name=t("sdp.query_point"),
            radius_name=t("sdp.radius_band"),
        ),
        key="sdp_fig_nw_normalizers",
        look_for_key="sdp.look_nw_normalizers",
    )
    st.markdown(
        t("sdp.sparse_epanechnikov", diff=f"{nw['max_diff_epanechnikov']:.1e}", r=f"{nw['radius']:.3f}")
    )


def _troubleshooting(inp: ua.SdpInputs, mask, steps: dict, scale: float, p: dict) -> None:
    st.header(t("sdp.trouble_title"))
    st.markdown(t("sdp.trouble_body"))
    stats = ua.row_stats(steps["weights"])
    _, w_naive = ua.sdp_naive(inp, mask, scale)
    naive = ua.row_stats(w_naive)
    e = ua.sdp_dk_experiment(p["seed"])
    i = list(e.d_k).index(p["dk"])
    header = st.columns([2, 2, 2, 3, 2])
    for col, key in zip(header, ("symptom", "cause", "fix", "now", "try"), strict=True):
        col.markdown("**" + t(f"sdp.trouble_col_{key}") + "**")
    rows = [
        (
            "loss",
            t(
                "sdp.trouble_now_loss",
                dk=p["dk"],
                cv_u=f"{e.grad_query_cv_unscaled[i]:.2f}",
                cv_s=f"{e.grad_query_cv_scaled[i]:.2f}",
                grad_u=f"{e.grad_scores_unscaled[i]:.2g}",
            ),
            {"sdp_scale": "one", "sdp_dk": 512},
            {"sdp_scale": "sqrt"},
        ),
        (
            "peak",
            t(
                "sdp.trouble_now_peak",
                max_weight=f"{stats['max_weight']:.3f}",
                entropy=f"{stats['entropy']:.3f}",
            ),
            {"sdp_scale": "temperature", "sdp_temp": 0.1, "sdp_mask": "none"},
            {"sdp_scale": "sqrt"},
        ),
        (
            "nan",
            t("sdp.trouble_now_nan", naive=naive["nan_rows"], safe=stats["nan_rows"]),
            None,
            {"sdp_mask": "causal"},
        ),
    ]
    for name, now, reproduce, fix in rows:
        c = st.columns([2, 2, 2, 3, 2])
        c[0].markdown(t(f"sdp.trouble_{name}_symptom"))
        c[1].markdown(t(f"sdp.trouble_{name}_cause"))
        c[2].markdown(t(f"sdp.trouble_{name}_fix"))
        c[3].markdown(now)
        if reproduce is None:
            c[4].button(
                t("sdp.trouble_reproduce"),
                key=f"sdp_btn_{name}_reproduce",
                on_click=_empty_row_mask,
                args=(len(inp.labels),),
            )
        else:
            c[4].button(
                t("sdp.trouble_reproduce"), key=f"sdp_btn_{name}_reproduce", on_click=_set, kwargs=reproduce
            )
        c[4].button(t("sdp.trouble_fix"), key=f"sdp_btn_{name}_fix", on_click=_set, kwargs=fix)


def render() -> None:
    page_header("sdp.title", "sdp.intro")
    st.latex(
        r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\mathrm{mask}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)\right)V"
    )
    p = _controls()
    try:
        inp = ua.sdp_inputs(p["source"], p["length"], p["dk"], p["seed"], p["n_pad"])
        scale = ua.scale_for(p["scale_mode"], p["dk"], p["temperature"])
    except ValueError:
        st.error(t("sdp.input_error"))
        return
    L = len(inp.labels)
    if p["mask_mode"] == "padding":
        st.caption(t("sdp.pad_caption", n=inp.n_pad, L=L))
    if p["mask_mode"] == "custom":
        text = _mask_editor(L, inp.labels)
        try:
            mask = ua.build_mask("custom", L, 0, text)
        except ValueError:
            mask = ua.build_mask("causal", L, 0, None)
    else:
        mask = ua.build_mask(p["mask_mode"], L, inp.n_pad, None)
    steps = ua.sdp_steps(inp, mask, scale)
    _pipeline(inp, steps, scale, p)
    _scale_section(p, steps)
    _nan_section(inp, mask, steps, scale)
    _torch_section(inp, mask, scale)
    _sparse_section(inp, mask, scale)
    _troubleshooting(inp, mask, steps, scale, p)


render()
