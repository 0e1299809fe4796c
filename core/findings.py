"""Verdicts on a training run: which of the post's observations this run reproduces, and why.

Every verdict is computed from the numbers of the run on screen, for the conditions of that run
(with or without the causal mask, with or without positions), and carries those numbers, so the
sentence the page shows can never contradict its chart. Thresholds are named constants.

The measurements themselves come from ``core.training.measure_findings``; this module only
compares them. Each function returns a :class:`Verdict`: an i18n key and the values its
sentence quotes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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
#: Without the mask the model "cheats" when its past-only error is this many times its
#: teacher-forced loss (with the mask the two are equal).
LEAK_RATIO = 1.5


@dataclass(frozen=True)
class Verdict:
    """One sentence of the findings: ``key`` (i18n) and the run's numbers it quotes."""

    key: str
    values: dict[str, float] = field(default_factory=dict)


def attention_verdict(attention: dict[str, float], *, causal: bool) -> Verdict:
    """Where the attention goes, judged for the run's mask.

    Args:
        attention: ``core.training.attention_summary`` of the run (``recent3``,
            ``recent3_uniform``, ``ahead``, ``ahead_uniform``, ``future``, ``future_uniform``).
        causal: whether the run used the causal mask.

    With the mask: does attention concentrate on the 3 newest positions (the post's claim)?
    Without it: does attention go to position t + 1, the very value each position must predict?
    """
    if causal:
        values = {"share": attention["recent3"], "uniform": attention["recent3_uniform"]}
        yes = attention["recent3"] >= RECENT_FACTOR * attention["recent3_uniform"]
        return Verdict("tr.verdict_recent_yes" if yes else "tr.verdict_recent_no", values)
    values = {
        "ahead": attention["ahead"],
        "ahead_uniform": attention["ahead_uniform"],
        "future": attention["future"],
        "future_uniform": attention["future_uniform"],
    }
    yes = attention["ahead"] >= AHEAD_FACTOR * attention["ahead_uniform"]
    return Verdict("tr.verdict_ahead_yes" if yes else "tr.verdict_ahead_no", values)


def shuffle_verdict(shuffle: dict[str, float], *, positional: bool) -> Verdict:
    """What shuffling the history does (``ordered``, ``shuffled``, ``ratio`` of the run)."""
    ratio = shuffle["ratio"]
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


def rollout_verdict(rollout: dict[str, float]) -> Verdict:
    """The model's rollout error against repeating the last value (``model``, ``last_value``)."""
    model, last = rollout["model"], rollout["last_value"]
    ratio = model / last if last > 0 else math.inf
    values = {"model": model, "last_value": last, "ratio": ratio}
    if not math.isfinite(model) or model > last:
        return Verdict("tr.verdict_rollout_worse", values)
    return Verdict("tr.verdict_rollout_better", values)
