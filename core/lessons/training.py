"""The training lesson's experiments and verdicts: what the training page reports about a run.

``core.training`` holds the loop (and what it records every epoch); this module holds what the
page measures on a run and how it judges it:

- **Presets** (:data:`PRESETS`): the post's training experiments as named configs. Each changes as
  little as possible from :class:`core.transformer.TransformerConfig`'s defaults (the post's
  model), so that one difference explains what you see: ``post`` (4 heads, d_model 64, sinusoidal
  positions, one encoder layer); ``no_scale`` (scores not divided by √d_k; post: "the loss
  oscillated violently"); ``heads32`` (32 heads of width 2; post: "training time soared, heads
  learned the same pattern"); ``no_mask`` (no causal mask: position t sees t + 1, its own target;
  trained 40 epochs so the cheat has time to take over the training loss; post 5.2: "the model
  cheats"); ``learned_dropout`` (learned positional embedding and attention dropout 0.1; post 4.3:
  "the attention spread to related positions"); ``no_positions`` (no positional encoding at all:
  the reference for the shuffled-input test); ``heads32_diverse`` (32 heads with the
  head-diversity regulariser, post 5.3's second remedy).
- **Evaluation** of a model on held-out random walks, what a training curve hides (the post,
  section 4.3): :func:`prefix_one_step_error` (honest next-step error, each x[t+1] predicted from
  x[0..t] only: with the causal mask it *equals* the teacher-forced loss, without it position t
  sees its own target); :func:`rollout_error` ("given the first half, predict the second half",
  each prediction fed back, against repeating the last value or the mean); :func:`evaluate_shuffled`
  (scramble the order of the history at inference: attention without positions treats its keys
  as a set and cannot notice); :func:`attention_summary` (where the attention mass goes, by
  query-key distance, against uniform attention). Every evaluation puts the model in eval mode
  and restores its mode after.
- **The troubleshooting table** (the post's section 5.4): five symptoms, each measured on the run
  on screen and flagged green / amber / red against named thresholds (:func:`diagnose`): the
  validation loss oscillates (wrong scale), attention concentrates on one position (entropy too
  low), a loss or a weight is NaN (masking by adding -inf), heads repeat each other, every output
  is the same (a view/transpose bug); and a sixth from section 5.2: without the causal mask the
  model cheats (it reads its own target). The statistics of attention maps themselves (support,
  peak weight, head similarity) live in ``core.diagnostics``.
- **Findings and verdicts**: :func:`measure_findings` gathers everything the page reports about a
  run (:class:`Findings`); the verdict functions decide which of the post's observations this run
  reproduces, and why. Every verdict is computed from the numbers of the run on screen, for the
  conditions of that run (with or without the causal mask, with or without positions), and
  carries those numbers, so the sentence the page shows can never contradict its chart.
  Thresholds are named constants. Each returns a :class:`Verdict`: an i18n key and the values
  its sentence quotes.

Shapes: N windows, T sequence length, H heads, L queries, S keys (L = S = T), K distances shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import torch

from core.diagnostics import effective_support, max_weight, redundancy_score
from core.threads import on_one_thread, one_thread
from core.training import TrainingRun, fixed_example, predict, validation_attention, validation_loss
from core.transformer import ToyTransformer, TransformerConfig

# --------------------------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------------------------

#: Preset id -> the config fields it changes from the defaults (read-only).
PRESETS = MappingProxyType(
    {
        "post": MappingProxyType({}),
        "no_scale": MappingProxyType({"scale": "one"}),
        "heads32": MappingProxyType({"n_heads": 32}),
        "no_mask": MappingProxyType({"causal": False, "epochs": 40}),
        "learned_dropout": MappingProxyType({"positional": "learned", "attn_dropout": 0.1}),
        "no_positions": MappingProxyType({"positional": "none"}),
        "heads32_diverse": MappingProxyType({"n_heads": 32, "diversity_weight": 1.0}),
    }
)


def preset_config(name: str) -> TransformerConfig:
    """The :class:`TransformerConfig` of preset ``name``.

    Raises:
        ValueError: if ``name`` is not a preset (the message lists the known ones).
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    return TransformerConfig(**PRESETS[name])


# --------------------------------------------------------------------------------------------
# Evaluation on held-out walks
# --------------------------------------------------------------------------------------------


@on_one_thread
@torch.no_grad()
def prefix_one_step_error(model: ToyTransformer, windows: torch.Tensor) -> float:
    """Honest next-step MSE: x[t+1] predicted from x[0..t] only (one forward pass per t).

    For a causal model this equals the teacher-forced loss exactly (the mask already hides the
    future); for a model without the mask it is the error it makes when the future is really
    unknown. windows: (N, T + 1).
    """
    T = windows.shape[1] - 1
    errors = []
    for t in range(T):
        last = predict(model, windows[:, : t + 1])[:, -1]  # (N,)
        errors.append((last - windows[:, t + 1]) ** 2)
    return float(torch.stack(errors).mean())


@on_one_thread
@torch.no_grad()
def rollout(model: ToyTransformer, windows: torch.Tensor, context: int) -> torch.Tensor:
    """Generate the rest of each window step by step from its first ``context`` values.

    Each prediction is appended to the input and fed back (the model never sees a true value
    after the context). windows: (N, T + 1) -> (N, T + 1 - context) generated values.

    Raises:
        ValueError: if context is not in [1, T].
    """
    T = windows.shape[1] - 1
    if not 1 <= context <= T:
        raise ValueError(f"context must be in [1, {T}], got {context}")
    sequence = windows[:, :context].clone()  # (N, context)
    generated = []
    for _ in range(T + 1 - context):
        nxt = predict(model, sequence[:, -T:])[:, -1:]  # (N, 1)
        generated.append(nxt)
        sequence = torch.cat([sequence, nxt], dim=1)
    return torch.cat(generated, dim=1)


@dataclass(frozen=True)
class RolloutError:
    """MSE of a rollout against the truth, averaged over the generated steps and the windows.

    Attributes:
        model: the model's rollout (:func:`rollout`, each prediction fed back).
        last_value: repeating the last context value (the best guess for a plain random walk).
        mean: repeating the mean of the context (uniform attention's guess).
    """

    model: float
    last_value: float
    mean: float


def rollout_error(model: ToyTransformer, windows: torch.Tensor, context: int | None = None) -> RolloutError:
    """MSE of a step-by-step rollout vs. the truth, with the two baselines rolled out alike.

    The post's "given the first half, predict the second half": context defaults to T // 2.
    windows: (N, T + 1).

    Raises:
        ValueError: if context is not in [1, T] (from :func:`rollout`).
    """
    T = windows.shape[1] - 1
    context = T // 2 if context is None else context
    generated = rollout(model, windows, context)  # (N, T + 1 - context)
    truth = windows[:, context:]  # (N, T + 1 - context)
    last = windows[:, context - 1 : context]  # (N, 1)
    mean = windows[:, :context].mean(1, keepdim=True)  # (N, 1)
    return RolloutError(
        model=float(((generated - truth) ** 2).mean()),
        last_value=float(((last - truth) ** 2).mean()),
        mean=float(((mean - truth) ** 2).mean()),
    )


@dataclass(frozen=True)
class ShuffleTest:
    """The post's shuffled-history test: MSE of the prediction of a window's last value x[T].

    Attributes:
        ordered: from the history in its true order.
        shuffled: with the older history x[0..T-2] in random orders (x[T-1] kept last), averaged
            over the random orders.
        ratio: shuffled / ordered (inf when ``ordered`` is 0): 1 means the order did not matter.
    """

    ordered: float
    shuffled: float
    ratio: float


@on_one_thread
@torch.no_grad()
def evaluate_shuffled(
    model: ToyTransformer, windows: torch.Tensor, *, seed: int = 0, repeats: int = 4
) -> ShuffleTest:
    """The post's test: scramble the order of the history at inference and compare the error.

    For each window the model predicts the value after its last input, x[T], once from the true
    sequence and once with the older inputs x[0..T-2] in a random order (the newest value x[T-1]
    stays last, so the query is the same). Self-attention without positions treats its keys as
    a set: a one-layer causal model without positional encoding gives exactly the same answer
    either way. A model that reads "the value one position back" through its positional encoding
    gets a random old value there instead, and its error jumps.

    Args:
        windows: (N, T + 1).
        seed: seeds the permutations (one per window and repeat).
        repeats: how many random orders to average over.
    """
    generator = torch.Generator().manual_seed(seed)
    inputs, target = windows[:, :-1], windows[:, -1]  # (N, T), (N,)
    N, T = inputs.shape
    ordered = float(((predict(model, inputs)[:, -1] - target) ** 2).mean())
    losses = []
    for _ in range(repeats):
        order = torch.argsort(torch.rand(N, T - 1, generator=generator), dim=1)  # (N, T - 1)
        shuffled_in = torch.cat([inputs[:, :-1].gather(1, order), inputs[:, -1:]], dim=1)  # (N, T)
        losses.append(float(((predict(model, shuffled_in)[:, -1] - target) ** 2).mean()))
    shuffled = float(np.mean(losses))
    ratio = shuffled / ordered if ordered > 0 else math.inf
    return ShuffleTest(ordered=ordered, shuffled=shuffled, ratio=ratio)


def attention_by_distance(weights: torch.Tensor | np.ndarray) -> np.ndarray:
    """Share of attention mass at each query-key distance d = query - key.

    Args:
        weights: (..., T, T) attention weights, rows = queries.

    Returns:
        (2T - 1,) shares for d = -(T-1) .. T-1 (negative = keys in the future), averaged over
        queries and leading axes; they sum to 1 (over non-empty rows).
    """
    w = torch.as_tensor(weights, dtype=torch.float64)
    T = w.shape[-1]
    rows = w.reshape(-1, w.shape[-2], T).mean(0)  # (T, T)
    shares = np.zeros(2 * T - 1)
    for d in range(-(T - 1), T):
        shares[d + T - 1] = float(torch.diagonal(rows, offset=-d).sum()) / rows.shape[0]
    return shares


def uniform_attention_by_distance(seq_len: int, causal: bool = True) -> np.ndarray:
    """:func:`attention_by_distance` of perfectly uniform attention (the mean baseline): (2T - 1,).

    The reference to read a model's bars against: even uniform attention puts more mass on small
    distances under the causal mask, because every query has a key at distance 0 but only late
    queries have far ones.
    """
    weights = torch.ones(seq_len, seq_len, dtype=torch.float64)
    if causal:
        weights = weights.tril()
    return attention_by_distance(weights / weights.sum(-1, keepdim=True))


@dataclass(frozen=True)
class AttentionSummary:
    """Where the attention mass goes, each share beside the same share for uniform attention.

    Shares are of the total mass, averaged over layers, heads, queries and windows.

    Attributes:
        recent3: share on the three newest positions (query-key distances 0, 1, 2).
        recent3_uniform: the same share for uniform attention (under the causal mask it already
            favours the newest positions: every query has a key at distance 0).
        future: share on keys after the query (0 with the causal mask).
        future_uniform: the same for uniform attention.
        ahead: share on the key at t + 1, the query's own next-step target (0 with the mask).
        ahead_uniform: the same for uniform attention.
        support: mean effective number of attended keys per row, 1 / Σ w² (1 = one key).
    """

    recent3: float
    recent3_uniform: float
    future: float
    future_uniform: float
    ahead: float
    ahead_uniform: float
    support: float


@on_one_thread
def attention_summary(result: TrainingRun, n_windows: int = 64) -> AttentionSummary:
    """:class:`AttentionSummary` of a run's model on its first ``n_windows`` validation windows."""
    weights = validation_attention(result.model, result.data.val[:n_windows])  # (n_layers, N, H, T, T)
    T = weights.shape[-1]
    shares = attention_by_distance(weights)  # (2T - 1,)
    uniform = uniform_attention_by_distance(T, result.config.causal)
    zero = T - 1  # index of distance 0
    return AttentionSummary(
        recent3=float(shares[zero : zero + 3].sum()),
        recent3_uniform=float(uniform[zero : zero + 3].sum()),
        future=float(shares[:zero].sum()),
        future_uniform=float(uniform[:zero].sum()),
        ahead=float(shares[zero - 1]) if T > 1 else 0.0,
        ahead_uniform=float(uniform[zero - 1]) if T > 1 else 0.0,
        support=float(effective_support(weights).mean()),
    )


# --------------------------------------------------------------------------------------------
# The troubleshooting table (the post's section 5.4)
# --------------------------------------------------------------------------------------------


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


def leak_ratio(result: TrainingRun, windows: torch.Tensor) -> float:
    """Honest (past-only) next-step error ÷ teacher-forced loss on ``windows`` (N, T + 1): 1 under
    the causal mask (the mask already hides the future: both are the same computation)."""
    if result.config.causal:
        return 1.0
    loss = validation_loss(result.model, windows)
    return prefix_one_step_error(result.model, windows) / loss if loss > 0 else math.inf


@on_one_thread
def diagnose(result: TrainingRun, n_windows: int = 64, *, leak: float | None = None) -> list[Diagnostic]:
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


# --------------------------------------------------------------------------------------------
# Findings: the thresholds of the verdicts, what is measured and how it is judged
# --------------------------------------------------------------------------------------------

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
# LEAK_RATIO (the table's, above): without the mask the model "cheats" when its past-only error is
# this many times its teacher-forced loss; it is the red threshold of the diagnostics table's
# "leak" row, so the verdict and the row agree.


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


def measure_findings(result: TrainingRun, n_windows: int = 256) -> Findings:
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
