"""Multi-head attention and positional encodings: what heads do, when they repeat, why positions.

Thin page: controls -> ``ui.multihead`` (cached calls into core) -> ``figures.multihead`` -> render.
Follows the post's sections 3.2 (multi-head, the contiguous() pitfall), 3.3 (positions) and 5.3
(redundant heads).
"""

from __future__ import annotations

import streamlit as st

from figures import multihead as figs
from ui import controls
from ui import multihead as mh
from ui.i18n import current_language, t
from ui.layout import look_for, page_header, show_figure

D_MODELS = [8, 16, 32, 48, 64, 96, 128, 192, 256]
DEFAULT_D_MODEL = 64
DEFAULT_HEADS = 8
RED_D_MODELS = [16, 32, 64, 128]
RED_STEPS = [0, 50, 100, 200, 300]
#: Similarity from which the experiment counts a pair of heads as repeating (core default).
RED_THRESHOLD = 0.9


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.1e}"


def read_controls() -> dict:
    """All controls of the model and input, in a bordered panel at the top; returns their values."""
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns(4)
        d_model = controls.select_slider(
            "mh.d_model",
            key="mh_d",
            options=D_MODELS,
            value=DEFAULT_D_MODEL,
            help_key="mh.d_model_help",
            where=c1,
        )
        dims = controls.radio(
            "mh.dims",
            key="mh_dims",
            options=["split", "custom"],
            option_prefix="mh.dims_",
            help_key="mh.dims_help",
            where=c2,
        )
        options = mh.heads_for(d_model, dims)
        requested = st.query_params.get("mh_heads")
        n_heads = controls.select_slider(
            "mh.heads",
            key="mh_heads",
            options=options,
            value=DEFAULT_HEADS if DEFAULT_HEADS in options else options[-1],
            help_key="mh.heads_help",
            where=c3,
        )
        stale = (requested, d_model, dims)
        # Streamlit already fell back to the default; say so once (the URL keeps the old value
        # until the control is touched, and the warning should not repeat on every rerun).
        invalid = requested is not None and requested not in {str(o) for o in options}
        if invalid and st.session_state.get("_mh_heads_warned") != stale:
            st.session_state["_mh_heads_warned"] = stale
            st.warning(t("mh.heads_fallback", requested=requested, d_model=d_model, used=n_heads))
        d_k = d_v = None
        if dims == "custom":
            d_k = int(
                controls.slider("mh.d_k", key="mh_dk", min_value=1, max_value=64, value=8, step=1, where=c4)
            )
            d_v = int(
                controls.slider("mh.d_v", key="mh_dv", min_value=1, max_value=64, value=8, step=1, where=c4)
            )
        else:
            c4.markdown(f"**{t('mh.per_head')}**")
            c4.markdown(f"d_k = d_v = d_model / H = {d_model // n_heads}")
        c5, c6, c7, c8 = st.columns(4)
        input_kind = controls.radio(
            "mh.input", key="mh_input", options=["sentence", "random"], option_prefix="mh.input_", where=c5
        )
        length = 10
        if input_kind == "random":
            length = int(
                controls.slider(
                    "mh.length", key="mh_len", min_value=2, max_value=32, value=10, step=1, where=c5
                )
            )
        pe = controls.radio(
            "mh.pe",
            key="mh_pe",
            options=["none", "sinusoidal", "learned"],
            option_prefix="mh.pe_",
            help_key="mh.pe_help",
            where=c6,
        )
        mask = controls.radio(
            "mh.mask", key="mh_mask", options=["none", "causal"], option_prefix="mh.mask_", where=c7
        )
        seed = controls.seed("mh_seed", where=c8)
    return {
        "d_model": int(d_model),
        "n_heads": int(n_heads),
        "d_k": d_k,
        "d_v": d_v,
        "seed": seed,
        "input_kind": input_kind,
        "length": length,
        "sentence": current_language() if input_kind == "sentence" else "en",
        "pe_kind": pe,
        "mask_kind": mask,
    }


def section_heads(spec: dict, view: dict, labels: list[str]) -> None:
    H = spec["n_heads"]
    st.header(t("mh.heads_title"))
    st.markdown(t("mh.heads_body"))
    st.latex(
        r"\mathrm{head}_h = \mathrm{softmax}\!\left(\frac{(XW_Q^h)(XW_K^h)^\top}{\sqrt{d_k}}\right) XW_V^h,"
        r"\qquad \mathrm{MHA}(X) = [\mathrm{head}_1;\dots;\mathrm{head}_H]\,W_O"
    )
    st.caption(
        t(
            "mh.dims_caption",
            heads=H,
            d_k=view["d_k"],
            d_v=view["d_v"],
            width=H * view["d_v"],
            d_model=spec["d_model"],
        )
    )
    head_titles = [t("mh.head_n", h=h + 1) for h in range(H)]
    show_figure(
        figs.head_grid(
            view["weights"],
            labels=labels,
            head_titles=head_titles,
            title=t("mh.fig_grid_title"),
            x_title=t("common.key"),
            y_title=t("common.query"),
            colorbar_title=t("common.weight"),
        ),
        key="mh_fig_grid",
        look_for_key="mh.look_grid_sentence" if spec["input_kind"] == "sentence" else "mh.look_grid_random",
    )
    show_figure(
        figs.concat_heatmap(
            view["concat"],
            n_heads=H,
            labels=labels,
            head_titles=[t("mh.head_short", h=h + 1) for h in range(H)],
            title=t("mh.fig_concat_title"),
            x_title=t("mh.concat_x"),
            y_title=t("common.query"),
        ),
        key="mh_fig_concat",
        look_for_key="mh.look_concat",
    )
    short = [t("mh.head_short", h=h + 1) for h in range(H)]
    show_figure(
        figs.head_bars(
            view["normalized_entropy"],
            view["support"],
            head_labels=short,
            max_support=float(len(labels)),
            titles=(t("mh.fig_entropy_title"), t("mh.fig_support_title")),
            y_titles=(t("mh.entropy_y"), t("mh.support_y")),
            x_title=t("mh.head_axis"),
            reference_names=(t("mh.ref_uniform"), t("mh.ref_all_keys")),
        ),
        key="mh_fig_bars",
        look_for_key="mh.look_bars",
    )
    threshold = controls.slider(
        "mh.threshold",
        key="mh_threshold",
        min_value=0.5,
        max_value=1.0,
        value=0.9,
        step=0.01,
        help_key="mh.threshold_help",
    )
    pairs = mh.head_pairs(view["weights"], float(threshold)) if H > 1 else []
    left, right = st.columns([3, 2])
    with left:
        show_figure(
            figs.similarity_matrix(
                view["similarity"],
                head_labels=short,
                pairs=pairs,
                title=t("mh.fig_similarity_title"),
                axis_title=t("mh.head_axis"),
                colorbar_title=t("mh.similarity"),
                pair_name=t("mh.pair_name"),
            ),
            key="mh_fig_similarity",
            look_for_key="mh.look_similarity",
        )
    with right:
        if H == 1:
            st.info(t("mh.one_head"))
            return
        st.markdown(t("mh.redundancy_line", score=view["redundancy"]))
        if pairs:
            listed = ", ".join(t("mh.pair_item", a=a + 1, b=b + 1, s=s) for a, b, s in pairs[:12])
            more = t("mh.pairs_more", n=len(pairs) - 12) if len(pairs) > 12 else ""
            st.markdown(t("mh.pairs_found", n=len(pairs), threshold=threshold, pairs=listed) + more)
        else:
            st.markdown(t("mh.pairs_none", threshold=threshold))


def section_library(spec: dict) -> None:
    st.header(t("mh.lib_title"))
    st.markdown(t("mh.lib_body"))
    rows = mh.library_check(**spec)
    if rows[0]["reference"] != "torch.nn.MultiheadAttention":
        st.info(t("mh.lib_custom_note"))
    cols = st.columns(len(rows))
    for col, row in zip(cols, rows, strict=True):
        col.metric(t("mh.lib_output_diff", dtype=row["dtype"]), _fmt(row["output_max_diff"]))
        if row["weights_max_diff"] is not None:
            col.metric(t("mh.lib_weights_diff", dtype=row["dtype"]), _fmt(row["weights_max_diff"]))
    st.caption(t("mh.lib_reference", reference=rows[0]["reference"]))
    look_for("mh.look_library")


def section_contiguity(view: dict) -> None:
    st.header(t("mh.contig_title"))
    st.markdown(t("mh.contig_body"))
    demo = mh.contiguity(view["heads"])
    B, H, L, d_v = demo.shape
    st.caption(t("mh.contig_shapes", B=B, H=H, L=L, d_v=d_v))
    left, right = st.columns(2)
    with left:
        st.markdown(t("mh.contig_broken"))
        st.code(mh.BROKEN_CODE, language="python", wrap_lines=True)
        if demo.view_error is None:
            st.info(t("mh.contig_no_error"))
        else:
            st.markdown(t("mh.contig_raised"))
            st.code("RuntimeError: " + demo.view_error, language="text", wrap_lines=True)
    with right:
        st.markdown(t("mh.contig_fixed"))
        st.code(mh.FIXED_CODE, language="python", wrap_lines=True)
        st.markdown(
            t(
                "mh.contig_fixed_result",
                shape=str(demo.fixed_shape),
                same=t("common.yes" if demo.fixed_matches_reshape else "common.no"),
            )
        )
    yes, no = t("common.yes"), t("common.no")
    st.table(
        {
            t("mh.contig_col_step"): [
                t("mh.contig_step_heads"),
                t("mh.contig_step_transposed"),
                t("mh.contig_step_fixed"),
            ],
            t("mh.contig_col_shape"): [str(demo.shape), str(demo.transposed_shape), str(demo.fixed_shape)],
            t("mh.contig_col_strides"): [
                str(demo.strides),
                str(demo.transposed_strides),
                str(demo.fixed_strides),
            ],
            t("mh.contig_col_contiguous"): [yes, yes if demo.transposed_is_contiguous else no, yes],
        },
        hide_index=True,
    )
    look_for("mh.look_contiguity")


def section_positions(spec: dict, labels: list[str]) -> None:
    st.header(t("mh.pos_title"))
    st.markdown(t("mh.pos_body"))
    st.latex(
        r"PE_{p,\,2i} = \sin\!\left(\frac{p}{10000^{2i/d}}\right),\qquad "
        r"PE_{p,\,2i+1} = \cos\!\left(\frac{p}{10000^{2i/d}}\right)"
    )
    pos = mh.positions_view(spec["d_model"], spec["seed"])
    left, right = st.columns(2)
    with left:
        show_figure(
            figs.encoding_heatmap(
                pos["sinusoidal"],
                title=t("mh.fig_pe_title", n=mh.PE_FIGURE_LENGTH, d=spec["d_model"]),
                x_title=t("mh.dimension"),
                y_title=t("mh.position"),
            ),
            key="mh_fig_pe",
            look_for_key="mh.look_pe",
        )
    with right:
        show_figure(
            figs.kernel_heatmap(
                pos["kernel_sinusoidal"],
                title=t("mh.fig_kernel_title"),
                x_title=t("mh.position_q"),
                y_title=t("mh.position_p"),
            ),
            key="mh_fig_kernel",
            look_for_key="mh.look_kernel",
        )
    st.latex(r"PE_p \cdot PE_q = \sum_i \cos\big((p-q)\,\omega_i\big),\qquad \omega_i = 10000^{-2i/d}")
    formula = None
    if pos["formula"] is not None:
        formula = (t("mh.formula_name"), *pos["formula"])
    left, right = st.columns(2)
    for col, kind, key in (
        (left, "sinusoidal", "mh_fig_rows_sin"),
        (right, "learned", "mh_fig_rows_learned"),
    ):
        curves = [(t("mh.row_p", p=p), d, v) for p, d, v in pos[f"rows_{kind}"]]
        with col:
            show_figure(
                figs.kernel_by_distance(
                    curves,
                    title=t(f"mh.fig_rows_{kind}_title"),
                    x_title=t("mh.distance"),
                    y_title=t("mh.kernel_y"),
                    formula=formula if kind == "sinusoidal" else None,
                ),
                key=key,
                look_for_key=f"mh.look_rows_{kind}",
            )
    section_permutation(spec, labels)


def section_permutation(spec: dict, labels: list[str]) -> None:
    st.subheader(t("mh.perm_title"))
    st.markdown(t("mh.perm_body"))
    st.latex(r"A(Px) = P\,A(x)\,P^\top")
    c1, c2 = st.columns(2)
    perm_kind = controls.radio(
        "mh.perm", key="mh_perm", options=["shuffle", "reverse"], option_prefix="mh.perm_", where=c1
    )
    H = spec["n_heads"]
    head = controls.select_slider(
        "mh.perm_head", key="mh_perm_head", options=list(range(1, H + 1)), value=1, where=c2
    )
    result = mh.permutation_view(**spec, perm_kind=perm_kind)
    perm = [int(i) for i in result["perm"]]
    st.caption(t("mh.perm_order", perm=", ".join(labels[i] for i in perm)))
    masks = ("none", "causal")
    st.table(
        {
            t("mh.perm_col_pe"): [t(f"mh.pe_{pe}") for pe in ("none", "sinusoidal", "learned")],
            **{
                t("mh.perm_col_mask", mask=t(f"mh.mask_{mk}")): [
                    _fmt(result["table"][(pe, mk)]) for pe in ("none", "sinusoidal", "learned")
                ]
                for mk in masks
            },
        },
        hide_index=True,
    )
    shown = spec["pe_kind"] if spec["pe_kind"] != "none" else "sinusoidal"
    rows = []
    for pe in ("none", shown):
        shuffled, predicted, diff = result["maps"][pe]
        rows.append((t(f"mh.pe_{pe}"), shuffled[head - 1], predicted[head - 1], diff[head - 1]))
    shuffled_labels = [labels[i] for i in perm]
    show_figure(
        figs.permutation_grid(
            rows,
            labels=shuffled_labels,
            column_titles=(t("mh.perm_col_shuffled"), t("mh.perm_col_predicted"), t("mh.perm_col_diff")),
            title=t("mh.fig_perm_title", head=head, mask=t(f"mh.mask_{spec['mask_kind']}")),
            x_title=t("common.key"),
            y_title=t("common.query"),
            colorbar_titles=(t("common.weight"), t("mh.diff_short")),
        ),
        key="mh_fig_perm",
        look_for_key="mh.look_perm",
    )


def section_redundancy(seed: int) -> None:
    st.header(t("mh.red_title"))
    st.markdown(t("mh.red_body"))
    c1, c2 = st.columns(2)
    d_model = controls.select_slider(
        "mh.red_d", key="mh_red_d", options=RED_D_MODELS, value=64, help_key="mh.red_d_help", where=c1
    )
    steps = controls.select_slider(
        "mh.red_steps",
        key="mh_red_steps",
        options=RED_STEPS,
        value=100,
        help_key="mh.red_steps_help",
        where=c2,
    )
    heads = mh.heads_for(int(d_model))
    bar = st.progress(0.0, text=t("mh.red_progress"))
    points = []
    for done, n_heads in enumerate(heads, start=1):
        points.append(mh.redundancy_point(int(d_model), n_heads, int(steps), seed))
        bar.progress(done / len(heads), text=t("mh.red_progress"))
    bar.empty()
    init_name, trained_name = t("mh.red_init"), t("mh.red_trained", steps=steps)
    series = [(init_name, [p.redundancy_init if p.n_heads > 1 else None for p in points])]
    support = [(init_name, [p.support_init for p in points])]
    if steps:  # with 0 steps the trained model is the initial one: one line, not two on top of each other
        series.append((trained_name, [p.redundancy_trained if p.n_heads > 1 else None for p in points]))
        support.append((trained_name, [p.support_trained for p in points]))
    show_figure(
        figs.redundancy_curve(
            heads,
            series,
            support,
            titles=(t("mh.fig_red_title"), t("mh.fig_red_support_title")),
            x_title=t("mh.heads_axis"),
            y_titles=(t("mh.red_y"), t("mh.support_y")),
        ),
        key="mh_fig_redundancy",
        look_for_key="mh.look_redundancy",
    )
    st.table(
        {
            t("mh.heads_axis"): heads,
            t("mh.red_col_init"): [f"{p.redundancy_init:.3f}" for p in points],
            t("mh.red_col_trained"): [f"{p.redundancy_trained:.3f}" for p in points],
            t("mh.red_col_pairs", threshold=RED_THRESHOLD): [
                f"{p.similar_pairs_trained:.0%}" for p in points
            ],
            t("mh.red_col_support"): [f"{p.support_init:.1f} → {p.support_trained:.1f}" for p in points],
            t("mh.red_col_loss"): [f"{p.loss_init:.2f} → {p.loss_trained:.2f}" for p in points],
        },
        hide_index=True,
    )
    multi = [p for p in points if p.n_heads > 1]
    if multi:
        first, last = multi[0], multi[-1]
        st.markdown(
            t(
                "mh.red_summary",
                init_lo=min(p.redundancy_init for p in multi),
                init_hi=max(p.redundancy_init for p in multi),
                steps=steps,
                h_first=first.n_heads,
                r_first=first.redundancy_trained,
                h_last=last.n_heads,
                r_last=last.redundancy_trained,
                share_last=last.similar_pairs_trained,
                loss_one=points[0].loss_trained,
                loss_last=last.loss_trained,
            )
        )
    st.markdown(t("mh.red_honest"))


def render() -> None:
    page_header("mh.title", "mh.intro")
    spec = read_controls()
    try:
        view = mh.head_view(**spec)
    except ValueError as err:
        st.error(t("mh.error", message=str(err)))
        return
    words = view["words"]
    T = view["weights"].shape[-1]
    labels = [f"{i}:{w}" for i, w in enumerate(words)] if words is not None else [str(i) for i in range(T)]
    section_heads(spec, view, labels)
    section_library(spec)
    section_contiguity(view)
    section_positions(spec, labels)
    section_redundancy(spec["seed"])


render()
