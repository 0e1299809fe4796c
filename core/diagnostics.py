"""Diagnostics of attention weight maps: how spread, how peaked, how redundant across heads.

These turn the post's troubleshooting table into numbers: "weights concentrated on one position"
is low entropy / an effective support near 1; "heads repeat each other" is a small Jensen-Shannon
divergence between heads' maps. They serve the multi-head page, the training page and the
head-diversity regulariser used in training.

All functions take torch tensors of attention weights with rows = queries, ``(..., L, S)``, each
row a probability distribution over the S keys (a fully masked row of zeros is allowed: it counts
as entropy 0 and support 0). Numpy arrays are accepted and converted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

_EPS = 1e-12


def _as_tensor(weights: torch.Tensor | np.ndarray) -> torch.Tensor:
    w = torch.as_tensor(weights)
    if not torch.is_floating_point(w):
        w = w.to(torch.float64)
    if w.dim() < 1 or w.shape[-1] < 1:
        raise ValueError(f"weights must have at least one key axis, got shape {tuple(w.shape)}")
    if torch.isnan(w).any():
        raise ValueError("weights contain NaN (a masking bug upstream?)")
    if (w < -1e-9).any():
        raise ValueError("weights must be non-negative")
    return w


def attention_entropy(weights: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Shannon entropy (nats) of each row: (..., L, S) -> (..., L).

    0 when all weight is on one key; log(S) for a uniform row (the maximum).
    """
    w = _as_tensor(weights)
    return -(w * torch.log(w.clamp_min(_EPS))).sum(-1)


def normalized_entropy(weights: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Entropy divided by log(S), in [0, 1]: (..., L, S) -> (..., L). Rows of one key give 0."""
    w = _as_tensor(weights)
    S = w.shape[-1]
    return attention_entropy(w) / math.log(S) if S > 1 else torch.zeros(w.shape[:-1], dtype=w.dtype)


def effective_support(weights: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Effective number of attended keys, 1 / Σ_j w_j² per row: (..., L, S) -> (..., L).

    1 for a one-hot row, S for a uniform row; 0 for a fully masked (all-zero) row.
    """
    w = _as_tensor(weights)
    sq = (w * w).sum(-1)
    return torch.where(sq > 0, 1.0 / sq.clamp_min(_EPS), torch.zeros_like(sq))


def max_weight(weights: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Largest weight in each row: (..., L, S) -> (..., L)."""
    return _as_tensor(weights).amax(-1)


def js_divergence(p: torch.Tensor | np.ndarray, q: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Jensen-Shannon divergence (nats) between rows: (..., S), (..., S) -> (...).

    Symmetric, 0 iff the rows are equal, at most log 2.
    """
    p, q = _as_tensor(p), _as_tensor(q)
    m = 0.5 * (p + q)

    def kl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a * (torch.log(a.clamp_min(_EPS)) - torch.log(b.clamp_min(_EPS)))).sum(-1)

    return (0.5 * kl(p, m) + 0.5 * kl(q, m)).clamp_min(0.0)


def head_similarity(weights: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Pairwise similarity of heads: (..., H, L, S) -> (..., H, H), in [0, 1].

    similarity = 1 - mean_over_queries(JS(head_a, head_b)) / log 2; 1 on the diagonal and for
    identical heads, 0 for heads whose rows never overlap.
    """
    w = _as_tensor(weights)
    if w.dim() < 3:
        raise ValueError(f"weights must be (..., H, L, S), got shape {tuple(w.shape)}")
    a = w.unsqueeze(-3)  # (..., H, 1, L, S)
    b = w.unsqueeze(-4)  # (..., 1, H, L, S)
    js = js_divergence(a, b).mean(-1)  # (..., H, H)
    return 1.0 - js / math.log(2.0)


def redundancy_score(weights: torch.Tensor | np.ndarray) -> float:
    """Mean off-diagonal head similarity, averaged over any batch axes: (..., H, L, S) -> float.

    0 for a single head (nothing to repeat); near 1 when every head attends like every other.
    """
    sim = head_similarity(weights)
    H = sim.shape[-1]
    if H < 2:
        return 0.0
    off = sim.sum((-2, -1)) - sim.diagonal(dim1=-2, dim2=-1).sum(-1)
    return float((off / (H * (H - 1))).mean())


def redundant_pairs(
    weights: torch.Tensor | np.ndarray, threshold: float = 0.9
) -> list[tuple[int, int, float]]:
    """Head pairs (a, b, similarity) with a < b and similarity >= threshold, most similar first.

    Args:
        weights: (H, L, S) for one example (average batch axes first).
    """
    sim = head_similarity(weights)
    if sim.dim() != 2:
        raise ValueError("pass the weights of one example, (H, L, S)")
    H = sim.shape[0]
    pairs = [(a, b, float(sim[a, b])) for a in range(H) for b in range(a + 1, H) if sim[a, b] >= threshold]
    return sorted(pairs, key=lambda p: -p[2])


def head_diversity_penalty(weights: torch.Tensor) -> torch.Tensor:
    """Differentiable regulariser: mean pairwise head similarity, (B, H, L, S) -> scalar tensor.

    Adding ``lambda * head_diversity_penalty(w)`` to a loss pushes heads to attend differently
    (the post's "diversity regulariser"). 0 for a single head.
    """
    if weights.dim() < 3:
        raise ValueError(f"weights must be (..., H, L, S), got shape {tuple(weights.shape)}")
    H = weights.shape[-3]
    if H < 2:
        return weights.sum() * 0.0
    sim = head_similarity(weights)  # (..., H, H)
    off = sim.sum((-2, -1)) - sim.diagonal(dim1=-2, dim2=-1).sum(-1)
    return (off / (H * (H - 1))).mean()


@dataclass(frozen=True)
class HeadSummary:
    """Per-head averages over batch and queries, each a (H,) tensor.

    Attributes:
        entropy: mean row entropy (nats).
        normalized_entropy: mean entropy / log S, in [0, 1].
        effective_support: mean effective number of attended keys, in [1, S] (0 for masked rows).
        max_weight: mean largest weight of a row.
    """

    entropy: torch.Tensor
    normalized_entropy: torch.Tensor
    effective_support: torch.Tensor
    max_weight: torch.Tensor


def per_head_summary(weights: torch.Tensor | np.ndarray) -> HeadSummary:
    """Average each diagnostic over every axis but the head axis: (..., H, L, S) -> four (H,) tensors.

    Raises:
        ValueError: if the weights have fewer than 3 axes, contain NaN or negative values.
    """
    w = _as_tensor(weights)
    if w.dim() < 3:
        raise ValueError(f"weights must be (..., H, L, S), got shape {tuple(w.shape)}")
    w = w.reshape(-1, *w.shape[-3:]).transpose(0, 1)  # (H, N, L, S), N = product of batch axes

    def per_head(values: torch.Tensor) -> torch.Tensor:  # (H, N, L) -> (H,)
        return values.flatten(1).mean(1)

    return HeadSummary(
        entropy=per_head(attention_entropy(w)),
        normalized_entropy=per_head(normalized_entropy(w)),
        effective_support=per_head(effective_support(w)),
        max_weight=per_head(max_weight(w)),
    )
