"""Train the toy Transformer on random walks, resumably: a run's data, its model and the loop.

The task (the post's second stage, "given the first part of a random-walk sequence, predict what
follows") is posed as **next-step prediction**: a window holds T + 1 consecutive values of a
random walk; the input is the first T values and the target at position t is the value at
t + 1. With the causal mask, position t sees only positions <= t, so predicting all T positions
at once is honest. Without the mask, position t can also see position t + 1, which *is* its
target: the training loss becomes excellent while honest prediction (from the past only) and
step-by-step rollout (feeding predictions back) stay poor; the training lesson
(``core.lessons.training``) measures that, and gathers and judges everything the page reports
about a run.

A random walk's next step is unpredictable: the best possible guess for x[t+1] is x[t], so the
**last-value baseline** is the floor an honest model can reach, not just a competitor. The
**mean baseline** (the average of the values seen so far) is what perfectly uniform attention
would give. The two baselines are the two extreme attention patterns, all weight on the newest
position vs. spread evenly: kernel regression with bandwidth 0 vs. infinity.

:func:`train` is a plain loop that knows nothing about the UI: the page passes ``on_epoch`` (to
redraw charts) and ``should_stop`` (checked before every batch, to pause). A :class:`TrainingRun`
keeps the model, the optimiser, the random generators and the position inside the current epoch,
so ``train(config, resume=result)`` continues exactly where it stopped: a paused-and-resumed run
gives the same numbers as one uninterrupted run.

Shapes: B batch, T sequence length, H heads, L queries, S keys (L = S = T).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import torch

from core.diagnostics import head_diversity_penalty
from core.random_walks import (  # noqa: F401 (re-exported: the training API of issue 4)
    STRIDE,
    Baselines,
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
# What the loop records: the validation loss and the attention on one fixed window
# --------------------------------------------------------------------------------------------


def fixed_example(data: RandomWalkData) -> torch.Tensor:
    """The validation window whose attention is recorded every epoch: (T + 1,)."""
    return data.val[0]


@torch.no_grad()
def predict(model: ToyTransformer, inputs: torch.Tensor) -> torch.Tensor:
    """Eval-mode predictions for (N, T') inputs: (N, T')."""
    was_training = model.training
    model.eval()
    predictions, _ = model(inputs)
    model.train(was_training)
    return predictions


@torch.no_grad()
def validation_loss(model: ToyTransformer, windows: torch.Tensor) -> float:
    """Teacher-forced next-step MSE on (N, T + 1) windows, in eval mode."""
    predictions = predict(model, windows[:, :-1])  # (N, T)
    return float(torch.mean((predictions - windows[:, 1:]) ** 2))


@torch.no_grad()
def validation_attention(model: ToyTransformer, windows: torch.Tensor) -> torch.Tensor:
    """Eval-mode attention weights on (N, T + 1) windows: (n_layers, N, H, T, T)."""
    was_training = model.training
    model.eval()
    _, weights = model(windows[:, :-1])
    model.train(was_training)
    return weights


def attention_snapshot(model: ToyTransformer, window: torch.Tensor) -> np.ndarray:
    """Attention weights of every layer and head on one (T + 1,) window: (n_layers, H, T, T) float16.

    Half precision (3 significant digits, plenty for a heatmap) halves what a session keeps.
    """
    weights = validation_attention(model, window[None])  # (n_layers, 1, H, T, T)
    return weights[:, 0].numpy().astype(np.float16)


# --------------------------------------------------------------------------------------------
# A run: its state, its data and its start
# --------------------------------------------------------------------------------------------


@dataclass
class _EpochCursor:
    """Where training stands inside an unfinished epoch."""

    order: torch.Tensor  # (N_train,) this epoch's shuffle
    next_batch: int = 0
    loss_sum: float = 0.0
    count: int = 0


@dataclass
class TrainingRun:
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
        baselines: validation MSE of the reference predictors (:class:`Baselines`).
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
    baselines: Baselines
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


def start_run(config: TransformerConfig) -> TrainingRun:
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
    result = TrainingRun(
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
        baselines: the reference predictors' validation MSE (:func:`baseline_losses`), equal to
            ``start_run(config).baselines``.
    """

    config: TransformerConfig
    walks: np.ndarray
    walk_index: np.ndarray
    example: np.ndarray
    attention: np.ndarray
    baselines: Baselines


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


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------


def train(
    config: TransformerConfig,
    on_epoch: Callable[[TrainingRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: TrainingRun | None = None,
    *,
    until_epoch: int | None = None,
) -> TrainingRun:
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
        The :class:`TrainingRun`.

    Raises:
        ValueError: if ``resume`` was made with a different config (other than ``epochs``).
    """
    with one_thread():
        result = resume_or_start(TrainingRun, config, resume, start_run, length="epochs")
        target = config.epochs if until_epoch is None else min(config.epochs, until_epoch)
        _run_epochs(result, target, on_epoch, should_stop)
    return result


RunT = TypeVar("RunT")


def resume_or_start(
    kind: type[RunT], config: Any, resume: RunT | None, start: Callable[[Any], RunT], *, length: str
) -> RunT:
    """The run a training loop trains: ``resume`` (trained further in place) or ``start(config)``.

    Shared by this module's, ``core.in_context``'s and ``core.induction_training``'s loops. The run's
    ``config`` becomes ``config`` (only its length may differ) and its ``stopped`` flag is cleared.

    Args:
        kind: the run's class; config: the config to train on; resume: a run returned earlier,
            or None; start: makes a fresh run of ``config``; length: the config field that may
            differ (``"epochs"``, ``"steps"``), named in the error.

    Raises:
        ValueError: if ``resume`` is not a ``kind`` made with the same config (other than ``length``).
    """
    if resume is not None and (not isinstance(resume, kind) or not resume.config.same_run_as(config)):
        raise ValueError(f"resume must come from a run with the same config (only {length} may change)")
    run = start(config) if resume is None else resume
    run.config = config
    run.stopped = False
    return run


def optimiser_steps(
    run: Any,
    target: int,
    loss_of: Callable[[Any], torch.Tensor],
    record: Callable[[Any, float], None],
    on_step: Callable[[Any], None] | None,
    should_stop: Callable[[], bool] | None,
) -> None:
    """One optimiser step at a time until ``run.steps_done`` reaches ``target`` (or a stop).

    Shared by ``core.in_context``'s and ``core.induction_training``'s loops: ``should_stop`` is
    asked before every step (True: ``run.stopped``, the run ready to resume); ``loss_of(run)`` is
    the step's scalar loss, minimised by ``run.optimizer``; ``record(run, loss)`` does the
    book-keeping (and counts the step) only after the update, so an interruption never leaves a
    half-counted step; the step's wall time goes to ``run.seconds``; ``on_step(run)`` follows.
    """
    while run.steps_done < target:
        if should_stop is not None and should_stop():
            run.stopped = True
            break
        clock = time.perf_counter()
        loss = loss_of(run)
        run.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        run.optimizer.step()
        record(run, float(loss.detach()))
        run.seconds += time.perf_counter() - clock
        if on_step is not None:
            on_step(run)


def _run_epochs(
    result: TrainingRun,
    target: int,
    on_epoch: Callable[[TrainingRun], None] | None,
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
