"""The post's observations on a training run: measured (:class:`Findings`) and judged (:class:`Verdict`).

:func:`measure_findings` gathers everything the training page reports about a run, measured on
the validation set with ``core.training_evaluation`` and ``core.training_diagnostics``.

The verdict functions decide which of the post's observations this run reproduces, and why.
Every verdict is computed from the numbers of the run on screen, for the conditions of that run
(with or without the causal mask, with or without positions), and carries those numbers, so the
sentence the page shows can never contradict its chart. Thresholds are named constants. Each
returns a :class:`Verdict`: an i18n key and the values its sentence quotes.

Shapes: T sequence length, K distances shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core.threads import one_thread
from core.training_diagnostics import LEAK_RATIO, Diagnostic, diagnose
from core.training_evaluation import (
    AttentionSummary,
    RolloutError,
    ShuffleTest,
    attention_by_distance,
    attention_summary,
    evaluate_shuffled,
    fixed_example,
    predict,
    prefix_one_step_error,
    rollout,
    rollout_error,
    uniform_attention_by_distance,
    validation_attention,
    validation_loss,
)

if TYPE_CHECKING:  # core.training re-exports measure_findings: only the type from there
    from core.training import TrainResult

#: Attention "concentrates on the newest positions" when the 3 newest get this many times the
#: share uniform attention gives them (uniform already favours them under the causal mask).
RECENT_FACTOR = 1.3
#: Without the mask the model "reads ahead" when position t + 1 (its own target) gets this many
#: times the share uniform attention would give it.
AHEAD_FACTOR = 1.3
#: Shuffling the history "collapses" the model when the error grows by at least this factor...
COLLAPSE_RATIO = 2.0
#: ...and leaves it "unaffected" up to this factor.
UNAFFECTED_RATIO = 1.2
#: A rollout error within this relative distance of repeating the last value is "about the same"
#: (a ratio of ×1.01 is a tie, not "worse").
ROLLOUT_SAME_RTOL = 0.05
# LEAK_RATIO (imported): without the mask the model "cheats" when its past-only error is this many
# times its teacher-forced loss; it is the red threshold of the diagnostics table's "leak" row, so
# the verdict and the row agree.


# --------------------------------------------------------------------------------------------
# Measured
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Findings:
    """Everything the page reports about a run, measured on the validation set.

    Attributes:
        val_loss: teacher-forced next-step validation MSE (what the training curve shows).
        prefix_error: honest next-step MSE, from the past only (:func:`prefix_one_step_error`).
        rollout: :func:`rollout_error` from the first half (``context`` values).
        shuffle: :func:`evaluate_shuffled`.
        attention: :func:`attention_summary`.
        distances: (K,) query-key distances shown; ``shares`` (K,) the model's attention mass at
            each and ``uniform`` (K,) uniform attention's (future distances only without a mask).
        diagnostics: :func:`diagnose`.
        example: the fixed validation window (T + 1,); ``example_one_step`` (T,) its one-step
            predictions; ``example_rollout`` (T + 1 - context,) generated from ``context`` values.
        context: values the rollouts start from (T // 2).
    """

    val_loss: float
    prefix_error: float
    rollout: RolloutError
    shuffle: ShuffleTest
    attention: AttentionSummary
    distances: np.ndarray
    shares: np.ndarray
    uniform: np.ndarray
    diagnostics: list[Diagnostic]
    example: np.ndarray
    example_one_step: np.ndarray
    example_rollout: np.ndarray
    context: int


def measure_findings(result: TrainResult, n_windows: int = 256) -> Findings:
    """Measure the post's observations on a run (~0.3 s for the default config, ~0.7 s without the mask).

    Args:
        result: a run (trained or not).
        n_windows: validation windows used (the first ``n_windows``).
    """
    with one_thread():
        model, val = result.model, result.data.val[:n_windows]
        T = val.shape[1] - 1
        context = T // 2
        weights = validation_attention(model, val[:64])  # (n_layers, 64, H, T, T)
        shares = attention_by_distance(weights)  # (2T - 1,)
        uniform = uniform_attention_by_distance(T, result.config.causal)
        distances = np.arange(-(T - 1), T)
        if result.config.causal:
            keep = distances >= 0
            distances, shares, uniform = distances[keep], shares[keep], uniform[keep]
        example = fixed_example(result.data)
        val_loss = validation_loss(model, val)
        # Under the causal mask the honest error is the teacher-forced loss exactly (the mask
        # already hides the future): skip its T forward passes (~0.4 s) and reuse the loss.
        prefix_error = val_loss if result.config.causal else prefix_one_step_error(model, val)
        leak = prefix_error / val_loss if val_loss > 0 else math.inf
        return Findings(
            val_loss=val_loss,
            prefix_error=prefix_error,
            rollout=rollout_error(model, val, context),
            shuffle=evaluate_shuffled(model, val, seed=result.config.seed),
            attention=attention_summary(result),
            distances=distances,
            shares=shares,
            uniform=uniform,
            diagnostics=diagnose(result, leak=1.0 if result.config.causal else leak),
            example=example.numpy(),
            example_one_step=predict(model, example[None, :-1])[0].numpy(),
            example_rollout=rollout(model, example[None], context)[0].numpy(),
            context=context,
        )


# --------------------------------------------------------------------------------------------
# Judged
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One sentence of the findings: ``key`` (i18n) and the run's numbers it quotes."""

    key: str
    values: dict[str, float] = field(default_factory=dict)


def attention_verdict(attention: AttentionSummary, *, causal: bool) -> Verdict:
    """Where the attention goes, judged for the run's mask.

    Args:
        attention: the run's :func:`attention_summary`.
        causal: whether the run used the causal mask.

    With the mask: does attention concentrate on the 3 newest positions (the post's claim)?
    Without it: does attention go to position t + 1, the very value each position must predict?
    """
    if causal:
        values = {"share": attention.recent3, "uniform": attention.recent3_uniform}
        yes = attention.recent3 >= RECENT_FACTOR * attention.recent3_uniform
        return Verdict("tr.verdict_recent_yes" if yes else "tr.verdict_recent_no", values)
    values = {
        "ahead": attention.ahead,
        "ahead_uniform": attention.ahead_uniform,
        "future": attention.future,
        "future_uniform": attention.future_uniform,
    }
    yes = attention.ahead >= AHEAD_FACTOR * attention.ahead_uniform
    return Verdict("tr.verdict_ahead_yes" if yes else "tr.verdict_ahead_no", values)


def shuffle_verdict(shuffle: ShuffleTest, *, positional: bool) -> Verdict:
    """What shuffling the history does, judged by the run's :func:`evaluate_shuffled` ratio."""
    ratio = shuffle.ratio
    suffix = "pos" if positional else "nopos"
    if ratio >= COLLAPSE_RATIO:
        key = f"tr.verdict_shuffle_collapse_{suffix}"
    elif ratio <= UNAFFECTED_RATIO:
        key = f"tr.verdict_shuffle_same_{suffix}"
    else:
        key = "tr.verdict_shuffle_some"
    return Verdict(key, {"ratio": ratio})


def leak_verdict(val_loss: float, prefix_error: float, optimum: float, *, causal: bool) -> Verdict:
    """Does the training curve tell the truth? Teacher-forced loss vs past-only error."""
    leak = prefix_error / val_loss if val_loss > 0 else math.inf
    values = {"leak": leak, "optimum": optimum}
    if causal:
        return Verdict("tr.verdict_leak_masked", values)
    return Verdict("tr.verdict_leak_cheats" if leak >= LEAK_RATIO else "tr.verdict_leak_not_yet", values)


def rollout_verdict(rollout: RolloutError) -> Verdict:
    """The model's rollout error against repeating the last value (the run's :func:`rollout_error`):
    worse, about the same (within ±``ROLLOUT_SAME_RTOL``) or better."""
    model, last = rollout.model, rollout.last_value
    ratio = model / last if last > 0 else math.inf
    values = {"model": model, "last_value": last, "ratio": ratio, "pct": ROLLOUT_SAME_RTOL}
    if not math.isfinite(ratio) or ratio > 1 + ROLLOUT_SAME_RTOL:
        return Verdict("tr.verdict_rollout_worse", values)
    if ratio >= 1 - ROLLOUT_SAME_RTOL:
        return Verdict("tr.verdict_rollout_same", values)
    return Verdict("tr.verdict_rollout_better", values)
