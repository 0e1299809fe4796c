"""Attention as a kernel you can approximate: random features, FAVOR+ and linear attention.

Thin page: controls -> ``ui.kernel_approximation`` (cached calls into
``core.lessons.kernel_approximation``) -> ``figures.kernel_approximation``. Sections whose controls
drive only themselves are fragments; the cost measurement runs on a button and its last result
stays.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from core.lessons import kernel_approximation as lesson
from ui import classroom, questions
from ui import controls as uc
from ui import kernel_approximation as lesson_ui
from ui.i18n import t
from ui.layout import page_header, show_figure
from ui.questions import Question
from ui.sections import Section, controls_first, once, run_sections

#: The attention controls, drawn by the first section that asks (see ``ui.sections.once``).
InputsThunk = Callable[[], tuple[lesson_ui.AttentionInputs, int] | None]

FEATURE_KINDS = ("positive_orthogonal", "positive_iid", "trigonometric")
CAUSAL_MAPS = ("favor", "elu")
KERNEL_NAMES = ("exponential", "rbf", "polynomial")


@st.fragment
def regression_section() -> None:
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
    questions.reveal("ka_quadruple_m", partial(_rff_results, fit, conv, h, m, seed))


def _rff_results(fit: lesson_ui.RffFit, conv: lesson_ui.RffConvergence, h: float, m: int, seed: int) -> None:
    """Random Fourier features (the body says how fast they converge), measured: the answer.

    On a slide the figures come first, so that they start on a 1280x720 screen."""
    text, charts = classroom.figures_first()
    text.markdown(t("ka.rff_body"))
    text.latex(
        r"e^{-(x-x')^2/2h^2}=\mathbb{E}_{w,b}\big[z(x)\,z(x')\big],\quad "
        r"z(x)=\sqrt{2/m}\,\cos(wx+b),\ w\sim\mathcal N(0,h^{-2}),\ b\sim U[0,2\pi)"
    )
    at_m = list(conv.m).index(m)  # the chart's grid holds every m of the slider
    k1, k2, k3 = text.columns(3)
    k1.metric(t("ka.metric_fit_rms", seeds=lesson_ui.RFF_SEEDS), f"{conv.fit_rms[at_m]:.3g}")
    k2.metric(t("ka.metric_min_den"), f"{fit.denominator.min():.3g}", help=t("ka.metric_min_den_help"))
    k3.metric(t("ka.metric_slope"), f"{conv.slope:.2f}", help=t("ka.metric_slope_help"))
    text.caption(t("ka.fit_rms_draw", m=m, seed=seed, draw=f"{fit.rms_error:.3g}", seeds=lesson_ui.RFF_SEEDS))
    with charts:
        lesson_ui.rff_figures(lesson_ui.regression_data(), fit, conv, h, m, seed)


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


def attention_intro() -> None:
    st.markdown(t("ka.att_body"))
    st.latex(
        r"e^{q\cdot k}=\mathbb{E}_{w\sim\mathcal N(0,I)}\big[\phi(q)\,\phi(k)\big],\quad"
        r"\phi(x)=\tfrac{1}{\sqrt m}\,e^{Wx-|x|^2/2};\qquad"
        r"\widehat{\mathrm{Att}}=\frac{\phi(Q)\,(\phi(K)^\top V)}{\phi(Q)\,(\phi(K)^\top\mathbf 1)}"
    )


def attention_inputs() -> tuple[lesson_ui.AttentionInputs, int] | None:
    """Page-wide controls of the attention sections: L, D, σ and the seed (also the features')."""
    c1, c2, c3, c4 = st.columns(4)
    length = int(
        uc.slider(
            "ka.length",
            key="ka_len",
            min_value=4,
            max_value=lesson_ui.MAX_DISPLAY_LENGTH,
            value=16,
            step=1,
            where=c1,
        )
    )
    d_k = int(uc.select_slider("ka.dk", key="ka_dk", options=lesson_ui.DK_OPTIONS, value=16, where=c2))
    sigma = float(
        uc.select_slider(
            "ka.sigma",
            key="ka_sigma",
            options=lesson_ui.SIGMA_OPTIONS,
            value=0.5,
            help_key="ka.sigma_help",
            where=c3,
        )
    )
    seed = uc.seed("ka_att_seed", value=0, where=c4)
    try:
        return lesson_ui.attention_inputs(length, d_k, sigma, seed), seed
    except ValueError:
        st.error(t("ka.input_error"))
        return None


#: Does the approximate attention have a negative weight?
NEGATIVE = Question("ka_negative", choices=questions.YES_NO)


@st.fragment
def approximation_section(inp: lesson_ui.AttentionInputs, seed: int) -> None:
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


def features_section(inp: lesson_ui.AttentionInputs, seed: int) -> None:
    st.markdown(t("ka.features_body", seeds=lesson_ui.FEATURE_SEEDS))
    cmp = lesson_ui.compare_features(inp, seed)
    names = {kind: t(f"ka.kind_{kind}") for kind in cmp.kinds}
    _best_features_question(cmp, names)
    questions.reveal("ka_best_features", partial(_features_results, cmp, names, inp))


def _features_results(cmp, names: dict[str, str], inp: lesson_ui.AttentionInputs) -> None:
    """The error of each kind of feature against m, the denominators, and why positive ones win."""
    a, b = st.columns(2)
    with a:
        fig = lesson_ui.feature_error_chart(cmp, names)
        show_figure(
            fig,
            key="ka_fig_feature_error",
            look_for_key="ka.look_feature_error",
            code=lesson.compare_features,
        )
    with b:
        lesson_ui.denominators_figure(cmp)
    _feature_verdicts(cmp, inp)
    st.markdown(t("ka.features_why"))


#: The comparisons said under the error chart: (kind, the kinds it is compared with, i18n key).
FEATURE_VERSUS = (
    ("trigonometric", ("positive_orthogonal", "positive_iid"), "ka.trig_vs_positive"),
    ("positive_orthogonal", ("positive_iid",), "ka.orth_vs_iid"),
)


def _feature_verdicts(cmp, inp: lesson_ui.AttentionInputs) -> None:
    """How the kinds compare at each m on the inputs on screen (computed, with the m ranges)."""
    sigma, d = f"{inp.sigma:g}", inp.q.shape[-1]
    for kind, others, key in FEATURE_VERSUS:
        parts = [
            t(f"ka.part_{run.outcome}", ms=run.m_range, ratio=run.ratio, pct=f"{lesson.SAME_RTOL:.0%}")
            for run in lesson_ui.comparison_runs(cmp, kind, others)
        ]
        st.markdown(t(key, sigma=sigma, d=d, parts=t("ka.part_sep").join(parts)))
    st.caption(t("ka.trig_depends"))


#: Which feature kind approximates best at the largest m? (Its choices: the kinds compared.)
BEST_FEATURES = Question("ka_best_features", prompt_key="q.ka_best_prompt", explain_key="q.ka_best_explain")


def _best_features_question(cmp, names: dict[str, str]) -> None:
    """Which features approximate best at the largest m? Answered by the error chart's last points."""
    best = min(range(len(cmp.kinds)), key=lambda i: cmp.error[i, -1])
    BEST_FEATURES.ask(
        cmp.kinds[best],
        prompt={"m": int(cmp.m[-1])},
        choices={kind: f"ka.kind_{kind}" for kind in cmp.kinds},
        explain={
            "m": int(cmp.m[-1]),
            "errors": ", ".join(f"{names[k]} {cmp.error[i, -1]:.3f}" for i, k in enumerate(cmp.kinds)),
        },
    )


@st.fragment
def causal_section(inp: lesson_ui.AttentionInputs, seed: int) -> None:
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
    c = lesson_ui.causal_check(inp, m, fmap, seed)
    k1, k2 = st.columns(2)
    k1.metric(t("ka.metric_causal_diff"), f"{c.max_abs_diff:.1e}")
    k2.metric(t("ka.metric_causal_exact"), f"{c.exact_error:.3f}", help=t("ka.metric_causal_exact_help"))
    fig = lesson_ui.matrices_row(
        (
            (t("ka.panel_prefix"), c.prefix),
            (t("ka.panel_masked"), c.masked),
            (t("ka.panel_causal_diff"), c.difference),
        ),
        x_title=t("ka.axis_dv"),
        y_title=t("ka.axis_query"),
        signed=True,
        signed_last=True,
    )
    show_figure(fig, key="ka_fig_causal", look_for_key="ka.look_causal", code=lesson.causal_check)


def dissection_section(inp: lesson_ui.AttentionInputs) -> None:
    st.markdown(t("ka.tsai_body"))
    st.latex(
        r"K_{\exp}=e^{q\cdot k/\sqrt D},\quad K_{\mathrm{rbf}}=e^{-|q-k|^2/2\sqrt D},\quad "
        r"K_{\mathrm{poly}}=(1+q\cdot k/\sqrt D)^2"
    )
    weights = lesson_ui.dissection(inp)
    fig = lesson_ui.matrices_row(
        tuple((t(f"ka.kernel_{name}"), weights[name]) for name in KERNEL_NAMES),
        x_title=t("ka.axis_key"),
        y_title=t("ka.axis_query"),
    )
    poly = lesson_ui.polynomial_match(inp)
    show_figure(
        fig,
        key="ka_fig_tsai",
        look_for_key="ka.look_tsai",
        code=(lesson.dissection_weights, lesson.polynomial_match),
        pct=f"{poly.rtol:.0%}",
        radius=f"{poly.radius:.2f}",
        share=f"{poly.share:.0%}",
        lo=f"{poly.lowest:.2f}",
        hi=f"{poly.highest:.2f}",
    )


COST_REQUESTED = "ka_cost_requested"


def _request_cost() -> None:
    st.session_state[COST_REQUESTED] = True


@st.fragment
def cost_section() -> None:
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
        bar = st.progress(0.0, text=t("ka.cost_running"))
        result = lesson_ui.run_cost(
            max_len,
            m,
            lambda f, method: bar.progress(f, text=t("ka.cost_progress", method=t(f"ka.method_{method}"))),
        )
        bar.empty()
        if result is None:
            st.warning(t("ka.cost_busy"))
        else:
            lesson_ui.keep_cost(result)
    lesson_ui.show_cost(lesson_ui.last_cost())


def _with_inputs(section: Callable[..., None], inputs: InputsThunk, *, seed: bool = True) -> None:
    value = inputs()
    if value is None:  # the controls said why
        return
    if seed:
        section(*value)
    else:
        section(value[0])


def _attention(inputs: InputsThunk) -> None:
    attention_intro()
    _with_inputs(approximation_section, inputs)


def render() -> None:
    page_header("ka.title", "ka.intro")
    inputs = once(attention_inputs)
    controls_first(inputs)
    features = partial(_with_inputs, features_section, inputs)  # the attention section's h3s
    causal = partial(_with_inputs, causal_section, inputs)
    dissection = partial(_with_inputs, dissection_section, inputs, seed=False)
    run_sections(
        "kernel-approximation",
        [
            Section("ka.rff_title", regression_section),
            Section("ka.att_title", partial(_attention, inputs)),
            Section("ka.features_title", features, folded=True, level=3),
            Section("ka.causal_title", causal, folded=True, level=3),
            Section("ka.tsai_title", dissection, folded=True, level=3),
            Section("ka.cost_title", cost_section, folded=True),
        ],
    )


render()
