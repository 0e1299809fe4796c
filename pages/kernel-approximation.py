"""Attention as a kernel you can approximate: random features, FAVOR+ and linear attention.

Thin page: controls -> ``ui.kernel_approximation`` (cached calls into
``core.lessons.kernel_approximation``) -> ``figures.kernel_approximation``. Sections whose controls
drive only themselves are fragments; the cost measurement runs on a button and its last result
stays.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from ui import controls as uc
from ui import kernel_approximation as lesson_ui
from ui import questions
from ui.i18n import t
from ui.layout import page_header
from ui.questions import Question
from ui.sections import Section, controls_first, once, run_sections

View = lesson_ui.View
FEATURE_KINDS = ("positive_orthogonal", "positive_iid", "trigonometric")
CAUSAL_MAPS = ("favor", "elu")


@st.fragment
def regression_section(view: View) -> None:
    """Nadaraya-Watson with random Fourier features: its own h, m and seed (a fragment)."""
    c1, c2, c3 = st.columns(3)
    h = float(uc.select_slider("ka.h", key="ka_h", options=lesson_ui.BANDWIDTHS, value=0.3, where=c1))
    m = int(
        uc.select_slider(
            "ka.m", key="ka_m", options=lesson_ui.M_OPTIONS, value=16, help_key="ka.m_help", where=c2
        )
    )
    seed = uc.seed("ka_seed", value=0, where=c3)
    fit = lesson_ui.rff_fit(h, m, seed)
    conv = lesson_ui.rff_convergence(h, seed)
    _slope_question(conv)
    questions.reveal("ka_quadruple_m", partial(lesson_ui.rff_results, fit, conv, h, m, seed))


#: What quadrupling m does to an error falling like m^slope, by the nearest slope.
SLOPE_OUTCOMES = {"halves": -0.5, "quarters": -1.0, "same": 0.0}
#: What quadrupling m does to the regression's error.
QUADRUPLE_M = Question(
    "ka_quadruple_m",
    prompt_key="q.ka_slope_prompt",
    explain_key="q.ka_slope_explain",
    choices={name: f"q.ka_slope_{name}" for name in SLOPE_OUTCOMES},
)


def _slope_question(conv: lesson_ui.RffConvergence) -> None:
    """Quadruple m: the measured slope of the kernel error says what happens (4^slope)."""
    nearest = min(SLOPE_OUTCOMES, key=lambda name: abs(SLOPE_OUTCOMES[name] - conv.slope))
    QUADRUPLE_M.ask(
        nearest,
        explain={"slope": f"{conv.slope:.2f}", "factor": f"{4**conv.slope:.2f}"},
    )


#: Does the approximate attention have a negative weight?
NEGATIVE = Question("ka_negative", choices=questions.YES_NO)


def attention_section(view: View) -> None:
    """Softmax attention's kernel as an expectation over random features, then its approximation."""
    st.markdown(t("ka.att_body"))
    st.latex(
        r"e^{q\cdot k}=\mathbb{E}_{w\sim\mathcal N(0,I)}\big[\phi(q)\,\phi(k)\big],\quad"
        r"\phi(x)=\tfrac{1}{\sqrt m}\,e^{Wx-|x|^2/2};\qquad"
        r"\widehat{\mathrm{Att}}=\frac{\phi(Q)\,(\phi(K)^\top V)}{\phi(Q)\,(\phi(K)^\top\mathbf 1)}"
    )
    if (got := view.inputs()) is not None:  # else the controls said why
        approximation(*got)


@st.fragment
def approximation(inp: lesson_ui.AttentionInputs, seed: int) -> None:
    """One draw of m features of a kind against the exact attention (its own controls: a fragment)."""
    st.subheader(t("ka.approx_title"))
    c1, c2 = st.columns(2)
    m = int(uc.select_slider("ka.m", key="ka_att_m", options=lesson_ui.M_OPTIONS[1:], value=64, where=c1))
    kind = uc.radio("ka.kind", key="ka_kind", options=FEATURE_KINDS, option_prefix="ka.kind_", where=c2)
    r = lesson_ui.approximate_attention(inp, m, kind, seed)
    lowest = float(r.approx.min())
    NEGATIVE.ask(
        "yes" if lowest < 0 else "no",
        prompt={"kind": t(f"ka.kind_{kind}"), "m": m},
        explain={"lowest": f"{lowest:.3g}"},
    )
    questions.reveal("ka_negative", partial(lesson_ui.approximation_results, r, m))


#: Which feature kind approximates best at the largest m? (Its choices: the kinds compared.)
BEST_FEATURES = Question("ka_best_features", prompt_key="q.ka_best_prompt", explain_key="q.ka_best_explain")


def features_section(view: View) -> None:
    """Positive, orthogonal and trigonometric features against m on the inputs on screen."""
    if (got := view.inputs()) is None:
        return
    inp, seed = got
    st.markdown(t("ka.features_body", seeds=lesson_ui.FEATURE_SEEDS))
    cmp = lesson_ui.compare_features(inp, seed)
    names = {kind: t(f"ka.kind_{kind}") for kind in cmp.kinds}
    best = min(range(len(cmp.kinds)), key=lambda i: cmp.error[i, -1])  # the error chart's last points
    BEST_FEATURES.ask(
        cmp.kinds[best],
        prompt={"m": int(cmp.m[-1])},
        choices={kind: f"ka.kind_{kind}" for kind in cmp.kinds},
        explain={
            "m": int(cmp.m[-1]),
            "errors": ", ".join(f"{names[k]} {cmp.error[i, -1]:.3f}" for i, k in enumerate(cmp.kinds)),
        },
    )
    questions.reveal("ka_best_features", partial(lesson_ui.features_results, cmp, names, inp))


def causal_section(view: View) -> None:
    """Causal linear attention: prefix sums against the masked quadratic form."""
    if (got := view.inputs()) is not None:
        causal(*got)


@st.fragment
def causal(inp: lesson_ui.AttentionInputs, seed: int) -> None:
    """The causal check with its own feature map and m (a fragment)."""
    st.markdown(t("ka.causal_body"))
    st.latex(
        r"S_i=S_{i-1}+\phi(k_i)\,v_i^\top,\quad z_i=z_{i-1}+\phi(k_i),\quad"
        r"\mathrm{out}_i=\frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i}"
    )
    c1, c2 = st.columns(2)
    fmap = uc.radio(
        "ka.causal_map", key="ka_causal_map", options=CAUSAL_MAPS, option_prefix="ka.map_", where=c1
    )
    m = int(uc.select_slider("ka.m", key="ka_causal_m", options=lesson_ui.M_OPTIONS[1:], value=64, where=c2))
    lesson_ui.causal_results(lesson_ui.causal_check(inp, m, fmap, seed))


def dissection_section(view: View) -> None:
    """Other kernels in the softmax's place (Tsai et al.'s Transformer Dissection)."""
    if (got := view.inputs()) is None:
        return
    st.markdown(t("ka.tsai_body"))
    st.latex(
        r"K_{\exp}=e^{q\cdot k/\sqrt D},\quad K_{\mathrm{rbf}}=e^{-|q-k|^2/2\sqrt D},\quad "
        r"K_{\mathrm{poly}}=(1+q\cdot k/\sqrt D)^2"
    )
    lesson_ui.dissection_results(got[0])


COST_REQUESTED = "ka_cost_requested"


def _request_cost() -> None:
    st.session_state[COST_REQUESTED] = True


@st.fragment
def cost_section(view: View) -> None:
    """Time and memory against L, measured on its Run button; the last result stays on screen."""
    st.markdown(t("ka.cost_body", cap=lesson_ui.MAX_COST_LENGTH, budget=int(lesson_ui.TOTAL_BUDGET_S)))
    c1, c2, c3 = st.columns([2, 2, 1])
    options = lesson_ui.cost_lengths(lesson_ui.MAX_COST_LENGTH)
    max_len = int(
        uc.select_slider("ka.cost_max_len", key="ka_cost_len", options=options, value=4096, where=c1)
    )
    m = int(
        uc.select_slider("ka.cost_m", key="ka_cost_m", options=lesson_ui.COST_M_OPTIONS, value=128, where=c2)
    )
    c3.button(t("ka.cost_run"), key="ka_btn_cost", type="primary", on_click=_request_cost)
    if st.session_state.pop(COST_REQUESTED, False):
        lesson_ui.run_cost_with_progress(max_len, m)
    lesson_ui.show_cost(lesson_ui.last_cost())


def render() -> None:
    page_header("ka.title", "ka.intro")
    view = View(inputs=once(lesson_ui.attention_controls))
    controls_first(view.inputs)
    run_sections(
        "kernel-approximation",
        [
            Section("ka.rff_title", partial(regression_section, view)),
            Section("ka.att_title", partial(attention_section, view)),
            Section("ka.features_title", partial(features_section, view), folded=True, level=3),
            Section("ka.causal_title", partial(causal_section, view), folded=True, level=3),
            Section("ka.tsai_title", partial(dissection_section, view), folded=True, level=3),
            Section("ka.cost_title", partial(cost_section, view), folded=True),
        ],
    )


render()
