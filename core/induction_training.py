"""Train the induction-head model, resumably, and measure the heads as they form.

:func:`train_induction` is a plain loop that knows nothing about the UI (like
``core.training.train``): the page passes ``on_step`` (to redraw its charts) and ``should_stop``
(polled before every step, to pause). An :class:`InductionRun` keeps the model, the optimiser and
the measurements; ``train_induction(config, resume=run)`` continues it *in place*. Every batch is a
function of the seed and the step only (``core.induction.training_batch``), so a run stopped and
resumed at any step gives the same weights and the same history as one uninterrupted run.

Every ``eval_every`` steps (and at step 0 and the last step) the run is measured on its held-out
sequences (:class:`EvalPoint`): the loss, the accuracy on the repeated part, and each head's
previous-token and prefix-matching scores, so the page can draw the phase change of Olsson et al.
(2022): a plateau, then a cliff where the loss drops, the accuracy jumps and the induction head's
prefix-matching score rises *together*. :func:`formation_step` finds the cliff on the run itself.

Shapes: B batch, T sequence length, H heads, n_layers layers, V vocabulary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from core.induction import (
    INDUCTION_THRESHOLD,
    InductionBatch,
    InductionConfig,
    InductionTransformer,
    batch_prefix_matching_score,
    batch_previous_token_score,
    eval_batch,
    induction_head_of,
    next_token_loss,
    training_batch,
)
from core.threads import one_thread
from core.training import optimiser_steps, resume_or_start


@dataclass(frozen=True)
class EvalPoint:
    """The run measured on its held-out sequences after ``step`` optimiser steps.

    Attributes:
        step: optimiser steps done.
        loss: mean next-token cross-entropy over every position (nats; chance is log V).
        copy_loss: the same over the repeated part only.
        accuracy: share of the repeated part's next tokens predicted exactly (argmax).
        previous_token: (n_layers, H) each head's previous-token score.
        prefix_matching: (n_layers, H) each head's prefix-matching score.
    """

    step: int
    loss: float
    copy_loss: float
    accuracy: float
    previous_token: np.ndarray
    prefix_matching: np.ndarray


@torch.no_grad()
def evaluate(
    model: InductionTransformer,
    batch: InductionBatch,
    *,
    step: int = 0,
    ablate: frozenset[tuple[int, int]] = frozenset(),
    qk_scale: dict[int, float] | None = None,
) -> EvalPoint:
    """Measure ``model`` on ``batch`` (optionally with heads ablated or a layer's scale changed).

    Raises:
        ValueError: as :meth:`InductionTransformer.forward`.
    """
    was_training = model.training
    model.eval()
    tokens = torch.from_numpy(batch.tokens)  # (B, T)
    out = model(tokens, ablate=ablate, qk_scale=qk_scale)
    model.train(was_training)
    logits = out.logits[:, :-1]  # (B, T - 1, V): position t predicts t + 1
    targets = tokens[:, 1:]  # (B, T - 1)
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (B, T - 1)
    mask = torch.from_numpy(batch.copy_mask)
    correct = logits.argmax(-1) == targets  # (B, T - 1)
    weights = out.weights.numpy()  # (B, n_layers, H, T, T)
    n_layers = weights.shape[1]
    return EvalPoint(
        step=step,
        loss=float(nll.mean()),
        copy_loss=float(nll[mask].mean()),
        accuracy=float(correct[mask].double().mean()),
        previous_token=np.stack([batch_previous_token_score(weights[:, i]) for i in range(n_layers)]),
        prefix_matching=np.stack(
            [batch_prefix_matching_score(weights[:, i], batch.tokens) for i in range(n_layers)]
        ),
    )


@dataclass
class InductionRun:
    """A training run so far; pass it back to :func:`train_induction` as ``resume`` to continue.

    Attributes:
        config: the run's config (``steps`` = the target it was last run towards).
        model: the :class:`InductionTransformer`, trained in place.
        optimizer: Adam over the model (its moments make a paused run resume exactly).
        eval_set: the held-out sequences (fixed by the seed).
        steps_done: optimiser steps taken.
        train_loss: the training loss of every step.
        history: one :class:`EvalPoint` at step 0, every ``eval_every`` steps and at the end.
        seconds: time spent training and measuring (callbacks excluded).
        stopped: True when the last call returned because ``should_stop`` said so.
    """

    config: InductionConfig
    model: InductionTransformer
    optimizer: torch.optim.Optimizer
    eval_set: InductionBatch
    steps_done: int = 0
    train_loss: list[float] = field(default_factory=list)
    history: list[EvalPoint] = field(default_factory=list)
    seconds: float = 0.0
    stopped: bool = False

    @property
    def finished(self) -> bool:
        """True once the config's steps are done."""
        return self.steps_done >= self.config.steps

    @property
    def latest(self) -> EvalPoint:
        """The newest measurement."""
        return self.history[-1]

    def measure(self) -> None:
        """Add an :class:`EvalPoint` for the current step unless it is already the newest one."""
        if not self.history or self.history[-1].step != self.steps_done:
            self.history.append(evaluate(self.model, self.eval_set, step=self.steps_done))


def start_induction(config: InductionConfig) -> InductionRun:
    """A fresh run: the seeded model, Adam, the held-out set and its step-0 measurement.

    Raises:
        ValueError: if ``config`` is not an :class:`InductionConfig`.
    """
    if not isinstance(config, InductionConfig):
        raise ValueError(f"expected an InductionConfig, got {type(config).__name__}")
    with one_thread():
        clock = time.perf_counter()
        model = InductionTransformer(config)
        model.train()
        run = InductionRun(
            config=config,
            model=model,
            optimizer=torch.optim.Adam(model.parameters(), lr=config.lr),
            eval_set=eval_batch(config),
        )
        run.measure()
        run.seconds += time.perf_counter() - clock
    return run


def _step_loss(run: InductionRun) -> torch.Tensor:
    """Next-token cross-entropy on step ``run.steps_done``'s fresh batch (a scalar)."""
    tokens = torch.from_numpy(training_batch(run.config, run.steps_done).tokens)  # (B, T)
    return next_token_loss(run.model(tokens).logits, tokens)


def _record_step(run: InductionRun, loss: float) -> None:
    """After an update: the step's loss, the step counted, and a measurement when one is due."""
    run.train_loss.append(loss)
    run.steps_done += 1
    if run.steps_done % run.config.eval_every == 0 or run.steps_done == run.config.steps:
        run.measure()


def train_induction(
    config: InductionConfig,
    on_step: Callable[[InductionRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: InductionRun | None = None,
    *,
    until_step: int | None = None,
) -> InductionRun:
    """Train the model by Adam on next-token cross-entropy over every position of fresh batches.

    Args:
        config: the run's config; training goes on until ``config.steps`` steps are done.
        on_step: called with the run after every step (after a measurement, when one was due).
        should_stop: called before every step; True ends the call at once, ready to resume. An
            exception raised inside it (Streamlit's rerun signal) also leaves the run consistent.
        resume: a run returned earlier, trained further *in place*. Its config must equal
            ``config`` except for ``steps``, so a run can be extended.
        until_step: stop once this many steps are done (``min`` with ``config.steps``); a page's
            "Step" button uses ``run.steps_done + 1``.

    Returns:
        The :class:`InductionRun`. Deterministic for a seed; a paused-and-resumed run equals one run.

    Raises:
        ValueError: if ``config`` is not an :class:`InductionConfig` or ``resume`` comes from a
            different config (other than ``steps``).
    """
    with one_thread():
        run = resume_or_start(InductionRun, config, resume, start_induction, length="steps")
        target = config.steps if until_step is None else min(config.steps, until_step)
        optimiser_steps(run, target, _step_loss, _record_step, on_step, should_stop)
    return run


# --------------------------------------------------------------------------------------------
# Reading the history
# --------------------------------------------------------------------------------------------


#: Smallest rise of the repeated-part accuracy (final minus plateau) that counts as a cliff.
MIN_GAIN = 0.3


@dataclass(frozen=True)
class Formation:
    """Where the induction head formed, read from a run's history.

    Attributes:
        step: the first measured step at which the accuracy on the repeated part reaches halfway
            from its plateau to its final value; None unless the run formed an induction head: the
            accuracy rose by at least ``MIN_GAIN`` *and* at the last measurement a head of a layer
            >= 1 has a prefix-matching score >= ``INDUCTION_THRESHOLD`` (a model that climbs by
            another route, e.g. with LayerNorm, has no cliff to mark).
        head: that induction head (layer, head), None when there is none.
        plateau: the accuracy at the start of the history (step 0).
        final: the accuracy at the last measurement.
        jump_from, jump_to: the two consecutive measured steps with the largest accuracy rise
            between them, and ``jump`` that rise (the steepest part of the cliff).
    """

    step: int | None
    head: tuple[int, int] | None
    plateau: float
    final: float
    jump_from: int
    jump_to: int
    jump: float


def formation(history: Sequence[EvalPoint]) -> Formation:
    """The cliff of a run: the midpoint crossing of its repeated-part accuracy and its steepest rise.

    Olsson et al. (2022) see the induction heads form in a phase change: the in-context loss falls
    and the prefix-matching scores rise at the same point of training. Here the cliff is read on the
    accuracy, and only counted when an induction head is there at the end.

    The midpoint between the first and the last measurement is robust to the slow drift of the
    plateau (the model learns unigram statistics first) and to noise after the cliff; the largest
    jump between two consecutive measurements says how sharp the cliff is.

    Raises:
        ValueError: if ``history`` has fewer than two points.
    """
    if len(history) < 2:
        raise ValueError("a formation needs at least two measurements")
    steps = np.array([p.step for p in history])
    acc = np.array([p.accuracy for p in history])
    plateau, final = float(acc[0]), float(acc[-1])
    rises = np.diff(acc)
    k = int(np.argmax(rises))
    head = induction_head_of(history[-1].prefix_matching)
    if head is not None and not history[-1].prefix_matching[head] >= INDUCTION_THRESHOLD:
        head = None
    step = None
    if final - plateau >= MIN_GAIN and head is not None:
        step = int(steps[np.argmax(acc >= (plateau + final) / 2)])
    return Formation(
        step=step,
        head=head,
        plateau=plateau,
        final=final,
        jump_from=int(steps[k]),
        jump_to=int(steps[k + 1]),
        jump=float(rises[k]),
    )


def formation_step(history: Sequence[EvalPoint]) -> int | None:
    """The step where the induction head formed (:attr:`Formation.step`), or None when it did not.

    Raises:
        ValueError: if ``history`` has fewer than two points.
    """
    return formation(history).step
