"""Measure a toy Transformer on held-out random walks: the post's observations, as numbers.

The training loop (``core.training``) records two of these after every epoch: the teacher-forced
validation loss (:func:`validation_loss`) and the attention on one fixed validation window
(:func:`attention_snapshot` of :func:`fixed_example`). The rest measures what a training curve
hides (the post, section 4.3):

- :func:`prefix_one_step_error`: honest next-step error, each x[t+1] predicted from x[0..t] only.
  With the causal mask it *equals* the teacher-forced loss; without the mask position t sees its
  own target, and the honest error shows what the model does when the future is really unknown.
- :func:`rollout_error`: "given the first half, predict the second half", each prediction fed back,
  against repeating the last value or the mean (:class:`RolloutError`).
- :func:`evaluate_shuffled`: scramble the order of the history at inference (:class:`ShuffleTest`);
  attention without positions treats its keys as a set and cannot notice.
- :func:`attention_summary`: where the attention mass goes, by query-key distance, against uniform
  attention (:class:`AttentionSummary`).

Every function puts the model in eval mode for the measurement and restores its mode after.

Shapes: N windows, T sequence length, H heads, L queries, S keys (L = S = T).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from core.diagnostics import effective_support
from core.random_walks import RandomWalkData
from core.threads import one_thread
from core.transformer import ToyTransformer

if TYPE_CHECKING:  # core.training imports this module: only the type from there
    from core.training import TrainResult


def fixed_example(data: RandomWalkData) -> torch.Tensor:
    """The validation window whose attention is recorded every epoch: (T + 1,)."""
    return data.val[0]


def on_one_thread(fn: Callable) -> Callable:
    """Run ``fn`` inside :func:`core.threads.one_thread` (the evaluations are as small as training)."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        with one_thread():
            return fn(*args, **kwargs)

    return wrapper


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
def attention_summary(result: TrainResult, n_windows: int = 64) -> AttentionSummary:
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
