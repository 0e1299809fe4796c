"""Streamlit side of the in-context regression page: controls <-> config, the live run, cached
wrappers around ``core.in_context`` and ``core.lessons.in_context``.

The live run works like the training page's (``ui.training``): training happens inside the script
run, in ``core.in_context.train_icl``; ``on_step`` redraws ``st.empty`` placeholders; a button
press or any control makes Streamlit stop the script at its next Streamlit call, which
``should_stop`` makes once per step, so the run pauses within one step and resumes exactly. At
most ``ui.training.MAX_CONCURRENT`` trainings run at once on the server: the same slot limiter
as the training page (imported from ``ui.training``).

Session state: ``ic_live`` (the :class:`LiveState`) and the page's widgets, all prefixed ``ic_``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import streamlit as st

from core import in_context as core
from core.in_context import ICLConfig, ICLRun
from core.lessons import in_context as lesson
from ui import caching, controls
from ui.i18n import t
from ui.training import MAX_CONCURRENT, training_slot

LIVE = "ic_live"
#: A widget of this page whose state Streamlit drops when another page runs (see on_page_start).
SENTINEL = "ic_btn_reset"
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


@dataclass(frozen=True)
class ConfigChoice:
    """What the controls hold: the config a run would train with, or why they make none.

    Attributes:
        config: the :class:`ICLConfig` of the controls; None when they make no valid one.
        error: when ``config`` is None, the message of the config's ``ValueError`` (quoted by
            ``ic.error_config``).
    """

    config: ICLConfig | None
    error: str = ""


def render_controls() -> ConfigChoice:
    """Draw the page-wide controls (tasks, attention, training); return the config they make."""
    values = _draw_controls()
    try:
        return ConfigChoice(make_config(values))
    except ValueError as err:
        return ConfigChoice(None, str(err))


def _draw_controls() -> dict[str, Any]:
    """Draw the page-wide controls (tasks, attention, training); return {config field: value}."""
    d = ICLConfig()
    col_task, col_model, col_train = st.columns(3)
    with col_task.container(border=True):
        st.markdown(t("ic.group_task"))
        values = {
            "lipschitz": controls.select_slider(
                "ic.lipschitz",
                key="ic_L",
                options=LIPSCHITZ_OPTIONS,
                value=d.lipschitz,
                format_func=_number,
                help_key="ic.lipschitz_help",
            ),
            "noise": controls.select_slider(
                "ic.noise",
                key="ic_noise",
                options=NOISE_OPTIONS,
                value=d.noise,
                format_func=_number,
                help_key="ic.noise_help",
            ),
            "n_context": controls.select_slider(
                "ic.n", key="ic_n", options=N_OPTIONS, value=d.n_context, help_key="ic.n_help"
            ),
        }
    with col_model.container(border=True):
        st.markdown(t("ic.group_model"))
        values |= {
            "dim": controls.select_slider(
                "ic.dim", key="ic_d", options=DIM_OPTIONS, value=d.dim, help_key="ic.dim_help"
            ),
            "family": controls.radio(
                "ic.family",
                key="ic_family",
                options=core.FAMILIES,
                option_prefix="ic.family_",
                help_key="ic.family_help",
            ),
            "attention": controls.radio(
                "ic.attention",
                key="ic_attention",
                options=core.ATTENTIONS,
                option_prefix="ic.attention_",
                help_key="ic.attention_help",
            ),
        }
    with col_train.container(border=True):
        st.markdown(t("ic.group_training"))
        values |= {
            "steps": controls.select_slider(
                "ic.steps", key="ic_steps", options=STEPS_OPTIONS, value=d.steps, help_key="ic.steps_help"
            ),
            "lr": controls.select_slider(
                "ic.lr",
                key="ic_lr",
                options=LR_OPTIONS,
                value=d.lr,
                format_func=_number,
                help_key="ic.lr_help",
            ),
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
# Run state and buttons
# --------------------------------------------------------------------------------------------


@dataclass
class LiveState:
    """This session's run and mode, in one mutable object kept in ``st.session_state``.

    Plain attributes (not separate session-state keys): an interrupted script's clean-up must not
    touch Streamlit (see ``ui.training.LiveState``).

    Attributes:
        run: the current :class:`ICLRun` (trained in place) or None.
        mode: idle, running, step, paused or done.
        start_new: set by Train/Step: this script run may replace an incompatible run.
        wall: wall seconds spent in ``train_icl`` for this run, page updates included.
        notice: an i18n key to show once.
        lock: held while a script thread trains the run.
    """

    run: ICLRun | None = None
    mode: str = "idle"
    start_new: bool = False
    wall: float = 0.0
    notice: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def live() -> LiveState:
    """This session's :class:`LiveState` (created on first use)."""
    state = st.session_state.get(LIVE)
    if not isinstance(state, LiveState):
        state = LiveState()
        st.session_state[LIVE] = state
    return state


@contextmanager
def _holding(lock: threading.Lock) -> Iterator[None]:
    """Hold ``lock``, touching Streamlit while another thread has it (so a press interrupts)."""
    while not lock.acquire(timeout=0.05):
        st.session_state.get(LIVE)
    try:
        yield
    finally:
        lock.release()


def on_page_start() -> None:
    """Call first: a run left running by leaving the page comes back paused; wait for an
    interrupted thread to finish its step."""
    state = live()
    if state.mode in ("running", "step") and SENTINEL not in st.session_state:
        state.mode = "paused"
    with _holding(state.lock):
        pass


def _on_train() -> None:
    state = live()
    state.mode, state.start_new = "running", True


def _on_pause() -> None:
    state = live()
    if state.mode in ("running", "step"):
        state.mode = "paused"


def _on_step() -> None:
    state = live()
    state.mode, state.start_new = "step", True


def _on_reset() -> None:
    state = live()
    with state.lock:
        state.run, state.notice, state.wall, state.mode = None, None, 0.0, "idle"


def render_buttons(enabled: bool) -> None:
    """Train / Pause / Step / Reset (keyed; they act through callbacks)."""
    busy = live().mode in ("running", "step")
    cols = st.columns(4)
    cols[0].button(
        t("ic.btn_train"),
        key="ic_btn_train",
        icon=":material/play_arrow:",
        on_click=_on_train,
        disabled=not enabled or busy,
        type="primary",
        width="stretch",
    )
    cols[1].button(
        t("ic.btn_pause"),
        key="ic_btn_pause",
        icon=":material/pause:",
        on_click=_on_pause,
        disabled=not busy,
        width="stretch",
    )
    cols[2].button(
        t("ic.btn_step", steps=STEP_CHUNK),
        key="ic_btn_step",
        icon=":material/skip_next:",
        on_click=_on_step,
        disabled=not enabled or busy,
        width="stretch",
    )
    cols[3].button(
        t("ic.btn_reset"), key=SENTINEL, icon=":material/restart_alt:", on_click=_on_reset, width="stretch"
    )


def waiting_message() -> str:
    """The "waiting for a free training slot" line (the limiter is the training page's)."""
    return t("ic.waiting_slot", slots=MAX_CONCURRENT)


@contextmanager
def slot(on_wait: Callable[[], None]) -> Iterator[None]:
    """Hold one of the server's training slots (shared with the training page) for the block."""
    with training_slot(on_wait):
        yield


def mode(config: ICLConfig | None) -> str:
    """The mode to act on (a run cannot go on while the controls hold an invalid config)."""
    state = live()
    if config is None and state.mode in ("running", "step"):
        state.mode = "paused"
    return state.mode


def pop_notice() -> str | None:
    """An i18n key of a one-off message left by the previous run, if any."""
    state = live()
    notice, state.notice = state.notice, None
    return notice


def _should_stop() -> bool:
    # Reading session state is a Streamlit call: a press or another control raises Streamlit's
    # stop signal right here, between two steps.
    return st.session_state[LIVE].mode not in ("running", "step")


def train_live(
    config: ICLConfig, *, on_step: Callable[[ICLRun], None], on_wait: Callable[[], None]
) -> ICLRun | None:
    """Train the session's run (starting it when needed) inside this script run.

    Returns when the run is finished, one chunk was stepped, or the mode changed (the caller then
    reruns the page). Holds one of the server's training slots while training.
    """
    state = live()
    may_start_new, state.start_new = state.start_new, False
    stepping = state.mode == "step"
    with _holding(state.lock), training_slot(on_wait):
        run = state.run
        if run is not None and not run.config.same_run_as(config):
            if not may_start_new:
                state.mode = "paused"  # a control changed while training: wait for a press
                return run
            run = None
        if run is None:
            run = core.start_icl(config)
            state.run, state.wall = run, 0.0
        if run.steps_done >= config.steps and not stepping:
            state.notice, state.mode = "ic.notice_finished", "done"
            return run
        target = run.steps_done + STEP_CHUNK if stepping else None
        if stepping and target > config.steps:
            config = config.replace(steps=target)  # stepping past the planned steps extends the run
        started = time.perf_counter()
        try:
            core.train_icl(config, on_step=on_step, should_stop=_should_stop, resume=run, until_step=target)
        finally:
            state.wall += time.perf_counter() - started  # no Streamlit call here
        state.mode = "done" if run.finished else "paused"
    return run


class RedrawClock:
    """When the live charts may be redrawn: at most every ``interval_s`` seconds, and never more
    often than keeps the redraws under ``1 / (1 + spacing)`` of the time (a redraw that took c
    seconds is followed by at least ``spacing * c`` seconds of training). The first redraw comes
    one interval after the clock starts (the page already shows the charts when training starts).
    """

    def __init__(self, interval_s: float = 0.7, spacing: float = 8.0) -> None:
        self.interval_s, self.spacing = interval_s, spacing
        self.next_at = time.perf_counter() + interval_s

    def due(self) -> bool:
        """True when a redraw may happen now."""
        return time.perf_counter() >= self.next_at

    def done(self, started: float) -> None:
        """Record a redraw that began at ``started`` (``time.perf_counter()``) and ends now."""
        now = time.perf_counter()
        self.next_at = now + max(self.interval_s, self.spacing * (now - started))


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
