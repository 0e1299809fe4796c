"""Train the toy Transformer on random walks, resumably, and measure the post's observations.

The task (the post's second stage, "given the first part of a random-walk sequence, predict what
follows") is posed as **next-step prediction**: a window holds T + 1 consecutive values of a
random walk; the input is the first T values and the target at position t is the value at
t + 1. With the causal mask, position t sees only positions <= t, so predicting all T positions
at once is honest. Without the mask, position t can also see position t + 1, which *is* its
target: the training loss becomes excellent while honest prediction (from the past only) and
step-by-step rollout (feeding predictions back) stay poor; :func:`prefix_one_step_error` and
:func:`rollout_error` measure that.

A random walk's next step is unpredictable: the best possible guess for x[t+1] is x[t], so the
**last-value baseline** is the floor an honest model can reach, not just a competitor. The
**mean baseline** (the average of the values seen so far) is what perfectly uniform attention
would give. The two baselines are the two extreme attention patterns, all weight on the newest
position vs. spread evenly: kernel regression with bandwidth 0 vs. infinity.

:func:`train` is a plain loop that knows nothing about the UI: the page passes ``on_epoch`` (to
redraw charts) and ``should_stop`` (checked before every batch, to pause). A :class:`TrainResult`
keeps the model, the optimiser, the random generators and the position inside the current epoch,
so ``train(config, resume=result)`` continues exactly where it stopped: a paused-and-resumed run
gives the same numbers as one uninterrupted run.

Shapes: B batch, T sequence length, H heads, L queries, S keys (L = S = T).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from core.diagnostics import effective_support, head_diversity_penalty, max_weight, redundancy_score
from core.random_walks import (  # noqa: F401 (re-exported: the training API of issue 4)
    STRIDE,
    RandomWalkData,
    baseline_losses,
    random_walk_dataset,
)
from core.threads import one_thread
from core.transformer import ToyTransformer, TransformerConfig

#: At most this many bytes of attention snapshots per run (a classroom server holds one run per
#: learner); beyond it only every k-th epoch is kept.
SNAPSHOT_BUDGET_BYTES = 8 * 2**20


# --------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------


@dataclass
class _EpochCursor:
    """Where training stands inside an unfinished epoch."""

    order: torch.Tensor  # (N_train,) this epoch's shuffle
    next_batch: int = 0
    loss_sum: float = 0.0
    count: int = 0


@dataclass
class TrainResult:
    """A training run so far; pass it back to :func:`train` as ``resume`` to continue.

    Attributes:
        config: the config it was trained with (``epochs`` = the target it was last run towards).
        model: the :class:`ToyTransformer` (trained in place when resumed).
        data: the :class:`RandomWalkData` it trains on.
        train_loss: mean training loss of each finished epoch (length = epochs_done).
        val_loss: validation loss after each finished epoch, index 0 = before training
            (length = epochs_done + 1).
        batch_loss: training loss of every optimiser step (for the oscillation diagnostic).
        snapshots: {epoch: attention weights on the fixed validation example after that epoch}
            (0 = before training), each (n_layers, H, T, T) float16. Every epoch is kept unless
            that would exceed ``SNAPSHOT_BUDGET_BYTES``; then every ``snapshot_every``-th epoch
            plus the newest one.
        snapshot_every: the stride of kept snapshots (1 = all).
        baselines: validation MSE of the ``last_value`` and ``mean`` predictors.
        seconds: time spent in epochs, training and evaluating (callbacks excluded).
        setup_seconds: time :func:`start_run` took (data, model, epoch-0 evaluation; the first
            run in a process also pays a one-off ~4 s import inside ``torch.optim``).
        stopped: True when the last call returned because ``should_stop`` said so.
        diverged: True when a loss became NaN or infinite (training then stops).
    """

    config: TransformerConfig
    model: ToyTransformer
    data: RandomWalkData
    optimizer: torch.optim.Optimizer
    data_generator: torch.Generator
    baselines: dict[str, float]
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    batch_loss: list[float] = field(default_factory=list)
    snapshots: dict[int, np.ndarray] = field(default_factory=dict)
    snapshot_every: int = 1
    seconds: float = 0.0
    setup_seconds: float = 0.0
    stopped: bool = False
    diverged: bool = False
    cursor: _EpochCursor | None = None

    @property
    def snapshot_epochs(self) -> list[int]:
        """Epochs whose attention snapshot is kept, ascending."""
        return sorted(self.snapshots)

    def _add_snapshot(self, epoch: int, weights: np.ndarray) -> None:
        previous = epoch - 1
        if previous > 0 and previous % self.snapshot_every != 0:
            self.snapshots.pop(previous, None)  # it was only kept as "the newest"
        self.snapshots[epoch] = weights

    @property
    def epochs_done(self) -> int:
        """Number of finished epochs."""
        return len(self.train_loss)

    @property
    def batches_done(self) -> int:
        """Number of optimiser steps taken so far."""
        return len(self.batch_loss)

    @property
    def batches_per_epoch(self) -> int:
        """Optimiser steps per epoch."""
        return math.ceil(self.config.n_train / self.config.batch_size)

    @property
    def finished(self) -> bool:
        """True when the config's number of epochs is reached (or training diverged)."""
        return self.diverged or self.epochs_done >= self.config.epochs


def fixed_example(data: RandomWalkData) -> torch.Tensor:
    """The validation window whose attention is recorded every epoch: (T + 1,)."""
    return data.val[0]


def _loss(
    model: ToyTransformer, windows: torch.Tensor, diversity_weight: float
) -> tuple[torch.Tensor, torch.Tensor]:
    predictions, weights = model(windows[:, :-1])  # (B, T), (n_layers, B, H, T, T)
    mse = torch.mean((predictions - windows[:, 1:]) ** 2)
    if diversity_weight > 0 and weights.shape[2] > 1:
        # head_similarity builds (B, H, H, L, S) tensors: on 2 windows and every 4th query row it
        # stays cheap for 32 heads (an unbiased sample of the same mean similarity).
        penalty = torch.stack([head_diversity_penalty(w[:2, :, ::4]) for w in weights]).mean()
        return mse + diversity_weight * penalty, mse
    return mse, mse


@torch.no_grad()
def validation_loss(model: ToyTransformer, windows: torch.Tensor) -> float:
    """Teacher-forced next-step MSE on (N, T + 1) windows, in eval mode."""
    was_training = model.training
    model.eval()
    predictions, _ = model(windows[:, :-1])
    model.train(was_training)
    return float(torch.mean((predictions - windows[:, 1:]) ** 2))


@torch.no_grad()
def attention_snapshot(model: ToyTransformer, window: torch.Tensor) -> np.ndarray:
    """Attention weights of every layer and head on one (T + 1,) window: (n_layers, H, T, T) float16.

    Half precision (3 significant digits, plenty for a heatmap) halves what a session keeps.
    """
    was_training = model.training
    model.eval()
    _, weights = model(window[None, :-1])  # (n_layers, 1, H, T, T)
    model.train(was_training)
    return weights[:, 0].numpy().astype(np.float16)


def run_data(config: TransformerConfig) -> RandomWalkData:
    """The seeded train and validation windows a run with ``config`` trains and validates on."""
    return random_walk_dataset(
        config.n_train,
        config.n_val,
        config.seq_len,
        step_std=config.step_std,
        momentum=config.momentum,
        seed=config.seed,
    )


def start_run(config: TransformerConfig) -> TrainResult:
    """A fresh, untrained run: data, model, optimiser, baselines and the epoch-0 evaluation.

    :func:`train` calls this itself; a page calls it first when it wants to hold the result
    before any training happens (so a stop in the middle of the first epoch loses nothing).

    Raises:
        ValueError: if ``config`` is not a :class:`TransformerConfig`.
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"expected a TransformerConfig, got {type(config).__name__}")
    started = time.perf_counter()
    data = run_data(config)
    model = ToyTransformer(config)
    model.train()
    result = TrainResult(
        config=config,
        model=model,
        data=data,
        optimizer=torch.optim.Adam(model.parameters(), lr=config.learning_rate),
        data_generator=torch.Generator().manual_seed(config.seed + 2),
        baselines=baseline_losses(data.val, config.momentum),
    )
    result.val_loss.append(validation_loss(model, data.val))
    per_snapshot = 2 * config.n_layers * config.n_heads * config.seq_len**2  # bytes, float16
    result.snapshot_every = max(1, math.ceil(per_snapshot * (config.epochs + 1) / SNAPSHOT_BUDGET_BYTES))
    result._add_snapshot(0, attention_snapshot(model, fixed_example(data)))
    result.setup_seconds = time.perf_counter() - started
    return result


#: Training windows a :class:`Preview` holds.
PREVIEW_WALKS = 5


@dataclass(frozen=True)
class Preview:
    """What a run with a config starts from, before it starts: a page shows it ahead of training.

    Every array is what :func:`start_run` would make for the same config: the same seeded data,
    the same initial weights (so ``attention`` is the run's epoch-0 snapshot, bit for bit) and
    the same baselines. No optimiser, no validation loss: building one costs a few ms.

    Attributes:
        config: the config previewed.
        walks: (K, T + 1) training windows, K = ``min(PREVIEW_WALKS, N_train)``, evenly spaced
            over the training walk (so they hardly overlap); ``walk_index`` (K,) their rows in
            the run's training windows.
        example: (T + 1,) the fixed validation window the attention maps are recorded on.
        attention: (n_layers, H, T, T) float16, the untrained model's attention on ``example``
            (equal to ``start_run(config).snapshots[0]``).
        baselines: ``mean``, ``last_value`` and ``optimum`` validation MSE (:func:`baseline_losses`),
            equal to ``start_run(config).baselines``.
    """

    config: TransformerConfig
    walks: np.ndarray
    walk_index: np.ndarray
    example: np.ndarray
    attention: np.ndarray
    baselines: dict[str, float]


def preview(config: TransformerConfig) -> Preview:
    """The data, the untrained model's attention and the baselines of a run not started yet.

    Raises:
        ValueError: if ``config`` is not a :class:`TransformerConfig`.
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"expected a TransformerConfig, got {type(config).__name__}")
    with one_thread():
        data = run_data(config)
        model = ToyTransformer(config)  # seeded from config.seed exactly as start_run builds it
        example = fixed_example(data)
        n = data.train.shape[0]
        index = np.unique(np.linspace(0, n - 1, min(PREVIEW_WALKS, n)).round().astype(int))  # (K,)
        return Preview(
            config=config,
            walks=data.train[torch.as_tensor(index)].numpy(),
            walk_index=index,
            example=example.numpy(),
            attention=attention_snapshot(model, example),
            baselines=baseline_losses(data.val, config.momentum),
        )


def _on_one_thread(fn: Callable) -> Callable:
    """Run ``fn`` inside :func:`one_thread` (the evaluation helpers are as small as training)."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        with one_thread():
            return fn(*args, **kwargs)

    return wrapper


def train(
    config: TransformerConfig,
    on_epoch: Callable[[TrainResult], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: TrainResult | None = None,
    *,
    until_epoch: int | None = None,
) -> TrainResult:
    """Train (or keep training) the toy Transformer with Adam on next-step MSE.

    Args:
        config: the run's config; training goes on until ``config.epochs`` epochs are done.
        on_epoch: called with the result after every finished epoch (after its validation loss
            and attention snapshot are recorded).
        should_stop: called before every optimiser step; returning True ends the call at once
            (within one batch), with the result ready to resume. An exception raised inside it
            (e.g. Streamlit's rerun signal) also leaves the result consistent, at a batch boundary.
        resume: a result returned earlier; it is trained further *in place* and returned. Its
            config must equal ``config`` except for ``epochs``, so a run can be extended.
        until_epoch: stop once this many epochs are done (``min`` with ``config.epochs``); the
            page's "step one epoch" button uses ``result.epochs_done + 1``.

    Returns:
        The :class:`TrainResult`.

    Raises:
        ValueError: if ``resume`` was made with a different config (other than ``epochs``).
    """
    if resume is not None and (not isinstance(resume, TrainResult) or not resume.config.same_run_as(config)):
        raise ValueError("resume must come from a run with the same config (only epochs may change)")
    with one_thread():
        result = start_run(config) if resume is None else resume
        result.config = config
        result.stopped = False
        target = config.epochs if until_epoch is None else min(config.epochs, until_epoch)
        _run_epochs(result, target, on_epoch, should_stop)
    return result


def _run_epochs(
    result: TrainResult,
    target: int,
    on_epoch: Callable[[TrainResult], None] | None,
    should_stop: Callable[[], bool] | None,
) -> None:
    config = result.config
    model, optimizer, train_windows = result.model, result.optimizer, result.data.train
    batch_size = config.batch_size
    n_batches = result.batches_per_epoch
    model.train()
    while result.epochs_done < target and not result.diverged:
        clock = time.perf_counter()
        if result.cursor is None:
            order = torch.randperm(train_windows.shape[0], generator=result.data_generator)
            result.cursor = _EpochCursor(order=order)
        cursor = result.cursor
        while cursor.next_batch < n_batches:
            if should_stop is not None:
                result.seconds += time.perf_counter() - clock
                if should_stop():
                    result.stopped = True
                    return
                clock = time.perf_counter()
            index = cursor.order[cursor.next_batch * batch_size : (cursor.next_batch + 1) * batch_size]
            loss, mse = _loss(model, train_windows[index], config.diversity_weight)
            value = float(mse.detach())
            if not math.isfinite(value) or not math.isfinite(float(loss.detach())):
                result.diverged = True
                result.batch_loss.append(value)
                break
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            # Book-keeping last, so an interruption never leaves a half-counted batch.
            result.batch_loss.append(value)
            cursor.loss_sum += value * index.numel()
            cursor.count += index.numel()
            cursor.next_batch += 1
        if result.diverged:
            result.seconds += time.perf_counter() - clock
            return
        result.cursor = None
        result.val_loss.append(validation_loss(model, result.data.val))
        result._add_snapshot(result.epochs_done + 1, attention_snapshot(model, fixed_example(result.data)))
        result.train_loss.append(cursor.loss_sum / cursor.count)
        result.seconds += time.perf_counter() - clock
        if on_epoch is not None:
            on_epoch(result)


# --------------------------------------------------------------------------------------------
# The post's observations, measured
# --------------------------------------------------------------------------------------------


@torch.no_grad()
def predict(model: ToyTransformer, inputs: torch.Tensor) -> torch.Tensor:
    """Eval-mode predictions for (N, T') inputs: (N, T')."""
    was_training = model.training
    model.eval()
    predictions, _ = model(inputs)
    model.train(was_training)
    return predictions


@_on_one_thread
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


@_on_one_thread
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


def rollout_error(
    model: ToyTransformer, windows: torch.Tensor, context: int | None = None
) -> dict[str, float]:
    """MSE of a step-by-step rollout vs. the truth, with the two baselines rolled out alike.

    The post's "given the first half, predict the second half": context defaults to T // 2.

    Returns:
        ``model``, ``last_value`` (repeat the last context value) and ``mean`` (repeat the
        context mean): MSE averaged over the generated steps and windows.
    """
    T = windows.shape[1] - 1
    context = T // 2 if context is None else context
    truth = windows[:, context:]  # (N, T + 1 - context)
    generated = rollout(model, windows, context)
    last = windows[:, context - 1 : context]  # (N, 1)
    mean = windows[:, :context].mean(1, keepdim=True)  # (N, 1)
    return {
        "model": float(((generated - truth) ** 2).mean()),
        "last_value": float(((last - truth) ** 2).mean()),
        "mean": float(((mean - truth) ** 2).mean()),
    }


@_on_one_thread
@torch.no_grad()
def evaluate_shuffled(
    model: ToyTransformer, windows: torch.Tensor, *, seed: int = 0, repeats: int = 4
) -> dict[str, float]:
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

    Returns:
        ``ordered`` and ``shuffled`` (MSE of the prediction of x[T]) and ``ratio`` =
        shuffled / ordered.
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
    return {"ordered": ordered, "shuffled": shuffled, "ratio": ratio}


@torch.no_grad()
def validation_attention(model: ToyTransformer, windows: torch.Tensor) -> torch.Tensor:
    """Eval-mode attention weights on (N, T + 1) windows: (n_layers, N, H, T, T)."""
    was_training = model.training
    model.eval()
    _, weights = model(windows[:, :-1])
    model.train(was_training)
    return weights


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


# --------------------------------------------------------------------------------------------
# Diagnostics (the post's troubleshooting table, evaluated on a run)
# --------------------------------------------------------------------------------------------

#: Diagnostic ids in the order of the post's table (section 5.4).
DIAGNOSTICS = ("oscillation", "concentration", "nan", "redundancy", "constant_output")


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
    """
    v = np.asarray(val_loss, dtype=float)
    if v.size < 2:
        return 0.0
    if not np.all(np.isfinite(v)) or np.any(v <= 0):
        return math.nan
    return float(np.clip(np.diff(np.log(v)), 0.0, None).sum())


@_on_one_thread
def diagnose(result: TrainResult, n_windows: int = 64) -> list[Diagnostic]:
    """Evaluate the post's five symptoms on a run, each flagged green / amber / red.

    - ``oscillation``: :func:`loss_oscillation` of the validation loss (the post: wrong scale).
      The presets' runs measure 0.2-0.55 (seeds 0-2, with or without √d_k), so amber starts at 0.6.
    - ``concentration``: mean largest attention weight per row, rows with >= 4 keys (the post:
      weights concentrated on one position, entropy too low).
    - ``nan``: 1 if any loss or weight is NaN/infinite (the post: -inf masking by addition).
    - ``redundancy``: mean similarity of heads (core.diagnostics.redundancy_score) over the
      first ``n_windows`` validation windows and all layers (the post: heads repeating each other).
    - ``constant_output``: max(0, 1 - std(predictions) / std(targets)) on validation (the post:
      every output the same, a view/transpose bug).
    """
    model, windows = result.model, result.data.val[:n_windows]
    losses = np.asarray(result.val_loss + result.train_loss + result.batch_loss, dtype=float)
    predictions = predict(model, windows[:, :-1])
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
    return [
        d if d.level else Diagnostic(d.id, _level(d.value, d.amber, d.red), d.value, d.amber, d.red)
        for d in out
    ]


@_on_one_thread
def attention_summary(result: TrainResult, n_windows: int = 64) -> dict[str, float]:
    """Where the attention mass goes on validation windows, in a few numbers.

    Returns:
        ``recent3``: share of mass on the three newest positions (distances 0, 1, 2), averaged over
        layers, heads, queries and windows; ``recent3_uniform``: the same share for uniform
        attention (the reference); ``future``: share of mass on future keys (0 with the causal
        mask) and ``future_uniform`` the same for uniform attention; ``ahead``: share on the key
        at t + 1 (the query's own target; 0 with the mask) and ``ahead_uniform``; ``support``:
        mean effective number of attended keys per row.
    """
    weights = validation_attention(result.model, result.data.val[:n_windows])
    T = weights.shape[-1]
    shares = attention_by_distance(weights)
    uniform = uniform_attention_by_distance(T, result.config.causal)
    zero = T - 1  # index of distance 0
    return {
        "recent3": float(shares[zero : zero + 3].sum()),
        "recent3_uniform": float(uniform[zero : zero + 3].sum()),
        "future": float(shares[:zero].sum()),
        "future_uniform": float(uniform[:zero].sum()),
        "ahead": float(shares[zero - 1]) if T > 1 else 0.0,
        "ahead_uniform": float(uniform[zero - 1]) if T > 1 else 0.0,
        "support": float(effective_support(weights).mean()),
    }


@dataclass(frozen=True)
class Findings:
    """Everything the page reports about a run, measured on the validation set.

    Attributes:
        val_loss: teacher-forced next-step validation MSE (what the training curve shows).
        prefix_error: honest next-step MSE, from the past only (:func:`prefix_one_step_error`).
        rollout: :func:`rollout_error` (``model``, ``last_value``, ``mean``) from the first half.
        shuffle: :func:`evaluate_shuffled` (``ordered``, ``shuffled``, ``ratio``).
        attention: :func:`attention_summary`.
        distances: (K,) query-key distances shown; ``shares`` (K,) the model's attention mass at
            each and ``uniform`` (K,) uniform attention's (future distances only without a mask).
        diagnostics: :func:`diagnose`.
        example: the fixed validation window (T + 1,); ``example_one_step`` (T,) its one-step
            predictions; ``example_rollout`` (T + 1 - context,) generated from ``context`` values.
    """

    val_loss: float
    prefix_error: float
    rollout: dict[str, float]
    shuffle: dict[str, float]
    attention: dict[str, float]
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
        weights = validation_attention(model, val[:64])
        shares = attention_by_distance(weights)
        uniform = uniform_attention_by_distance(T, result.config.causal)
        distances = np.arange(-(T - 1), T)
        if result.config.causal:
            keep = distances >= 0
            distances, shares, uniform = distances[keep], shares[keep], uniform[keep]
        example = fixed_example(result.data)
        val_loss = validation_loss(model, val)
        return Findings(
            val_loss=val_loss,
            # Under the causal mask the honest error is the teacher-forced loss exactly (the mask
            # already hides the future): skip its T forward passes (~0.4 s) and reuse the loss.
            prefix_error=val_loss if result.config.causal else prefix_one_step_error(model, val),
            rollout=rollout_error(model, val, context),
            shuffle=evaluate_shuffled(model, val, seed=result.config.seed),
            attention=attention_summary(result),
            distances=distances,
            shares=shares,
            uniform=uniform,
            diagnostics=diagnose(result),
            example=example.numpy(),
            example_one_step=predict(model, example[None, :-1])[0].numpy(),
            example_rollout=rollout(model, example[None], context)[0].numpy(),
            context=context,
        )
