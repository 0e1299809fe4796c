"""The kernels-to-attention page's helpers: its controls, cached wrappers, figures, tables and texts.

The page never touches torch: the cached wrappers call ``core.lessons.kernels_to_attention`` and
hand back numpy arrays in frozen dataclasses. Every cached function takes only its arguments (no
module globals) and keeps a bounded number of entries. The drawing helpers build each figure's
words (``figures.common.Labels``) and show it; the page picks the data and calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st

from core import kernel_attention
from core import nadaraya_watson as nw
from core.lessons import kernels_to_attention as k2a
from figures import attention_shared
from figures import kernels_to_attention as fk2a
from figures.common import Labels
from ui import caching, classroom
from ui import controls as uc
from ui import live_slider as live
from ui.i18n import t
from ui.layout import cached, show_figure, table

T = TypeVar("T")


@caching.data(max_entries=32)
def k2a_nw_vs_attention(n: int, seed: int, bandwidth: float) -> k2a.NwVsAttention:
    """:func:`core.lessons.kernels_to_attention.nw_vs_attention` (the post's three figures), cached."""
    return k2a.nw_vs_attention(n, seed, bandwidth)


@caching.data(max_entries=32)
def k2a_query_weights(n: int, seed: int, bandwidth: float, x0: float) -> k2a.QueryWeights:
    """:func:`core.lessons.kernels_to_attention.query_weights`, cached."""
    return k2a.query_weights(n, seed, bandwidth, x0)


@caching.data(max_entries=32)
def k2a_dot_vs_gaussian(
    n_vectors: int, dim: int, temperature: float, spread: float, seed: int
) -> kernel_attention.DotVsGaussian:
    """:func:`core.lessons.kernels_to_attention.random_dot_vs_gaussian` (keys' norms spread by
    ``spread``), cached."""
    return k2a.random_dot_vs_gaussian(n_vectors, dim, temperature, spread, seed)


@dataclass(frozen=True)
class LearnRun:
    """The controls of one learnable-kernel run (what the shown result was trained with).

    Defined here, not in the page: the page script runs anew on every rerun, and a class defined
    there would be a new class each time, so a run kept in session state would never equal the
    controls' run of a later rerun (dataclass equality needs the same class).
    """

    dims: str  # "1d": a bandwidth; "2d": a Mahalanobis metric
    n: int
    seed: int
    steps: int
    lr: float
    h0: float  # the bandwidth at step 0


@caching.data(max_entries=32)
def _learned_bandwidth(
    n: int, seed: int, steps: int, lr: float, h0: float, loo: bool
) -> k2a.LearnedBandwidth:
    """:func:`core.lessons.kernels_to_attention.learned_bandwidth`, cached."""
    return k2a.learned_bandwidth(n, seed, leave_one_out=loo, steps=steps, lr=lr, init_bandwidth=h0)


@caching.data(max_entries=32)
def _bandwidth_learning(loo: k2a.LearnedBandwidth, no_loo: k2a.LearnedBandwidth) -> k2a.BandwidthLearning:
    """:func:`core.lessons.kernels_to_attention.bandwidth_learning` (the data, the truth, the LOO-CV
    h), cached."""
    return k2a.bandwidth_learning(loo, no_loo)


@caching.data(max_entries=32)
def _learned_metric(n: int, seed: int, steps: int, lr: float, h0: float, loo: bool) -> k2a.LearnedMetric:
    """:func:`core.lessons.kernels_to_attention.learned_metric`, cached."""
    return k2a.learned_metric(n, seed, leave_one_out=loo, steps=steps, lr=lr, init_bandwidth=h0)


def _both_fits(learn: Callable[..., T], run: LearnRun, on_fit: Callable[[int], None] | None) -> tuple[T, T]:
    """``learn`` with leave-one-out, then without; ``on_fit(k)`` after the k-th (a progress bar)."""
    fits = []
    for k, loo in enumerate((True, False), start=1):
        fits.append(learn(run.n, run.seed, run.steps, run.lr, run.h0, loo))
        if on_fit is not None:
            on_fit(k)
    return fits[0], fits[1]


def k2a_learn(
    run: LearnRun, on_fit: Callable[[int], None] | None = None
) -> k2a.BandwidthLearning | k2a.MetricLearning:
    """Train ``run`` with and without leave-one-out: a bandwidth (1-D) or a metric (2-D).

    Each of the two fits is cached on its own; ``on_fit(k)`` is called after the k-th.
    """
    if run.dims == "1d":
        return _bandwidth_learning(*_both_fits(_learned_bandwidth, run, on_fit))
    return k2a.MetricLearning(*_both_fits(_learned_metric, run, on_fit))


# ----------------------------------------------------------------------------------------------
# live sliders (ui.live_slider): what the browser redraws while h or x* moves
# ----------------------------------------------------------------------------------------------


def k2a_controls(bandwidths: tuple[float, ...]) -> tuple[live.Control, live.Control]:
    """The page-wide h (a select-slider over ``bandwidths``) and x* of kernels -> attention."""
    h = live.Control("k2a.h", key="k2a_h", value=0.3, options=bandwidths, help_key="k2a.h_help")
    x0 = live.Control("k2a.x0", key="k2a_x0", value=0.5, min_value=-3.0, max_value=3.0, step=0.1, decimals=1)
    return h, x0


def k2a_live_views(n: int, seed: int, h: float, x0: float) -> dict[str, live.Live]:
    """{"h": ..., "x0": ...}: h redraws the post's three figures and the fits, x* the first one."""
    grid = k2a_nw_vs_attention(n, seed, h)
    model = {
        "kind": "k2a",
        "x": live.numbers(grid.x),
        "y": live.numbers(grid.y),
        "queries": live.numbers(grid.x_query),
        "h": float(h),
        "x0": float(x0),
    }
    fig1 = live.Target("k2a_fig1", "k2a_weights", (("title", t("k2a.fig1", x0="{x0:.1f}", h="{h}")),))
    targets = (
        fig1,
        live.Target("k2a_fig2", "k2a_matrix"),
        live.Target("k2a_fig_fit", "k2a_fit"),
        live.Target("k2a_fig3", "k2a_side"),
    )
    tau = live.Readout(t("k2a.metric_tau"), "tau", ".4g")
    prediction = live.Readout(t("k2a.metric_prediction", x0="{x0:.1f}"), "prediction", ".4f")
    return {
        "h": live.Live(model, "h", targets, (tau, prediction)),
        "x0": live.Live(model, "x0", (fig1,), (prediction,)),
    }


# ----------------------------------------------------------------------------------------------
# the controls
# ----------------------------------------------------------------------------------------------

BANDWIDTHS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
DIMS = (2, 4, 8, 16, 32, 64)
LRS = (0.01, 0.02, 0.05, 0.1, 0.2)
INIT_H = (0.1, 0.2, 0.5, 1.0, 2.0)
#: Largest N the learnable-kernel section trains on (each step is O(N²)).
MAX_LEARN_N = 200
#: Queries and keys of the dot-product section (L = S).
N_VECTORS = 8


@dataclass(frozen=True)
class Knobs:
    """The page-wide controls (the later sections use N and the seed)."""

    bandwidth: float  # h
    x0: float  # the query x* of the first figure
    n: int
    seed: int


def three_controls() -> Knobs:
    """h, x*, N and the seed, in one row of four columns (N and the seed drawn first: the live
    sliders h and x* carry the data they redraw, ``ui.live_slider``)."""
    c1, c2, c3, c4 = st.columns(4)
    n = int(uc.slider("k2a.n", key="k2a_n", min_value=20, max_value=400, value=200, step=10, where=c3))
    seed = uc.seed("k2a_seed", value=42, where=c4)
    h_control, x0_control = k2a_controls(BANDWIDTHS)
    views = k2a_live_views(n, seed, live.value(h_control), live.value(x0_control))
    h = float(live.slider(h_control, views["h"], where=c1))
    x0 = float(live.slider(x0_control, views["x0"], where=c2))
    return Knobs(h, x0, n, seed)


def dot_controls() -> tuple[float, float, int]:
    """τ, the spread of the key norms and the dimension D, in one row of three columns."""
    c1, c2, c3 = st.columns(3)
    tau = uc.select_slider(
        "k2a.tau", key="k2a_tau", options=TAUS, value=0.5, help_key="k2a.tau_help", where=c1
    )
    spread = uc.slider(
        "k2a.spread", key="k2a_spread", min_value=0.0, max_value=1.5, value=0.0, step=0.1,
        help_key="k2a.spread_help", where=c2,
    )  # fmt: skip
    dim = uc.select_slider("k2a.dim", key="k2a_dim", options=DIMS, value=8, where=c3)
    return float(tau), float(spread), int(dim)


def learn_controls(n: int, seed: int, columns: Sequence) -> LearnRun:
    """Dimensions, steps, learning rate and initial h (in ``columns``): the run the controls ask for."""
    c1, c2, c3, c4 = columns
    dims = uc.radio("k2a.dims", key="k2a_dims", options=("1d", "2d"), option_prefix="k2a.dims_", where=c1)
    steps = uc.slider(
        "k2a.steps", key="k2a_steps", min_value=50, max_value=1000, value=300, step=50, where=c2
    )
    lr = uc.select_slider("k2a.lr", key="k2a_lr", options=LRS, value=0.05, help_key="k2a.lr_help", where=c3)
    h0 = uc.select_slider("k2a.h0", key="k2a_h0", options=INIT_H, value=1.0, where=c4)
    return LearnRun(dims, n, seed, int(steps), float(lr), float(h0))


def _request_learning() -> None:
    st.session_state["k2a_learn_requested"] = True


def learn_run(n: int, seed: int) -> tuple[LearnRun, LearnRun]:
    """The learnable kernel's controls and Run button: (the run shown, the run the controls ask for).

    Trains only on the button; the last result stays (the first time, or a shared link, shows the
    controls' own run).
    """
    c1, c2, c3, c4, c5 = st.columns([2, 2, 2, 2, 1.4], vertical_alignment="bottom")
    wanted = learn_controls(min(n, MAX_LEARN_N), seed, (c1, c2, c3, c4))
    shown: LearnRun | None = st.session_state.get("k2a_learned")
    if st.session_state.pop("k2a_learn_requested", False) or shown is None:
        shown = wanted  # on the button, or the first time (a shared link shows its own run)
    st.session_state["k2a_learned"] = shown
    c5.button(
        t("k2a.learn_run"), key="k2a_learn_run", type="primary", icon=":material/play_arrow:",
        on_click=_request_learning, disabled=shown == wanted, width="stretch",
    )  # fmt: skip
    st.caption(t("k2a.learn_caption", n=wanted.n, cap=MAX_LEARN_N))
    return shown, wanted


def learn(run: LearnRun) -> k2a.BandwidthLearning | k2a.MetricLearning:
    """Train both objectives (cached per run), with a progress bar over the two fits."""
    bar = st.progress(0.0, text=t("k2a.training"))
    res = k2a_learn(run, on_fit=lambda k: bar.progress(k / 2, text=t("k2a.training")))
    bar.empty()
    return res


# ----------------------------------------------------------------------------------------------
# the post's three figures
# ----------------------------------------------------------------------------------------------

MAPPING_LATEX = (
    r"w_i(x)=\frac{\exp\!\left(-\frac{(x-x_i)^2}{2h^2}\right)}"
    r"{\sum_j \exp\!\left(-\frac{(x-x_j)^2}{2h^2}\right)}"
    r"=\operatorname{softmax}_i\!\left(-\frac{(q-k_i)^2}{2h^2}\right),\qquad q=x,\ k_i=x_i,\ v_i=y_i"
)


def tau_explain(h: float, grid: k2a.NwVsAttention) -> dict[str, object]:
    """What the τ question's explanation quotes."""
    return {"h": h, "tau": f"{h * h:.4g}", "diff": f"{grid.max_diff_weights:.1e}"}


def bridge_metrics(c: Knobs, grid: k2a.NwVsAttention, one: k2a.QueryWeights) -> None:
    """τ = h², the largest differences NW vs attention, and the prediction at x*."""
    m = st.columns(4)
    m[0].metric(t("k2a.metric_tau"), f"{c.bandwidth * c.bandwidth:.4g}")
    m[1].metric(t("k2a.metric_diff_weights"), f"{max(grid.max_diff_weights, one.max_diff):.1e}")
    m[2].metric(t("k2a.metric_diff_fit"), f"{grid.max_diff_fit:.1e}")
    m[3].metric(t("k2a.metric_prediction", x0=f"{c.x0:.1f}"), f"{one.prediction:.4f}")


def one_query_figure(c: Knobs, one: k2a.QueryWeights) -> None:
    """The post's first figure: the weights of the query x* over the samples."""
    labels = Labels.of(
        title=t("k2a.fig1", x0=f"{c.x0:.1f}", h=c.bandwidth), x=t("k2a.axis_xi"), y=t("k2a.axis_weight"),
        nw=t("k2a.name_nw"), att=t("k2a.name_att"), query=t("k2a.name_query"),
    )  # fmt: skip
    show_figure(
        cached(fk2a.weight_distribution)(
            one.x, one.weights_nw, one.weights_attention, x0=c.x0, labels=labels
        ),
        key="k2a_fig1",
        code=(nw.nw_weights, kernel_attention.nadaraya_watson_attention),
        look_for_key="k2a.look_fig1",
    )


def _matrix_labels(title: str) -> Labels:
    """A weight matrix's words: rows are the queries, columns the keys."""
    return Labels.of(title=title, x=t("k2a.axis_keys"), y=t("k2a.axis_queries"))


def weight_matrix_figure(grid: k2a.NwVsAttention) -> None:
    """The post's second figure: the (Q, N) attention weight matrix, drawn as the kernel-regression
    page draws its matrix (``figures.attention_shared.weight_map``)."""
    labels = _matrix_labels(t("k2a.fig2"))
    show_figure(
        cached(attention_shared.weight_map)(
            grid.weights_attention, grid.x, grid.x_query, labels=labels, height=460
        ),
        key="k2a_fig2",
        code=kernel_attention.nadaraya_watson_attention,
        look_for_key="k2a.look_fig2",
    )


def _show_fit(
    x: object,
    y: object,
    grid: object,
    curves: Mapping[str, object],
    *,
    title: str,
    key: str,
    **options: object,
) -> None:
    """Samples and fitted curves over x (a figure of ``fit_figure``) under ``title``, shown as ``key``
    (``options``: the builder's ``dashed`` / ``metas`` and ``show_figure``'s ``code`` / ``look_for_key``)."""
    shown = {k: options.pop(k) for k in ("code", "look_for_key") if k in options}
    labels = Labels.of(title=title, x="x", y="y", samples=t("k2a.name_samples"))
    show_figure(cached(fk2a.fit_figure)(x, y, grid, curves, labels=labels, **options), key=key, **shown)


def fit_grid_figure(grid: k2a.NwVsAttention) -> None:
    """The truth, NW and attention fits over the query grid (the live h slider redraws the last two)."""
    curves = {
        t("k2a.name_truth"): grid.truth,
        t("k2a.name_nw_fit"): grid.fit_nw,
        t("k2a.name_att_fit"): grid.fit_attention,
    }
    _show_fit(
        grid.x, grid.y, grid.x_query, curves, title=t("k2a.fig_fit"), key="k2a_fig_fit",
        dashed=[t("k2a.name_att_fit")], metas=("truth", "nw", "att"),  # the live h slider redraws "nw", "att"
        code=(nw.nw_predict, kernel_attention.nadaraya_watson_attention), look_for_key="k2a.look_fit",
    )  # fmt: skip


def side_by_side_figure(grid: k2a.NwVsAttention) -> None:
    """The post's third figure: the NW and attention weight matrices side by side."""
    show_figure(
        cached(fk2a.side_by_side)(
            grid.weights_nw,
            grid.weights_attention,
            x_query=grid.x_query,
            x_train=grid.x,
            titles=(t("k2a.fig3_left"), t("k2a.fig3_right")),
            labels=_matrix_labels(t("k2a.fig3")),
        ),
        key="k2a_fig3",
        code=(nw.nw_weights, kernel_attention.nadaraya_watson_attention),
        look_for_key="k2a.look_fig3",
        diff=f"{grid.max_diff_weights:.1e}",
    )


def three_results(c: Knobs, grid: k2a.NwVsAttention, one: k2a.QueryWeights) -> None:
    """The numbers, then the post's three figures (they show τ: drawn once τ is answered)."""
    bridge_metrics(c, grid, one)
    one_query_figure(c, one)
    c1, c2 = st.columns(2)
    with c1:
        weight_matrix_figure(grid)
    with c2:
        fit_grid_figure(grid)
    side_by_side_figure(grid)


# ----------------------------------------------------------------------------------------------
# dot product vs distance
# ----------------------------------------------------------------------------------------------

DOT_LATEX = (
    r"-\frac{\lVert q-k\rVert^2}{2\tau}=\frac{q\cdot k}{\tau}-\frac{\lVert q\rVert^2}{2\tau}"
    r"-\frac{\lVert k\rVert^2}{2\tau}\quad\Longrightarrow\quad"
    r"\lVert q\rVert=\lVert k\rVert=1:\ e^{q\cdot k/\tau}=e^{1/\tau}\,e^{-\lVert q-k\rVert^2/(2\tau)}"
)


def dot_explain(res: kernel_attention.DotVsGaussian) -> dict[str, object]:
    """What the dot = Gaussian question's explanation quotes: the difference and the key norms' range."""
    return {
        "diff": f"{res.max_abs_diff:.1e}",
        "lo": f"{res.key_norms.min():.2f}",
        "hi": f"{res.key_norms.max():.2f}",
    }


def _vector_labels(res: kernel_attention.DotVsGaussian) -> list[str]:
    """Tick labels 0..S-1 of the keys (and queries: L = S)."""
    return [str(i) for i in range(len(res.key_norms))]


def dot_results(res: kernel_attention.DotVsGaussian, tau: float, spread: float) -> None:
    """Why they agree (or not), the measured difference, the three heatmaps and (norms spread) the
    key norms."""
    st.markdown(t("k2a.dot_body"))
    st.latex(DOT_LATEX)
    m = st.columns(3)
    m[0].metric(t("k2a.metric_dot_diff"), f"{res.max_abs_diff:.1e}")
    m[1].metric(t("k2a.metric_key_norms"), f"{res.key_norms.min():.2f} – {res.key_norms.max():.2f}")
    m[2].metric(t("k2a.metric_h"), f"{tau**0.5:.3g}")
    dot_heatmaps(res, tau)
    if spread == 0:
        st.success(t("k2a.dot_equal", diff=f"{res.max_abs_diff:.1e}"))
    else:
        st.warning(t("k2a.dot_unequal", diff=f"{res.max_abs_diff:.2g}"))
        key_norms_figure(res)


def dot_heatmaps(res: kernel_attention.DotVsGaussian, tau: float) -> None:
    """Dot-product weights, Gaussian weights and their difference, one heatmap each."""
    ticks = _vector_labels(res)
    show_figure(
        cached(attention_shared.heatmap_row)(
            [
                (t("k2a.panel_dot", tau=tau), res.dot),
                (t("k2a.panel_gauss", h=f"{tau**0.5:.3g}"), res.gaussian),
                (t("k2a.panel_diff"), res.diff),
            ],
            x_labels=ticks,
            y_labels=ticks,
            labels=Labels.of(x=t("k2a.axis_key"), y=t("k2a.axis_query")),
            signed_last=True,
        ),
        key="k2a_fig_dot",
        code=kernel_attention.dot_vs_gaussian,
        look_for_key="k2a.look_dot",
    )


def key_norms_figure(res: kernel_attention.DotVsGaussian) -> None:
    """Each key's norm and the log-factor by which dot products favour it."""
    labels = Labels.of(title=t("k2a.fig_key_norms"), x=t("k2a.axis_key"), y=t("k2a.axis_value"))
    series = {t("k2a.series_key_norm"): res.key_norms, t("k2a.series_key_bias"): res.key_log_bias}
    show_figure(
        cached(fk2a.bar_figure)(_vector_labels(res), series, labels=labels),
        key="k2a_fig_key_norms",
        look_for_key="k2a.look_key_norms",
    )


# ----------------------------------------------------------------------------------------------
# a learnable kernel: the two objectives' results
# ----------------------------------------------------------------------------------------------

LEARN_LATEX = (
    r"\mathcal{L}(h)=\frac1N\sum_{i=1}^N\Big(y_i-\sum_{j\neq i}w_{ij}(h)\,y_j\Big)^2"
    r"\quad\text{vs}\quad\frac1N\sum_{i=1}^N\Big(y_i-\sum_{j}w_{ij}(h)\,y_j\Big)^2"
)


def objective_names() -> tuple[str, str]:
    """The two objectives' names, in the order of ``fits``: (leave-one-out, point included)."""
    return t("k2a.name_loo"), t("k2a.name_no_loo")


def _test_errors(res: k2a.BandwidthLearning | k2a.MetricLearning) -> dict[str, str]:
    """Both objectives' test errors as every text quotes them (``test_loo``, ``test_no``)."""
    loo, no_loo = res.fits
    return {"test_loo": f"{loo.test_mse:.4f}", "test_no": f"{no_loo.test_mse:.4f}"}


def no_loo_explain(res: k2a.BandwidthLearning) -> dict[str, object]:
    """What the leave-one-out question's explanation quotes: both learned h and test errors."""
    loo, no_loo = res.fits
    return {"h_no": f"{no_loo.fit.bandwidth:.2e}", "h_loo": f"{loo.fit.bandwidth:.3f}", **_test_errors(res)}


def pitfall(res: k2a.BandwidthLearning | k2a.MetricLearning) -> str:
    """The pitfall under a run's figures: training with the point included overfits (1-D: h, 2-D:
    the length scales)."""
    loo, no_loo = res.fits
    if isinstance(res, k2a.BandwidthLearning):
        return t(
            "k2a.pitfall_1d", h_no=f"{no_loo.fit.bandwidth:.1e}", train_no=f"{no_loo.train_mse:.1e}",
            h_loo=f"{loo.fit.bandwidth:.3f}", h_cv=f"{res.h_cv:.3f}", **_test_errors(res),
        )  # fmt: skip
    ls, ls_no = loo.fit.length_scales, no_loo.fit.length_scales
    return t(
        "k2a.pitfall_2d", ls1=f"{ls[0]:.3f}", ls2=f"{ls[1]:.3g}", ls1_no=f"{ls_no[0]:.2e}",
        ls2_no=f"{ls_no[1]:.2e}", **_test_errors(res),
    )  # fmt: skip


def fits_table(res: k2a.BandwidthLearning | k2a.MetricLearning) -> None:
    """One row per objective: what it learned (h, or the two length scales), train and test error."""
    if isinstance(res, k2a.BandwidthLearning):
        learned = {t("k2a.col_h"): [f"{f.fit.bandwidth:.4g}" for f in res.fits]}
    else:
        learned = {
            t(f"k2a.col_ls{i + 1}"): [f"{f.fit.length_scales[i]:.3g}" for f in res.fits] for i in (0, 1)
        }
    table(
        {
            t("k2a.col_objective"): list(objective_names()),
            **learned,
            t("k2a.col_train"): [f"{f.train_mse:.3e}" for f in res.fits],
            t("k2a.col_test"): [f"{f.test_mse:.4f}" for f in res.fits],
        },
        hide_index=True,
    )


def _step_chart(series: Mapping[str, object], steps: int, *, first: int, title_key: str, y: str, key: str,
                look_for_key: str, code: object = None, **options: object) -> None:  # fmt: skip
    """A training curve per series over the steps ``first..steps`` (log y): the loss or a path."""
    labels = Labels.of(title=t(title_key), x=t("k2a.axis_step"), y=y)
    fig = cached(fk2a.line_figure)(
        list(range(first, steps + 1)), series, labels=labels, log_y=True, markers=False, **options
    )
    show_figure(fig, key=key, code=code, look_for_key=look_for_key)


def loss_curves(res: k2a.BandwidthLearning | k2a.MetricLearning, steps: int, *, key: str) -> None:
    """Training loss with and without leave-one-out, one curve each (log scale)."""
    losses = dict(zip(objective_names(), (f.fit.losses for f in res.fits), strict=True))
    _step_chart(losses, steps, first=1, title_key="k2a.fig_loss", y=t("k2a.axis_loss"), key=key,
                look_for_key="k2a.look_loss")  # fmt: skip


def bandwidth_paths(res: k2a.BandwidthLearning, steps: int) -> None:
    """h over the steps for both objectives, against the LOO-CV h."""
    paths = dict(zip(objective_names(), (f.fit.bandwidths for f in res.fits), strict=True))
    _step_chart(
        paths, steps, first=0, title_key="k2a.fig_h_path", y="h", key="k2a_fig_h_path",
        look_for_key="k2a.look_h_path", code=kernel_attention.fit_bandwidth,
        hlines={t("k2a.h_cv_line"): res.h_cv},
    )  # fmt: skip


def length_scale_paths(res: k2a.MetricLearning, steps: int) -> None:
    """The two length scales over the steps for both objectives (the second dashed)."""
    series = {}
    for name, f in zip(objective_names(), res.fits, strict=True):
        series[t("k2a.series_ls1", name=name)] = f.fit.length_scale_path[:, 0]
        series[t("k2a.series_ls2", name=name)] = f.fit.length_scale_path[:, 1]
    _step_chart(
        series, steps, first=0, title_key="k2a.fig_ls_path", y=t("k2a.axis_length_scale"),
        key="k2a_fig_ls_path", look_for_key="k2a.look_ls_path", code=kernel_attention.fit_metric,
        dashed=[t("k2a.series_ls2", name=name) for name in objective_names()],
    )  # fmt: skip


def learned_fits_figure(res: k2a.BandwidthLearning) -> None:
    """The truth and the NW fits with each learned h."""
    curves = {
        t("k2a.name_truth"): res.truth,
        t("k2a.fit_with", h=f"{res.loo.fit.bandwidth:.3g}"): res.loo.curve,
        t("k2a.fit_without", h=f"{res.no_loo.fit.bandwidth:.1e}"): res.no_loo.curve,
    }
    _show_fit(
        res.x, res.y, res.grid, curves, title=t("k2a.fig_learned_fit"), key="k2a_fig_learned_fit",
        code=(kernel_attention.fit_bandwidth, nw.nw_predict), look_for_key="k2a.look_learned_fit",
    )  # fmt: skip


def _training_charts(run: LearnRun, res: k2a.BandwidthLearning | k2a.MetricLearning, where: Any) -> None:
    """The loss curves and the learned parameter's path (h, or the length scales), side by side in
    ``where`` (a container, or ``st``)."""
    c1, c2 = where.columns(2)
    one_d = isinstance(res, k2a.BandwidthLearning)
    with c1:
        loss_curves(res, run.steps, key="k2a_fig_loss" if one_d else "k2a_fig_loss_2d")
    with c2:
        (bandwidth_paths if one_d else length_scale_paths)(res, run.steps)


def show_bandwidths(run: LearnRun, res: k2a.BandwidthLearning) -> None:
    """The 1-D run: h three ways, the table, loss and h paths, the fits, the pitfall (on a slide the
    loss and h paths first, so that they start on a 1280x720 screen)."""
    text, charts = classroom.figures_first()
    m = text.columns(3)
    m[0].metric(t("k2a.metric_h_loo"), f"{res.loo.fit.bandwidth:.4f}")
    m[1].metric(t("k2a.metric_h_cv"), f"{res.h_cv:.4f}", help=t("k2a.metric_h_cv_help"))
    m[2].metric(t("k2a.metric_h_no_loo"), f"{res.no_loo.fit.bandwidth:.2e}")
    with text:
        fits_table(res)
    _training_charts(run, res, charts)
    learned_fits_figure(res)
    st.markdown(pitfall(res))


def show_metrics(run: LearnRun, res: k2a.MetricLearning) -> None:
    """The 2-D run: the table of length scales, loss and length-scale paths, the pitfall."""
    st.markdown(t("k2a.learn_2d_body"))
    fits_table(res)
    _training_charts(run, res, st)
    st.markdown(pitfall(res))


def learn_results(run: LearnRun, res: k2a.BandwidthLearning | k2a.MetricLearning) -> None:
    """The two objectives, then what training found with each."""
    st.markdown(t("k2a.learn_body"))
    st.latex(LEARN_LATEX)
    if isinstance(res, k2a.BandwidthLearning):
        show_bandwidths(run, res)
    else:
        show_metrics(run, res)
