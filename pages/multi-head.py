"""Multi-head attention and positional encodings: what heads do, when they repeat, why positions.

Thin page: controls -> ``ui.multi_head`` (cached calls into ``core.lessons.multi_head``) -> cached
``figures.multi_head`` builders. Follows the post's sections 3.2 (multi-head, the contiguous()
pitfall), 3.3 (positions) and 5.3 (redundant heads).

``render`` is the table of contents. The model controls at the top drive every section; the
similarity threshold, the permutation controls and the redundancy experiment rerun only their own
section (``st.fragment``). The redundancy experiment trains models (seconds): it runs on its Run
button, and its last result stays on screen while its controls move.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import diagnostics, positional
from core.lessons import multi_head as lesson
from core.multihead import MultiHeadAttention
from ui import classroom, controls, questions
from ui import multi_head as lesson_ui
from ui.i18n import current_language, t
from ui.layout import look_for, page_header, show_figure
from ui.questions import Question
from ui.sections import Section, run_sections

D_MODELS = [8, 16, 32, 48, 64, 96, 128, 192, 256]
DEFAULT_D_MODEL = 64
DEFAULT_HEADS = 8
RED_D_MODELS = [16, 32, 64, 128]
RED_STEPS = [0, 50, 100, 200, 300]
#: Session-state flag set by the Run button's callback (a callback survives any rerun in between).
RED_REQUESTED = "_mh_red_requested"


# ----------------------------------------------------------------------------------------------
# page-wide controls
# ----------------------------------------------------------------------------------------------


def _head_controls(c1, c2, c3, c4) -> tuple[int, int, int | None, int | None]:
    d_model = int(
        controls.select_slider(
            "mh.d_model",
            key="mh_d",
            options=D_MODELS,
            value=DEFAULT_D_MODEL,
            help_key="mh.d_model_help",
            where=c1,
        )
    )
    dims = controls.radio(
        "mh.dims",
        key="mh_dims",
        options=["split", "custom"],
        option_prefix="mh.dims_",
        help_key="mh.dims_help",
        where=c2,
    )
    options = lesson_ui.heads_for(d_model, dims)
    requested = st.query_params.get("mh_heads")
    default = DEFAULT_HEADS if DEFAULT_HEADS in options else options[-1]
    n_heads = int(
        controls.select_slider(
            "mh.heads",
            key="mh_heads",
            options=options,
            value=default,
            help_key="mh.heads_help",
            where=c3,
            warn_refused=False,  # said below, with the head counts this d_model allows
        )
    )
    _warn_refused_heads(requested, options, d_model, dims, n_heads)
    if dims != "custom":
        c4.markdown(f"**{t('mh.per_head')}**")
        c4.markdown(f"d_k = d_v = d_model / H = {d_model // n_heads}")
        return d_model, n_heads, None, None
    d_k = int(controls.slider("mh.d_k", key="mh_dk", min_value=1, max_value=64, value=8, step=1, where=c4))
    d_v = int(controls.slider("mh.d_v", key="mh_dv", min_value=1, max_value=64, value=8, step=1, where=c4))
    return d_model, n_heads, d_k, d_v


def _warn_refused_heads(
    requested: str | None, options: list[int], d_model: int, dims: str, used: int
) -> None:
    """A linked head count this d_model does not allow: Streamlit already fell back to the default;
    say so once (the URL keeps the old value until the control is touched, and the warning should
    not repeat on every rerun)."""
    stale = (requested, d_model, dims)
    invalid = requested is not None and requested not in {str(o) for o in options}
    if invalid and st.session_state.get("_mh_heads_warned") != stale:
        st.session_state["_mh_heads_warned"] = stale
        st.warning(t("mh.heads_fallback", requested=requested, d_model=d_model, used=used))


def controls_section() -> lesson_ui.LayerSpec:
    """The model and input controls, in a bordered panel at the top: they drive every section."""
    with st.container(border=True):
        d_model, n_heads, d_k, d_v = _head_controls(*st.columns(4))
        c5, c6, c7, c8 = st.columns(4)
        kind = controls.radio(
            "mh.input", key="mh_input", options=["sentence", "random"], option_prefix="mh.input_", where=c5
        )
        length = 10
        if kind == "random":
            length = int(
                controls.slider(
                    "mh.length", key="mh_len", min_value=2, max_value=32, value=10, step=1, where=c5
                )
            )
        pe = controls.radio(
            "mh.pe",
            key="mh_pe",
            options=lesson_ui.POSITIONAL_KINDS,
            option_prefix="mh.pe_",
            help_key="mh.pe_help",
            where=c6,
        )
        mask = controls.radio(
            "mh.mask", key="mh_mask", options=lesson_ui.MASK_KINDS, option_prefix="mh.mask_", where=c7
        )
        seed = controls.seed("mh_seed", where=c8)
    sentence = current_language() if kind == "sentence" else "en"
    return lesson_ui.LayerSpec(d_model, n_heads, d_k, d_v, seed, kind, length, sentence, pe, mask)


# ----------------------------------------------------------------------------------------------
# sections
# ----------------------------------------------------------------------------------------------


def heads_section(spec: lesson_ui.LayerSpec, view) -> None:
    """Every head's weights, the concatenated outputs and per-head sharpness."""
    H, labels = spec.n_heads, view.labels
    st.markdown(t("mh.heads_body"))
    st.latex(
        r"\mathrm{head}_h = \mathrm{softmax}\!\left(\frac{(XW_Q^h)(XW_K^h)^\top}{\sqrt{d_k}}\right) XW_V^h,"
        r"\qquad \mathrm{MHA}(X) = [\mathrm{head}_1;\dots;\mathrm{head}_H]\,W_O"
    )
    width = H * view.d_v
    st.caption(t("mh.dims_caption", heads=H, d_k=view.d_k, d_v=view.d_v, width=width, d_model=spec.d_model))
    short = tuple(t("mh.head_short", h=h + 1) for h in range(H))
    grid = lesson_ui.head_grid(
        view.weights,
        labels=labels,
        head_titles=tuple(t("mh.head_n", h=h + 1) for h in range(H)),
        title=t("mh.fig_grid_title"),
        x_title=t("common.key"),
        y_title=t("common.query"),
        colorbar_title=t("common.weight"),
    )
    look = "mh.look_grid_sentence" if spec.input_kind == "sentence" else "mh.look_grid_random"
    show_figure(
        grid, key="mh_fig_grid", look_for_key=look, code=(lesson.head_view, MultiHeadAttention.forward_trace)
    )
    concat = lesson_ui.concat_heatmap(
        view.concat,
        n_heads=H,
        labels=labels,
        head_titles=short,
        title=t("mh.fig_concat_title"),
        x_title=t("mh.concat_x"),
        y_title=t("common.query"),
    )
    show_figure(
        concat, key="mh_fig_concat", look_for_key="mh.look_concat", code=MultiHeadAttention.forward_trace
    )
    if H > 1:
        _sharpest_question(view, H)
    questions.reveal("mh_sharpest", partial(lesson_ui.show_head_bars, view, short))


#: Which head has the sharpest (lowest-entropy) weights? A head number, 1..H.
SHARPEST = Question(
    "mh_sharpest", prompt_key="q.mh_sharp_prompt", explain_key="q.mh_sharp_explain", min_value=1
)


def _sharpest_question(view, H: int) -> None:
    """Which head is sharpest? Answered by the lowest bar of the entropy chart below."""
    entropy = view.normalized_entropy
    sharpest = min(range(H), key=lambda h: entropy[h])
    SHARPEST.ask(
        sharpest + 1,
        prompt={"H": H},
        max_value=H,
        explain={
            "head": sharpest + 1,
            "entropy": f"{entropy[sharpest]:.2f}",
            "support": f"{view.support[sharpest]:.1f}",
        },
    )


@st.fragment
def similarity_section(view) -> None:
    """How alike the heads are; the threshold slider reruns only this section."""
    H = view.weights.shape[0]
    threshold = float(
        controls.slider(
            "mh.threshold",
            key="mh_threshold",
            min_value=0.5,
            max_value=1.0,
            value=0.9,
            step=0.01,
            help_key="mh.threshold_help",
        )
    )
    pairs = lesson_ui.head_pairs(view.weights, threshold) if H > 1 else ()
    left, right = st.columns([3, 2])
    with left:
        fig = lesson_ui.similarity_matrix(
            view.similarity,
            head_labels=tuple(t("mh.head_short", h=h + 1) for h in range(H)),
            pairs=pairs,
            title=t("mh.fig_similarity_title"),
            axis_title=t("mh.head_axis"),
            colorbar_title=t("mh.similarity"),
            pair_name=t("mh.pair_name"),
        )
        show_figure(
            fig, key="mh_fig_similarity", look_for_key="mh.look_similarity", code=diagnostics.head_similarity
        )
    with right:
        if H == 1:
            st.info(t("mh.one_head"))
            return
        st.markdown(t("mh.redundancy_line", score=view.redundancy))
        if not pairs:
            st.markdown(t("mh.pairs_none", threshold=threshold))
            return
        listed = ", ".join(t("mh.pair_item", a=a + 1, b=b + 1, s=s) for a, b, s in pairs[:12])
        more = t("mh.pairs_more", n=len(pairs) - 12) if len(pairs) > 12 else ""
        st.markdown(t("mh.pairs_found", n=len(pairs), threshold=threshold, pairs=listed) + more)


def library_section(spec: lesson_ui.LayerSpec) -> None:
    """Our module against ``torch.nn.MultiheadAttention`` with the same weights."""
    st.markdown(t("mh.lib_body"))
    rows = lesson_ui.library_check(spec)
    if rows[0].reference != "torch.nn.MultiheadAttention":
        st.info(t("mh.lib_custom_note"))
    for col, row in zip(st.columns(len(rows)), rows, strict=True):
        col.metric(t("mh.lib_output_diff", dtype=row.dtype), lesson_ui.fmt_diff(row.output_max_diff))
        if row.weights_max_diff is not None:
            col.metric(t("mh.lib_weights_diff", dtype=row.dtype), lesson_ui.fmt_diff(row.weights_max_diff))
    st.caption(t("mh.lib_reference", reference=rows[0].reference))
    look_for("mh.look_library")


#: Does ``.view`` fail on the transposed heads (not contiguous)?
VIEW_ERROR = Question(
    "mh_view_error", prompt_key="q.mh_view_prompt", explain_key="q.mh_view_explain", choices=questions.YES_NO
)


def contiguity_section(view) -> None:
    """The post's ``view`` after ``transpose`` pitfall, run on the page's own head outputs."""
    demo = lesson_ui.contiguity(view.heads)
    _, H, L, d_v = demo.shape
    VIEW_ERROR.ask(
        "no" if demo.view_error is None else "yes",
        prompt={"H": H, "L": L, "d_v": d_v},
        explain={
            "strides": str(demo.transposed_strides),
            "contiguous": t("common.yes" if demo.transposed_is_contiguous else "common.no"),
        },
    )
    questions.reveal("mh_view_error", partial(lesson_ui.contiguity_results, demo))


def positions_section(spec: lesson_ui.LayerSpec) -> None:
    """The sinusoidal table, its kernel PE·PEᵀ and kernel rows by distance (sinusoidal vs learned)."""
    st.markdown(t("mh.pos_body"))
    st.latex(
        r"PE_{p,\,2i} = \sin\!\left(\frac{p}{10000^{2i/d}}\right),\qquad "
        r"PE_{p,\,2i+1} = \cos\!\left(\frac{p}{10000^{2i/d}}\right)"
    )
    pos = lesson_ui.positions_view(spec.d_model, spec.seed)
    left, right = st.columns(2)
    with left:
        title = t("mh.fig_pe_title", n=lesson_ui.PE_FIGURE_LENGTH, d=spec.d_model)
        fig = lesson_ui.encoding_heatmap(
            pos.sinusoidal, title=title, x_title=t("mh.dimension"), y_title=t("mh.position")
        )
        show_figure(fig, key="mh_fig_pe", look_for_key="mh.look_pe", code=positional.sinusoidal_encoding)
    with right:
        fig = lesson_ui.kernel_heatmap(
            pos.kernel_sinusoidal,
            title=t("mh.fig_kernel_title"),
            x_title=t("mh.position_q"),
            y_title=t("mh.position_p"),
        )
        show_figure(fig, key="mh_fig_kernel", look_for_key="mh.look_kernel", code=positional.position_kernel)
    st.latex(r"PE_p \cdot PE_q = \sum_i \cos\big((p-q)\,\omega_i\big),\qquad \omega_i = 10000^{-2i/d}")
    formula = None if pos.formula is None else (t("mh.formula_name"), *pos.formula)
    for col, kind in zip(st.columns(2), ("sinusoidal", "learned"), strict=True):
        rows = pos.rows_sinusoidal if kind == "sinusoidal" else pos.rows_learned
        with col:
            fig = lesson_ui.kernel_by_distance(
                tuple((t("mh.row_p", p=r.p), r.distances, r.values) for r in rows),
                title=t(f"mh.fig_rows_{kind}_title"),
                x_title=t("mh.distance"),
                y_title=t("mh.kernel_y"),
                formula=formula if kind == "sinusoidal" else None,
            )
            show_figure(fig, key=f"mh_fig_rows_{kind}", look_for_key=f"mh.look_rows_{kind}")


#: Does permuting the tokens change the attention map (beyond the permutation)?
PERM_MOVES = Question(
    "mh_perm_moves", prompt_key="q.mh_perm_prompt", explain_key="q.mh_perm_explain", choices=questions.YES_NO
)


@st.fragment
def permutation_section(spec: lesson_ui.LayerSpec, labels: tuple[str, ...]) -> None:
    """Shuffle the words, keep the positions: does the map only move? Its controls rerun only it."""
    st.subheader(t("mh.perm_title"))
    st.markdown(t("mh.perm_body"))
    st.latex(r"A(Px) = P\,A(x)\,P^\top")
    c1, c2 = st.columns(2)
    kind = controls.radio(
        "mh.perm", key="mh_perm", options=["shuffle", "reverse"], option_prefix="mh.perm_", where=c1
    )
    heads = list(range(1, spec.n_heads + 1))
    head = int(controls.select_slider("mh.perm_head", key="mh_perm_head", options=heads, value=1, where=c2))
    result = lesson_ui.permutation_view(spec, kind)
    perm = [int(i) for i in result.perm]
    st.caption(t("mh.perm_order", perm=", ".join(labels[i] for i in perm)))
    diff = result.map_diff[(spec.pe_kind, spec.mask_kind)]
    PERM_MOVES.ask(
        "yes" if diff < 1e-6 else "no",
        prompt={"pe": t(f"mh.pe_{spec.pe_kind}"), "mask": t(f"mh.mask_{spec.mask_kind}")},
        explain={"diff": f"{diff:.1e}"},
    )
    questions.reveal("mh_perm_moves", partial(lesson_ui.permutation_results, spec, labels, result, head))


def _request_run() -> None:
    st.session_state[RED_REQUESTED] = True


@st.fragment
def redundancy_section(seed: int) -> None:
    """Do many heads repeat each other? Trains on its Run button; the last result stays on screen."""
    st.markdown(t("mh.red_body"))
    c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
    d_model = int(
        controls.select_slider(
            "mh.red_d", key="mh_red_d", options=RED_D_MODELS, value=64, help_key="mh.red_d_help", where=c1
        )
    )
    steps = int(
        controls.select_slider(
            "mh.red_steps",
            key="mh_red_steps",
            options=RED_STEPS,
            value=100,
            help_key="mh.red_steps_help",
            where=c2,
        )
    )
    c3.button(t("mh.red_run"), key="mh_red_run", type="primary", width="stretch", on_click=_request_run)
    if st.session_state.pop(RED_REQUESTED, False):
        lesson_ui.run_redundancy(d_model, steps, seed)
    last = lesson_ui.last_redundancy()
    if last is None:
        st.info(t("mh.red_press_run"))
        return
    (ran_d, ran_steps, ran_seed), points = last
    if (ran_d, ran_steps, ran_seed) != (d_model, steps, seed):
        st.info(t("mh.red_stale", d_model=ran_d, steps=ran_steps, seed=ran_seed))
    lesson_ui.redundancy_results(ran_steps, points)
    st.markdown(t("mh.red_honest"))


def render() -> None:
    page_header("mh.title", "mh.intro")
    with classroom.controls_area():
        spec = controls_section()
    try:
        view = lesson_ui.head_view(spec)
    except ValueError as err:
        st.error(t("mh.error", message=str(err)))
        return
    run_sections(
        "multi-head",
        [
            Section("mh.heads_title", partial(heads_and_similarity, spec, view)),
            Section("mh.lib_title", partial(library_section, spec), folded=True),
            Section("mh.contig_title", partial(contiguity_section, view), folded=True),
            Section("mh.pos_title", partial(positions_and_permutation, spec, view), folded=True),
            Section("mh.red_title", partial(redundancy_section, spec.seed), folded=True),
        ],
    )


def heads_and_similarity(spec: lesson_ui.LayerSpec, view) -> None:
    heads_section(spec, view)
    similarity_section(view)


def positions_and_permutation(spec: lesson_ui.LayerSpec, view) -> None:
    positions_section(spec)
    permutation_section(spec, view.labels)


render()
