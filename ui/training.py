"""Streamlit side of the training page: controls <-> config, presets, previews, findings, runs table.

The live run (Train / Pause / One epoch / Reset, the session's run trained in place inside the
script run, the server's training slots) is :data:`LIVE`, a :class:`ui.live_run.LiveRun` over
``core.training.train``; ``ui.live_run`` explains its execution model. This module adds what the
training page keeps about its run: the measured findings and the history of runs
(:class:`TrainingState`).

Session state: ``tr_live`` (the :class:`TrainingState`), ``tr_replay_max`` (the replay slider's
follow-the-newest-epoch mark) and the page's widgets, all prefixed ``tr_``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
from ui.live_run import ConfigChoice, LiveRun, LiveState, Loop

#: Rows kept in the per-session history of runs.
HISTORY_ROWS = 8
#: Configs whose preview stays cached per server process (each at most ~1 MB, usually ~20 kB).
PREVIEW_CACHE_ENTRIES = 32

PRESET_KEY = "tr_preset"
REPLAY_KEY, REPLAY_MAX = "tr_replay", "tr_replay_max"

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


def render_controls() -> ConfigChoice[TransformerConfig]:
    """Draw the grouped config controls; return the config they make (or why they make none:
    the config's message and :func:`config_error_key`)."""
    return ConfigChoice.of(_draw_controls(), make_config, config_error_key)


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
# The live run (ui.live_run) and what this page keeps about it
# --------------------------------------------------------------------------------------------


@dataclass
class TrainingState(LiveState[TrainingRun]):
    """The session's live run (:class:`ui.live_run.LiveState`) and what the page measured on it.

    Attributes:
        findings: (key, :class:`Findings`) of the run's latest state.
        history: rows of this session's recent runs (at most ``HISTORY_ROWS``); kept over Reset.
    """

    findings: tuple[tuple[int, int], Findings] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)

    def begin(self, run: TrainingRun) -> None:
        super().begin(run)
        self.findings = None

    def forget(self) -> None:
        super().forget()
        self.findings = None


def _forget_replay() -> None:
    """After Reset: the replay slider follows the next run's newest epoch again."""
    st.session_state.pop(REPLAY_MAX, None)


#: The page's live run: Train / Pause / One epoch / Reset, in the server's training slots.
LIVE: LiveRun[TransformerConfig, TrainingRun] = LiveRun(
    "tr", Loop(start=start_run, train=train, unit="epoch"), state=TrainingState, after_reset=_forget_replay
)


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
    state = LIVE.state()
    key = (id(run), run.batches_done)
    if state.findings is not None and state.findings[0] == key:
        return state.findings[1]
    with LIVE.holding():  # an interrupted thread may still be finishing its batch
        value = measure_findings(run)
    state.findings = (key, value)
    _record_history(state, run, value)
    return value


def _record_history(state: TrainingState, run: TrainingRun, found: Findings) -> None:
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
    return list(LIVE.state().history)


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
