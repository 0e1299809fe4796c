"""Do many heads repeat each other? Redundancy against the number of heads, measured.

The post (section 5.3): "More heads are not always better. With 32 heads training took much longer
and the result was no better; the attention maps showed many heads had learned very similar
patterns." Here, for a fixed d_model and every head count H that divides it (up to 32), a one-layer
model is built from the same seed and its heads' maps are compared with
``core.diagnostics.redundancy_score`` (mean pairwise similarity, 1 - JS / log 2):

1. at initialisation (random Xavier weights), and
2. after a short, seeded training run on the post's toy task (section 4.2): predict the next value
   of a random walk from the values so far, with sinusoidal positions and a causal mask.

The two answers differ, and both are reported: random heads are similar mostly because random maps
are all fairly flat (they look alike by being close to uniform), trained heads because several
learn the same useful pattern (here: look at the latest values). ``effective_support`` tells the
two apart. The training page trains the full model; this is the cheap version.

Shapes: B batch, H heads, T sequence length, d_model model width.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import torch
from torch import nn

from core.attention import causal_mask
from core.diagnostics import effective_support, head_similarity, redundancy_score
from core.multihead import MAX_HEADS, MultiHeadAttention, head_options
from core.positional import sinusoidal_encoding
from core.threads import one_thread

#: Caps that keep one request cheap on a shared server.
MAX_TRAIN_STEPS = 400
MAX_SEQ_LEN = 32


@dataclass(frozen=True)
class RedundancyPoint:
    """Measurements for one head count, on the same held-out batch of walks.

    Attributes:
        n_heads: H.
        redundancy_init / redundancy_trained: mean pairwise head similarity in [0, 1] (0 for H = 1).
        similar_pairs_init / similar_pairs_trained: share of head pairs with similarity >= the
            threshold (0 for H = 1).
        support_init / support_trained: mean effective number of attended keys per row.
        loss_init / loss_trained: mean squared error of the next-value prediction (1.0 is the
            noise floor: a random-walk step has variance 1).
    """

    n_heads: int
    redundancy_init: float
    redundancy_trained: float
    similar_pairs_init: float
    similar_pairs_trained: float
    support_init: float
    support_trained: float
    loss_init: float
    loss_trained: float


@dataclass(frozen=True)
class RedundancyCurve:
    """The experiment's settings and one :class:`RedundancyPoint` per head count."""

    d_model: int
    seq_len: int
    train_steps: int
    threshold: float
    points: tuple[RedundancyPoint, ...]


class _ToyModel(nn.Module):
    """value -> Linear(1, d_model) + PE -> multi-head self-attention (causal) -> Linear(d_model, 1)."""

    def __init__(self, d_model: int, n_heads: int, seq_len: int, generator: torch.Generator) -> None:
        super().__init__()
        self.embed = nn.Linear(1, d_model)
        self.attention = MultiHeadAttention(d_model, n_heads)
        self.readout = nn.Linear(d_model, 1)
        for linear in (self.embed, self.readout):
            nn.init.xavier_uniform_(linear.weight, generator=generator)
            nn.init.zeros_(linear.bias)
        self.attention.reset_parameters(generator)
        self.register_buffer("pe", sinusoidal_encoding(seq_len, d_model), persistent=False)
        self.register_buffer("mask", causal_mask(seq_len), persistent=False)

    def forward(self, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.embed(values[..., None]) + self.pe  # (B, T) -> (B, T, d_model)
        out, weights = self.attention(h, h, h, mask=self.mask)  # (B, T, d_model), (B, H, T, T)
        return self.readout(out)[..., 0], weights  # (B, T), (B, H, T, T)


def _walks(n: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n random walks of seq_len + 1 steps: inputs (n, T) and next-value targets (n, T)."""
    walk = torch.cumsum(torch.randn(n, seq_len + 1, generator=generator), dim=1)
    return walk[:, :-1], walk[:, 1:]


def _measure(model: _ToyModel, x: torch.Tensor, y: torch.Tensor, threshold: float) -> tuple[float, ...]:
    with torch.no_grad():
        pred, w = model(x)
        loss = float(((pred - y) ** 2).mean())
        H = w.shape[1]
        if H > 1:
            sim = head_similarity(w).mean(0)  # (B, H, H) -> (H, H), averaged over the batch
            upper = sim[torch.triu(torch.ones(H, H, dtype=torch.bool), diagonal=1)]
            share = float((upper >= threshold).double().mean())
        else:
            share = 0.0
        return redundancy_score(w), share, float(effective_support(w).mean()), loss


def redundancy_vs_heads(
    d_model: int,
    heads: Sequence[int] | None = None,
    *,
    seq_len: int = 16,
    train_steps: int = 150,
    batch_size: int = 32,
    lr: float = 3e-3,
    threshold: float = 0.9,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> RedundancyCurve:
    """Redundancy of H heads at initialisation and after ``train_steps`` Adam steps, for each H.

    Args:
        d_model: model width (1..256).
        heads: head counts to try; default every divisor of d_model up to 32.
        seq_len: walk length T (2..32).
        train_steps: Adam steps per head count (0..400); 0 reports the initial model twice.
        threshold: similarity from which a pair of heads counts as "repeating".
        seed: fixes the weights, the training batches and the held-out batch.
        progress: optional callback ``progress(done, total)`` after each head count.

    Raises:
        ValueError: on sizes outside the caps or a head count that does not divide d_model.
    """
    if not isinstance(d_model, int) or not 1 <= d_model <= 256:
        raise ValueError(f"d_model must be an integer in [1, 256], got {d_model!r}")
    if not isinstance(seq_len, int) or not 2 <= seq_len <= MAX_SEQ_LEN:
        raise ValueError(f"seq_len must be an integer in [2, {MAX_SEQ_LEN}], got {seq_len!r}")
    if not isinstance(train_steps, int) or not 0 <= train_steps <= MAX_TRAIN_STEPS:
        raise ValueError(f"train_steps must be an integer in [0, {MAX_TRAIN_STEPS}], got {train_steps!r}")
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    valid = head_options(d_model, MAX_HEADS)
    heads = valid if heads is None else list(heads)
    bad = [h for h in heads if h not in valid]
    if bad or not heads:
        raise ValueError(
            f"head counts {bad or heads} are not divisors of d_model={d_model} up to {MAX_HEADS}"
        )

    with one_thread():
        points = _run(d_model, heads, seq_len, train_steps, batch_size, lr, threshold, int(seed), progress)
    return RedundancyCurve(d_model, seq_len, train_steps, threshold, tuple(points))


def _run(
    d_model: int,
    heads: list[int],
    seq_len: int,
    train_steps: int,
    batch_size: int,
    lr: float,
    threshold: float,
    seed: int,
    progress: Callable[[int, int], None] | None,
) -> list[RedundancyPoint]:
    test_x, test_y = _walks(32, seq_len, torch.Generator().manual_seed(seed + 1000))
    points = []
    for done, n_heads in enumerate(heads, start=1):
        model = _ToyModel(d_model, n_heads, seq_len, torch.Generator().manual_seed(seed))
        init = _measure(model, test_x, test_y, threshold)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        batches = torch.Generator().manual_seed(seed + 1)  # same batches for every H
        model.train()
        for _ in range(train_steps):
            x, y = _walks(batch_size, seq_len, batches)
            pred, _ = model(x)
            loss = ((pred - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        trained = _measure(model, test_x, test_y, threshold)
        points.append(
            RedundancyPoint(
                n_heads=n_heads,
                redundancy_init=init[0],
                redundancy_trained=trained[0],
                similar_pairs_init=init[1],
                similar_pairs_trained=trained[1],
                support_init=init[2],
                support_trained=trained[2],
                loss_init=init[3],
                loss_trained=trained[3],
            )
        )
        if progress is not None:
            progress(done, len(heads))
    return points


def points_to_json(points: Sequence[RedundancyPoint]) -> str:
    """The points as JSON (a list of objects with :class:`RedundancyPoint`'s fields)."""
    return json.dumps([asdict(p) for p in points], indent=1)


def points_from_json(text: str) -> tuple[RedundancyPoint, ...]:
    """Inverse of :func:`points_to_json`.

    Raises:
        ValueError: if the text is not a list of objects with exactly the point's fields.
    """
    try:
        rows = json.loads(text)
        return tuple(RedundancyPoint(**row) for row in rows)
    except (TypeError, json.JSONDecodeError) as err:
        raise ValueError(f"not a list of redundancy points: {err}") from err


if (
    __name__ == "__main__"
):  # regenerate the shipped default: python -m core.head_redundancy OUT d_model steps seed
    import sys

    out, d, steps, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    curve = redundancy_vs_heads(d, train_steps=steps, seed=seed)
    with open(out, "w", encoding="utf-8") as f:
        f.write(points_to_json(curve.points) + "\n")
