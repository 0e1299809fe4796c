"""Cached wrappers, the attention controls and :class:`View`, the drawing helpers (each figure
with its ``Labels``) and the live cost run of the kernel-approximation page.

Pages never touch torch: these wrappers call :mod:`core.lessons.kernel_approximation` and hand back numpy
arrays and frozen dataclasses. Every cached function takes only its arguments and keeps a bounded
number of entries.

The cost measurement (time and peak memory against L) runs on a button. Only one measurement
runs at a time on the whole server (the ``COST`` pool of the server's one slot limiter,
``ui.live_run``); another user who presses Run meanwhile is told to wait instead of queueing.
Each measurement is capped in L (``MAX_COST_LENGTH``), per method (a method stops growing L once
one call takes more than ``POINT_BUDGET_S``) and in total (``TOTAL_BUDGET_S``). The last result
stays in session state (``ka_cost_result``) while controls move.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.data import post_data
from core.lessons import kernel_approximation as ka
from core.random_features import FEATURE_KINDS, RffFit, rff_nw_predict
from figures import kernel_approximation as fka
from figures.common import Labels
from ui import caching, classroom
from ui import controls as uc
from ui.i18n import t
from ui.layout import cached, show_figure
from ui.live_run import COST, limiter

#: Bandwidths offered for the kernel-regression part (the post uses 0.5).
BANDWIDTHS = (0.1, 0.2, 0.3, 0.5, 0.8, 1.2)
#: Feature counts of the m sliders (powers of two).
M_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
#: The m grid of the error-against-m plots: the regression's holds every m of its slider, so the
#: metric beside the chart is the chart's own point at the chosen m.
RFF_M_GRID = M_OPTIONS
FEATURE_M_GRID = (2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Query points of the regression plots (the fit and its error against m: the same grid).
N_QUERY = 241
N_QUERY_CONVERGENCE = N_QUERY
#: Independent draws (seeds from the chosen one) whose median the error-against-m plots show.
RFF_SEEDS = 5
FEATURE_SEEDS = 12
#: Attention inputs: key dimensions, lengths, and the spread σ of the N(0, σ²) query/key entries.
DK_OPTIONS = (4, 8, 16, 32)
SIGMA_OPTIONS = (0.25, 0.5, 0.75, 1.0)
MAX_DISPLAY_LENGTH = 32
D_V = 4
#: Cost measurement: lengths, caps and budgets.
COST_LENGTHS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
MAX_COST_LENGTH = 8192
COST_D = 64
COST_M_OPTIONS = (64, 128, 256)
POINT_BUDGET_S = 1.0
TOTAL_BUDGET_S = 20.0
#: Session-state key of the last cost result.
COST_RESULT = "ka_cost_result"


#: Result types, re-exported for the page (``RffFit`` is imported above).
RffConvergence = ka.RffConvergence


@dataclass(frozen=True)
class RegressionData:
    """The post's data set: x, y (N,)."""

    x: np.ndarray
    y: np.ndarray


@caching.data(max_entries=1)
def regression_data() -> RegressionData:
    """The post's 200 noisy samples of sinc (``core.data.post_data``)."""
    d = post_data()
    return RegressionData(x=d.x, y=d.y)


@caching.data(max_entries=64)
def rff_fit(bandwidth: float, m: int, seed: int) -> RffFit:
    """Nadaraya-Watson with m random Fourier features on the post's data, on a grid of Q points."""
    d = regression_data()
    return rff_nw_predict(d.x, d.y, ka.regression_grid(N_QUERY), bandwidth, m, seed)


@caching.data(max_entries=64)
def rff_draw(bandwidth: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One seed's kernel and fit errors against m on the post's data (``ka.rff_draw``), cached on
    its own: the next seed's convergence shares RFF_SEEDS - 1 of its draws."""
    d = regression_data()
    return ka.rff_draw(d.x, d.y, ka.regression_grid(N_QUERY_CONVERGENCE), bandwidth, RFF_M_GRID, seed)


@caching.data(max_entries=32)
def rff_convergence(bandwidth: float, seed: int) -> ka.RffConvergence:
    """Kernel and fit error against m on the post's data (RFF_SEEDS seeds from ``seed``); equals
    ``ka.rff_convergence(..., RFF_M_GRID, RFF_SEEDS, seed)``."""
    draws = [rff_draw(bandwidth, seed + s) for s in range(RFF_SEEDS)]
    return ka.rff_convergence_of(RFF_M_GRID, draws)


AttentionInputs = ka.AttentionInputs


@caching.data(max_entries=64)
def attention_inputs(length: int, d_k: int, sigma: float, seed: int) -> AttentionInputs:
    """Seeded random Q, K (entries N(0, σ²)) and V (``core.lessons.kernel_approximation
    .attention_inputs``)."""
    return ka.attention_inputs(length, d_k, sigma, seed, D_V)


@caching.data(max_entries=64)
def approximate_attention(inp: AttentionInputs, m: int, kind: str, seed: int) -> ka.AttentionApproximation:
    """The approximate attention matrix next to the exact one (one draw of features)."""
    return ka.approximate_attention(inp.q, inp.k, inp.v, m, kind, seed)


@caching.data(max_entries=32)
def compare_features(inp: AttentionInputs, seed: int) -> ka.FeatureComparison:
    """Error and denominator statistics against m for the three feature kinds."""
    return ka.compare_features(inp.q, inp.k, FEATURE_M_GRID, FEATURE_KINDS, FEATURE_SEEDS, seed)


@caching.data(max_entries=32)
def polynomial_match(inp: AttentionInputs) -> ka.PolynomialMatch:
    """Where (1 + s)² tracks exp(2s), and the share of these inputs' scores in that range."""
    return ka.polynomial_match(inp.q, inp.k)


# The page's sentences on a comparison, from core (``core.lessons.kernel_approximation``).
outcome_runs = ka.outcome_runs
OutcomeRun = ka.OutcomeRun
comparison_runs = ka.comparison_runs


@caching.data(max_entries=32)
def causal_check(inp: AttentionInputs, m: int, feature_map: str, seed: int) -> ka.CausalCheck:
    """Causal prefix-sum form against the masked quadratic form of the same features."""
    return ka.causal_check(inp.q, inp.k, inp.v, m, "positive_orthogonal", seed, feature_map)


@caching.data(max_entries=32)
def dissection(inp: AttentionInputs) -> dict[str, np.ndarray]:
    """Attention weights (L, S) with each kernel of ``DISSECTION_KERNELS`` (the lesson's)."""
    return {name: ka.dissection_weights(inp.q, inp.k, name) for name in ka.DISSECTION_KERNELS}


# ----------------------------------------------------------------------------------------------
# the live cost measurement
# ----------------------------------------------------------------------------------------------


CostRun = ka.CostRun


def cost_lengths(max_length: int) -> tuple[int, ...]:
    """The lengths measured up to ``max_length`` (capped at ``MAX_COST_LENGTH``)."""
    cap = min(int(max_length), MAX_COST_LENGTH)
    return tuple(L for L in COST_LENGTHS if L <= cap)


def run_cost(max_length: int, m: int, on_progress: Callable[[float, str], None]) -> CostRun | None:
    """Measure exact attention, FAVOR+ and linear attention at growing L; None when busy.

    ``on_progress(fraction, method)`` is called before each point. One measurement at a time on
    the server: when another is running this returns None at once.
    """
    with limiter().try_hold(COST) as free:
        if not free:
            return None
        return ka.measure_costs(
            cost_lengths(max_length),
            COST_D,
            m,
            max_length=max_length,
            point_budget_s=POINT_BUDGET_S,
            total_budget_s=TOTAL_BUDGET_S,
            on_progress=on_progress,
        )


def last_cost() -> CostRun | None:
    """The last cost result of this session (kept while controls move)."""
    result = st.session_state.get(COST_RESULT)
    return result if isinstance(result, CostRun) else None


def keep_cost(result: CostRun) -> None:
    st.session_state[COST_RESULT] = result


# The page's figure builders, each cached on its inputs (``ui.layout.cached``: same
# signature as the builder, one bounded cache per builder shared by every session).
rff_fit_figure = cached(fka.rff_fit_figure)
matrices_row = cached(fka.matrices_row)
loglog_figure = cached(fka.loglog_figure)
share_figure = cached(fka.share_figure)
cost_figure = cached(fka.cost_figure)


def rff_figures(data: RegressionData, fit: RffFit, conv: RffConvergence, h: float, m: int, seed: int) -> None:
    """The random-feature fit next to the error against m (medians of ``RFF_SEEDS`` draws)."""
    a, b = st.columns(2)
    with a:
        fig = rff_fit_figure(
            data.x,
            data.y,
            fit.x_query,
            fit.exact,
            fit.approx,
            labels=Labels.of(
                title=t("ka.fig_rff_fit", m=m, h=h),
                x="x",
                y="y",
                data=t("ka.series_data"),
                exact=t("ka.series_exact_nw"),
                approx=t("ka.series_rff_nw", m=m),
            ),
        )
        show_figure(fig, key="ka_fig_rff_fit", look_for_key="ka.look_rff_fit", code=rff_nw_predict)
    with b:
        fig = loglog_figure(
            conv.m,
            {
                t("ka.series_kernel_rms", seeds=RFF_SEEDS): conv.kernel_rms,
                t("ka.series_fit_rms", seeds=RFF_SEEDS): conv.fit_rms,
                t("ka.series_sqrt_m"): conv.reference,
            },
            labels=Labels.of(
                title=t("ka.fig_rff_error"), x=t("ka.axis_m"), y=t("ka.axis_rms"), marker=t("ka.current_m")
            ),
            dashed=(t("ka.series_sqrt_m"),),
            marker_x=float(m),
        )
        show_figure(
            fig,
            key="ka_fig_rff_error",
            look_for_key="ka.look_rff_error",
            code=ka.rff_convergence,
            seeds=RFF_SEEDS,
            first=seed,
            last=seed + RFF_SEEDS - 1,
        )


def approximation_results(r, m: int) -> None:
    """The errors of the approximate attention and its three maps (negative weights show here); on a
    slide the maps first (``classroom.figures_first``), so that they start on a 1280x720 screen."""
    text, charts = classroom.figures_first()
    k1, k2, k3 = text.columns(3)
    k1.metric(t("ka.metric_rel_error"), f"{r.relative_error:.3f}")
    k2.metric(t("ka.metric_out_error"), f"{r.output_error:.3f}")
    k3.metric(t("ka.metric_den_ratio"), f"{r.min_denominator_ratio:.3g}", help=t("ka.metric_den_ratio_help"))
    fig = matrices_row(
        (
            (t("ka.panel_exact"), r.exact),
            (t("ka.panel_approx", m=m), r.approx),
            (t("ka.panel_diff"), r.approx - r.exact),
        ),
        labels=Labels.of(x=t("ka.axis_key"), y=t("ka.axis_query")),
        signed_last=True,
        zmax=float(r.exact.max()),  # the exact map's scale: wild approximate weights saturate
    )
    with charts:
        show_figure(fig, key="ka_fig_approx", look_for_key="ka.look_approx", code=ka.approximate_attention)


def feature_error_chart(cmp: ka.FeatureComparison, names: dict[str, str]) -> go.Figure:
    """Each kind of feature's relative error against m (log-log), with the 1/sqrt(m) reference.

    ``names``: each kind's name in the page's language.
    """
    series = {names[kind]: cmp.error[i] for i, kind in enumerate(cmp.kinds)}
    series[t("ka.series_sqrt_m")] = cmp.sqrt_m_reference
    return loglog_figure(
        cmp.m,
        series,
        labels=Labels.of(title=t("ka.fig_feature_error"), x=t("ka.axis_m"), y=t("ka.axis_rel_error")),
        dashed=(t("ka.series_sqrt_m"),),
    )


def denominators_figure(cmp) -> None:
    """How often the estimated softmax denominator is negative or near zero, against m."""
    trig = cmp.kinds.index("trigonometric")
    pos = cmp.kinds.index("positive_iid")
    fig = share_figure(
        cmp.m,
        {
            t("ka.series_trig_negative"): cmp.negative_share[trig],
            t("ka.series_trig_near_zero"): cmp.near_zero_share[trig],
            t("ka.series_pos_near_zero"): cmp.near_zero_share[pos],
        },
        labels=Labels.of(title=t("ka.fig_denominators"), x=t("ka.axis_m"), y=t("ka.axis_share")),
    )
    show_figure(fig, key="ka_fig_denominators", look_for_key="ka.look_denominators", code=ka.compare_features)


def show_cost(run: CostRun | None) -> None:
    """The last cost measurement: time and peak memory against L, with the crossovers (or why none)."""
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
            fig = cost_figure(
                lengths,
                values,
                labels=Labels.of(title=t(f"ka.fig_cost_{field}"), x="L", y=unit),
                crossovers=crossovers,
            )
            show_figure(fig, key=f"ka_fig_cost_{field}", look_for_key=f"ka.look_cost_{field}")
            for line in always:
                st.caption(line)


# ----------------------------------------------------------------------------------------------
# the page's View, its attention controls and the sections' figures
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """The page-wide values the sections read.

    Attributes:
        inputs: the attention controls (L, D, σ, seed), drawn by the first section that asks
            (``ui.sections.once``): (inputs, seed), or None when they are refused (the controls
            said why).
    """

    inputs: Callable[[], tuple[AttentionInputs, int] | None]


def attention_controls() -> tuple[AttentionInputs, int] | None:
    """Page-wide controls of the attention sections: L, D, σ and the seed (also the features')."""
    c1, c2, c3, c4 = st.columns(4)
    length = int(
        uc.slider(
            "ka.length", key="ka_len", min_value=4, max_value=MAX_DISPLAY_LENGTH, value=16, step=1, where=c1
        )
    )
    d_k = int(uc.select_slider("ka.dk", key="ka_dk", options=DK_OPTIONS, value=16, where=c2))
    sigma = float(
        uc.select_slider(
            "ka.sigma", key="ka_sigma", options=SIGMA_OPTIONS, value=0.5, help_key="ka.sigma_help", where=c3
        )
    )
    seed = uc.seed("ka_att_seed", value=0, where=c4)
    try:
        return attention_inputs(length, d_k, sigma, seed), seed
    except ValueError:
        st.error(t("ka.input_error"))
        return None


def rff_results(fit: RffFit, conv: RffConvergence, h: float, m: int, seed: int) -> None:
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
    k1.metric(t("ka.metric_fit_rms", seeds=RFF_SEEDS), f"{conv.fit_rms[at_m]:.3g}")
    k2.metric(t("ka.metric_min_den"), f"{fit.denominator.min():.3g}", help=t("ka.metric_min_den_help"))
    k3.metric(t("ka.metric_slope"), f"{conv.slope:.2f}", help=t("ka.metric_slope_help"))
    text.caption(t("ka.fit_rms_draw", m=m, seed=seed, draw=f"{fit.rms_error:.3g}", seeds=RFF_SEEDS))
    with charts:
        rff_figures(regression_data(), fit, conv, h, m, seed)


#: The comparisons said under the error chart: (kind, the kinds it is compared with, i18n key).
FEATURE_VERSUS = (
    ("trigonometric", ("positive_orthogonal", "positive_iid"), "ka.trig_vs_positive"),
    ("positive_orthogonal", ("positive_iid",), "ka.orth_vs_iid"),
)


def _feature_verdicts(cmp: ka.FeatureComparison, inp: AttentionInputs) -> None:
    """How the kinds compare at each m on the inputs on screen (computed, with the m ranges)."""
    sigma, d = f"{inp.sigma:g}", inp.q.shape[-1]
    for kind, others, key in FEATURE_VERSUS:
        parts = [
            t(f"ka.part_{run.outcome}", ms=run.m_range, ratio=run.ratio, pct=f"{ka.SAME_RTOL:.0%}")
            for run in comparison_runs(cmp, kind, others)
        ]
        st.markdown(t(key, sigma=sigma, d=d, parts=t("ka.part_sep").join(parts)))
    st.caption(t("ka.trig_depends"))


def features_results(cmp: ka.FeatureComparison, names: dict[str, str], inp: AttentionInputs) -> None:
    """The error of each kind of feature against m, the denominators, and why positive ones win."""
    a, b = st.columns(2)
    with a:
        fig = feature_error_chart(cmp, names)
        show_figure(
            fig, key="ka_fig_feature_error", look_for_key="ka.look_feature_error", code=ka.compare_features
        )
    with b:
        denominators_figure(cmp)
    _feature_verdicts(cmp, inp)
    st.markdown(t("ka.features_why"))


def causal_results(c: ka.CausalCheck) -> None:
    """The causal prefix-sum form against the masked quadratic form: two metrics and the three maps."""
    k1, k2 = st.columns(2)
    k1.metric(t("ka.metric_causal_diff"), f"{c.max_abs_diff:.1e}")
    k2.metric(t("ka.metric_causal_exact"), f"{c.exact_error:.3f}", help=t("ka.metric_causal_exact_help"))
    fig = matrices_row(
        (
            (t("ka.panel_prefix"), c.prefix),
            (t("ka.panel_masked"), c.masked),
            (t("ka.panel_causal_diff"), c.difference),
        ),
        labels=Labels.of(x=t("ka.axis_dv"), y=t("ka.axis_query")),
        signed=True,
        signed_last=True,
    )
    show_figure(fig, key="ka_fig_causal", look_for_key="ka.look_causal", code=ka.causal_check)


def dissection_results(inp: AttentionInputs) -> None:
    """The attention weights of each kernel of the Transformer Dissection, and where (1 + s)² tracks exp."""
    weights = dissection(inp)
    fig = matrices_row(
        tuple((t(f"ka.kernel_{name}"), weights[name]) for name in ka.DISSECTION_KERNELS),
        labels=Labels.of(x=t("ka.axis_key"), y=t("ka.axis_query")),
    )
    poly = polynomial_match(inp)
    show_figure(
        fig,
        key="ka_fig_tsai",
        look_for_key="ka.look_tsai",
        code=(ka.dissection_weights, ka.polynomial_match),
        pct=f"{poly.rtol:.0%}",
        radius=f"{poly.radius:.2f}",
        share=f"{poly.share:.0%}",
        lo=f"{poly.lowest:.2f}",
        hi=f"{poly.highest:.2f}",
    )


def run_cost_with_progress(max_length: int, m: int) -> None:
    """Run the cost measurement under a progress bar; keep its result, or say the server is busy."""
    bar = st.progress(0.0, text=t("ka.cost_running"))
    result = run_cost(
        max_length,
        m,
        lambda f, method: bar.progress(f, text=t("ka.cost_progress", method=t(f"ka.method_{method}"))),
    )
    bar.empty()
    if result is None:
        st.warning(t("ka.cost_busy"))
    else:
        keep_cost(result)
