"""Scaled dot-product attention, taken apart: QKᵀ -> ÷ τ -> mask -> softmax -> × V.

Thin page: controls -> ``ui.scaled_dot_product`` (cached calls into ``core.lessons.scaled_dot_product``) ->
cached ``figures.scaled_dot_product`` builders. Every claim is printed next to the number that backs it,
computed on the current inputs. One convention: the scores are divided by the temperature τ
(τ = √d_k in the Transformer); the scale factor 1/τ is the inverse temperature.

``render`` is the table of contents. The controls at the top drive every section: they make the
page's one view (``lesson_ui.SdpSetup``), the only argument of every section; the
kernel-regression comparison has its own sliders and reruns alone (``st.fragment``).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core.lessons import scaled_dot_product as lesson
from ui import classroom, questions
from ui import controls as uc
from ui import live_slider as live
from ui import scaled_dot_product as lesson_ui
from ui.i18n import t
from ui.layout import page_header
from ui.questions import Question
from ui.sections import Section, run_sections

TEMPERATURES = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
NW_BANDWIDTHS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2)


# ----------------------------------------------------------------------------------------------
# page-wide controls and the view every section uses
# ----------------------------------------------------------------------------------------------


#: {name: (live slider, the place kept for it)}: d_k and τ are drawn once the setup they redraw is
#: known (:func:`live_sliders`), in their places above the controls that follow them.
LiveSlots = dict[str, tuple[live.Control, object]]


def _scale_controls(where, slots: LiveSlots) -> tuple[int, str, float]:
    slots["dk"] = (lesson_ui.sdp_dk_control(), where.container())
    dk = int(live.value(slots["dk"][0]))
    mode = lesson_ui.scale_mode_control(where)
    temperature = 1.0
    if mode == "custom":
        slots["temperature"] = (lesson_ui.sdp_temperature_control(TEMPERATURES), where.container())
        temperature = float(live.value(slots["temperature"][0]))
    return dk, mode, temperature


def live_sliders(slots: LiveSlots, setup: lesson_ui.SdpSetup | None) -> None:
    """Draw d_k and τ into their places; they redraw the score and weight maps while they move."""
    views = lesson_ui.sdp_live_views(setup) if setup is not None else None
    for name, (control, slot) in slots.items():
        live.slider(control, views[name] if views else live.Live({}, name), where=slot)


def controls_section(slots: LiveSlots) -> lesson_ui.SdpControls:
    """The page-wide controls: inputs, d_k and the temperature, the mask (``slots``: the places
    kept for the live sliders, filled by :func:`live_sliders`)."""
    c1, c2, c3 = st.columns(3)
    source, length, seed = lesson_ui.input_controls(c1)
    dk, scale_mode, temperature = _scale_controls(c2, slots)
    mask_mode, n_pad = lesson_ui.mask_controls(c3)
    return lesson_ui.SdpControls(source, length, seed, dk, scale_mode, temperature, mask_mode, n_pad)


# ----------------------------------------------------------------------------------------------
# sections (each takes the page's view)
# ----------------------------------------------------------------------------------------------


def qkv_section(s: lesson_ui.SdpSetup) -> None:
    """Q, K and V themselves: one row per token, one column per dimension."""
    st.markdown(t("sdp.qkv_body_sentence" if s.inputs.tokens else "sdp.qkv_body_random"))
    lesson_ui.show_qkv(s)


def pipeline_section(s: lesson_ui.SdpSetup) -> None:
    """The steps as heatmaps (one figure of four panels), with the scale, spread, peak and entropy."""
    st.markdown(t("sdp.pipeline_body"))
    stats = lesson_ui.row_stats(s.steps.weights)
    lesson_ui.pipeline_metrics(s, stats)
    lesson_ui.show_pipeline(s, stats)
    c5, c6 = st.columns(2)
    with c5:
        lesson_ui.show_output(s)
    with c6:
        lesson_ui.repeated_tokens(s)


#: Without scaling, is the peak weight at this d_k nearer one-hot or uniform? (the experiment's)
DK_PEAK = Question(
    "sdp_dk_peak",
    prompt_key="q.sdp_dk_prompt",
    explain_key="q.sdp_dk_explain",
    choices={"one": "q.sdp_dk_one", "uniform": "q.sdp_dk_uniform"},
)


def dk_section(s: lesson_ui.SdpSetup) -> None:
    """Why √d_k: variance, entropy, peak weight and gradients against d_k (cached per seed)."""
    dk = s.controls.dk
    with st.spinner(t("sdp.dk_running")):
        e = lesson_ui.sdp_dk_experiment(s.controls.seed)
    i = list(e.d_k).index(dk)
    answer, numbers = lesson_ui.dk_peak(e, i)
    length = {"L": e.length}
    DK_PEAK.ask(
        answer, prompt={"dk": dk} | length, choice_kwargs=length, explain={"dk": dk} | length | numbers
    )
    questions.reveal(DK_PEAK.qid, partial(lesson_ui.dk_results, e, i, dk))


#: Naive (additive -inf) and safe softmax on a row with every key masked: NaN, zeros or weights?
EMPTY_ROW = {
    name: Question(
        f"sdp_empty_{name}",
        choices={"nan": "q.sdp_row_nan", "zeros": "q.sdp_row_zeros", "uniform": "q.sdp_row_uniform"},
    )
    for name in ("naive", "safe")
}


def nan_section(s: lesson_ui.SdpSetup) -> None:
    """A query with every key masked: the additive -inf gives NaN, the safe version zeros."""
    w_naive = lesson_ui.sdp_naive(s.inputs, s.mask, s.scale)
    empty = lesson.count_fully_masked(s.mask)
    query, rows = lesson_ui.empty_row(s, w_naive, empty)
    for name, question in EMPTY_ROW.items():
        row = ", ".join(f"{w:.2g}" for w in rows[name][0][:6])
        question.ask(
            lesson_ui.row_outcome(rows[name]), prompt={"query": query}, explain={"query": query, "row": row}
        )
    qids = tuple(q.qid for q in EMPTY_ROW.values())
    questions.reveal(qids, partial(lesson_ui.nan_results, s, w_naive, empty))


def torch_section(s: lesson_ui.SdpSetup) -> None:
    """Ours against ``torch.nn.functional.scaled_dot_product_attention`` (measured once per input)."""
    st.markdown(t("sdp.torch_body"))
    lesson_ui.torch_metrics(s)


#: At this temperature, does softmax give any weight that is exactly zero?
SOFTMAX_ZERO = Question(
    "sdp_softmax_zero",
    prompt_key="q.sdp_zero_prompt",
    explain_key="q.sdp_zero_explain",
    choices=questions.YES_NO,
)


def sparse_section(s: lesson_ui.SdpSetup) -> None:
    """Softmax, sparsemax and entmax-1.5 on the page's scores: which weights become exactly zero;
    then the same in kernel regression (its own fragment)."""
    res = lesson_ui.normalizer_weights(s.inputs, s.mask, s.scale)
    soft = res[[r.name for r in res].index("softmax")]
    explain = {"zeros": soft.zeros, "allowed": soft.allowed, "underflow": soft.underflow}
    SOFTMAX_ZERO.ask("yes" if soft.zeros else "no", prompt={"tau": f"{s.temperature:.3g}"}, explain=explain)
    questions.reveal(SOFTMAX_ZERO.qid, partial(_normalizer_results, s, res))


def _normalizer_results(s: lesson_ui.SdpSetup, res) -> None:
    lesson_ui.normalizer_results(s, res)
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
    lesson_ui.nw_results(h, x0)


def troubleshooting_section(s: lesson_ui.SdpSetup) -> None:
    """The post's table: each symptom measured now, with buttons that set the controls; the
    weights they produce are drawn right here, so the result of a click is in view."""
    st.markdown(t("sdp.trouble_body"))
    lesson_ui.trouble_table(s)
    lesson_ui.show_heat(
        "weights", s.steps.weights, s, t("sdp.fig_weights"), "sdp_fig_trouble_weights"
    )  # cached


def render() -> None:
    page_header("sdp.title", "sdp.intro")
    if classroom.on_title_slide():  # the page's formula: part of its header
        st.latex(
            r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\mathrm{mask}\!\left(\frac{QK^\top}{\tau}\right)\right)V,"
            r"\qquad \tau=\sqrt{d_k}"
        )
    with classroom.controls_area():
        slots: LiveSlots = {}
        controls = controls_section(slots)
        view = lesson_ui.setup_view(controls)
        live_sliders(slots, view)
    if view is None:
        return
    run_sections(
        "scaled-dot-product",
        [
            Section("sdp.qkv_title", partial(qkv_section, view)),
            Section("sdp.pipeline_title", partial(pipeline_section, view)),
            Section("sdp.dk_title", partial(dk_section, view)),
            Section("sdp.nan_title", partial(nan_section, view), folded=True),
            Section("sdp.torch_title", partial(torch_section, view), folded=True),
            Section("sdp.sparse_title", partial(sparse_section, view), folded=True),
            Section("sdp.trouble_title", partial(troubleshooting_section, view), folded=True),
        ],
    )


render()
