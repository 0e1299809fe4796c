"""Kernels -> attention: Gaussian Nadaraya-Watson regression is softmax attention.

Thin page: controls -> ``ui.kernels_to_attention`` (cached calls into
``core.lessons.kernels_to_attention`` and ``core.nadaraya_watson``) -> ``figures.kernels_to_attention``.
Each claim is printed with the number that backs it, computed now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import streamlit as st

from core import kernel_attention
from core import nadaraya_watson as nw
from core.kernel_attention import DotVsGaussian
from core.lessons.kernels_to_attention import BandwidthLearning, MetricLearning, NwVsAttention, QueryWeights
from ui import classroom, questions
from ui import controls as uc
from ui import kernels_to_attention as lesson_ui
from ui.i18n import t
from ui.layout import dictionary_table, page_header, show_figure, table
from ui.sections import Section, controls_first, once, run_sections

BANDWIDTHS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
DIMS = (2, 4, 8, 16, 32, 64)
LRS = (0.01, 0.02, 0.05, 0.1, 0.2)
INIT_H = (0.1, 0.2, 0.5, 1.0, 2.0)
#: Largest N the learnable-kernel section trains on (each step is O(N²)).
MAX_LEARN_N = 200
#: Queries and keys of the dot-product section (L = S).
N_VECTORS = 8


def _mapping() -> None:
    dictionary_table()
    st.markdown(t("k2a.mapping_body"))
    st.latex(
        r"w_i(x)=\frac{\exp\!\left(-\frac{(x-x_i)^2}{2h^2}\right)}"
        r"{\sum_j \exp\!\left(-\frac{(x-x_j)^2}{2h^2}\right)}"
        r"=\operatorname{softmax}_i\!\left(-\frac{(q-k_i)^2}{2h^2}\right),\qquad q=x,\ k_i=x_i,\ v_i=y_i"
    )


# ----------------------------------------------------------------------------------------------
# the post's three figures (page-wide controls: h, x*, N, seed)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataControls:
    """The page-wide controls (the later sections use N and the seed)."""

    bandwidth: float  # h
    x0: float  # the query x* of the first figure
    n: int
    seed: int


def _three_controls() -> DataControls:
    """h, x*, N and the seed, in one row of four columns."""
    c1, c2, c3, c4 = st.columns(4)
    h = float(
        uc.select_slider("k2a.h", key="k2a_h", options=BANDWIDTHS, value=0.3, help_key="k2a.h_help", where=c1)
    )
    x0 = float(
        uc.slider("k2a.x0", key="k2a_x0", min_value=-3.0, max_value=3.0, value=0.5, step=0.1, where=c2)
    )
    n = int(uc.slider("k2a.n", key="k2a_n", min_value=20, max_value=400, value=200, step=10, where=c3))
    seed = uc.seed("k2a_seed", value=42, where=c4)
    return DataControls(h, x0, n, seed)


def _three_figures(knobs: Callable[[], DataControls]) -> None:
    """NW against attention: the question, the numbers, then the post's three figures."""
    st.markdown(t("k2a.three_body"))
    c = knobs()
    grid = lesson_ui.k2a_nw_vs_attention(c.n, c.seed, c.bandwidth)
    one = lesson_ui.k2a_query_weights(c.n, c.seed, c.bandwidth, c.x0)
    _ask_temperature(c.bandwidth, grid)
    questions.reveal("k2a_tau", partial(_three_results, c, grid, one))


def _three_results(c: DataControls, grid: NwVsAttention, one: QueryWeights) -> None:
    """The numbers, then the post's three figures (they show τ: drawn once τ is answered)."""
    _bridge_metrics(c, grid, one)
    _one_query_figure(c, one)
    c1, c2 = st.columns(2)
    with c1:
        _weight_matrix_figure(grid)
    with c2:
        _fit_figure(grid)
    _side_by_side_figure(grid)


def _ask_temperature(h: float, grid: NwVsAttention) -> None:
    questions.ask(
        "k2a_tau",
        prompt_key="q.k2a_tau_prompt",
        prompt_kwargs={"h": h},
        answer=h * h,  # the temperature the page's attention uses (metric below)
        tolerance=0.01,
        relative=True,
        min_value=0.0,
        step=0.0001,
        fmt="%.4f",
        explain_key="q.k2a_tau_explain",
        explain_kwargs={"h": h, "tau": f"{h * h:.4g}", "diff": f"{grid.max_diff_weights:.1e}"},
    )


def _bridge_metrics(c: DataControls, grid: NwVsAttention, one: QueryWeights) -> None:
    """τ = h², the largest differences NW vs attention, and the prediction at x*."""
    m = st.columns(4)
    m[0].metric(t("k2a.metric_tau"), f"{c.bandwidth * c.bandwidth:.4g}")
    m[1].metric(t("k2a.metric_diff_weights"), f"{max(grid.max_diff_weights, one.max_diff):.1e}")
    m[2].metric(t("k2a.metric_diff_fit"), f"{grid.max_diff_fit:.1e}")
    m[3].metric(t("k2a.metric_prediction", x0=f"{c.x0:.1f}"), f"{one.prediction:.4f}")


def _one_query_figure(c: DataControls, one: QueryWeights) -> None:
    show_figure(
        lesson_ui.weight_distribution(
            one.x,
            one.weights_nw,
            one.weights_attention,
            x0=c.x0,
            title=t("k2a.fig1", x0=f"{c.x0:.1f}", h=c.bandwidth),
            x_title=t("k2a.axis_xi"),
            y_title=t("k2a.axis_weight"),
            name_nw=t("k2a.name_nw"),
            name_att=t("k2a.name_att"),
            name_query=t("k2a.name_query"),
        ),
        key="k2a_fig1",
        code=(nw.nw_weights, kernel_attention.nadaraya_watson_attention),
        look_for_key="k2a.look_fig1",
    )


def _weight_matrix_figure(grid: NwVsAttention) -> None:
    show_figure(
        lesson_ui.nw_matrix(
            grid.weights_attention,
            x_query=grid.x_query,
            x_train=grid.x,
            title=t("k2a.fig2"),
            x_title=t("k2a.axis_keys"),
            y_title=t("k2a.axis_queries"),
        ),
        key="k2a_fig2",
        code=kernel_attention.nadaraya_watson_attention,
        look_for_key="k2a.look_fig2",
    )


def _fit_figure(grid: NwVsAttention) -> None:
    show_figure(
        lesson_ui.fit_figure(
            grid.x,
            grid.y,
            grid.x_query,
            {
                t("k2a.name_truth"): grid.truth,
                t("k2a.name_nw_fit"): grid.fit_nw,
                t("k2a.name_att_fit"): grid.fit_attention,
            },
            title=t("k2a.fig_fit"),
            x_title="x",
            y_title="y",
            samples_name=t("k2a.name_samples"),
            dashed=[t("k2a.name_att_fit")],
        ),
        key="k2a_fig_fit",
        code=(nw.nw_predict, kernel_attention.nadaraya_watson_attention),
        look_for_key="k2a.look_fit",
    )


def _side_by_side_figure(grid: NwVsAttention) -> None:
    show_figure(
        lesson_ui.side_by_side(
            grid.weights_nw,
            grid.weights_attention,
            x_query=grid.x_query,
            x_train=grid.x,
            titles=(t("k2a.fig3_left"), t("k2a.fig3_right")),
            x_title=t("k2a.axis_keys"),
            y_title=t("k2a.axis_queries"),
            title=t("k2a.fig3"),
        ),
        key="k2a_fig3",
        code=(nw.nw_weights, kernel_attention.nadaraya_watson_attention),
        look_for_key="k2a.look_fig3",
        diff=f"{grid.max_diff_weights:.1e}",
    )


# ----------------------------------------------------------------------------------------------
# dot product vs distance (its own controls: a fragment)
# ----------------------------------------------------------------------------------------------


@st.fragment
def _dot_vs_distance(seed: int) -> None:
    """Dot product against Gaussian kernel: its three sliders rerun only this section."""
    tau, spread, dim = _dot_controls()
    res = lesson_ui.k2a_dot_vs_gaussian(N_VECTORS, dim, tau, spread, seed)
    _ask_dot_equal(res, tau, spread)
    questions.reveal("k2a_dot_equal", partial(_dot_results, res, tau, spread))


def _dot_results(res: DotVsGaussian, tau: float, spread: float) -> None:
    """Why they agree (or not), and the measured difference."""
    st.markdown(t("k2a.dot_body"))
    st.latex(
        r"-\frac{\lVert q-k\rVert^2}{2\tau}=\frac{q\cdot k}{\tau}-\frac{\lVert q\rVert^2}{2\tau}"
        r"-\frac{\lVert k\rVert^2}{2\tau}\quad\Longrightarrow\quad"
        r"\lVert q\rVert=\lVert k\rVert=1:\ e^{q\cdot k/\tau}=e^{1/\tau}\,e^{-\lVert q-k\rVert^2/(2\tau)}"
    )
    m = st.columns(3)
    m[0].metric(t("k2a.metric_dot_diff"), f"{res.max_abs_diff:.1e}")
    m[1].metric(t("k2a.metric_key_norms"), f"{res.key_norms.min():.2f} – {res.key_norms.max():.2f}")
    m[2].metric(t("k2a.metric_h"), f"{tau**0.5:.3g}")
    _dot_heatmaps(res, tau)
    if spread == 0:
        st.success(t("k2a.dot_equal", diff=f"{res.max_abs_diff:.1e}"))
    else:
        st.warning(t("k2a.dot_unequal", diff=f"{res.max_abs_diff:.2g}"))
        _key_norms_figure(res)


def _dot_controls() -> tuple[float, float, int]:
    """τ, the spread of the key norms and the dimension D."""
    c1, c2, c3 = st.columns(3)
    tau = float(
        uc.select_slider("k2a.tau", key="k2a_tau", options=TAUS, value=0.5, help_key="k2a.tau_help", where=c1)
    )
    spread = float(
        uc.slider(
            "k2a.spread",
            key="k2a_spread",
            min_value=0.0,
            max_value=1.5,
            value=0.0,
            step=0.1,
            help_key="k2a.spread_help",
            where=c2,
        )
    )
    dim = int(uc.select_slider("k2a.dim", key="k2a_dim", options=DIMS, value=8, where=c3))
    return tau, spread, dim


def _ask_dot_equal(res: DotVsGaussian, tau: float, spread: float) -> None:
    questions.ask(
        "k2a_dot_equal",
        prompt_key="q.k2a_dot_prompt",
        prompt_kwargs={"spread": spread, "tau": tau},
        choices={"yes": "common.yes", "no": "common.no"},
        answer="yes" if res.max_abs_diff < 1e-6 else "no",
        explain_key="q.k2a_dot_explain",
        explain_kwargs={
            "diff": f"{res.max_abs_diff:.1e}",
            "lo": f"{res.key_norms.min():.2f}",
            "hi": f"{res.key_norms.max():.2f}",
        },
    )


def _vector_labels(res: DotVsGaussian) -> list[str]:
    """Tick labels 0..S-1 of the keys (and queries: L = S)."""
    return [str(i) for i in range(len(res.key_norms))]


def _dot_heatmaps(res: DotVsGaussian, tau: float) -> None:
    labels = _vector_labels(res)
    show_figure(
        lesson_ui.heatmap_row(
            [
                (t("k2a.panel_dot", tau=tau), res.dot),
                (t("k2a.panel_gauss", h=f"{tau**0.5:.3g}"), res.gaussian),
                (t("k2a.panel_diff"), res.diff),
            ],
            x_labels=labels,
            y_labels=labels,
            x_title=t("k2a.axis_key"),
            y_title=t("k2a.axis_query"),
            signed_last=True,
        ),
        key="k2a_fig_dot",
        code=kernel_attention.dot_vs_gaussian,
        look_for_key="k2a.look_dot",
    )


def _key_norms_figure(res: DotVsGaussian) -> None:
    show_figure(
        lesson_ui.bar_figure(
            _vector_labels(res),
            {t("k2a.series_key_norm"): res.key_norms, t("k2a.series_key_bias"): res.key_log_bias},
            title=t("k2a.fig_key_norms"),
            x_title=t("k2a.axis_key"),
            y_title=t("k2a.axis_value"),
        ),
        key="k2a_fig_key_norms",
        look_for_key="k2a.look_key_norms",
    )


# ----------------------------------------------------------------------------------------------
# a learnable kernel (trains on its Run button; the last result stays)
# ----------------------------------------------------------------------------------------------


def _request_learning() -> None:
    st.session_state["k2a_learn_requested"] = True


@st.fragment
def _learnable(n: int, seed: int) -> None:
    """Learning h by gradient descent: trains only on its button (0.1-0.6 s); the last result stays."""
    c1, c2, c3, c4, c5 = st.columns([2, 2, 2, 2, 1.4], vertical_alignment="bottom")
    wanted = _learn_controls(min(n, MAX_LEARN_N), seed, (c1, c2, c3, c4))
    shown: lesson_ui.LearnRun | None = st.session_state.get("k2a_learned")
    if st.session_state.pop("k2a_learn_requested", False) or shown is None:
        shown = wanted  # on the button, or the first time (a shared link shows its own run)
    st.session_state["k2a_learned"] = shown
    c5.button(
        t("k2a.learn_run"), key="k2a_learn_run", type="primary", icon=":material/play_arrow:",
        on_click=_request_learning, disabled=shown == wanted, width="stretch",
    )  # fmt: skip
    st.caption(t("k2a.learn_caption", n=wanted.n, cap=MAX_LEARN_N))
    res = _learn(shown)
    if shown != wanted:
        st.info(t("k2a.learn_stale", steps=shown.steps, lr=shown.lr, h0=shown.h0), icon=":material/history:")
    if isinstance(res, BandwidthLearning):
        _ask_no_loo(shown, res)  # the body says what happens: it comes after the question
        questions.reveal("k2a_no_loo", partial(_learn_results, shown, res))
    else:
        _learn_results(shown, res)


def _learn_results(run: lesson_ui.LearnRun, res: BandwidthLearning | MetricLearning) -> None:
    """The two objectives, then what training found with each."""
    st.markdown(t("k2a.learn_body"))
    st.latex(
        r"\mathcal{L}(h)=\frac1N\sum_{i=1}^N\Big(y_i-\sum_{j\neq i}w_{ij}(h)\,y_j\Big)^2"
        r"\quad\text{vs}\quad\frac1N\sum_{i=1}^N\Big(y_i-\sum_{j}w_{ij}(h)\,y_j\Big)^2"
    )
    if isinstance(res, BandwidthLearning):
        _show_bandwidths(run, res)
    else:
        _show_metrics(run, res)


def _learn_controls(n: int, seed: int, columns: tuple) -> lesson_ui.LearnRun:
    """Dimensions, steps, learning rate and initial h: the run the controls ask for."""
    c1, c2, c3, c4 = columns
    dims = uc.radio("k2a.dims", key="k2a_dims", options=("1d", "2d"), option_prefix="k2a.dims_", where=c1)
    steps = int(
        uc.slider("k2a.steps", key="k2a_steps", min_value=50, max_value=1000, value=300, step=50, where=c2)
    )
    lr = float(
        uc.select_slider("k2a.lr", key="k2a_lr", options=LRS, value=0.05, help_key="k2a.lr_help", where=c3)
    )
    h0 = float(uc.select_slider("k2a.h0", key="k2a_h0", options=INIT_H, value=1.0, where=c4))
    return lesson_ui.LearnRun(dims, n, seed, steps, lr, h0)


def _learn(run: lesson_ui.LearnRun) -> BandwidthLearning | MetricLearning:
    """Train both objectives (cached per run), with a progress bar over the two fits."""
    bar = st.progress(0.0, text=t("k2a.training"))
    res = lesson_ui.k2a_learn(run, on_fit=lambda k: bar.progress(k / 2, text=t("k2a.training")))
    bar.empty()
    return res


def _objective_names() -> tuple[str, str]:
    """The two objectives' names, in the order of ``fits``: (leave-one-out, point included)."""
    return t("k2a.name_loo"), t("k2a.name_no_loo")


def _loss_curves(losses: tuple, steps: int, *, key: str) -> None:
    """Training loss with and without leave-one-out, one curve each (log scale)."""
    show_figure(
        lesson_ui.line_figure(
            list(range(1, steps + 1)),
            dict(zip(_objective_names(), losses, strict=True)),
            title=t("k2a.fig_loss"),
            x_title=t("k2a.axis_step"),
            y_title=t("k2a.axis_loss"),
            log_y=True,
            markers=False,
        ),
        key=key,
        look_for_key="k2a.look_loss",
    )


# the 1-D result: a bandwidth


def _show_bandwidths(run: lesson_ui.LearnRun, res: BandwidthLearning) -> None:
    """The 1-D run: h three ways, the table, loss and h paths, the fits, the pitfall (on a slide the
    loss and h paths first, so that they start on a 1280x720 screen)."""
    text, charts = classroom.figures_first()
    m = text.columns(3)
    m[0].metric(t("k2a.metric_h_loo"), f"{res.loo.fit.bandwidth:.4f}")
    m[1].metric(t("k2a.metric_h_cv"), f"{res.h_cv:.4f}", help=t("k2a.metric_h_cv_help"))
    m[2].metric(t("k2a.metric_h_no_loo"), f"{res.no_loo.fit.bandwidth:.2e}")
    with text:
        table(
            {
                t("k2a.col_objective"): list(_objective_names()),
                t("k2a.col_h"): [f"{f.fit.bandwidth:.4g}" for f in res.fits],
                t("k2a.col_train"): [f"{f.train_mse:.3e}" for f in res.fits],
                t("k2a.col_test"): [f"{f.test_mse:.4f}" for f in res.fits],
            },
            hide_index=True,
        )
    c1, c2 = charts.columns(2)
    with c1:
        _loss_curves(tuple(f.fit.losses for f in res.fits), run.steps, key="k2a_fig_loss")
    with c2:
        _bandwidth_paths(res, run.steps)
    _learned_fits_figure(res)
    _pitfall_1d(res)


def _ask_no_loo(run: lesson_ui.LearnRun, res: BandwidthLearning) -> None:
    loo, no_loo = res.fits
    questions.ask(
        "k2a_no_loo",
        prompt_key="q.k2a_loo_prompt",
        prompt_kwargs={"h0": run.h0, "steps": run.steps},
        choices={"smaller": "q.k2a_loo_smaller", "larger": "q.k2a_loo_larger"},
        answer="smaller" if no_loo.fit.bandwidth < loo.fit.bandwidth else "larger",
        explain_key="q.k2a_loo_explain",
        explain_kwargs={
            "h_no": f"{no_loo.fit.bandwidth:.2e}",
            "h_loo": f"{loo.fit.bandwidth:.3f}",
            "test_no": f"{no_loo.test_mse:.4f}",
            "test_loo": f"{loo.test_mse:.4f}",
        },
    )


def _bandwidth_paths(res: BandwidthLearning, steps: int) -> None:
    show_figure(
        lesson_ui.line_figure(
            list(range(steps + 1)),
            dict(zip(_objective_names(), (f.fit.bandwidths for f in res.fits), strict=True)),
            title=t("k2a.fig_h_path"),
            x_title=t("k2a.axis_step"),
            y_title="h",
            log_y=True,
            markers=False,
            hlines={t("k2a.h_cv_line"): res.h_cv},
        ),
        key="k2a_fig_h_path",
        code=kernel_attention.fit_bandwidth,
        look_for_key="k2a.look_h_path",
    )


def _learned_fits_figure(res: BandwidthLearning) -> None:
    show_figure(
        lesson_ui.fit_figure(
            res.x,
            res.y,
            res.grid,
            {
                t("k2a.name_truth"): res.truth,
                t("k2a.fit_with", h=f"{res.loo.fit.bandwidth:.3g}"): res.loo.curve,
                t("k2a.fit_without", h=f"{res.no_loo.fit.bandwidth:.1e}"): res.no_loo.curve,
            },
            title=t("k2a.fig_learned_fit"),
            x_title="x",
            y_title="y",
            samples_name=t("k2a.name_samples"),
        ),
        key="k2a_fig_learned_fit",
        code=(kernel_attention.fit_bandwidth, nw.nw_predict),
        look_for_key="k2a.look_learned_fit",
    )


def _pitfall_1d(res: BandwidthLearning) -> None:
    loo, no_loo = res.fits
    st.markdown(
        t(
            "k2a.pitfall_1d",
            h_no=f"{no_loo.fit.bandwidth:.1e}",
            train_no=f"{no_loo.train_mse:.1e}",
            test_no=f"{no_loo.test_mse:.4f}",
            h_loo=f"{loo.fit.bandwidth:.3f}",
            h_cv=f"{res.h_cv:.3f}",
            test_loo=f"{loo.test_mse:.4f}",
        )
    )


# the 2-D result: a metric


def _show_metrics(run: lesson_ui.LearnRun, res: MetricLearning) -> None:
    """The 2-D run: the table of length scales, loss and length-scale paths, the pitfall."""
    st.markdown(t("k2a.learn_2d_body"))
    table(
        {
            t("k2a.col_objective"): list(_objective_names()),
            t("k2a.col_ls1"): [f"{f.fit.length_scales[0]:.3g}" for f in res.fits],
            t("k2a.col_ls2"): [f"{f.fit.length_scales[1]:.3g}" for f in res.fits],
            t("k2a.col_train"): [f"{f.train_mse:.3e}" for f in res.fits],
            t("k2a.col_test"): [f"{f.test_mse:.4f}" for f in res.fits],
        },
        hide_index=True,
    )
    c1, c2 = st.columns(2)
    with c1:
        _loss_curves(tuple(f.fit.losses for f in res.fits), run.steps, key="k2a_fig_loss_2d")
    with c2:
        _length_scale_paths(res, run.steps)
    _pitfall_2d(res)


def _length_scale_paths(res: MetricLearning, steps: int) -> None:
    series = {}
    for name, f in zip(_objective_names(), res.fits, strict=True):
        series[t("k2a.series_ls1", name=name)] = f.fit.length_scale_path[:, 0]
        series[t("k2a.series_ls2", name=name)] = f.fit.length_scale_path[:, 1]
    show_figure(
        lesson_ui.line_figure(
            list(range(steps + 1)),
            series,
            title=t("k2a.fig_ls_path"),
            x_title=t("k2a.axis_step"),
            y_title=t("k2a.axis_length_scale"),
            log_y=True,
            markers=False,
            dashed=[t("k2a.series_ls2", name=name) for name in _objective_names()],
        ),
        key="k2a_fig_ls_path",
        code=kernel_attention.fit_metric,
        look_for_key="k2a.look_ls_path",
    )


def _pitfall_2d(res: MetricLearning) -> None:
    loo, no_loo = res.fits
    st.markdown(
        t(
            "k2a.pitfall_2d",
            ls1=f"{loo.fit.length_scales[0]:.3f}",
            ls2=f"{loo.fit.length_scales[1]:.3g}",
            ls1_no=f"{no_loo.fit.length_scales[0]:.2e}",
            ls2_no=f"{no_loo.fit.length_scales[1]:.2e}",
            test_loo=f"{loo.test_mse:.4f}",
            test_no=f"{no_loo.test_mse:.4f}",
        )
    )


# ----------------------------------------------------------------------------------------------
# the page
# ----------------------------------------------------------------------------------------------


def render() -> None:
    page_header("k2a.title", "k2a.intro")
    knobs = once(_three_controls)
    controls_first(knobs)
    run_sections(
        "kernels-to-attention",
        [
            Section("k2a.mapping_title", _mapping),
            Section("k2a.three_title", partial(_three_figures, knobs)),
            Section("k2a.dot_title", lambda: _dot_vs_distance(knobs().seed), folded=True),
            Section("k2a.learn_title", lambda: _learnable(knobs().n, knobs().seed), folded=True),
        ],
    )


render()
