"""Kernels -> attention: Gaussian Nadaraya-Watson regression is softmax attention.

Thin page: controls -> ``ui.attention`` (cached calls into ``core.kernel_attention`` and
``core.nadaraya_watson``) -> ``figures.attention``. Each claim is printed with the number that
backs it, computed now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import streamlit as st

import figures.attention
from core import kernel_attention as bridge
from core import nadaraya_watson as nw
from ui import attention as ua
from ui import controls as uc
from ui import questions
from ui.i18n import t
from ui.layout import cached_figures, page_header, show_figure, table
from ui.sections import Section, controls_first, heading, once, run_sections

#: The page's figure builders, each cached on its inputs (see ui.layout.cached_figures).
fa = cached_figures(figures.attention)

BANDWIDTHS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
DIMS = (2, 4, 8, 16, 32, 64)
LRS = (0.01, 0.02, 0.05, 0.1, 0.2)
INIT_H = (0.1, 0.2, 0.5, 1.0, 2.0)
MAPPING_ROWS = ("samples", "query", "values", "kernel", "normaliser", "bandwidth")
#: Largest N the learnable-kernel section trains on (each step is O(N²)).
MAX_LEARN_N = 200


def _loss_curves(fits: dict, names: dict, steps: int, *, key: str) -> None:
    """Training loss with and without leave-one-out, one curve each (log scale)."""
    show_figure(
        fa.line_figure(
            list(range(1, steps + 1)),
            {names[k]: fits[k]["losses"] for k in (True, False)},
            title=t("k2a.fig_loss"),
            x_title=t("k2a.axis_step"),
            y_title=t("k2a.axis_loss"),
            log_y=True,
            markers=False,
        ),
        key=key,
        look_for_key="k2a.look_loss",
    )


def _mapping() -> None:
    heading("k2a.mapping_title")
    table(
        {
            t("k2a.col_nw"): [t(f"k2a.map_{r}_nw") for r in MAPPING_ROWS],
            t("k2a.col_attention"): [t(f"k2a.map_{r}_att") for r in MAPPING_ROWS],
            t("k2a.col_meaning"): [t(f"k2a.map_{r}_meaning") for r in MAPPING_ROWS],
        },
        hide_index=True,
    )
    st.markdown(t("k2a.mapping_body"))
    st.latex(
        r"w_i(x)=\frac{\exp\!\left(-\frac{(x-x_i)^2}{2h^2}\right)}"
        r"{\sum_j \exp\!\left(-\frac{(x-x_j)^2}{2h^2}\right)}"
        r"=\operatorname{softmax}_i\!\left(-\frac{(q-k_i)^2}{2h^2}\right),\qquad q=x,\ k_i=x_i,\ v_i=y_i"
    )


def _three_controls() -> tuple[float, float, int, int]:
    """h, x*, N and the seed: the page-wide controls (the later sections use N and the seed)."""
    c1, c2, c3, c4 = st.columns(4)
    h = float(
        uc.select_slider("k2a.h", key="k2a_h", options=BANDWIDTHS, value=0.3, help_key="k2a.h_help", where=c1)
    )
    x0 = float(
        uc.slider("k2a.x0", key="k2a_x0", min_value=-3.0, max_value=3.0, value=0.5, step=0.1, where=c2)
    )
    n = int(uc.slider("k2a.n", key="k2a_n", min_value=20, max_value=400, value=200, step=10, where=c3))
    seed = uc.seed("k2a_seed", value=42, where=c4)
    return h, x0, n, seed


def _three_figures(knobs: Callable[[], tuple[float, float, int, int]]) -> None:
    heading("k2a.three_title")
    st.markdown(t("k2a.three_body"))
    h, x0, n, seed = knobs()
    three = ua.k2a_three_figures(n, seed, h)
    one = ua.k2a_one_query(n, seed, h, x0)
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
        explain_kwargs={"h": h, "tau": f"{h * h:.4g}", "diff": f"{three['max_diff_weights']:.1e}"},
    )
    m = st.columns(4)
    m[0].metric(t("k2a.metric_tau"), f"{h * h:.4g}")
    m[1].metric(t("k2a.metric_diff_weights"), f"{max(three['max_diff_weights'], one['max_diff']):.1e}")
    m[2].metric(t("k2a.metric_diff_fit"), f"{three['max_diff_fit']:.1e}")
    m[3].metric(t("k2a.metric_prediction", x0=f"{x0:.1f}"), f"{one['prediction']:.4f}")
    show_figure(
        fa.weight_distribution(
            one["x"],
            one["w_nw"],
            one["w_att"],
            x0=x0,
            title=t("k2a.fig1", x0=f"{x0:.1f}", h=h),
            x_title=t("k2a.axis_xi"),
            y_title=t("k2a.axis_weight"),
            name_nw=t("k2a.name_nw"),
            name_att=t("k2a.name_att"),
            name_query=t("k2a.name_query"),
        ),
        key="k2a_fig1",
        code=(nw.nw_weights, bridge.nadaraya_watson_attention),
        look_for_key="k2a.look_fig1",
    )
    c1, c2 = st.columns(2)
    with c1:
        show_figure(
            fa.nw_matrix(
                three["w_att"],
                x_query=three["xq"],
                x_train=three["x"],
                title=t("k2a.fig2"),
                x_title=t("k2a.axis_keys"),
                y_title=t("k2a.axis_queries"),
            ),
            key="k2a_fig2",
            code=bridge.nadaraya_watson_attention,
            look_for_key="k2a.look_fig2",
        )
    with c2:
        show_figure(
            fa.fit_figure(
                three["x"],
                three["y"],
                three["xq"],
                {
                    t("k2a.name_truth"): three["truth"],
                    t("k2a.name_nw_fit"): three["fit_nw"],
                    t("k2a.name_att_fit"): three["fit_att"],
                },
                title=t("k2a.fig_fit"),
                x_title="x",
                y_title="y",
                samples_name=t("k2a.name_samples"),
                dashed=[t("k2a.name_att_fit")],
            ),
            key="k2a_fig_fit",
            code=(nw.nw_predict, bridge.nadaraya_watson_attention),
            look_for_key="k2a.look_fit",
        )
    show_figure(
        fa.side_by_side(
            three["w_nw"],
            three["w_att"],
            x_query=three["xq"],
            x_train=three["x"],
            titles=(t("k2a.fig3_left"), t("k2a.fig3_right")),
            x_title=t("k2a.axis_keys"),
            y_title=t("k2a.axis_queries"),
            title=t("k2a.fig3"),
        ),
        key="k2a_fig3",
        code=(nw.nw_weights, bridge.nadaraya_watson_attention),
        look_for_key="k2a.look_fig3",
        diff=f"{three['max_diff_weights']:.1e}",
    )
    return n, seed


@st.fragment
def _dot_vs_distance(seed: int) -> None:
    """Dot product against Gaussian kernel: its three sliders rerun only this section."""
    heading("k2a.dot_title")
    st.markdown(t("k2a.dot_body"))
    st.latex(
        r"-\frac{\lVert q-k\rVert^2}{2\tau}=\frac{q\cdot k}{\tau}-\frac{\lVert q\rVert^2}{2\tau}"
        r"-\frac{\lVert k\rVert^2}{2\tau}\quad\Longrightarrow\quad"
        r"\lVert q\rVert=\lVert k\rVert=1:\ e^{q\cdot k/\tau}=e^{1/\tau}\,e^{-\lVert q-k\rVert^2/(2\tau)}"
    )
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
    res = ua.k2a_dot_vs_gaussian(8, dim, tau, spread, seed)
    labels = [str(i) for i in range(8)]
    questions.ask(
        "k2a_dot_equal",
        prompt_key="q.k2a_dot_prompt",
        prompt_kwargs={"spread": spread, "tau": tau},
        choices={"yes": "common.yes", "no": "common.no"},
        answer="yes" if res["max_abs_diff"] < 1e-6 else "no",
        explain_key="q.k2a_dot_explain",
        explain_kwargs={
            "diff": f"{res['max_abs_diff']:.1e}",
            "lo": f"{res['key_norms'].min():.2f}",
            "hi": f"{res['key_norms'].max():.2f}",
        },
    )
    m = st.columns(3)
    m[0].metric(t("k2a.metric_dot_diff"), f"{res['max_abs_diff']:.1e}")
    m[1].metric(t("k2a.metric_key_norms"), f"{res['key_norms'].min():.2f} – {res['key_norms'].max():.2f}")
    m[2].metric(t("k2a.metric_h"), f"{tau**0.5:.3g}")
    show_figure(
        fa.heatmap_row(
            [
                (t("k2a.panel_dot", tau=tau), res["dot"]),
                (t("k2a.panel_gauss", h=f"{tau**0.5:.3g}"), res["gaussian"]),
                (t("k2a.panel_diff"), res["diff"]),
            ],
            x_labels=labels,
            y_labels=labels,
            x_title=t("k2a.axis_key"),
            y_title=t("k2a.axis_query"),
            signed_last=True,
        ),
        key="k2a_fig_dot",
        code=bridge.dot_vs_gaussian,
        look_for_key="k2a.look_dot",
    )
    if spread == 0:
        st.success(t("k2a.dot_equal", diff=f"{res['max_abs_diff']:.1e}"))
    else:
        st.warning(t("k2a.dot_unequal", diff=f"{res['max_abs_diff']:.2g}"))
        show_figure(
            fa.bar_figure(
                labels,
                {t("k2a.series_key_norm"): res["key_norms"], t("k2a.series_key_bias"): res["key_log_bias"]},
                title=t("k2a.fig_key_norms"),
                x_title=t("k2a.axis_key"),
                y_title=t("k2a.axis_value"),
            ),
            key="k2a_fig_key_norms",
            look_for_key="k2a.look_key_norms",
        )


@dataclass(frozen=True)
class LearnRun:
    """The controls of one learnable-kernel run (what the shown result was trained with)."""

    dims: str
    n: int
    seed: int
    steps: int
    lr: float
    h0: float


def _request_learning() -> None:
    st.session_state["k2a_learn_requested"] = True


def _learn(run: LearnRun) -> dict:
    """Train both objectives (cached per run), with a progress bar over the two fits."""
    bar = st.progress(0.0, text=t("k2a.training"))
    learn = ua.k2a_learn_1d if run.dims == "1d" else ua.k2a_learn_2d
    res = learn(
        run.n,
        run.seed,
        run.steps,
        run.lr,
        run.h0,
        on_fit=lambda k: bar.progress(k / 2, text=t("k2a.training")),
    )
    bar.empty()
    return res


@st.fragment
def _learnable(n: int, seed: int) -> None:
    """Learning h by gradient descent: trains only on its button (0.1-0.6 s); the last result stays."""
    heading("k2a.learn_title")
    st.markdown(t("k2a.learn_body"))
    st.latex(
        r"\mathcal{L}(h)=\frac1N\sum_{i=1}^N\Big(y_i-\sum_{j\neq i}w_{ij}(h)\,y_j\Big)^2"
        r"\quad\text{vs}\quad\frac1N\sum_{i=1}^N\Big(y_i-\sum_{j}w_{ij}(h)\,y_j\Big)^2"
    )
    c1, c2, c3, c4, c5 = st.columns([2, 2, 2, 2, 1.4], vertical_alignment="bottom")
    dims = uc.radio("k2a.dims", key="k2a_dims", options=("1d", "2d"), option_prefix="k2a.dims_", where=c1)
    steps = int(
        uc.slider("k2a.steps", key="k2a_steps", min_value=50, max_value=1000, value=300, step=50, where=c2)
    )
    lr = float(
        uc.select_slider("k2a.lr", key="k2a_lr", options=LRS, value=0.05, help_key="k2a.lr_help", where=c3)
    )
    h0 = float(uc.select_slider("k2a.h0", key="k2a_h0", options=INIT_H, value=1.0, where=c4))
    n_learn = min(n, MAX_LEARN_N)
    wanted = LearnRun(dims, n_learn, seed, steps, lr, h0)
    shown: LearnRun | None = st.session_state.get("k2a_learned")
    if st.session_state.pop("k2a_learn_requested", False) or shown is None:
        shown = wanted  # on the button, or the first time (a shared link shows its own run)
    st.session_state["k2a_learned"] = shown
    c5.button(
        t("k2a.learn_run"), key="k2a_learn_run", type="primary", icon=":material/play_arrow:",
        on_click=_request_learning, disabled=shown == wanted, width="stretch",
    )  # fmt: skip
    st.caption(t("k2a.learn_caption", n=n_learn, cap=MAX_LEARN_N))
    res = _learn(shown)
    if shown != wanted:
        st.info(t("k2a.learn_stale", steps=shown.steps, lr=shown.lr, h0=shown.h0), icon=":material/history:")
    _show_learned(shown, res)


def _show_learned(run: LearnRun, res: dict) -> None:
    """The result of one learnable-kernel run: table, loss and h paths, the fits."""
    dims, steps, h0 = run.dims, run.steps, run.h0
    names = {True: t("k2a.name_loo"), False: t("k2a.name_no_loo")}
    if dims == "1d":
        fits = res["fits"]
        questions.ask(
            "k2a_no_loo",
            prompt_key="q.k2a_loo_prompt",
            prompt_kwargs={"h0": h0, "steps": steps},
            choices={"smaller": "q.k2a_loo_smaller", "larger": "q.k2a_loo_larger"},
            answer="smaller" if fits[False]["h"] < fits[True]["h"] else "larger",
            explain_key="q.k2a_loo_explain",
            explain_kwargs={
                "h_no": f"{fits[False]['h']:.2e}",
                "h_loo": f"{fits[True]['h']:.3f}",
                "test_no": f"{fits[False]['test_mse']:.4f}",
                "test_loo": f"{fits[True]['test_mse']:.4f}",
            },
        )
        m = st.columns(3)
        m[0].metric(t("k2a.metric_h_loo"), f"{fits[True]['h']:.4f}")
        m[1].metric(t("k2a.metric_h_cv"), f"{res['h_cv']:.4f}", help=t("k2a.metric_h_cv_help"))
        m[2].metric(t("k2a.metric_h_no_loo"), f"{fits[False]['h']:.2e}")
        table(
            {
                t("k2a.col_objective"): [names[True], names[False]],
                t("k2a.col_h"): [f"{fits[k]['h']:.4g}" for k in (True, False)],
                t("k2a.col_train"): [f"{fits[k]['train_mse']:.3e}" for k in (True, False)],
                t("k2a.col_test"): [f"{fits[k]['test_mse']:.4f}" for k in (True, False)],
            },
            hide_index=True,
        )
        c1, c2 = st.columns(2)
        with c1:
            _loss_curves(fits, names, steps, key="k2a_fig_loss")
        with c2:
            show_figure(
                fa.line_figure(
                    list(range(steps + 1)),
                    {names[k]: fits[k]["bandwidths"] for k in (True, False)},
                    title=t("k2a.fig_h_path"),
                    x_title=t("k2a.axis_step"),
                    y_title="h",
                    log_y=True,
                    markers=False,
                    hlines={t("k2a.h_cv_line"): res["h_cv"]},
                ),
                key="k2a_fig_h_path",
                code=bridge.fit_bandwidth,
                look_for_key="k2a.look_h_path",
            )
        show_figure(
            fa.fit_figure(
                res["x"],
                res["y"],
                res["grid"],
                {
                    t("k2a.name_truth"): res["truth"],
                    t("k2a.fit_with", h=f"{fits[True]['h']:.3g}"): fits[True]["curve"],
                    t("k2a.fit_without", h=f"{fits[False]['h']:.1e}"): fits[False]["curve"],
                },
                title=t("k2a.fig_learned_fit"),
                x_title="x",
                y_title="y",
                samples_name=t("k2a.name_samples"),
            ),
            key="k2a_fig_learned_fit",
            code=(bridge.fit_bandwidth, nw.nw_predict),
            look_for_key="k2a.look_learned_fit",
        )
        st.markdown(
            t(
                "k2a.pitfall_1d",
                h_no=f"{fits[False]['h']:.1e}",
                train_no=f"{fits[False]['train_mse']:.1e}",
                test_no=f"{fits[False]['test_mse']:.4f}",
                h_loo=f"{fits[True]['h']:.3f}",
                h_cv=f"{res['h_cv']:.3f}",
                test_loo=f"{fits[True]['test_mse']:.4f}",
            )
        )
    else:
        fits = res["fits"]
        st.markdown(t("k2a.learn_2d_body"))
        table(
            {
                t("k2a.col_objective"): [names[True], names[False]],
                t("k2a.col_ls1"): [f"{fits[k]['length_scales'][0]:.3g}" for k in (True, False)],
                t("k2a.col_ls2"): [f"{fits[k]['length_scales'][1]:.3g}" for k in (True, False)],
                t("k2a.col_train"): [f"{fits[k]['train_mse']:.3e}" for k in (True, False)],
                t("k2a.col_test"): [f"{fits[k]['test_mse']:.4f}" for k in (True, False)],
            },
            hide_index=True,
        )
        c1, c2 = st.columns(2)
        with c1:
            _loss_curves(fits, names, steps, key="k2a_fig_loss_2d")
        with c2:
            series = {}
            for k in (True, False):
                series[t("k2a.series_ls1", name=names[k])] = fits[k]["path"][:, 0]
                series[t("k2a.series_ls2", name=names[k])] = fits[k]["path"][:, 1]
            show_figure(
                fa.line_figure(
                    list(range(steps + 1)),
                    series,
                    title=t("k2a.fig_ls_path"),
                    x_title=t("k2a.axis_step"),
                    y_title=t("k2a.axis_length_scale"),
                    log_y=True,
                    markers=False,
                    dashed=[t("k2a.series_ls2", name=names[k]) for k in (True, False)],
                ),
                key="k2a_fig_ls_path",
                code=bridge.fit_metric,
                look_for_key="k2a.look_ls_path",
            )
        st.markdown(
            t(
                "k2a.pitfall_2d",
                ls1=f"{fits[True]['length_scales'][0]:.3f}",
                ls2=f"{fits[True]['length_scales'][1]:.3g}",
                ls1_no=f"{fits[False]['length_scales'][0]:.2e}",
                ls2_no=f"{fits[False]['length_scales'][1]:.2e}",
                test_loo=f"{fits[True]['test_mse']:.4f}",
                test_no=f"{fits[False]['test_mse']:.4f}",
            )
        )


def render() -> None:
    page_header("k2a.title", "k2a.intro")
    knobs = once(_three_controls)
    controls_first(knobs)
    run_sections(
        "kernels-to-attention",
        [
            Section("k2a.mapping_title", _mapping),
            Section("k2a.three_title", partial(_three_figures, knobs)),
            Section("k2a.dot_title", lambda: _dot_vs_distance(knobs()[3]), folded=True),
            Section("k2a.learn_title", lambda: _learnable(knobs()[2], knobs()[3]), folded=True),
        ],
    )


render()
