"""Streamlit side of the induction-heads page: controls <-> config, the live run, the shipped
default run, and the model's readings (maps, ablation, kernel view, typed text) kept per run.

The live run is :data:`LIVE`, a :class:`ui.live_run.LiveRun` over
``core.induction_training.train_induction``. Before anything is trained the page reads the default
run shipped in ``assets/precomputed/induction_default.npz`` (``core.lessons.induction_heads``), so
it teaches on its first view. The readings of a model (an ablation, the kernel view: 0.5-3 CPU s)
are kept once per run and step: in the server's cache for the shipped model, in this session for
its own run (a model trained in place cannot key a cache).

Session state: ``ih_live`` (the :class:`ui.live_run.LiveState`), ``ih_reads`` (this session's
readings), ``ih_controls`` (1-layer controls trained on request) and the page's widgets, all
prefixed ``ih_``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import plotly.graph_objects as go
import streamlit as st

from core import induction_training as training
from core.induction import InductionConfig, InductionTransformer
from core.induction_training import EvalPoint, InductionRun
from core.lessons import induction_heads as lesson
from figures import induction_heads as fih
from figures.common import Labels
from ui import caching, controls, questions
from ui.i18n import t
from ui.layout import cached, show_figure
from ui.live_run import ConfigChoice, LiveRun, Loop, RedrawClock, training_slot

#: Live charts: at most every 0.7 s, and so that redraws take at most an eleventh of the time.
CHART_INTERVAL_S, SPACING = 0.7, 10.0
#: Steps the "Step" button trains.
STEP_CHUNK = 20

PERIOD_OPTIONS = [4, 6, 8, 12, 16]
LENGTH_OPTIONS = [16, 24, 32, 48, 64]
VOCAB_OPTIONS = [8, 16, 32, 64, 128]
LAYER_OPTIONS = [1, 2, 3]
STEPS_OPTIONS = [100, 200, 300, 400, 600, 1000, 1500]
#: The shortest period of every config: the segment is p in [min(4, longest), longest] tokens.
MIN_PERIOD = 4
#: A typed text that shows the copy: a segment written twice.
DEFAULT_TEXT = "SOFTMAX SOFTMAX"
#: The accuracy must move by more than this for the blur question's "it moves" answers.
MOVES_BY = 0.05

T_ = TypeVar("T_")


def render_controls() -> ConfigChoice[InductionConfig]:
    """Draw the page-wide controls (task, model, training); the config they make, or its message."""
    return ConfigChoice.of(_draw_controls(), make_config)


def _draw_controls() -> dict[str, Any]:
    d = InductionConfig()
    col_task, col_model = st.columns(2)
    with col_task.container(border=True):
        st.markdown(t("ih.group_task"))
        values = {
            "max_period": controls.select_slider(
                "ih.period",
                key="ih_period",
                options=PERIOD_OPTIONS,
                value=d.max_period,
                help_key="ih.period_help",
            ),
            "seq_len": controls.select_slider(
                "ih.length", key="ih_len", options=LENGTH_OPTIONS, value=d.seq_len, help_key="ih.length_help"
            ),
            "vocab": controls.select_slider(
                "ih.vocab", key="ih_vocab", options=VOCAB_OPTIONS, value=d.vocab, help_key="ih.vocab_help"
            ),
        }
    with col_model.container(border=True):
        st.markdown(t("ih.group_model"))
        values |= {
            "n_layers": controls.radio(
                "ih.layers", key="ih_layers", options=LAYER_OPTIONS, index=LAYER_OPTIONS.index(d.n_layers),
                help_key="ih.layers_help",
            ),
            "steps": controls.select_slider(
                "ih.steps", key="ih_steps", options=STEPS_OPTIONS, value=d.steps, help_key="ih.steps_help"
            ),
            "seed": controls.seed("ih_seed", value=d.seed),
        }  # fmt: skip
    return values


def make_config(values: dict[str, Any]) -> InductionConfig:
    """The config from control values (other fields keep their defaults).

    Raises:
        ValueError: from :class:`InductionConfig` when the values do not fit together.
    """
    longest = int(values["max_period"])
    ints = {k: int(values[k]) for k in ("seq_len", "vocab", "n_layers", "steps", "seed")}
    return InductionConfig(min_period=min(MIN_PERIOD, longest), max_period=longest, **ints)


# --------------------------------------------------------------------------------------------
# The live run and the run on screen
# --------------------------------------------------------------------------------------------

#: The page's live run: Train / Pause / Step (+``STEP_CHUNK``) / Reset, in the server's training slots.
LIVE: LiveRun[InductionConfig, InductionRun] = LiveRun(
    "ih",
    Loop(start=training.start_induction, train=training.train_induction, unit="step", step=STEP_CHUNK),
)


@caching.resource(max_entries=1)
def shipped() -> lesson.DefaultRuns:
    """The default run and its 1-layer control, trained ahead (read once per server process)."""
    return lesson.load_default_runs()


@dataclass(frozen=True)
class Shown:
    """The run the page reads: the session's own, or the shipped default before any is trained.

    Attributes:
        config: its config; model: its model (trained in place while it trains).
        history: its measurements; control: the 1-layer control's (empty when not trained).
        default: True for the shipped default run.
        steps_done: the optimiser steps behind ``model``.
    """

    config: InductionConfig
    model: InductionTransformer
    history: tuple[EvalPoint, ...]
    control: tuple[EvalPoint, ...]
    default: bool
    steps_done: int


def shown(run: InductionRun | None) -> Shown:
    """The session's run (with its control when one is known), or the shipped default."""
    if run is None:
        d = shipped()
        return Shown(d.config, d.model, d.history, d.control_history, True, d.config.steps)
    return Shown(run.config, run.model, tuple(run.history), known_control(run.config), False, run.steps_done)


def known_control(config: InductionConfig) -> tuple[EvalPoint, ...]:
    """The 1-layer control of ``config`` when it is known (shipped, or trained on request)."""
    d = shipped()
    if config.n_layers == 1:
        return ()
    if config.same_run_as(d.config) and config.steps <= d.config.steps:
        return tuple(p for p in d.control_history if p.step <= config.steps)
    return st.session_state.get("ih_controls", {}).get(config, ())


@caching.data(max_entries=8)
def _train_control(config: InductionConfig) -> tuple[EvalPoint, ...]:
    return tuple(training.train_induction(config.control).history)


def train_control(config: InductionConfig, on_wait: Callable[[], None]) -> None:
    """Train ``config``'s 1-layer control headless (a training slot held; cached per config)."""
    with training_slot(on_wait):
        history = _train_control(config)
    st.session_state.setdefault("ih_controls", {})[config] = history


def _want_control() -> None:
    st.session_state["ih_want_control"] = True


def control_button() -> bool:
    """The "train the 1-layer control too" button; True once in the script run after its press (a
    session-state flag set in its callback, so the request survives any rerun before it is read)."""
    st.button(t("ih.btn_control"), key="ih_btn_control", icon=":material/science:", on_click=_want_control)
    return bool(st.session_state.pop("ih_want_control", False))


def _read(view: Shown, name: str, compute: Callable[[], T_]) -> T_:
    """``compute()`` once per run and step: shared for the shipped model, per session otherwise."""
    store = _shared_reads() if view.default else st.session_state.setdefault("ih_reads", {})
    stamp = (view.config, view.steps_done)
    if store.get("stamp") != stamp:
        store.clear()
        store["stamp"] = stamp
    if name not in store:
        store[name] = compute()
    return store[name]


def _peek(view: Shown, name: str) -> Any:
    """What :func:`_read` keeps under ``name`` for this run and step, or None when not read yet."""
    store = _shared_reads() if view.default else st.session_state.get("ih_reads", {})
    return store.get(name) if store.get("stamp") == (view.config, view.steps_done) else None


@caching.resource(max_entries=1)
def _shared_reads() -> dict[str, Any]:
    return {}


def sequence_view(view: Shown, index: int) -> lesson.SequenceView:
    """Held-out sequence ``index`` and every head's map on it (kept per run)."""
    return _read(view, f"seq{index}", lambda: lesson.sequence_view(view.model, index))


def ablation(view: Shown) -> lesson.Ablation:
    """Every head switched off in turn (kept per run)."""
    return _read(view, "ablation", lambda: lesson.ablation(view.model))


def kernel_view(view: Shown) -> lesson.KernelView:
    """The induction head as Nadaraya-Watson over tokens, at every QK scale (kept per run)."""
    return _read(view, "kernel", lambda: lesson.kernel_view(view.model))


def _blur_accuracies(view: Shown, scale: float) -> tuple[float, float]:
    """(accuracy at ``scale``, accuracy as trained) of the induction head's layer's QK scale."""
    kv = _peek(view, "kernel")
    if kv is not None:
        scales = [float(s) for s in kv.scales]
        return float(kv.accuracy[scales.index(scale)]), float(kv.accuracy[scales.index(1.0)])
    at, trained = lesson.scale_accuracy(view.model, (scale, 1.0))
    return float(at), float(trained)


def predict_text(view: Shown, text: str) -> lesson.TextPrediction:
    """The model's guesses on a typed text.

    Raises:
        ValueError: when the text does not fit the model (too long, too many characters).
    """
    return _read(
        view, f"text:{text}", lambda: lesson.predict_text(view.model, lesson.encode_text(text, view.config))
    )


# --------------------------------------------------------------------------------------------
# What the page says (i18n keys and rows from measured numbers)
# --------------------------------------------------------------------------------------------


def head_name(layer: int, head: int) -> str:
    return t("ih.head", layer=layer, head=head)


def text_rows(p: lesson.TextPrediction) -> list[dict[str, object]]:
    """One row per typed character: the model's next guess, its probability, and whether it copied
    what followed the character's last occurrence (blank: the character is new)."""
    rows = []
    for i, symbol in enumerate(p.text.symbols):
        has_target = i < len(p.copy_target) and p.copy_target[i] >= 0
        rows.append(
            {
                t("ih.col_position"): i,
                t("ih.col_char"): symbol,
                t("ih.col_guess"): p.predicted_symbols[i] or "·",
                t("ih.col_prob"): f"{p.probability[i]:.2f}",
                t("ih.col_copy"): ("✓" if p.copied[i] else "✗") if has_target else "",
            }
        )
    return rows


def blur_numbers(kv: lesson.KernelView, blur: float) -> dict[str, str]:
    """The blur question's explanation: accuracy as trained and at ``blur``, and the keys attended."""
    scales = [float(s) for s in kv.scales]
    k, one = scales.index(blur), scales.index(1.0)
    return {
        "scale": f"{blur:g}",
        "blurred": f"{kv.accuracy[k]:.2f}",
        "trained": f"{kv.accuracy[one]:.2f}",
        "keys": f"{kv.effective_keys[k]:.1f}",
    }


def score_lines(view: Shown) -> dict[str, list[float]]:
    """{legend name: a head's score over the history}: previous-token for layer 0, prefix-matching
    for later layers (a 1-layer model: both, its heads have nothing to compose with)."""
    lines = {}
    c = view.config
    for layer in range(c.n_layers):
        for h in range(c.n_heads):
            if layer == 0:
                lines[t("ih.legend_prev", head=head_name(0, h))] = [
                    float(p.previous_token[0, h]) for p in view.history
                ]
            if layer >= 1 or c.n_layers == 1:
                name = t("ih.legend_prefix", head=head_name(layer, h))
                lines[name] = [float(p.prefix_matching[layer, h]) for p in view.history]
    return lines


def cliff_step(history: tuple[EvalPoint, ...]) -> int | None:
    """The measured formation step of ``history`` (None: no cliff, or fewer than two measurements)."""
    return training.formation(history).step if len(history) >= 2 else None


def cliff_numbers(history: tuple[EvalPoint, ...]) -> dict[str, object]:
    """The cliff question's explanation: first and last accuracy, the steepest rise's steps."""
    f = training.formation(history)
    return {"plateau": f"{f.plateau:.2f}", "final": f"{f.final:.2f}", "a": f.jump_from, "b": f.jump_to}


def curve_shape(history: tuple[EvalPoint, ...]) -> str:
    """``cliff`` (a head formed: plateau then a jump), ``steady`` (a rise without a head) or ``flat``."""
    f = training.formation(history)
    if f.step is not None:
        return "cliff"
    return "steady" if f.final - f.plateau >= training.MIN_GAIN else "flat"


def roles(v: lesson.SequenceView) -> list[str]:
    """``prefix``, ``segment`` or ``repeat`` for each position of a held-out sequence."""
    out = []
    for i in range(len(v.tokens)):
        out.append("prefix" if i < v.start else "segment" if i < v.start + v.period else "repeat")
    return out


def kernel_ratio(kv: lesson.KernelView) -> float:
    """exp(gap): how many times more weight a matching key gets than a typical other key."""
    return math.exp(kv.gap)


def share(value: float) -> str:
    """A share as a percentage, or a dash when it is not defined (NaN: nothing to count)."""
    return "–" if math.isnan(value) else f"{value:.0%}"


def blur_answer(view: Shown, scale: float) -> str:
    """``falls``, ``same`` or ``rises``: the copy accuracy at ``scale`` against the trained one (1).

    Read from the kernel view when this run's is already measured; else only those two accuracies
    are measured (kept per run): answering does not wait for the whole scale sweep.
    """
    at, trained = _read(view, f"blur:{scale}", lambda: _blur_accuracies(view, scale))
    if at < trained - MOVES_BY:
        return "falls"
    return "rises" if at > trained + MOVES_BY else "same"


def honest_rows(view: Shown, ab: lesson.Ablation) -> list[dict[str, str]]:
    """Claim, what the papers or the post report, what this run measures, and whether it holds."""
    f = training.formation(view.history) if len(view.history) >= 2 else None
    pm, pt = ab.full.prefix_matching, ab.full.previous_token
    rows = []

    def row(name: str, measured: str, holds: bool | None) -> None:  # ih.claim_<name>, ih.reported_<name>
        verdict = "ih.holds_na" if holds is None else ("ih.holds_yes" if holds else "ih.holds_no")
        rows.append({t("ih.col_claim"): t(f"ih.claim_{name}"), t("ih.col_reported"): t(f"ih.reported_{name}"),
                     t("ih.col_measured"): measured, t("ih.col_verdict"): t(verdict)})  # fmt: skip

    formed = f is not None and f.step is not None
    acc = f"{ab.full.accuracy:.2f}"
    row(
        "forms",
        t("ih.measured_forms", step=f.step, acc=acc) if formed else t("ih.measured_no_form", acc=acc),
        formed,
    )
    if f is not None:
        row(
            "cliff",
            t("ih.measured_cliff", a=f.jump_from, b=f.jump_to, jump=f"{f.jump:.2f}"),
            f.jump >= 0.2,
        )
    if ab.induction_head is not None:
        head = ab.induction_head
        row(
            "prefix",
            t("ih.measured_prefix", head=head_name(*head), score=f"{pm[head]:.2f}"),
            pm[head] >= 0.5,
        )
    p0 = ab.previous_token_head
    row(
        "previous",
        t("ih.measured_previous", head=head_name(*p0), score=f"{pt[p0]:.2f}"),
        pt[p0] >= 0.3,
    )
    if view.control:
        c_acc = view.control[-1].accuracy
        row(
            "control",
            t("ih.measured_control", acc=f"{c_acc:.2f}"),
            c_acc <= 0.6,
        )
    if ab.induction_group is not None:
        g = ab.induction_group
        row(
            "ablate",
            t("ih.measured_ablate", acc=f"{g.accuracy:.2f}", full=acc),
            g.drop >= ab.full.accuracy / 2,
        )
    return rows


# --------------------------------------------------------------------------------------------
# The page's figures, their words from the catalogue (``figures.common.Labels``)
# --------------------------------------------------------------------------------------------


def sequence_chart(v: lesson.SequenceView) -> go.Figure:
    """The task: one held-out sequence as numbered cells coloured by part."""
    labels = Labels.of(
        title=t("ih.sequence_title", period=v.period),
        x=t("ih.axis_position"),
        **{r: t(f"ih.role_{r}") for r in ("prefix", "segment", "repeat")},
    )
    return cached(fih.sequence_figure)(tuple(int(x) for x in v.tokens), tuple(roles(v)), labels=labels)


def formation_chart(view: Shown, cliff: int | None, *, live: bool) -> go.Figure:
    """Accuracy, heads' scores and loss against steps (the control's dashed); ``live``: a frame
    drawn while training, built directly (each frame is new: not worth caching)."""
    build = fih.formation_figure if live else cached(fih.formation_figure)
    h, c = view.history, view.control
    names = {k: t(f"ih.legend_{k}") for k in ("accuracy", "loss", "control", "control_loss")}
    return build(
        tuple(p.step for p in h), tuple(p.accuracy for p in h), tuple(p.loss for p in h),
        {k: tuple(v) for k, v in score_lines(view).items()},
        tuple(p.step for p in c), tuple(p.accuracy for p in c), tuple(p.loss for p in c),
        cliff=cliff, max_steps=max(view.config.steps, view.steps_done),
        labels=Labels.of(x=t("ih.axis_step"), cliff=t("ih.legend_cliff", step=cliff), **names),
        titles=(t("ih.curves_title"), t("ih.loss_title")), y_titles=(t("ih.axis_share"), t("ih.axis_loss")),
    )  # fmt: skip


def heads_chart(view: Shown, v: lesson.SequenceView) -> go.Figure:
    """Every head's attention map on sequence ``v``, one panel per head."""
    c = view.config
    return cached(fih.heads_figure)(
        v.weights,
        tuple(f"{i}:{int(x)}" for i, x in enumerate(v.tokens)),
        titles=tuple(head_name(layer, h) for layer in range(c.n_layers) for h in range(c.n_heads)),
        labels=Labels.of(x=t("ih.axis_key"), y=t("ih.axis_query"), z=t("ih.axis_weight")),
    )


def strip_chart(v: lesson.SequenceView, layer: int, head: int, query: int) -> go.Figure:
    """The keys query ``query`` of head (``layer``, ``head``) attends, as lines from it."""
    labels = Labels.of(
        title=t("ih.strip_fig_title", head=head_name(layer, head), query=query),
        keys=t("ih.axis_key"),
        queries=t("ih.axis_query"),
    )
    return cached(fih.strip_figure)(
        tuple(str(int(x)) for x in v.tokens),
        tuple(float(w) for w in v.weights[layer, head, query]),
        query,
        labels=labels,
    )


def ablation_chart(ab: lesson.Ablation) -> go.Figure:
    """Accuracy with nothing off, each head off, and the induction heads off together."""

    def role(heads: tuple) -> str:
        if heads == (ab.previous_token_head,):
            return "previous"
        return "induction" if set(heads) <= set(ab.induction_heads) else "other"

    bars = [(t("ih.bar_full"), ab.full.accuracy, "full")]
    bars += [(t("ih.bar_off", head=head_name(*a.heads[0])), a.accuracy, role(a.heads)) for a in ab.single]
    if ab.induction_group is not None and len(ab.induction_group.heads) > 1:
        bars.append((t("ih.bar_group"), ab.induction_group.accuracy, "induction"))
    names, acc, kinds = (tuple(x) for x in zip(*bars, strict=True))
    return cached(fih.ablation_figure)(
        names, acc, kinds, labels=Labels.of(title=t("ih.ablate_fig_title"), y=t("ih.axis_accuracy"))
    )


def kernel_chart(kv: lesson.KernelView) -> go.Figure:
    """The induction head's score distributions, and accuracy and kernel width against the scale."""
    return cached(fih.kernel_figure)(
        kv.match_scores, kv.other_scores, kv.scales, kv.accuracy, kv.effective_keys,
        labels=Labels.of(**{k: t(f"ih.legend_{k}") for k in ("match", "other", "accuracy", "keys")}),
        titles=(t("ih.kernel_scores_title", head=head_name(*kv.head)), t("ih.kernel_scale_title")),
        x_titles=(t("ih.axis_score"), t("ih.axis_scale")),
        y_titles=(t("ih.axis_share_keys"), t("ih.axis_accuracy")),
    )  # fmt: skip


class LiveView:
    """The placeholders that change while the model trains, and how to draw a run into them."""

    def __init__(self) -> None:
        self.progress, self.status, self.chart = st.empty(), st.empty(), st.empty()
        self.draws, self.clock = 0, RedrawClock(CHART_INTERVAL_S, spacing=SPACING)

    def draw(self, view: Shown, *, live: bool = False) -> None:
        total = max(view.config.steps, view.steps_done)
        self.progress.progress(
            min(1.0, view.steps_done / total), text=t("ih.progress", done=view.steps_done, total=total)
        )
        if live and not self.clock.due():
            return
        started = time.perf_counter()
        self.draws += 1
        cliff = cliff_step(view.history)
        questions.reveal("ih_cliff", partial(self._status, view, cliff), placeholder=False)
        questions.reveal("ih_cliff", partial(self._chart, view, cliff, live), where=self.chart)
        self.clock.done(started)

    def _status(self, view: Shown, cliff: int | None) -> None:
        last = view.history[-1]
        key = "ih.status_cliff" if cliff is not None else "ih.status_no_cliff"
        self.status.caption(t(key, steps=last.step, acc=f"{last.accuracy:.2f}", cliff=cliff))

    def _chart(self, view: Shown, cliff: int | None, live: bool) -> None:
        fig = formation_chart(view, cliff, live=live)
        with self.chart.container():
            show_figure(
                fig, key=f"ih_curves_fig_{self.draws}", look_for_key="ih.curves_look", code=training.formation
            )
