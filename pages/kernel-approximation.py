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
from core.random_features import rff_nw_predict
from figures import kernel_approximation as lesson_figures
from ui import controls as uc
from ui import kernel_approximation as lesson_ui
from ui import questions
from ui.i18n import t
from ui.kernel_approximation import RegressionData, RffConvergence, RffFit
from ui.layout import cached_figures, page_header, show_figure
from ui.sections import Section, controls_first, heading, once, run_sections

#: The page's figure builders, each cached on its inputs (see ui.layout.cached_figures).
fk = cached_figures(lesson_figures)

#: The attention controls, drawn by the first section that asks (see ``ui.sections.once``).
InputsThunk = Callable[[], tuple[lesson_ui.AttentionInputs, int] | None]

FEATURE_KINDS = ("positive_orthogonal", "positive_iid", "trigonometric")
CAUSAL_MAPS = ("favor", "elu")
KERNEL_NAMES = ("exponential", "rbf", "polynomial")


@st.fragment
def regression_section() -> None:
    heading("ka.rff_title")
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
    """Random Fourier features (the body says how fast they converge), measured: the answer."""
    st.markdown(t("ka.rff_body"))
    st.latex(
        r"e^{-(x-x')^2/2h^2}=\mathbb{E}_{w,b}\big[z(x)\,z(x')\big],\quad "
        r"z(x)=\sqrt{2/m}\,\cos(wx+b),\ w\sim\mathcal N(0,h^{-2}),\ b\sim U[0,2\pi)"
    )
    at_m = list(conv.m).index(m)  # the chart's grid holds every m of the slider
    k1, k2, k3 = st.columns(3)
    k1.metric(t("ka.metric_fit_rms", seeds=lesson_ui.RFF_SEEDS), f"{conv.fit_rms[at_m]:.3g}")
    k2.metric(t("ka.metric_min_den"), f"{fit.denominator.min():.3g}", help=t("ka.metric_min_den_help"))
    k3.metric(t("ka.metric_slope"), f"{conv.slope:.2f}", help=t("ka.metric_slope_help"))
    st.caption(t("ka.fit_rms_draw", m=m, seed=seed, draw=f"{fit.rms_error:.3g}", seeds=lesson_ui.RFF_SEEDS))
    rff_figures(lesson_ui.regression_data(), fit, conv, h, m, seed)


#: What quadrupling m does to an error falling like m^slope, by the nearest slope.
SLOPE_OUTCOMES = {"halves": -0.5, "quarters": -1.0, "same": 0.0}


def _slope_question(conv: lesson_ui.RffConvergence) -> None:
    """Quadruple m: the measured slope of the kernel error says what happens (4^slope)."""
    nearest = min(SLOPE_OUTCOMES, key=lambda name: abs(SLOPE_OUTCOMES[name] - conv.slope))
    questions.ask(
        "ka_quadruple_m",
        prompt_key="q.ka_slope_prompt",
        choices={name: f"q.ka_slope_{name}" for name in SLOPE_OUTCOMES},
        answer=nearest,
        explain_key="q.ka_slope_explain",
        explain_kwargs={"slope": f"{conv.slope:.2f}", "factor": f"{4**conv.slope:.2f}"},
    )


def rff_figures(data: RegressionData, fit: RffFit, conv: RffConvergence, h: float, m: int, seed: int) -> None:
    """The random-feature fit next to the error against m (medians of ``lesson_ui.RFF_SEEDS`` draws)."""
    a, b = st.columns(2)
    with a:
        fig = fk.rff_fit_figure(
            data.x,
            data.y,
            fit.x_query,
            fit.exact,
            fit.approx,
            names=(t("ka.series_data"), t("ka.series_exact_nw"), t("ka.series_rff_nw", m=m)),
            title=t("ka.fig_rff_fit", m=m, h=h),
            x_title="x",
            y_title="y",
        )
        show_figure(fig, key="ka_fig_rff_fit", look_for_key="ka.look_rff_fit", code=rff_nw_predict)
    with b:
        fig = fk.loglog_figure(
            conv.m,
            {
                t("ka.series_kernel_rms", seeds=lesson_ui.RFF_SEEDS): conv.kernel_rms,
                t("ka.series_fit_rms", seeds=lesson_ui.RFF_SEEDS): conv.fit_rms,
                t("ka.series_sqrt_m"): conv.reference,
            },
            title=t("ka.fig_rff_error"),
            x_title=t("ka.axis_m"),
            y_title=t("ka.axis_rms"),
            dashed=(t("ka.series_sqrt_m"),),
            marker_x=float(m),
            marker_text=t("ka.current_m"),
        )
        show_figure(
            fig,
            key="ka_fig_rff_error",
            look_for_key="ka.look_rff_error",
            code=lesson.rff_convergence,
            seeds=lesson_ui.RFF_SEEDS,
            first=seed,
            last=seed + lesson_ui.RFF_SEEDS - 1,
        )


def attention_intro() -> None:
    heading("ka.att_title")
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


@st.fragment
def approximation_section(inp: lesson_ui.AttentionInputs, seed: int) -> None:
    st.subheader(t("ka.approx_title"))
    c1, c2 = st.columns(2)
    m = int(uc.select_slider("ka.m", key="ka_att_m", options=lesson_ui.M_OPTIONS[1:], value=64, where=c1))
    kind = uc.radio("ka.kind", key="ka_kind", options=FEATURE_KINDS, option_prefix="ka.kind_", where=c2)
    r = lesson_ui.approximate_attention(inp, m, kind, seed)
    lowest = float(r.approx.min())
    questions.ask(
        "ka_negative",
        prompt_key="q.ka_negative_prompt",
        prompt_kwargs={"kind": t(f"ka.kind_{kind}"), "m": m},
        choices={"yes": "common.yes", "no": "common.no"},
        answer="yes" if lowest < 0 else "no",
        explain_key="q.ka_negative_explain",
        explain_kwargs={"lowest": f"{lowest:.3g}"},
    )
    questions.reveal("ka_negative", partial(_approximation_results, r, m))


def _approximation_results(r, m: int) -> None:
    """The errors of the approximate attention and its three maps (negative weights show here)."""
    k1, k2, k3 = st.columns(3)
    k1.metric(t("ka.metric_rel_error"), f"{r.relative_error:.3f}")
    k2.metric(t("ka.metric_out_error"), f"{r.output_error:.3f}")
    k3.metric(t("ka.metric_den_ratio"), f"{r.min_denominator_ratio:.3g}", help=t("ka.metric_den_ratio_help"))
    fig = fk.matrices_row(
        (
            (t("ka.panel_exact"), r.exact),
            (t("ka.panel_approx", m=m), r.approx),
            (t("ka.panel_diff"), r.approx - r.exact),
        ),
        x_title=t("ka.axis_key"),
        y_title=t("ka.axis_query"),
        signed_last=True,
        zmax=float(r.exact.max()),  # the exact map's scale: wild approximate weights saturate
    )
    show_figure(fig, key="ka_fig_approx", look_for_key="ka.look_approx", code=lesson.approximate_attention)


def features_section(inp: lesson_ui.AttentionInputs, seed: int) -> None:
    heading("ka.features_title", sub=True)
    st.markdown(t("ka.features_body", seeds=lesson_ui.FEATURE_SEEDS))
    cmp = lesson_ui.compare_features(inp, seed)
    names = {kind: t(f"ka.kind_{kind}") for kind in cmp.kinds}
    _best_features_question(cmp, names)
    questions.reveal("ka_best_features", partial(_features_results, cmp, names, inp))


def _features_results(cmp, names: dict[str, str], inp: lesson_ui.AttentionInputs) -> None:
    """The error of each kind of feature against m, the denominators, and why positive ones win."""
    a, b = st.columns(2)
    with a:
        series = {names[kind]: cmp.error[i] for i, kind in enumerate(cmp.kinds)}
        series[t("ka.series_sqrt_m")] = cmp.sqrt_m_reference
        fig = fk.loglog_figure(
            cmp.m,
            series,
            title=t("ka.fig_feature_error"),
            x_title=t("ka.axis_m"),
            y_title=t("ka.axis_rel_error"),
            dashed=(t("ka.series_sqrt_m"),),
        )
        show_figure(
            fig,
            key="ka_fig_feature_error",
            look_for_key="ka.look_feature_error",
            code=lesson.compare_features,
        )
    with b:
        _denominators_figure(cmp)
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


def _best_features_question(cmp, names: dict[str, str]) -> None:
    """Which features approximate best at the largest m? Answered by the error chart's last points."""
    best = min(range(len(cmp.kinds)), key=lambda i: cmp.error[i, -1])
    questions.ask(
        "ka_best_features",
        prompt_key="q.ka_best_prompt",
        prompt_kwargs={"m": int(cmp.m[-1])},
        choices={kind: f"ka.kind_{kind}" for kind in cmp.kinds},
        answer=cmp.kinds[best],
        explain_key="q.ka_best_explain",
        explain_kwargs={
            "m": int(cmp.m[-1]),
            "errors": ", ".join(f"{names[k]} {cmp.error[i, -1]:.3f}" for i, k in enumerate(cmp.kinds)),
        },
    )


def _denominators_figure(cmp) -> None:
    """How often the estimated softmax denominator is negative or near zero, against m."""
    trig = cmp.kinds.index("trigonometric")
    pos = cmp.kinds.index("positive_iid")
    fig = fk.share_figure(
        cmp.m,
        {
            t("ka.series_trig_negative"): cmp.negative_share[trig],
            t("ka.series_trig_near_zero"): cmp.near_zero_share[trig],
            t("ka.series_pos_near_zero"): cmp.near_zero_share[pos],
        },
        title=t("ka.fig_denominators"),
        x_title=t("ka.axis_m"),
        y_title=t("ka.axis_share"),
    )
    show_figure(
        fig, key="ka_fig_denominators", look_for_key="ka.look_denominators", code=lesson.compare_features
    )


@st.fragment
def causal_section(inp: lesson_ui.AttentionInputs, seed: int) -> None:
    heading("ka.causal_title", sub=True)
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
    fig = fk.matrices_row(
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
    heading("ka.tsai_title", sub=True)
    st.markdown(t("ka.tsai_body"))
    st.latex(
        r"K_{\exp}=e^{q\cdot k/\sqrt D},\quad K_{\mathrm{rbf}}=e^{-|q-k|^2/2\sqrt D},\quad "
        r"K_{\mathrm{poly}}=(1+q\cdot k/\sqrt D)^2"
    )
    weights = lesson_ui.dissection(inp)
    fig = fk.matrices_row(
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
    heading("ka.cost_title")
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
    show_cost(lesson_ui.last_cost())


def show_cost(run: lesson_ui.CostRun | None) -> None:
    if run is None:
        st.info(t("ka.cost_none"))
        return
    names = {method: t(f"ka.method_{method}") for method in ("exact", "favor", "linear")}
    st.caption(
        t("ka.cost_caption", d=run.d, m=run.m, seconds=f"{run.seconds:.1f}", version=run.torch_version)
        + (
            " "
            + t("ka.cost_stopped", methods=", ".join(f"{names[k]} (L = {v})" for k, v in run.stopped.items()))
        )
        * bool(run.stopped)
    )
    cols = st.columns(2)
    for col, field, unit, scale in (
        (cols[0], "seconds", t("ka.axis_ms"), 1e3),
        (cols[1], "peak_bytes", t("ka.axis_mib"), 1 / 2**20),
    ):
        lengths, values, crossovers, always = {}, {}, {}, []
        for method, name in names.items():
            x, y = run.series(method, field)
            lengths[name], values[name] = x, y * scale
            if method == "exact" or (cross := run.crossover(method, field)) is None:
                continue
            if cross <= x.min():
                always.append(t("ka.crossover_always", name=name, what=t(f"ka.what_{field}")))
            else:
                crossovers[t("ka.crossover", name=name, L=f"{cross:,.0f}")] = cross
        with col:
            fig = fk.cost_figure(
                lengths,
                values,
                title=t(f"ka.fig_cost_{field}"),
                x_title="L",
                y_title=unit,
                crossovers=crossovers,
            )
            show_figure(fig, key=f"ka_fig_cost_{field}", look_for_key=f"ka.look_cost_{field}")
            for line in always:
                st.caption(line)


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
    run_sections(
        "kernel-approximation",
        [
            Section("ka.rff_title", regression_section),
            Section("ka.att_title", partial(_attention, inputs)),
            Section("ka.features_title", partial(_with_inputs, features_section, inputs), folded=True),
            Section("ka.causal_title", partial(_with_inputs, causal_section, inputs), folded=True),
            Section(
                "ka.tsai_title", partial(_with_inputs, dissection_section, inputs, seed=False), folded=True
            ),
            Section("ka.cost_title", cost_section, folded=True),
        ],
    )


render()
