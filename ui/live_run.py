"""One live training run per page: its session state, Train / Pause / Step / Reset, the server's slots.

The pages that train (the toy Transformer, the in-context unit, next the induction heads) each own
one :class:`LiveRun`, built at import from three things: a key prefix (``tr``), the page's core
loop (a :class:`Loop`: how to start a run from a config and train it further in place) and the
i18n keys of its labels (:class:`Labels`, by default named after the prefix). The page keeps only
its drawing code: the placeholders it redraws and what it draws into them.

The execution model follows Streamlit's own instead of fighting it:

- Training happens inside the script run, in the page's core loop; after every unit (an epoch,
  a step) the page's ``redraw`` callback draws into ``st.empty`` placeholders.
- A button press (Pause, Step, Reset), any other control, leaving the page or closing the tab
  makes Streamlit stop the running script: with ``runner.fastReruns`` (the default) it starts the
  next run at once and raises a stop signal in the old one at its next Streamlit call. The loop's
  ``should_stop`` reads ``st.session_state`` before every batch, and reading session state is such
  a call, so the loop ends within one batch (Pause reacts within ~0.5 s on the training page).
- The run lives in this session's :class:`LiveState` from before its first batch and is trained
  in place, so an interrupted run resumes exactly where it stopped (a paused-and-resumed run
  equals one straight run, number for number).
- The interrupted thread may still be finishing its batch when the next script run starts: the
  state's lock keeps the two from touching the model at once, and the new run waits for it while
  polling Streamlit (so a press still interrupts the wait).

The server's CPU is shared through one :class:`SlotLimiter` (``st.cache_resource``: one per app
process, so with ``make serve`` each replica has its own). It has named pools:

- ``TRAINING``: ``MAX_CONCURRENT`` live trainings at once, for every page that trains and for the
  in-context page's headless comparison and sweep. A session beyond that waits, polling every
  ``SLOT_POLL_S`` and showing the "waiting for a free slot" message; every poll touches Streamlit,
  so Pause or leaving the page stops the wait.
- ``COST``: one cost measurement at a time (the kernel-approximation page's time and memory
  curves), taken without waiting: a second user is told the server is busy. It is a pool of its
  own, not a training slot, because it *times* torch calls: it must neither queue behind trainings
  for minutes nor be timed while another measurement runs. So the server runs at most
  ``MAX_CONCURRENT`` trainings plus one measurement at once.

Session state of a page with prefix ``p``: ``p_live`` (its :class:`LiveState`) and the buttons
``p_btn_train``, ``p_btn_pause``, ``p_btn_step``, ``p_btn_reset``.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, NoReturn, Protocol, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.i18n import t

#: Live trainings allowed at once in one app process (each uses one CPU core).
MAX_CONCURRENT = 2
#: Cost measurements allowed at once in one app process.
MAX_COST_MEASUREMENTS = 1
#: The limiter's pools: trainings, and the kernel-approximation page's cost measurement.
TRAINING, COST = "training", "cost"
POOLS: Mapping[str, int] = MappingProxyType({TRAINING: MAX_CONCURRENT, COST: MAX_COST_MEASUREMENTS})
#: Seconds between two looks at a pool while waiting for a free slot.
SLOT_POLL_S = 0.5
#: Seconds between two looks at a run's lock while another script thread finishes its batch.
LOCK_POLL_S = 0.05

#: The modes of a live run. Train sets ``running``, Step ``step``; the loop ends ``paused`` or
#: ``done``; Reset goes back to ``idle``.
IDLE, RUNNING, STEP, PAUSED, DONE = "idle", "running", "step", "paused", "done"
BUSY = (RUNNING, STEP)


# --------------------------------------------------------------------------------------------
# The server-wide slot limiter
# --------------------------------------------------------------------------------------------


class SlotLimiter:
    """Named pools of slots, each a ``threading.BoundedSemaphore``, shared by every session.

    ``hold`` waits for a slot (blocking, but polling a callback that touches Streamlit);
    ``try_hold`` takes one only if it is free now. Both give the slot back when the block ends,
    also when it ends by an exception (Streamlit's stop signal included).

    Args:
        pools: pool name -> how many holders at once (a positive integer).
        poll_s: seconds between two looks at a pool in :meth:`hold`.

    Raises:
        ValueError: if a capacity is not a positive integer.
    """

    def __init__(self, pools: Mapping[str, int], poll_s: float = SLOT_POLL_S) -> None:
        for name, capacity in pools.items():
            if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
                raise ValueError(f"pool {name!r}: capacity must be a positive integer, got {capacity!r}")
        self.capacities: Mapping[str, int] = MappingProxyType(dict(pools))
        self.poll_s = poll_s
        self._slots = {name: threading.BoundedSemaphore(n) for name, n in pools.items()}
        self._held = dict.fromkeys(pools, 0)
        self._count_lock = threading.Lock()

    def _pool(self, pool: str) -> threading.BoundedSemaphore:
        if pool not in self._slots:
            raise ValueError(f"unknown pool {pool!r}; known: {sorted(self._slots)}")
        return self._slots[pool]

    def _count(self, pool: str, change: int) -> None:
        with self._count_lock:
            self._held[pool] += change

    def free(self, pool: str) -> int:
        """Slots of ``pool`` nobody holds now."""
        self._pool(pool)
        with self._count_lock:
            return self.capacities[pool] - self._held[pool]

    @contextmanager
    def hold(self, pool: str, on_wait: Callable[[], None]) -> Iterator[None]:
        """Hold one slot of ``pool`` for the block, waiting for one if none is free.

        While none is free, ``on_wait`` is called every ``poll_s`` seconds; in a script run it
        must touch Streamlit (show the "waiting" message), which is also where a Pause press or
        leaving the page interrupts the wait (Streamlit raises its stop signal there, and no slot
        is taken).
        """
        slots = self._pool(pool)
        while not slots.acquire(timeout=self.poll_s):
            on_wait()
        self._count(pool, +1)
        try:
            yield
        finally:
            self._count(pool, -1)
            slots.release()

    @contextmanager
    def try_hold(self, pool: str) -> Iterator[bool]:
        """Hold one slot of ``pool`` for the block if one is free now; yields whether it got one."""
        slots = self._pool(pool)
        got = slots.acquire(blocking=False)
        if got:
            self._count(pool, +1)
        try:
            yield got
        finally:
            if got:
                self._count(pool, -1)
                slots.release()


@st.cache_resource
def limiter() -> SlotLimiter:
    """This app process's one limiter (``POOLS``), shared by every session."""
    return SlotLimiter(POOLS)


def training_slot(on_wait: Callable[[], None]) -> AbstractContextManager[None]:
    """``with training_slot(on_wait):`` hold one of the server's training slots for the block
    (:meth:`SlotLimiter.hold` on this process's limiter)."""
    return limiter().hold(TRAINING, on_wait)


@contextmanager
def hold_lock(
    lock: threading.Lock, on_wait: Callable[[], None], poll_s: float = LOCK_POLL_S
) -> Iterator[None]:
    """Hold ``lock``, calling ``on_wait`` (a Streamlit call) every ``poll_s`` while another thread has it."""
    while not lock.acquire(timeout=poll_s):
        on_wait()
    try:
        yield
    finally:
        lock.release()


# --------------------------------------------------------------------------------------------
# Pacing the live redraws
# --------------------------------------------------------------------------------------------


class RedrawClock:
    """When the live charts may be redrawn: at most every ``interval_s`` seconds, and never more
    often than keeps the redraws under ``1 / (1 + spacing)`` of the time (a redraw that took c
    seconds is followed by at least ``spacing * c`` seconds of training).

    With ``wait_first`` (the default) the first redraw comes one interval after the clock starts
    (the page already shows the charts when training starts); without it, at once.
    """

    def __init__(self, interval_s: float = 0.7, spacing: float = 8.0, *, wait_first: bool = True) -> None:
        self.interval_s, self.spacing = interval_s, spacing
        self.next_at = time.perf_counter() + interval_s if wait_first else -float("inf")

    def due(self) -> bool:
        """True when a redraw may happen now."""
        return time.perf_counter() >= self.next_at

    def done(self, started: float) -> None:
        """Record a redraw that began at ``started`` (``time.perf_counter()``) and ends now."""
        now = time.perf_counter()
        self.next_at = now + max(self.interval_s, self.spacing * (now - started))


# --------------------------------------------------------------------------------------------
# What a page's core loop looks like to the live run
# --------------------------------------------------------------------------------------------


class RunConfig(Protocol):
    """A core config: frozen, ``replace(**changes)``, and ``same_run_as`` (equal but for the
    planned units, so that a run can be extended)."""

    def replace(self, **changes: object) -> Any: ...

    def same_run_as(self, other: Any) -> bool: ...


class Run(Protocol):
    """A core run, trained in place: its ``config`` and whether it has done what it planned."""

    config: Any

    @property
    def finished(self) -> bool: ...


ConfigT = TypeVar("ConfigT", bound=RunConfig)
RunT = TypeVar("RunT", bound=Run)


@dataclass(frozen=True)
class Loop(Generic[ConfigT, RunT]):
    """A page's core training loop as the live run drives it; core itself stays as it is.

    The three loops of the app share one convention, named by ``unit`` (``"epoch"``, ``"step"``):
    ``train(config, on_<unit>=, should_stop=, resume=, until_<unit>=)`` trains ``resume`` in place
    until ``config.<unit>s`` units are done (or ``until_<unit>``), calling ``on_<unit>(run)`` after
    each unit and ``should_stop()`` before every batch; the run counts ``run.<unit>s_done``.
    (``core.training.train``: epochs; ``core.in_context.train_icl`` and
    ``core.induction_training.train_induction``: steps. ``tests/ui`` checks each against it.)

    Attributes:
        start: a fresh run from a config (``core.training.start_run``).
        train: the core loop.
        unit: ``"epoch"`` or ``"step"``: what one ``on_<unit>`` call and one progress count are.
        step: units one press of Step trains.
    """

    start: Callable[[ConfigT], RunT]
    train: Callable[..., Any]
    unit: str
    step: int = 1

    def __post_init__(self) -> None:
        names = inspect.signature(self.train).parameters
        wanted = {f"on_{self.unit}", "should_stop", "resume", f"until_{self.unit}"}
        if not wanted <= set(names):
            raise ValueError(f"{self.train.__qualname__} takes no {sorted(wanted - set(names))}")
        if self.step < 1:
            raise ValueError(f"step must be at least 1, got {self.step}")

    def done(self, run: RunT) -> int:
        """Units the run has done."""
        return int(getattr(run, f"{self.unit}s_done"))

    def planned(self, config: ConfigT) -> int:
        """Units the config plans."""
        return int(getattr(config, f"{self.unit}s"))

    def extend(self, config: ConfigT, units: int) -> ConfigT:
        """The config planning ``units`` units."""
        return config.replace(**{f"{self.unit}s": units})

    def run(
        self,
        config: ConfigT,
        run: RunT,
        *,
        on_unit: Callable[[RunT], None],
        should_stop: Callable[[], bool],
        until: int | None,
    ) -> None:
        """Train ``run`` in place with ``config`` (up to ``until`` units; None: the planned ones)."""
        self.train(
            config,
            **{f"on_{self.unit}": on_unit, f"until_{self.unit}": until},
            should_stop=should_stop,
            resume=run,
        )


@dataclass(frozen=True)
class Labels:
    """The i18n keys of a live run's buttons and messages.

    ``step`` is formatted with ``steps`` (the units one Step trains), ``waiting`` with ``slots``.
    """

    train: str
    pause: str
    step: str
    reset: str
    finished: str
    waiting: str
    changed: str

    @classmethod
    def of(cls, prefix: str) -> Labels:
        """The keys named after the page's prefix: ``tr.btn_train``, ``tr.notice_finished``, ..."""
        return cls(**{name: f"{prefix}.{suffix}" for name, suffix in LABEL_SUFFIXES.items()})


#: :class:`Labels` field -> the end of its i18n key in every page's catalogue.
LABEL_SUFFIXES = {
    "train": "btn_train",
    "pause": "btn_pause",
    "step": "btn_step",
    "reset": "btn_reset",
    "finished": "notice_finished",
    "waiting": "waiting_slot",
    "changed": "config_changed",
}


@dataclass(frozen=True)
class ConfigChoice(Generic[ConfigT]):
    """What a page's controls hold: the config Train would start, or why they make none.

    Attributes:
        config: the config of the controls; None when they make no valid one.
        error: when ``config`` is None, the message of the config's ``ValueError`` (a page's
            explanation quotes it as ``{error}``).
        error_key: when ``config`` is None, the i18n key explaining why ("" where the page has
            one explanation for every invalid config).
    """

    config: ConfigT | None
    error: str = ""
    error_key: str = ""

    @classmethod
    def of(
        cls,
        values: dict[str, Any],
        make: Callable[[dict[str, Any]], ConfigT],
        explain: Callable[[dict[str, Any]], str] | None = None,
    ) -> ConfigChoice[ConfigT]:
        """``make(values)``, or, when it raises ``ValueError``, why not (``explain(values)``: the key)."""
        try:
            return cls(make(values))
        except ValueError as err:
            return cls(None, str(err), explain(values) if explain is not None else "")

    def or_error(self, error_key: str) -> ConfigT | None:
        """The config; when there is none, None with ``error_key`` shown as an error (it quotes the
        config's message as ``{error}``; :attr:`error_key`, when set, is the page's own business)."""
        if self.config is None:
            st.error(t(error_key, error=self.error))
        return self.config


# --------------------------------------------------------------------------------------------
# The session's run
# --------------------------------------------------------------------------------------------


@dataclass
class LiveState(Generic[RunT]):
    """Everything about this session's run, in one mutable object kept in ``st.session_state``.

    Plain attributes rather than separate session-state keys, for a reason: Streamlit stops an
    interrupted script by raising at its next Streamlit call, and raises *again* at every later
    one. The interrupted thread's clean-up (release the lock, add the wall time) must therefore
    not touch Streamlit; it updates this object instead. A page that keeps more about its run
    (measurements, a history) subclasses it and extends :meth:`begin` and :meth:`forget`.

    Attributes:
        run: the current run (trained in place), or None.
        mode: ``IDLE``, ``RUNNING``, ``STEP``, ``PAUSED`` or ``DONE``.
        start_new: set by Train/Step: this script run may replace an incompatible run.
        wall: wall seconds spent in the core loop for this run, page updates included.
        notice: an i18n key to show once.
        lock: held while a thread trains (or measures) the run. With Streamlit's fast reruns a new
            script run starts while the interrupted one is still finishing its batch; the lock
            keeps the two from touching the model at once.
    """

    run: RunT | None = None
    mode: str = IDLE
    start_new: bool = False
    wall: float = 0.0
    notice: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, run: RunT) -> None:
        """Make ``run`` (just started) the session's run. No Streamlit call."""
        self.run, self.wall = run, 0.0

    def forget(self) -> None:
        """Forget the run (Reset). No Streamlit call."""
        self.run, self.notice, self.wall, self.mode = None, None, 0.0, IDLE


class LiveRun(Generic[ConfigT, RunT]):
    """A page's live run: its :class:`LiveState`, its buttons and callbacks, and its training slot.

    A page calls, in order: :meth:`on_page_start` first; :meth:`buttons` where the buttons go;
    :meth:`current` for the run to draw; :meth:`is_training` with the controls' config, and when
    True, :meth:`train_and_rerun` with its redraw callback (it never returns).

    Args:
        prefix: the page's key prefix (``tr``): session-state and button keys start with it.
        loop: the page's core loop.
        labels: the i18n keys of the buttons and messages (default ``Labels.of(prefix)``).
        state: the :class:`LiveState` class (a page's subclass keeps more about its run).
        after_reset: called by the Reset button after the run is forgotten (a page's own session
            state to clear, e.g. a slider that follows the newest epoch).
    """

    def __init__(
        self,
        prefix: str,
        loop: Loop[ConfigT, RunT],
        *,
        labels: Labels | None = None,
        state: type[LiveState] = LiveState,
        after_reset: Callable[[], None] | None = None,
    ) -> None:
        self.prefix, self.loop = prefix, loop
        self.labels = labels if labels is not None else Labels.of(prefix)
        self.state_class, self.after_reset = state, after_reset
        self.key = f"{prefix}_live"
        #: A widget of the page whose state Streamlit drops when another page runs.
        self.sentinel = f"{prefix}_btn_reset"

    # ---- state ---------------------------------------------------------------------------------

    def state(self) -> LiveState:
        """This session's state (created on first use)."""
        state = st.session_state.get(self.key)
        if not isinstance(state, self.state_class):
            state = self.state_class()
            st.session_state[self.key] = state
        return state

    def current(self) -> RunT | None:
        """This session's run, or None."""
        return self.state().run

    def mode(self) -> str:
        """``IDLE``, ``RUNNING``, ``STEP``, ``PAUSED`` or ``DONE``."""
        return self.state().mode

    def wall_seconds(self) -> float:
        """Wall-clock seconds spent in the core loop for the current run, page updates included."""
        return self.state().wall

    def _poke(self) -> None:
        # A Streamlit call: where a press interrupts a wait.
        st.session_state.get(self.key)

    @contextmanager
    def holding(self) -> Iterator[LiveState]:
        """Hold the run's lock for the block (measuring the run, say), yielding the state."""
        state = self.state()
        with hold_lock(state.lock, self._poke):
            yield state

    def on_page_start(self) -> None:
        """Call first on the page: bring a run left by leaving the page back paused, and wait for
        an interrupted thread to finish its batch, so the page shows the run as it will stay.

        Streamlit drops the state of widgets a finished script run did not draw, so the page's own
        buttons are missing from session state exactly when another page ran since. (A button
        press or any control on this page keeps them.)
        """
        state = self.state()
        if state.mode in BUSY and self.sentinel not in st.session_state:
            state.mode = PAUSED
        with self.holding():
            pass

    # ---- buttons -------------------------------------------------------------------------------

    def on_train(self) -> None:
        """Train's callback: train (a new run if the controls changed) until done or paused."""
        state = self.state()
        state.mode, state.start_new = RUNNING, True

    def on_pause(self) -> None:
        """Pause's callback: a running run stops within one batch (its thread sees the mode)."""
        state = self.state()
        if state.mode in BUSY:
            state.mode = PAUSED

    def on_step(self) -> None:
        """Step's callback: train ``loop.step`` more units (a new run if the controls changed)."""
        state = self.state()
        state.mode, state.start_new = STEP, True

    def on_reset(self) -> None:
        """Reset's callback: forget the run (waiting for a thread finishing its batch)."""
        state = self.state()
        with state.lock:  # an interrupted thread may still be finishing its batch
            state.forget()
        if self.after_reset is not None:
            self.after_reset()

    def pop_notice(self) -> str | None:
        """An i18n key of a one-off message left by the previous run, if any."""
        state = self.state()
        notice, state.notice = state.notice, None
        return notice

    def buttons(self, enabled: bool) -> None:
        """A one-off notice left by the previous run, then Train / Pause / Step / Reset in a row
        (keyed; they act through callbacks). ``enabled``: the controls make a valid config."""
        notice = self.pop_notice()
        if notice:
            st.info(t(notice))
        busy = self.mode() in BUSY
        held = not enabled or busy  # Train and Step: only at rest, with a valid config
        buttons = (  # (name, label, icon, callback, disabled, type)
            ("train", self.labels.train, ":material/play_arrow:", self.on_train, held, "primary"),
            ("pause", self.labels.pause, ":material/pause:", self.on_pause, not busy, "secondary"),
            ("step", self.labels.step, ":material/skip_next:", self.on_step, held, "secondary"),
            ("reset", self.labels.reset, ":material/restart_alt:", self.on_reset, False, "secondary"),
        )
        for col, (name, label, icon, callback, disabled, kind) in zip(st.columns(4), buttons, strict=True):
            col.button(
                t(label, steps=self.loop.step),
                key=f"{self.prefix}_btn_{name}",
                icon=icon,
                on_click=callback,
                disabled=disabled,
                type=kind,
                width="stretch",
            )

    def warn_if_changed(self, config: ConfigT | None) -> None:
        """Say so when the controls no longer hold the run's config (the run is kept until a press)."""
        run = self.current()
        if run is not None and config is not None and not run.config.same_run_as(config):
            st.warning(t(self.labels.changed))

    def waiting_message(self) -> str:
        """The "waiting for a free training slot" line."""
        return t(self.labels.waiting, slots=limiter().capacities[TRAINING])

    # ---- training ------------------------------------------------------------------------------

    def is_training(self, config: ConfigT | None) -> bool:
        """Whether this script run should train: Train or Step was pressed and the run goes on.
        A run cannot go on while the controls hold an invalid config (None): it is paused."""
        state = self.state()
        if config is None and state.mode in BUSY:
            state.mode = PAUSED
        return state.mode in BUSY

    def _should_stop(self) -> bool:
        # Reading session state is a Streamlit call: when the user has acted (a button, another
        # control, another page, closing the tab) Streamlit raises its stop signal right here,
        # between two batches. The returned value only matters outside a Streamlit run.
        return st.session_state[self.key].mode not in BUSY

    def train_live(
        self, config: ConfigT, *, redraw: Callable[[RunT], None], on_wait: Callable[[], None]
    ) -> RunT | None:
        """Train the session's run (starting it when needed) inside this script run.

        ``redraw`` redraws the page's live charts after each unit; ``on_wait`` shows the "waiting
        for a free slot" message. Returns when the run is finished, one Step was trained, or the
        mode changed, with the mode updated (the caller then reruns the page). When the user acts,
        Streamlit's stop signal is raised inside instead; the slot, the lock and the wall time
        are still looked after.
        """
        state, loop = self.state(), self.loop
        may_start_new, state.start_new = state.start_new, False
        stepping = state.mode == STEP
        with hold_lock(state.lock, self._poke), training_slot(on_wait):
            run = state.run
            if run is not None and not run.config.same_run_as(config):
                if not may_start_new:
                    # A control changed while training: keep the run, wait for an explicit press.
                    state.mode = PAUSED
                    return run
                run = None
            if run is None:
                run = loop.start(config)
                state.begin(run)
            if run.finished and loop.done(run) >= loop.planned(config) and not stepping:
                state.notice, state.mode = self.labels.finished, DONE
                return run
            target = loop.done(run) + loop.step if stepping else None
            if stepping and target > loop.planned(config):
                config = loop.extend(config, target)  # stepping past the plan extends the run
            started = time.perf_counter()
            try:
                loop.run(config, run, on_unit=redraw, should_stop=self._should_stop, until=target)
            finally:
                state.wall += time.perf_counter() - started  # no Streamlit call here (see LiveState)
            state.mode = DONE if run.finished else PAUSED
        return run

    def train_and_rerun(
        self, config: ConfigT, *, redraw: Callable[[RunT], None], status: DeltaGenerator
    ) -> NoReturn:
        """:meth:`train_live`, showing the waiting message in the ``status`` placeholder while no
        slot is free, then rerun the page (which draws the run at rest)."""
        self.train_live(config, redraw=redraw, on_wait=lambda: status.warning(self.waiting_message()))
        st.rerun()
