"""Streamlit side of the training page: controls <-> config, presets, the live run, the slot limiter.

The live run follows Streamlit's own execution model instead of fighting it: training happens
inside the script run, in ``core.training.train``; after every epoch ``on_epoch`` redraws the
charts into ``st.empty`` placeholders. A button press (Pause, Step, Reset), any other control,
leaving the page or closing the tab makes Streamlit stop the running script (with
``runner.fastReruns``, the default, it starts the next run at once and raises a stop signal in
the old one at its next Streamlit call). ``should_stop`` reads ``st.session_state`` before every
batch, and reading session state is such a call, so the loop ends within one batch. The
:class:`core.training.TrainingRun` lives in this session's :class:`LiveState` from before the
first batch and is trained in place, so the interrupted run resumes exactly where it stopped.

Only ``MAX_CONCURRENT`` trainings run at once on the whole server (a ``threading.BoundedSemaphore``
shared through ``st.cache_resource``); a session beyond that polls for a free slot, showing a
"waiting" message, and stays responsive because every poll touches Streamlit.

Session state: ``tr_live`` (the :class:`LiveState`), ``tr_replay_max`` (the replay slider's
follow-the-newest-epoch mark) and the page's widgets, all prefixed ``tr_``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import streamlit as st

from core.attention import SCALE_MODES
from core.lessons.training import PRESETS, Findings, measure_findings, preset_config
from core.positional import POSITIONAL_KINDS
from core.training import Preview, TrainingRun, start_run, train
from core.training import preview as core_preview
from core.transformer import TransformerConfig
from ui import caching, controls
from ui.i18n import LANGUAGES, current_language, load_catalogue, t

#: Trainings allowed at once on the whole server (each uses one CPU core).
MAX_CONCURRENT = 2
#: Seconds between two looks at the semaphore while waiting for a free slot.
SLOT_POLL_S = 0.5
#: Rows kept in the per-session history of runs.
HISTORY_ROWS = 8
#: Configs whose preview stays cached per server process (each at most ~1 MB, usually ~20 kB).
PREVIEW_CACHE_ENTRIES = 32

#: Session-state key of the :class:`LiveState`.
LIVE = "tr_live"
PRESET_KEY = "tr_preset"
REPLAY_KEY, REPLAY_MAX = "tr_replay", "tr_replay_max"
#: A widget of this page whose state Streamlit drops when another page runs (see on_page_start).
SENTINEL = "tr_btn_reset"

D_MODEL_OPTIONS = [16, 32, 64, 128]
HEAD_OPTIONS = [1, 2, 4, 8, 16, 32]
LR_OPTIONS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2]
BATCH_OPTIONS = [8, 16, 32, 64, 128]
SEQ_LEN_OPTIONS = [8, 16, 24, 32, 48, 64]
TRAIN_OPTIONS = [128, 256, 512, 768, 1024, 2048, 4096]
DIVERSITY_OPTIONS = [0.0, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0]
MAX_EPOCHS_CONTROL = 60
#: The scale mode that divides the scores by the "Custom divisor" control (editable only then).
CUSTOM_SCALE = "custom"

#: control key -> TransformerConfig field.
CONTROL_FIELDS: dict[str, str] = {
    "tr_d_model": "d_model",
    "tr_heads": "n_heads",
    "tr_layers": "n_layers",
    "tr_pre_ln": "norm_first",
    "tr_pos": "positional",
    "tr_scale": "scale",
    "tr_divisor": "custom_divisor",
    "tr_dropout": "attn_dropout",
    "tr_causal": "causal",
    "tr_diversity": "diversity_weight",
    "tr_lr": "learning_rate",
    "tr_batch": "batch_size",
    "tr_epochs": "epochs",
    "tr_seed": "seed",
    "tr_seq_len": "seq_len",
    "tr_n_train": "n_train",
    "tr_momentum": "momentum",
}


# --------------------------------------------------------------------------------------------
# Presets and controls
# --------------------------------------------------------------------------------------------


def _labels(prefix: str) -> Callable[[str], str]:
    """``format_func`` for option ids, bound to the language of this script run.

    (A lazy ``t`` inside the lambda would be evaluated later, e.g. by AppTest outside the run,
    in whatever language is current then.)
    """
    catalogue = load_catalogue(current_language())
    return lambda option: catalogue.get(f"{prefix}{option}", t(f"{prefix}{option}"))


def _write_preset(name: str, *, only_missing_from_url: bool = False) -> None:
    config = preset_config(name)
    for key, name_ in CONTROL_FIELDS.items():
        if only_missing_from_url and key in st.query_params:
            continue
        st.session_state[key] = getattr(config, name_)


def _on_preset_change() -> None:
    """Callback of the preset selector: write the preset's values into every control."""
    _write_preset(st.session_state[PRESET_KEY])


def _preset_from_url() -> str | None:
    """The preset a link names, by id (``heads32``) or by its label in either language."""
    value = st.query_params.get(PRESET_KEY)
    if value in PRESETS:
        return value
    for lang in LANGUAGES:
        catalogue = load_catalogue(lang)
        for name in PRESETS:
            if catalogue.get(f"tr.preset_{name}") == value:
                return name
    return None


def preset_selector() -> str:
    """The preset selectbox (bound to the URL); choosing one sets every control.

    A shared link with only ``?tr_preset=...`` gets the preset's values for every control it
    does not set itself (once per session, before the controls are drawn). Streamlit writes a
    bound choice as its displayed label; the stable id (``?tr_preset=no_mask``) works too.
    """
    if "tr_preset_seeded" not in st.session_state:
        st.session_state["tr_preset_seeded"] = True
        name = _preset_from_url()
        if name is not None:
            st.session_state[PRESET_KEY] = name
            _write_preset(name, only_missing_from_url=True)
    return controls.selectbox(
        "tr.preset",
        key=PRESET_KEY,
        options=list(PRESETS),
        format_func=_labels("tr.preset_"),
        help_key="tr.preset_help",
        on_change=_on_preset_change,
    )


def _number(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class ConfigChoice:
    """What the controls hold: the config a run would train with, or why they make none.

    Attributes:
        config: the :class:`TransformerConfig` of the controls; None when they make no valid one.
        error_key: when ``config`` is None, the i18n key explaining why (:func:`config_error_key`).
        error: when ``config`` is None, the message of the config's ``ValueError`` (the
            explanation quotes it as ``{error}``).
    """

    config: TransformerConfig | None
    error_key: str = ""
    error: str = ""


def render_controls() -> ConfigChoice:
    """Draw the grouped config controls; return the config they make (or why they make none)."""
    values = _draw_controls()
    try:
        return ConfigChoice(make_config(values))
    except ValueError as err:
        return ConfigChoice(None, config_error_key(values), str(err))


def _draw_controls() -> dict[str, Any]:
    """Draw the grouped config controls; return {config field: value}."""
    d = TransformerConfig()
    col_model, col_attention, col_training = st.columns(3)
    with col_model.expander(t("tr.group_model"), expanded=True):
        values = _model_controls(d)
    with col_attention.expander(t("tr.group_attention"), expanded=True):
        values |= _attention_controls(d)
    with col_training.expander(t("tr.group_training"), expanded=True):
        values |= _training_controls(d)
    with col_training.expander(t("tr.group_data"), expanded=False):
        values |= _data_controls(d)
    return values


def _model_controls(d: TransformerConfig) -> dict[str, Any]:
    """The model group (width, heads, layers, positions, pre-LN); ``d`` gives the defaults."""
    return {
        "d_model": controls.select_slider(
            "tr.d_model",
            key="tr_d_model",
            options=D_MODEL_OPTIONS,
            value=d.d_model,
            help_key="tr.d_model_help",
        ),
        "n_heads": controls.select_slider(
            "tr.heads", key="tr_heads", options=HEAD_OPTIONS, value=d.n_heads, help_key="tr.heads_help"
        ),
        "n_layers": controls.slider(
            "tr.layers", key="tr_layers", min_value=1, max_value=3, value=d.n_layers, step=1
        ),
        "positional": controls.radio(
            "tr.positional",
            key="tr_pos",
            options=POSITIONAL_KINDS,
            index=POSITIONAL_KINDS.index(d.positional),
            format_func=_labels("tr.positional_"),
            help_key="tr.positional_help",
        ),
        "norm_first": controls.toggle(
            "tr.pre_ln", key="tr_pre_ln", value=d.norm_first, help_key="tr.pre_ln_help"
        ),
    }


def _attention_controls(d: TransformerConfig) -> dict[str, Any]:
    """The attention group (scale and its divisor, dropout, mask, head diversity)."""
    scale = controls.radio(
        "tr.scale",
        key="tr_scale",
        options=SCALE_MODES,
        index=SCALE_MODES.index(d.scale),
        format_func=_labels("tr.scale_"),
        help_key="tr.scale_help",
    )
    return {
        "scale": scale,
        "custom_divisor": controls.number_input(
            "tr.divisor",
            key="tr_divisor",
            min_value=0.1,
            max_value=100.0,
            value=d.custom_divisor,
            step=0.5,
            help_key="tr.divisor_help",
            disabled=scale != CUSTOM_SCALE,  # only the custom scale divides by it
        ),
        "attn_dropout": controls.slider(
            "tr.dropout",
            key="tr_dropout",
            min_value=0.0,
            max_value=0.5,
            value=d.attn_dropout,
            step=0.05,
            help_key="tr.dropout_help",
        ),
        "causal": controls.toggle("tr.causal", key="tr_causal", value=d.causal, help_key="tr.causal_help"),
        "diversity_weight": controls.select_slider(
            "tr.diversity",
            key="tr_diversity",
            options=DIVERSITY_OPTIONS,
            value=d.diversity_weight,
            format_func=_number,
            help_key="tr.diversity_help",
        ),
    }


def _training_controls(d: TransformerConfig) -> dict[str, Any]:
    """The training group (learning rate, batch, epochs, seed)."""
    return {
        "learning_rate": controls.select_slider(
            "tr.lr", key="tr_lr", options=LR_OPTIONS, value=d.learning_rate, format_func=_number
        ),
        "batch_size": controls.select_slider(
            "tr.batch", key="tr_batch", options=BATCH_OPTIONS, value=d.batch_size
        ),
        "epochs": controls.slider(
            "tr.epochs",
            key="tr_epochs",
            min_value=1,
            max_value=MAX_EPOCHS_CONTROL,
            value=d.epochs,
            step=1,
        ),
        "seed": controls.seed("tr_seed", value=d.seed),
    }


def _data_controls(d: TransformerConfig) -> dict[str, Any]:
    """The data group (sequence length, training windows, momentum of the walks)."""
    return {
        "seq_len": controls.select_slider(
            "tr.seq_len",
            key="tr_seq_len",
            options=SEQ_LEN_OPTIONS,
            value=d.seq_len,
            help_key="tr.seq_len_help",
        ),
        "n_train": controls.select_slider(
            "tr.n_train",
            key="tr_n_train",
            options=TRAIN_OPTIONS,
            value=d.n_train,
            help_key="tr.n_train_help",
        ),
        "momentum": controls.slider(
            "tr.momentum",
            key="tr_momentum",
            min_value=0.0,
            max_value=0.95,
            value=d.momentum,
            step=0.05,
            help_key="tr.momentum_help",
        ),
    }


def make_config(values: dict[str, Any]) -> TransformerConfig:
    """The config from control values (other fields keep their defaults).

    Raises:
        ValueError: from :class:`TransformerConfig` when the combination is invalid or too big.
    """
    cleaned = dict(values)
    for name in ("d_model", "n_heads", "n_layers", "batch_size", "epochs", "seed", "seq_len", "n_train"):
        cleaned[name] = int(cleaned[name])
    for name in ("custom_divisor", "attn_dropout", "diversity_weight", "learning_rate", "momentum"):
        cleaned[name] = float(cleaned[name])
    return TransformerConfig(**cleaned)


def preset_matches(config: TransformerConfig) -> bool:
    """True when the controls still hold exactly the selected preset's values."""
    name = st.session_state.get(PRESET_KEY)
    return name in PRESETS and preset_config(name) == config


@caching.data(max_entries=PREVIEW_CACHE_ENTRIES)
def preview(config: TransformerConfig) -> Preview:
    """:func:`core.training.preview`, cached per config for every session (a few ms to build)."""
    return core_preview(config)


# --------------------------------------------------------------------------------------------
# Run state and buttons
# --------------------------------------------------------------------------------------------


@dataclass
class LiveState:
    """Everything about this session's run, in one mutable object kept in ``st.session_state``.

    Plain attributes rather than separate session-state keys, for a reason: Streamlit stops an
    interrupted script by raising at its next Streamlit call, and raises *again* at every later
    one. The interrupted thread's clean-up (release the lock, add the wall time) must therefore
    not touch Streamlit; it updates this object instead.

    Attributes:
        run: the current :class:`TrainingRun` (trained in place), or None.
        mode: idle, running, step, paused or done.
        start_new: set by Train/Step: this script run may replace an incompatible run.
        wall: wall seconds spent in ``train`` for this run, page updates included.
        findings: (key, :class:`Findings`) of the run's latest state.
        notice: an i18n key to show once.
        lock: held while a thread trains or measures the run. With Streamlit's fast reruns a new
            script run starts while the interrupted one is still finishing its batch; the lock
            keeps the two from touching the model at once.
        history: rows of this session's recent runs (at most ``HISTORY_ROWS``).
    """

    run: TrainingRun | None = None
    mode: str = "idle"
    start_new: bool = False
    wall: float = 0.0
    findings: tuple[tuple[int, int], Findings] | None = None
    notice: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    history: list[dict[str, Any]] = field(default_factory=list)


def live() -> LiveState:
    """This session's :class:`LiveState` (created on first use)."""
    state = st.session_state.get(LIVE)
    if not isinstance(state, LiveState):
        state = LiveState()
        st.session_state[LIVE] = state
    return state


def current_run() -> TrainingRun | None:
    """This session's run, or None."""
    return live().run


def mode() -> str:
    """idle, running, step, paused or done."""
    return live().mode


def on_page_start() -> None:
    """Call first on the page: settle the run, and bring a run left by leaving the page back paused.

    Streamlit drops the state of widgets a finished script run did not draw, so the training
    page's own buttons are missing from session state exactly when another page ran since.
    (A button press or any control on this page keeps them.)
    """
    state = live()
    if state.mode in ("running", "step") and SENTINEL not in st.session_state:
        state.mode = "paused"
    # An interrupted run may still be finishing its batch in the old script thread (fast
    # reruns start this run at once): wait for it, so the page shows the run as it will stay.
    with _holding(state.lock, lambda: st.session_state.get(LIVE)):
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
    with state.lock:  # an interrupted thread may still be finishing its batch
        state.run, state.findings, state.notice, state.wall = None, None, None, 0.0
        state.mode = "idle"
    st.session_state.pop(REPLAY_MAX, None)


def render_buttons(enabled: bool) -> None:
    """Train / Pause / Step one epoch / Reset (keyed; they act through callbacks)."""
    busy = mode() in ("running", "step")
    cols = st.columns(4)
    cols[0].button(
        t("tr.btn_train"),
        key="tr_btn_train",
        icon=":material/play_arrow:",
        on_click=_on_train,
        disabled=not enabled or busy,
        type="primary",
        width="stretch",
    )
    cols[1].button(
        t("tr.btn_pause"),
        key="tr_btn_pause",
        icon=":material/pause:",
        on_click=_on_pause,
        disabled=not busy,
        width="stretch",
    )
    cols[2].button(
        t("tr.btn_step"),
        key="tr_btn_step",
        icon=":material/skip_next:",
        on_click=_on_step,
        disabled=not enabled or busy,
        width="stretch",
    )
    cols[3].button(
        t("tr.btn_reset"), key=SENTINEL, icon=":material/restart_alt:", on_click=_on_reset, width="stretch"
    )


# --------------------------------------------------------------------------------------------
# The server-wide slot limiter
# --------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=4)
def training_slots(capacity: int) -> threading.BoundedSemaphore:
    """The server-wide semaphore: at most ``capacity`` trainings at once (one per capacity value)."""
    return threading.BoundedSemaphore(capacity)


@contextmanager
def training_slot(on_wait: Callable[[], None], capacity: int = MAX_CONCURRENT) -> Iterator[None]:
    """Hold one of the server's training slots for the block.

    While none is free, ``on_wait`` is called every ``SLOT_POLL_S`` seconds; it must touch
    Streamlit (show the "waiting" message), which is also where a Pause press or leaving the page
    interrupts the wait.
    """
    slots = training_slots(capacity)
    while not slots.acquire(timeout=SLOT_POLL_S):
        on_wait()
    try:
        yield
    finally:
        slots.release()


@contextmanager
def _holding(lock: threading.Lock, on_wait: Callable[[], None]) -> Iterator[None]:
    """Hold ``lock``, calling ``on_wait`` (a Streamlit call) while another thread has it."""
    while not lock.acquire(timeout=0.05):
        on_wait()
    try:
        yield
    finally:
        lock.release()


# --------------------------------------------------------------------------------------------
# The live run
# --------------------------------------------------------------------------------------------


def _should_stop() -> bool:
    # Reading session state is a Streamlit call: when the user has acted (a button, another
    # control, another page, closing the tab) Streamlit raises its stop signal right here,
    # between two batches. The returned value only matters outside a Streamlit run.
    return st.session_state[LIVE].mode not in ("running", "step")


def train_live(
    config: TransformerConfig,
    *,
    on_epoch: Callable[[TrainingRun], None],
    on_wait: Callable[[], None],
) -> TrainingRun | None:
    """Train the session's run (starting it when needed) inside this script run.

    ``on_epoch`` redraws the page's live charts; ``on_wait`` shows the "waiting for a free slot"
    message. Returns when the run is finished, one epoch was stepped, or the mode changed, with
    the mode updated (the caller then reruns the page). When the user acts, Streamlit's stop
    signal is raised inside instead; the slot, the lock and the wall time are still looked after.
    """
    state = live()
    may_start_new, state.start_new = state.start_new, False
    stepping = state.mode == "step"
    with _holding(state.lock, lambda: st.session_state.get(LIVE)), training_slot(on_wait):
        run = state.run
        if run is not None and not run.config.same_run_as(config):
            if not may_start_new:
                # A control changed while training: keep the run, wait for an explicit press.
                state.mode = "paused"
                return run
            run = None
        if run is None:
            run = start_run(config)
            state.run, state.wall, state.findings = run, 0.0, None
        if run.finished and config.epochs <= run.epochs_done and not stepping:
            state.notice, state.mode = "tr.notice_finished", "done"
            return run
        target = run.epochs_done + 1 if stepping else None
        if stepping and target > config.epochs:
            config = config.replace(epochs=target)  # stepping past the planned epochs extends the run
        started = time.perf_counter()
        try:
            train(config, on_epoch=on_epoch, should_stop=_should_stop, resume=run, until_epoch=target)
        finally:
            state.wall += time.perf_counter() - started  # no Streamlit call here (see LiveState)
        state.mode = "done" if run.finished else "paused"
    return run


def check_mode(config: TransformerConfig | None) -> str:
    """The mode to act on: a run cannot go on while the controls hold an invalid config."""
    state = live()
    if config is None and state.mode in ("running", "step"):
        state.mode = "paused"
    return state.mode


def follow_latest_epoch(run: TrainingRun) -> None:
    """Move the replay slider to the newest snapshot whenever a new epoch has finished.

    Call before the slider is drawn; the learner's own choice is kept until training moves on.
    """
    newest = run.snapshot_epochs[-1]
    if st.session_state.get(REPLAY_MAX) != (id(run), newest):
        st.session_state[REPLAY_MAX] = (id(run), newest)
        st.session_state[REPLAY_KEY] = newest


def replay_slider(run: TrainingRun) -> int:
    """The bound slider over the epochs whose attention snapshot is kept (0 = before training).

    Drawn with ``st.select_slider`` directly: when :func:`follow_latest_epoch` has set its value
    through session state, passing a default as well would make Streamlit log a warning.
    """
    follow_latest_epoch(run)
    options = run.snapshot_epochs
    value = None if REPLAY_KEY in st.session_state else options[-1]
    return int(
        st.select_slider(
            t("tr.replay"),
            options=options,
            value=value,
            key=REPLAY_KEY,
            help=t("tr.replay_help"),
            bind=controls.BIND,
        )
    )


def config_error_key(values: dict[str, Any]) -> str:
    """The i18n key that explains why ``values`` make no valid config."""
    if int(values["d_model"]) % int(values["n_heads"]) != 0:
        return "tr.error_heads"
    return "tr.error_too_big"


def findings(run: TrainingRun) -> Findings:
    """The run's measured findings, computed once per state of the run (kept in session state)."""
    state = live()
    key = (id(run), run.batches_done)
    if state.findings is not None and state.findings[0] == key:
        return state.findings[1]
    with _holding(state.lock, lambda: st.session_state.get(LIVE)):
        value = measure_findings(run)
    state.findings = (key, value)
    _record_history(state, run, value)
    return value


def _record_history(state: LiveState, run: TrainingRun, found: Findings) -> None:
    diag = {d.id: d.value for d in found.diagnostics}
    row = {
        "run": id(run),
        "preset": st.session_state.get(PRESET_KEY) if preset_matches(run.config) else None,
        "config": asdict(run.config),
        "epochs": run.epochs_done,
        "val": found.val_loss,
        "optimum": run.baselines.optimum,
        "last_value": run.baselines.last_value,
        "prefix": found.prefix_error,
        "rollout": found.rollout.model,
        "shuffle": found.shuffle.ratio,
        "recent3": found.attention.recent3,
        "oscillation": diag["oscillation"],
        "redundancy": diag["redundancy"],
        "seconds": run.seconds,
    }
    state.history[:] = [r for r in state.history if r["run"] != row["run"]] + [row]
    del state.history[:-HISTORY_ROWS]


def history() -> list[dict[str, Any]]:
    """This session's recent runs (at most ``HISTORY_ROWS``), oldest first."""
    return list(live().history)


def wall_seconds() -> float:
    """Wall-clock seconds spent in ``train`` for the current run, page updates included."""
    return live().wall


def pop_notice() -> str | None:
    """An i18n key of a one-off message left by the previous run, if any."""
    state = live()
    notice, state.notice = state.notice, None
    return notice


def significant(value: float, digits: int = 3) -> str:
    """A number for the runs table: ``digits`` significant digits, no padding, no exponent
    (38 -> "38", 1.4069 -> "1.41", 0.83185 -> "0.832", 1234.5 -> "1,235"); NaN/inf as Python
    writes them. ``st.table`` would print every float column with four decimals ("38.0000")."""
    x = float(value)
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 10**digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def history_table() -> list[dict[str, Any]]:
    """This session's runs as table rows with translated column names (newest first): integers
    as integers, other numbers with 3 significant digits (:func:`significant`)."""
    rows = []
    for r in reversed(history()):
        cfg = r["config"]
        name = t(f"tr.preset_{r['preset']}") if r["preset"] else t("tr.history_custom")
        rows.append(
            {
                t("tr.hist_run"): name,
                t("tr.hist_setup"): t(
                    "tr.hist_setup_value",
                    heads=cfg["n_heads"],
                    pos=t(f"tr.positional_{cfg['positional']}"),
                    scale=t(f"tr.scale_{cfg['scale']}"),
                    causal=t("common.yes") if cfg["causal"] else t("common.no"),
                ),
                t("tr.hist_epochs"): str(int(r["epochs"])),
                t("tr.hist_val"): significant(r["val"] / r["optimum"]),
                t("tr.hist_prefix"): significant(r["prefix"] / r["optimum"]),
                t("tr.hist_shuffle"): significant(r["shuffle"]),
                t("tr.hist_recent3"): f"{r['recent3']:.0%}",
                t("tr.hist_oscillation"): significant(r["oscillation"], 2),
                t("tr.hist_redundancy"): significant(r["redundancy"]),
                t("tr.hist_seconds"): significant(r["seconds"], 2),
            }
        )
    return rows
