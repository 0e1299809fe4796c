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
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from core.attention import SCALE_MODES
from core.lessons import training as lesson
from core.lessons.training import PRESETS, Findings, ShuffleTest, measure_findings, preset_config
from core.positional import POSITIONAL_KINDS
from core.random_walks import Baselines
from core.training import Preview, TrainingRun, start_run, train
from core.training import preview as core_preview
from core.transformer import TransformerConfig
from figures import training as ftr
from figures.common import Labels
from ui import caching, controls, questions
from ui.i18n import LANGUAGES, current_language, load_catalogue, t
from ui.layout import cached, show_figure
from ui.live_run import ConfigChoice, LiveRun, LiveState, Loop, RedrawClock

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
        "d_model": controls.option_slider("tr.d_model", "tr_d_model", D_MODEL_OPTIONS, d.d_model),
        "n_heads": controls.option_slider("tr.heads", "tr_heads", HEAD_OPTIONS, d.n_heads),
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
        "diversity_weight": controls.option_slider(
            "tr.diversity", "tr_diversity", DIVERSITY_OPTIONS, d.diversity_weight, _number
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
        "seq_len": controls.option_slider("tr.seq_len", "tr_seq_len", SEQ_LEN_OPTIONS, d.seq_len),
        "n_train": controls.option_slider("tr.n_train", "tr_n_train", TRAIN_OPTIONS, d.n_train),
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


# The page's figure builders, each cached on its inputs (``ui.layout.cached``: same
# signature as the builder, one bounded cache per builder shared by every session).
prediction_plot = cached(ftr.prediction_plot)
walks_plot = cached(ftr.walks_plot)
distance_bars = cached(ftr.distance_bars)
diagnostics_table = cached(ftr.diagnostics_table)


#: The baselines drawn on the loss chart (``core.random_walks.Baselines`` fields).
BASELINE_IDS = ("mean", "last_value", "optimum")
#: While training, charts are redrawn after an epoch only if this long has passed since the last
#: redraw: fast epochs would otherwise queue more chart renders than a browser can keep up with.
CHART_INTERVAL_S = 0.7
#: Up to this many heads the attention maps sit beside the loss chart; more go below it.
WIDE_HEADS = 4


#: The live charts' builders, cached on their inputs (a still frame redrawn costs no build).
loss_curves = cached(ftr.loss_curves)
attention_heads = cached(ftr.attention_heads)


class LiveView:
    """The placeholders that change while a model trains, and how to draw a run into them."""

    def __init__(self, wide_heads: bool) -> None:
        self.progress = st.empty()
        self.status = st.empty()
        if wide_heads:
            self.loss, self.attention = st.empty(), st.empty()
        else:
            left, right = st.columns(2)
            self.loss, self.attention = left.empty(), right.empty()
        self.draws = 0
        self.clock = RedrawClock(CHART_INTERVAL_S, spacing=0, wait_first=False)

    def draw(self, run: TrainingRun, *, epoch: int | None = None, layer: int = 0, live: bool = False) -> None:
        """Loss curves, the attention maps of ``epoch`` (default: the latest) and the status line."""
        self.draws += 1
        epoch = run.snapshot_epochs[-1] if epoch is None or epoch not in run.snapshots else epoch
        fraction = min(1.0, run.epochs_done / run.config.epochs)
        self.progress.progress(fraction, text=t("tr.progress", done=run.epochs_done, total=run.config.epochs))
        self.status.caption(_status_line(run, live=live))
        if live and not self.clock.due():
            return  # progress and status every epoch; charts at most every CHART_INTERVAL_S
        started = time.perf_counter()
        self._draw_loss(
            run.config,
            run.baselines,
            look="tr.loss_look",
            train_loss=run.train_loss,
            val_loss=run.val_loss,
            batch_loss=run.batch_loss,
            batches_per_epoch=run.batches_per_epoch,
        )
        look = "tr.attention_look_live" if live else "tr.attention_look"
        self._draw_attention(run.snapshots[epoch][layer], epoch=epoch, layer=layer, look=look)
        self.clock.done(started)

    def draw_preview(self, shown: Preview) -> None:
        """Before any run: empty loss axes with the baselines, and the untrained model's attention
        (once the question about it is answered)."""
        self.draws += 1
        self._draw_loss(shown.config, shown.baselines, look="tr.loss_look_preview")
        draw = partial(
            self._draw_attention, shown.attention[0], epoch=0, layer=0, look="tr.attention_look_untrained"
        )
        questions.reveal("tr_query0", draw, where=self.attention)

    def _draw_loss(
        self,
        config: TransformerConfig,
        baselines: Baselines,
        *,
        look: str,
        train_loss: list[float] = (),
        val_loss: list[float] = (),
        batch_loss: list[float] | None = None,
        batches_per_epoch: int | None = None,
    ) -> None:
        """The loss curves against the baselines (empty curves before any run)."""
        loss_fig = loss_curves(
            train_loss,
            val_loss,
            {k: getattr(baselines, k) for k in BASELINE_IDS},
            labels=tr_labels(
                t("tr.loss_title"),
                "tr.axis_epoch",
                "tr.axis_loss",
                train="tr.legend_train",
                val="tr.legend_val",
                batch="tr.legend_batch",
                **{k: f"tr.legend_{k}" for k in BASELINE_IDS},
            ),
            max_epochs=config.epochs,
            batch_loss=batch_loss,
            batches_per_epoch=batches_per_epoch,
        )
        with self.loss.container():
            show_figure(loss_fig, key=f"tr_loss_fig_{self.draws}", look_for_key=look)

    def _draw_attention(self, weights: Any, *, epoch: int, layer: int, look: str) -> None:
        """One layer's attention maps, ``weights`` (H, T, T), after ``epoch`` (0: untrained)."""
        H = weights.shape[0]
        half_width = H <= WIDE_HEADS  # beside the loss chart: 3-4 heads in a 2 x 2 grid stay square
        attention_fig = attention_heads(
            weights,
            cols=(2 if H > 2 else H) if half_width else None,
            row_height=210 if half_width and H > 2 else None,
            head_titles=[t("tr.head", h=h + 1) for h in range(H)],
            labels=Labels.of(
                title=t("tr.attention_title", epoch=epoch, layer=layer + 1),
                x=t("tr.axis_key"),
                y=t("tr.axis_query"),
                z=t("tr.axis_weight"),
            ),
        )
        with self.attention.container():
            show_figure(attention_fig, key=f"tr_attention_fig_{self.draws}", look_for_key=look)


def _status_line(run: TrainingRun, *, live: bool) -> str:
    """Epochs, steps, speed and the latest losses against the baselines (paused mid-epoch: said first).

    Before the first epoch ends there is no speed nor training loss to show: the line says so.
    """
    config = run.config
    status = t(
        "tr.status" if run.epochs_done else "tr.status_no_epoch",
        epoch=run.epochs_done,
        total=config.epochs,
        steps=run.batches_done,
        rate=run.epochs_done / run.seconds if run.seconds > 0 else 0.0,
        train=run.train_loss[-1] if run.train_loss else float("nan"),
        val=run.val_loss[-1],
        last_value=run.baselines.last_value,
        optimum=run.baselines.optimum,
    )
    if not live and run.cursor is not None:  # paused in the middle of an epoch
        status = t("tr.status_paused", epoch=run.epochs_done + 1, steps=run.batches_done) + " · " + status
    return status


def tr_labels(title: str, x_key: str, y_key: str, **name_keys: str) -> Labels:
    """A chart's words: its (translated) title, its axes' and legend names' i18n keys translated."""
    return Labels.of(title=title, x=t(x_key), y=t(y_key), **{role: t(key) for role, key in name_keys.items()})


# The page's charts from its results, labelled in the page's language (builders cached above).
def walks_chart(shown: Preview) -> go.Figure:
    """A few of the run's training walks and one example with its next value, before any run."""
    return walks_plot(
        shown.walks,
        shown.example,
        labels=tr_labels(
            t("tr.walks_title", k=len(shown.walks), seed=shown.config.seed),
            "tr.axis_position",
            "tr.axis_value",
            train="tr.legend_walks",
            example="tr.legend_example",
            target="tr.legend_next",
        ),
    )


def prediction_chart(found: Findings) -> go.Figure:
    """One held-out walk: the truth, the one-step predictions and the rollout after the context."""
    return prediction_plot(
        found.example,
        found.example_one_step,
        found.example_rollout,
        found.context,
        labels=tr_labels(
            t("tr.prediction_fig_title"),
            "tr.axis_position",
            "tr.axis_value",
            **{k: f"tr.legend_{k}" for k in ("truth", "one_step", "rollout", "context")},
        ),
    )


def distance_chart(found: Findings) -> go.Figure:
    """The model's attention share by distance, against uniform attention."""
    return distance_bars(
        found.distances,
        found.shares,
        found.uniform,
        labels=tr_labels(
            t("tr.distance_fig_title"),
            "tr.axis_distance",
            "tr.axis_share",
            model="tr.legend_model_attention",
            uniform="tr.legend_uniform",
        ),
    )


def diagnostics_chart(found: Findings) -> go.Figure:
    """The diagnostics as a table: status, symptom, what was measured, the remedy."""
    rows = [
        {
            "level": d.level,
            "status": t(f"tr.level_{d.level}"),
            "symptom": t(f"tr.diag_{d.id}"),
            "measure": t(f"tr.diag_{d.id}_measure", value=d.value, amber=d.amber, red=d.red),
            "remedy": t(f"tr.diag_{d.id}_remedy"),
        }
        for d in found.diagnostics
    ]
    headers = {key: t(f"tr.col_{key}") for key in ("status", "symptom", "measure", "remedy")}
    return diagnostics_table(rows, headers=headers)


def replay_controls(run: TrainingRun) -> tuple[int | None, int]:
    """The replay slider (epoch; None before the first epoch) and, with layers, the layer (0-based)."""
    layer, epoch = 0, None
    with st.container(border=True):
        st.markdown(t("tr.replay_title"))
        cols = st.columns([3, 1])
        if run.epochs_done >= 1:
            with cols[0]:
                epoch = replay_slider(run)
        if run.config.n_layers > 1:
            with cols[1]:
                layer = (
                    int(
                        controls.radio(
                            "tr.layer",
                            key="tr_layer",
                            options=list(range(1, run.config.n_layers + 1)),
                            format_func=str,
                        )
                    )
                    - 1
                )
    return epoch, layer


def say(verdict: lesson.Verdict) -> None:
    """A verdict sentence, quoting the run's own numbers."""
    st.markdown(t(verdict.key, **verdict.values))


def where_results(run: TrainingRun, found: Findings) -> None:
    """Where the attention goes, by distance, with the shares the question asked about."""
    col_fig, col_numbers = st.columns([3, 2])
    with col_fig:
        fig = distance_chart(found)
        look = "tr.distance_look" if run.config.causal else "tr.distance_look_nomask"
        show_figure(fig, key="tr_distance_fig", look_for_key=look)
    with col_numbers:
        a = found.attention
        if run.config.causal:
            st.metric(t("tr.metric_recent3"), f"{a.recent3:.0%}", help=t("tr.metric_recent3_help"))
            st.metric(t("tr.metric_recent3_uniform"), f"{a.recent3_uniform:.0%}")
        else:
            st.metric(t("tr.metric_ahead"), f"{a.ahead:.0%}", help=t("tr.metric_ahead_help"))
            st.metric(t("tr.metric_future"), f"{a.future:.0%}", help=t("tr.metric_future_help"))
        st.metric(t("tr.metric_support"), f"{a.support:.1f}", help=t("tr.metric_support_help"))
        say(lesson.attention_verdict(a, causal=run.config.causal))


def shuffle_results(run: TrainingRun, s: ShuffleTest) -> None:
    """The loss in order and shuffled, and what it says."""
    cols = st.columns(3)
    cols[0].metric(t("tr.metric_ordered"), f"{s.ordered:.3g}")
    cols[1].metric(t("tr.metric_shuffled"), f"{s.shuffled:.3g}")
    cols[2].metric(t("tr.metric_ratio"), f"×{s.ratio:.2f}")
    say(lesson.shuffle_verdict(s, positional=run.config.positional != "none"))
