"""Streamlit side of the in-context regression page: controls <-> config, the live run, cached
wrappers around ``core.in_context`` and ``core.lessons.in_context``.

The live run is :data:`LIVE`, a :class:`ui.live_run.LiveRun` over ``core.in_context.train_icl``
(training inside the script run, paused within one step, resumed exactly; ``ui.live_run`` explains
it). The headless comparison and the sweep hold one of the same server-wide training slots.

Session state: ``ic_live`` (the :class:`ui.live_run.LiveState`) and the page's widgets, all
prefixed ``ic_``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import in_context as core
from core.in_context import ICLConfig, ICLRun
from core.lessons import in_context as lesson
from figures import in_context as fic
from figures.common import Labels
from ui import caching, controls, questions
from ui.i18n import t
from ui.layout import cached, show_figure
from ui.live_run import ConfigChoice, LiveRun, Loop, RedrawClock, training_slot

#: Steps the "Step" button trains.
STEP_CHUNK = 25

LIPSCHITZ_OPTIONS = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
NOISE_OPTIONS = [0.0, 0.05, 0.1, 0.25, 0.5, 1.0]
N_OPTIONS = [8, 16, 32, 64, 128]
DIM_OPTIONS = [2, 3, 5, 8]
STEPS_OPTIONS = [100, 200, 300, 500, 1000, 2000]
LR_OPTIONS = [0.1, 0.3, 1.0, 2.0]


def _number(value: float) -> str:
    return f"{value:g}"


def render_controls() -> ConfigChoice[ICLConfig]:
    """Draw the page-wide controls (tasks, attention, training); return the config they make (or
    the config's message, quoted by ``ic.error_config``)."""
    return ConfigChoice.of(_draw_controls(), make_config)


def _draw_controls() -> dict[str, Any]:
    """Draw the page-wide controls (tasks, attention, training); return {config field: value}."""
    d = ICLConfig()
    col_task, col_model, col_train = st.columns(3)
    with col_task.container(border=True):
        st.markdown(t("ic.group_task"))
        values = {
            "lipschitz": controls.option_slider(
                "ic.lipschitz", "ic_L", LIPSCHITZ_OPTIONS, d.lipschitz, _number
            ),
            "noise": controls.option_slider("ic.noise", "ic_noise", NOISE_OPTIONS, d.noise, _number),
            "n_context": controls.option_slider("ic.n", "ic_n", N_OPTIONS, d.n_context),
        }
    with col_model.container(border=True):
        st.markdown(t("ic.group_model"))
        values["dim"] = controls.option_slider("ic.dim", "ic_d", DIM_OPTIONS, d.dim)
        values |= {  # one radio per choice: label ic.<name>, key ic_<name>, options ic.<name>_<id>
            name: controls.radio(
                f"ic.{name}",
                key=f"ic_{name}",
                options=options,
                option_prefix=f"ic.{name}_",
                help_key=f"ic.{name}_help",
            )
            for name, options in (("family", core.FAMILIES), ("attention", core.ATTENTIONS))
        }
    with col_train.container(border=True):
        st.markdown(t("ic.group_training"))
        values |= {
            "steps": controls.option_slider("ic.steps", "ic_steps", STEPS_OPTIONS, d.steps),
            "lr": controls.option_slider("ic.lr", "ic_lr", LR_OPTIONS, d.lr, _number),
            "seed": controls.seed("ic_seed", value=d.seed),
        }
    return values


def make_config(values: dict[str, Any]) -> ICLConfig:
    """The config from control values (other fields keep their defaults).

    Raises:
        ValueError: from :class:`ICLConfig` when a value is out of range.
    """
    ints = {k: int(values[k]) for k in ("n_context", "dim", "steps", "seed")}
    reals = {k: float(values[k]) for k in ("lipschitz", "noise", "lr")}
    return ICLConfig(**ints, **reals, family=str(values["family"]), attention=str(values["attention"]))


# --------------------------------------------------------------------------------------------
# Cached wrappers (one line around core each)
# --------------------------------------------------------------------------------------------


def references(config: ICLConfig, *, loo: bool = True) -> core.References:
    """NW oracle, NW with LOO-CV and the noise floor for the config's tasks (cached).

    They depend on the tasks only: the training's settings (attention, steps, lr, batch, how often
    it is measured) are reset before the cache is asked, so moving them costs nothing (~0.5 s
    otherwise, on every step of those sliders). ``loo=False``: without the leave-one-out part
    (``core.references``), what a task control's step pays before anything is trained.
    """
    default = ICLConfig()
    tasks = config.replace(
        attention=default.attention, steps=1, lr=default.lr, batch_tasks=default.batch_tasks,
        eval_every=default.eval_every,
    )  # fmt: skip
    return _references(tasks, loo)


@caching.data(max_entries=32)
def _references(config: ICLConfig, loo: bool) -> core.References:
    return core.references(config, loo=loo)


@caching.data(max_entries=64)
def context_view(config: ICLConfig, m: np.ndarray, oracle_h: float) -> lesson.ContextView:
    """The first held-out context seen by the key-query matrix ``m`` and by the oracle (cached)."""
    return lesson.context_view(config, m, oracle_h)


@caching.data(max_entries=16)
def compare_attentions(config: ICLConfig) -> dict[str, tuple[float, float]]:
    """:func:`core.lessons.in_context.compare_attentions` (softmax vs linear, headless), cached.

    Returns {attention: (final test error, bandwidth averaged over the last steps)}.
    """
    return lesson.compare_attentions(config)


def _sweep_key(config: ICLConfig) -> ICLConfig:
    """The sweep depends on the base config's task settings and seed, not on the live attention."""
    return config.replace(family="full", attention="softmax")


#: Sweeps kept per server process (all sessions share them).
SWEEP_ENTRIES = 8


@st.cache_resource
def _sweep_store() -> dict[ICLConfig, lesson.Sweep]:
    """The server's sweeps by base config. A plain dict, not ``st.cache_data``: the sweep's
    progress callback draws, and Streamlit's caches would try to replay those elements."""
    return {}


def sweep(config: ICLConfig, on_progress: Callable[[int, int], None] | None = None) -> lesson.Sweep:
    """The paper's trends measured around ``config`` (cached; ``on_progress(done, total)``)."""
    key, store = _sweep_key(config), _sweep_store()
    if key not in store:
        store[key] = lesson.sweep(key, on_progress)
        while len(store) > SWEEP_ENTRIES:
            store.pop(next(iter(store)))
    return store[key]


def _request(what: str) -> None:
    st.session_state[f"ic_want_{what}"] = True


def request_button(what: str, label_key: str, icon: str) -> None:
    """A button that asks for a computation through a session-state flag (set in its callback,
    so the request survives any rerun before the section runs)."""
    st.button(t(label_key), key=f"ic_btn_{what}", icon=icon, on_click=_request, args=(what,))


def _take_request(what: str) -> bool:
    return bool(st.session_state.pop(f"ic_want_{what}", False))


def sweep_result(
    config: ICLConfig,
    *,
    on_progress: Callable[[int, int], None],
    on_wait: Callable[[], None],
) -> lesson.Sweep | None:
    """The sweep for ``config``: computed once its button was pressed (holding a training slot),
    then kept on screen for this session; None before the first press."""
    key = _sweep_key(config)
    done = st.session_state.setdefault("ic_sweeps", set())
    if not _take_request("sweep") and key not in done:
        return None
    with training_slot(on_wait):
        result = sweep(config, on_progress)
    done.add(key)
    return result


def comparison(
    config: ICLConfig, *, on_wait: Callable[[], None]
) -> tuple[dict[str, tuple[float, float]], core.References] | None:
    """Softmax vs linear for ``config``: computed once its button was pressed, then kept; None before."""
    done = st.session_state.setdefault("ic_compared", set())
    if not _take_request("compare") and config not in done:
        return None
    with training_slot(on_wait):
        errors = compare_attentions(config)
    done.add(config)
    return errors, references(config)


def trend_rows(result: lesson.Sweep) -> list[dict[str, str]]:
    """One row per trend of the paper: claim, verdict, measured and oracle fold changes."""
    rows = []
    for trend in result.trends:
        rows.append(
            {
                t("ic.col_claim"): t(f"ic.trend_{trend.name}"),
                t("ic.col_verdict"): t(f"ic.verdict_{trend.verdict}"),
                t("ic.col_pairs"): f"{trend.pairs_ok}/{trend.pairs}",
                t("ic.col_oracle_pairs"): f"{trend.oracle_ok}/{trend.pairs}",
                t("ic.col_agree"): f"{trend.agree}/{trend.pairs}",
                t("ic.col_learned"): f"×{trend.learned_fold:.2f}",
                t("ic.col_oracle"): f"×{trend.oracle_fold:.2f}",
            }
        )
    return rows


def sweep_note(result: lesson.Sweep) -> str | None:
    """``ic.sweep_note_resolution`` when the oracle itself breaks a claimed trend, else None."""
    return "ic.sweep_note_resolution" if any(tr.oracle_ok < tr.pairs for tr in result.trends) else None


#: The untrained key-query matrix M = I (``core.lessons.in_context.untrained_matrix``).
identity = lesson.untrained_matrix
WindowShape = lesson.WindowShape
#: About ``count`` snapshots of M over a run, in a 2-D plane (``core.lessons.in_context``).
window_snapshots = lesson.window_snapshots


#: The narrowest direction counts as aligned with b above this |cos|.
ALIGNED_COSINE = 0.9


def verdict_alignment(window: lesson.Window) -> str:
    """``ic.verdict_aligned`` or ``ic.verdict_not_aligned``."""
    return "ic.verdict_aligned" if window.cosine > ALIGNED_COSINE else "ic.verdict_not_aligned"


def curvature_reading(curvature: float) -> str:
    """What the score does along a direction of curvature λ, in words: a width, flat, or growing
    with distance (a negative λ has no width: ``core.lessons.in_context.curvature_kind``)."""
    kind = lesson.curvature_kind(curvature)
    return t(f"ic.reading_{kind}", lam=f"{curvature:.3g}", width=f"{core.bandwidth_of(curvature):.3f}")


def window_rows(window: lesson.Window) -> list[dict[str, str]]:
    """The window along b and in every direction across b (smallest curvature first): table rows."""
    rows = [{t("ic.col_direction"): t("ic.dir_along"), t("ic.col_window"): curvature_reading(window.along_b)}]
    for k, lam in enumerate(window.across_b, start=1):
        rows.append(
            {
                t("ic.col_direction"): t("ic.dir_across", k=k),
                t("ic.col_window"): curvature_reading(float(lam)),
            }
        )
    return rows


def window_claim(window: lesson.Window) -> str:
    """The sentence on "narrow along b, wide across it", as measured on this M."""
    if window.narrow_along_wide_across:
        return t(
            "ic.window_claim_holds",
            along=curvature_reading(window.along_b),
            factor=f"{lesson.WIDE_FACTOR:g}",
        )
    return t(
        "ic.window_claim_fails",
        along=curvature_reading(window.along_b),
        across=t("ic.list_sep").join(curvature_reading(float(lam)) for lam in window.across_b),
        factor=f"{lesson.WIDE_FACTOR:g}",
    )


#: A run counts as still moving when its bandwidth drifted by more than this over the last
#: ``core.lessons.in_context.DRIFT_WINDOW`` steps (settled runs jitter by about ±2 %).
SETTLED_DRIFT = 0.03


def still_moving(bandwidth: list[float]) -> tuple[float, int] | None:
    """(drift, steps compared) when the learned bandwidth has not settled: it moved by more than
    ±``SETTLED_DRIFT`` (``core.lessons.in_context.bandwidth_drift``); None when it has (or when the run is
    too short to tell)."""
    drift = lesson.bandwidth_drift(bandwidth)
    return drift if drift is not None and abs(drift[0]) > SETTLED_DRIFT else None


# --------------------------------------------------------------------------------------------
# The live run (ui.live_run)
# --------------------------------------------------------------------------------------------

#: The page's live run: Train / Pause / Step (+``STEP_CHUNK``) / Reset, in the server's training slots.
LIVE: LiveRun[ICLConfig, ICLRun] = LiveRun(
    "ic", Loop(start=core.start_icl, train=core.train_icl, unit="step", step=STEP_CHUNK)
)


# --------------------------------------------------------------------------------------------
# Verdicts (i18n keys from measured numbers)
# --------------------------------------------------------------------------------------------

#: The learned bandwidth counts as "at the oracle" within this relative distance.
AT_ORACLE_RTOL = 0.25


def verdict_bandwidth(h: float, oracle_h: float) -> str:
    """``ic.verdict_h_match``, ``ic.verdict_h_wide`` or ``ic.verdict_h_narrow``."""
    ratio = h / oracle_h
    if abs(ratio - 1) <= AT_ORACLE_RTOL:
        return "ic.verdict_h_match"
    return "ic.verdict_h_wide" if ratio > 1 else "ic.verdict_h_narrow"


# The page's figure builders, each cached on its inputs (``ui.layout.cached``: same
# signature as the builder, one bounded cache per builder shared by every session).
ellipse_figure = cached(fic.ellipse_figure)
sweep_figure = cached(fic.sweep_figure)
error_bars = cached(fic.error_bars)


#: While training, charts are redrawn at most this often, and so that redraws take at most about a
#: ninth of the time (``ui.live_run.RedrawClock``); progress and status at most every 0.2 s.
CHART_INTERVAL_S = 0.7
STATUS_INTERVAL_S = 0.2
#: The page's lines, each named in the legend by ``ic.legend_<name>``.
NAMES = ("attention", "oracle", "loo", "floor", "mean", "function", "context", "query")


def names() -> dict[str, str]:
    """The legend's names of the page's lines, in the page's language."""
    return {k: t(f"ic.legend_{k}") for k in NAMES}


def live_labels(title_key: str, x: str, y: str, z: str = "") -> Labels:
    """A live chart's words: its title and axes (i18n keys), the page's lines' legend names."""
    return Labels.of(title=t(title_key), x=t(x), y=t(y), z=t(z) if z else "", **names())


#: The live charts' builders, cached for a still frame (``LiveView`` builds a training frame directly).
task_figure = cached(fic.task_figure)
reference_curve = cached(fic.reference_curve)


class LiveView:
    """The placeholders that change while the unit trains, and how to draw a run into them."""

    def __init__(self) -> None:
        self.progress = st.empty()
        self.status = st.empty()
        left, right = st.columns(2)
        self.bandwidth, self.error = left.empty(), right.empty()
        self.task = st.empty()
        self.draws = 0
        self.last_status = -float("inf")
        self.clock = RedrawClock(CHART_INTERVAL_S)

    def draw(
        self, config: ICLConfig, refs: core.References, run: ICLRun | None = None, *, live: bool = False
    ) -> None:
        """Status, bandwidth and error charts and one context; ``run`` None: before training."""
        now = time.monotonic()
        if live and now - self.last_status < STATUS_INTERVAL_S:
            return
        self.last_status = now
        done = run.steps_done if run is not None else 0
        self.progress.progress(
            min(1.0, done / config.steps), text=t("ic.progress", done=done, total=config.steps)
        )
        questions.reveal("ic_learned_h", partial(self._draw_status, refs, run), placeholder=False)
        if live and not self.clock.due():
            return
        started = time.perf_counter()
        self.draws += 1
        # the learned bandwidth, and one context's weights, answer the question about it
        draw = partial(self._draw_bandwidth, live, config, refs, run)
        questions.reveal("ic_learned_h", draw, where=self.bandwidth)
        self._draw_error(live, config, refs, run)
        draw = partial(self._draw_task, live, config, refs, run)
        questions.reveal("ic_learned_h", draw, where=self.task, placeholder=False)
        self.clock.done(started)

    def _draw_status(self, refs: core.References, run: ICLRun | None) -> None:
        """Before training: press Train (and when LOO-CV comes); then steps, h and error vs the oracle."""
        if run is None:
            loo_note = "" if refs.loo_error is not None else "\n\n" + t("ic.loo_on_train")
            self.status.info(t("ic.press_train") + loo_note)
            return
        self.status.caption(
            t(
                "ic.status",
                steps=run.steps_done,
                h=run.bandwidth[-1],
                oracle_h=refs.oracle_h,
                error=run.test_error[-1],
                oracle_error=refs.oracle_error,
                rate=run.steps_done / run.seconds if run.seconds else 0.0,
            )
        )

    def _draw_bandwidth(
        self, live: bool, config: ICLConfig, refs: core.References, run: ICLRun | None
    ) -> None:
        """The learned bandwidth over the steps, against the oracle's and LOO-CV's."""
        self._draw_curve(
            self.bandwidth,
            "ic_bw_fig",
            "ic.bandwidth_look" + _no_loo(refs),
            (fic.reference_curve if live else reference_curve)(  # live frames: not worth caching
                tuple(range(len(run.bandwidth))) if run is not None else (),
                tuple(run.bandwidth) if run is not None else (),
                _measured({"oracle": refs.oracle_h, "loo": refs.loo_h_median}),
                max_steps=max_steps(config, run),
                labels=live_labels("ic.bandwidth_title", "ic.axis_step", "ic.axis_bandwidth"),
                bandwidth=True,
            ),
        )

    def _draw_error(self, live: bool, config: ICLConfig, refs: core.References, run: ICLRun | None) -> None:
        """The held-out error over the steps, against the reference lines."""
        lines = {"oracle": refs.oracle_error, "loo": refs.loo_error, "mean": refs.mean_error,
                 "floor": refs.noise_floor}  # fmt: skip
        self._draw_curve(
            self.error,
            "ic_err_fig",
            "ic.error_look" + _no_loo(refs),
            (fic.reference_curve if live else reference_curve)(
                tuple(run.eval_steps) if run is not None else (),
                tuple(run.test_error) if run is not None else (),
                _measured(lines),
                max_steps=max_steps(config, run),
                labels=live_labels("ic.error_title", "ic.axis_step", "ic.axis_error"),
                bandwidth=False,
            ),
        )

    def _draw_curve(self, where: Any, key: str, look_for_key: str, fig: go.Figure) -> None:
        """One of the curves over training into its placeholder (keyed per draw)."""
        with where.container():
            show_figure(fig, key=f"{key}_{self.draws}", look_for_key=look_for_key, code=core.train_icl)

    def _draw_task(self, live: bool, config: ICLConfig, refs: core.References, run: ICLRun | None) -> None:
        """One held-out context, predicted by the unit (M = I before training) and by the oracle."""
        m = run.m if run is not None else identity(config.dim)
        view = context_view(config, m, refs.oracle_h)
        fig = (fic.task_figure if live else task_figure)(
            view.grid_s,
            view.grid_f,
            view.ctx_s,
            view.ctx_y,
            view.query_s,
            {"attention": view.pred_attention, "oracle": view.pred_oracle},
            {"attention": view.w_attention, "oracle": view.w_oracle},
            labels=live_labels("ic.task_title", f"ic.axis_{view.coordinate}", "ic.axis_y", "ic.axis_weight"),
        )
        with self.task.container():
            show_figure(
                fig, key=f"ic_task_fig_{self.draws}", look_for_key="ic.task_look", code=lesson.context_view
            )


def max_steps(config: ICLConfig, run: ICLRun | None) -> int:
    """The step axis' extent: the planned steps, or more once stepping went past them."""
    return max(config.steps, run.steps_done if run is not None else 0)


def _no_loo(refs: core.References) -> str:
    """The suffix of a chart note's key before LOO-CV is measured (the notes say when it comes)."""
    return "_no_loo" if refs.loo_error is None else ""


def _measured(lines: dict[str, float | None]) -> dict[str, float]:
    """The reference lines that were measured (LOO-CV is None until Train is pressed)."""
    return {role: value for role, value in lines.items() if value is not None}


# The page's charts from its results, labelled in the page's language (builders cached above).
def window_chart(shape: lesson.WindowShape, dim: int) -> go.Figure:
    """The window of M as ellipses over training, against the hidden direction b."""
    return ellipse_figure(
        shape.matrices,
        shape.steps,
        shape.b,
        cap=shape.cap,
        labels=Labels.of(
            title=t("ic.ellipse_title"),
            x=t("ic.axis_plane_x" if dim > 2 else "ic.axis_x1"),
            y=t("ic.axis_plane_y" if dim > 2 else "ic.axis_x2"),
            window=t("ic.legend_window"),
            b=t("ic.legend_b"),
        ),
    )


def sweep_chart(result: lesson.Sweep) -> go.Figure:
    """The learned and oracle bandwidths along L and along n."""
    return sweep_figure(
        result.lipschitz,
        result.noise,
        result.learned_l,
        result.oracle_l,
        result.n_context,
        result.learned_n,
        result.oracle_n,
        labels=Labels.of(
            y=t("ic.axis_bandwidth"),
            **{k: t(f"ic.legend_sweep_{k}") for k in ("learned", "oracle", "learned_n", "oracle_n")},
        ),
        titles=(t("ic.sweep_fig_l"), t("ic.sweep_fig_n")),
        x_titles=(t("ic.axis_lipschitz"), t("ic.axis_n")),
    )


def compare_chart(errors: dict[str, tuple[float, float]], refs: core.References) -> go.Figure:
    """Softmax and linear attention's held-out errors beside the oracle's and the noise floor."""
    bars = [
        t("ic.attention_softmax"),
        t("ic.attention_linear"),
        t("ic.legend_oracle"),
        t("ic.legend_floor"),
    ]
    values = [errors["softmax"][0], errors["linear"][0], refs.oracle_error, refs.noise_floor]
    roles = ["attention", "linear", "oracle", "floor"]
    labels = Labels.of(title=t("ic.compare_fig_title"), y=t("ic.axis_mse"))
    return error_bars(bars, values, roles, labels=labels)


def bandwidth_verdict(run: ICLRun, refs: core.References) -> None:
    """Where the learned bandwidth ended, against the oracle's, and whether it has settled there."""
    h = run.bandwidth[-1]
    key = verdict_bandwidth(h, refs.oracle_h)
    moving = still_moving(run.bandwidth)
    if moving is not None and key == "ic.verdict_h_match":
        key = "ic.verdict_h_near"  # near the oracle, but not settled: not "found" yet
    st.markdown(t(key, h=h, oracle_h=refs.oracle_h, loo_h=refs.loo_h_median))
    if moving is not None:
        drift, window = moving
        st.markdown(
            t(
                "ic.not_converged",
                drift=f"{drift:+.1%}",
                window=window,
                settled=f"{SETTLED_DRIFT:.0%}",
                steps=run.steps_done,
            )
        )


def sweep_with_progress(config: ICLConfig) -> lesson.Sweep | None:
    """The sweep, once its button was pressed, with a progress bar while it runs (None before)."""
    bar = st.empty()
    result = sweep_result(
        config,
        on_progress=lambda done, total: bar.progress(
            done / total, text=t("ic.sweep_progress", done=done, total=total)
        ),
        on_wait=lambda: bar.caption(LIVE.waiting_message()),
    )
    bar.empty()
    return result
