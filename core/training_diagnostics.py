"""The post's troubleshooting table (section 5.4), evaluated on a training run.

Five symptoms, each measured on the run on screen and flagged green / amber / red against named
thresholds: the validation loss oscillates (wrong scale), attention concentrates on one position
(entropy too low), a loss or a weight is NaN (masking by adding -inf), heads repeat each other,
every output is the same (a view/transpose bug); and a sixth from the post's section 5.2: without
the causal mask the model cheats (it reads its own target). The statistics of attention maps themselves
(support, peak weight, head similarity) live in ``core.diagnostics``; this module applies them
to a run and compares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from core.diagnostics import max_weight, redundancy_score
from core.training_evaluation import (
    on_one_thread,
    predict,
    prefix_one_step_error,
    validation_attention,
    validation_loss,
)

if TYPE_CHECKING:  # core.training imports what imports this module: only the type from there
    from core.training import TrainResult

#: Diagnostic ids in the order of the post's table (section 5.4), then the leak of section 5.2.
DIAGNOSTICS = ("oscillation", "concentration", "nan", "redundancy", "constant_output", "leak")
#: The model "cheats" when its honest (past-only) error is this many times its teacher-forced
#: loss (with the causal mask the two are equal: ratio 1); amber from ``LEAK_AMBER``.
LEAK_RATIO = 1.5
LEAK_AMBER = 1.2


@dataclass(frozen=True)
class Diagnostic:
    """One row of the diagnostics panel.

    Attributes:
        id: one of :data:`DIAGNOSTICS`.
        level: ``green``, ``amber`` or ``red``.
        value: the measured number (NaN when it cannot be measured).
        amber, red: the thresholds the value was compared with.
    """

    id: str
    level: str
    value: float
    amber: float
    red: float


def _level(value: float, amber: float, red: float) -> str:
    if not math.isfinite(value):
        return "red"
    return "red" if value >= red else "amber" if value >= amber else "green"


def loss_oscillation(val_loss: list[float] | np.ndarray) -> float:
    """Total relative rise of the validation loss over training: Σ max(0, log(v_e / v_{e-1})).

    0 for a loss that only goes down; each epoch where the loss jumps up by a factor r adds
    log r. (Equivalently: half of the total variation of log-loss minus its net change.)
    NaN when a loss is not finite or not positive.
    """
    v = np.asarray(val_loss, dtype=float)
    if v.size < 2:
        return 0.0
    if not np.all(np.isfinite(v)) or np.any(v <= 0):
        return math.nan
    return float(np.clip(np.diff(np.log(v)), 0.0, None).sum())


def leak_ratio(result: TrainResult, windows: torch.Tensor) -> float:
    """Honest (past-only) next-step error ÷ teacher-forced loss on ``windows`` (N, T + 1): 1 under
    the causal mask (the mask already hides the future: both are the same computation)."""
    if result.config.causal:
        return 1.0
    loss = validation_loss(result.model, windows)
    return prefix_one_step_error(result.model, windows) / loss if loss > 0 else math.inf


@on_one_thread
def diagnose(result: TrainResult, n_windows: int = 64, *, leak: float | None = None) -> list[Diagnostic]:
    """Evaluate the post's five symptoms and the leak on a run, each flagged green / amber / red.

    - ``oscillation``: :func:`loss_oscillation` of the validation loss (the post: wrong scale).
      The presets' runs measure 0.2-0.55 (seeds 0-2, with or without √d_k), so amber starts at 0.6.
    - ``concentration``: mean largest attention weight per row, rows with >= 4 keys (the post:
      weights concentrated on one position, entropy too low).
    - ``nan``: 1 if any loss or weight is NaN/infinite (the post: -inf masking by addition).
    - ``redundancy``: mean similarity of heads (core.diagnostics.redundancy_score) over the
      first ``n_windows`` validation windows and all layers (the post: heads repeating each other).
    - ``constant_output``: max(0, 1 - std(predictions) / std(targets)) on validation (the post:
      every output the same, a view/transpose bug).
    - ``leak``: :func:`leak_ratio`, honest error ÷ teacher-forced loss (the post 5.2: without the
      causal mask the model cheats); ``leak`` gives it when already measured (on other windows).

    Returns:
        One :class:`Diagnostic` per id of :data:`DIAGNOSTICS`, in that order.
    """
    model, windows = result.model, result.data.val[:n_windows]
    losses = np.asarray(result.val_loss + result.train_loss + result.batch_loss, dtype=float)
    predictions = predict(model, windows[:, :-1])  # (N, T)
    weights = validation_attention(model, windows)  # (n_layers, N, H, T, T)
    broken = bool(
        result.diverged
        or not np.all(np.isfinite(losses))
        or not torch.isfinite(weights).all()
        or not torch.isfinite(predictions).all()
    )
    out = [Diagnostic("oscillation", "", loss_oscillation(result.val_loss), 0.6, 1.2)]
    if broken:
        out.append(Diagnostic("concentration", "red", math.nan, 0.75, 0.9))
    else:
        T = weights.shape[-1]
        peak = max_weight(weights)[..., 3:] if T > 3 else max_weight(weights)  # (n_layers, N, H, L')
        out.append(Diagnostic("concentration", "", float(peak.mean()), 0.75, 0.9))
    out.append(Diagnostic("nan", "", 1.0 if broken else 0.0, 0.5, 0.5))
    if broken:
        out.append(Diagnostic("redundancy", "red", math.nan, 0.85, 0.95))
        out.append(Diagnostic("constant_output", "red", math.nan, 0.7, 0.9))
    else:
        redundancy = float(np.mean([redundancy_score(w) for w in weights]))
        out.append(Diagnostic("redundancy", "", redundancy, 0.85, 0.95))
        spread = float(predictions.std() / windows[:, 1:].std())
        out.append(Diagnostic("constant_output", "", max(0.0, 1.0 - spread), 0.7, 0.9))
    value = leak_ratio(result, windows) if leak is None else float(leak)
    out.append(Diagnostic("leak", "", value, LEAK_AMBER, LEAK_RATIO))
    return [
        d if d.level else Diagnostic(d.id, _level(d.value, d.amber, d.red), d.value, d.amber, d.red)
        for d in out
    ]
