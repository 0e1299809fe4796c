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

from ui import classroom, controls, questions
from ui import multi_head as lesson_ui
from ui.i18n import t
from ui.layout import page_header
from ui.questions import Question
from ui.sections import Section, run_sections

View = lesson_ui.View
RED_D_MODELS = [16, 32, 64, 128]
RED_STEPS = [0, 50, 100, 200, 300]
#: Session-state flag set by the Run button's callback (a callback survives any rerun in between).
RED_REQUESTED = "_mh_red_requested"


def heads_section(view: View) -> None:
    """Every head's weights, the concatenated outputs and per-head sharpness."""
    H = view.spec.n_heads
    st.markdown(t("mh.heads_body"))
    st.latex(
        r"\mathrm{head}_h = \mathrm{softmax}\!\left(\frac{(XW_Q^h)(XW_K^h)^\top}{\sqrt{d_k}}\right) XW_V^h,"
        r"\qquad \mathrm{MHA}(X) = [\mathrm{head}_1;\dots;\mathrm{head}_H]\,W_O"
    )
    d_k, d_v = view.att.d_k, view.att.d_v
    st.caption(t("mh.dims_caption", heads=H, d_k=d_k, d_v=d_v, width=H * d_v, d_model=view.spec.d_model))
    lesson_ui.show_heads(view)
    if H > 1:
        _sharpest_question(view)
    questions.reveal("mh_sharpest", partial(lesson_ui.show_head_bars, view))


#: Which head has the sharpest (lowest-entropy) weights? A head number, 1..H.
SHARPEST = Question(
    "mh_sharpest", prompt_key="q.mh_sharp_prompt", explain_key="q.mh_sharp_explain", min_value=1
)


def _sharpest_question(view: View) -> None:
    """Which head is sharpest? Answered by the lowest bar of the entropy chart below."""
    att, H = view.att, view.spec.n_heads
    h = lesson_ui.sharpest(att)
    explain = {
        "head": h + 1,
        "entropy": f"{att.normalized_entropy[h]:.2f}",
        "support": f"{att.support[h]:.1f}",
    }
    SHARPEST.ask(h + 1, prompt={"H": H}, max_value=H, explain=explain)


@st.fragment
def similarity_section(view: View) -> None:
    """How alike the heads are; the threshold slider reruns only this section."""
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
    pairs = lesson_ui.head_pairs(view.att.weights, threshold) if view.spec.n_heads > 1 else ()
    left, right = st.columns([3, 2])
    with left:
        lesson_ui.show_similarity(view, pairs)
    with right:
        lesson_ui.show_pairs(view, pairs, threshold)


def library_section(view: View) -> None:
    """Our module against ``torch.nn.MultiheadAttention`` with the same weights."""
    st.markdown(t("mh.lib_body"))
    lesson_ui.library_results(view.spec)


#: Does ``.view`` fail on the transposed heads (not contiguous)?
VIEW_ERROR = Question(
    "mh_view_error", prompt_key="q.mh_view_prompt", explain_key="q.mh_view_explain", choices=questions.YES_NO
)


def contiguity_section(view: View) -> None:
    """The post's ``view`` after ``transpose`` pitfall, run on the page's own head outputs."""
    demo = lesson_ui.contiguity(view.att.heads)
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


def positions_section(view: View) -> None:
    """The sinusoidal table, its kernel PE·PEᵀ and kernel rows by distance (sinusoidal vs learned)."""
    st.markdown(t("mh.pos_body"))
    st.latex(
        r"PE_{p,\,2i} = \sin\!\left(\frac{p}{10000^{2i/d}}\right),\qquad "
        r"PE_{p,\,2i+1} = \cos\!\left(\frac{p}{10000^{2i/d}}\right)"
    )
    lesson_ui.show_positions(view.spec)
    st.latex(r"PE_p \cdot PE_q = \sum_i \cos\big((p-q)\,\omega_i\big),\qquad \omega_i = 10000^{-2i/d}")
    lesson_ui.show_kernel_rows(view.spec)


#: Does permuting the tokens change the attention map (beyond the permutation)?
PERM_MOVES = Question(
    "mh_perm_moves", prompt_key="q.mh_perm_prompt", explain_key="q.mh_perm_explain", choices=questions.YES_NO
)


@st.fragment
def permutation_section(view: View) -> None:
    """Shuffle the words, keep the positions: does the map only move? Its controls rerun only it."""
    spec, labels = view.spec, view.att.labels
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
    st.caption(t("mh.perm_order", perm=", ".join(labels[int(i)] for i in result.perm)))
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
def redundancy_section(view: View) -> None:
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
    seed = view.spec.seed
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


def heads_and_similarity(view: View) -> None:
    heads_section(view)
    similarity_section(view)


def positions_and_permutation(view: View) -> None:
    positions_section(view)
    permutation_section(view)


def render() -> None:
    page_header("mh.title", "mh.intro")
    with classroom.controls_area():
        spec = lesson_ui.model_controls()
    try:
        view = View(spec, lesson_ui.head_view(spec))
    except ValueError as err:
        st.error(t("mh.error", message=str(err)))
        return
    run_sections(
        "multi-head",
        [
            Section("mh.heads_title", partial(heads_and_similarity, view)),
            Section("mh.lib_title", partial(library_section, view), folded=True),
            Section("mh.contig_title", partial(contiguity_section, view), folded=True),
            Section("mh.pos_title", partial(positions_and_permutation, view), folded=True),
            Section("mh.red_title", partial(redundancy_section, view), folded=True),
        ],
    )


render()
