"""The permutation experiment: why attention needs positions (the post, section 3.3).

Self-attention without positional information is permutation-equivariant: shuffle the tokens with
a permutation P and the attention map is the old one with its rows and columns shuffled the same
way, A(P x) = P A(x) Pᵀ, and the output rows are shuffled too, out(P x) = P out(x). Nothing in the
map says where a token stood. Add a positional encoding to the *slots* (PE is added after the
shuffle, position p keeps PE[p]) and the identity breaks: the map itself changes.

A causal mask is position information too: it lets slot i see only slots 0..i, so with a mask the
identity fails even without any encoding.

Shapes: H heads, T sequence length (L = S = T here), d_model model width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.multihead import MultiHeadAttention

PERMUTATIONS = ("shuffle", "reverse")


def make_permutation(length: int, kind: str = "shuffle", seed: int = 0) -> torch.Tensor:
    """A permutation of range(length) as a (T,) long tensor; position i receives token perm[i].

    ``"shuffle"``: a seeded random order that is not the identity (when length > 1).
    ``"reverse"``: length-1, ..., 0.

    Raises:
        ValueError: if length is not a positive integer or kind is unknown.
    """
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError(f"length must be a positive integer, got {length!r}")
    if kind == "reverse":
        return torch.arange(length - 1, -1, -1)
    if kind != "shuffle":
        raise ValueError(f"unknown permutation {kind!r}; known: {list(PERMUTATIONS)}")
    generator = torch.Generator().manual_seed(int(seed) + 2)
    perm = torch.randperm(length, generator=generator)
    if length > 1 and torch.equal(perm, torch.arange(length)):
        perm = torch.roll(perm, 1)  # a "shuffle" that changes nothing would teach nothing
    return perm


def permute_map(weights: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """P A Pᵀ for a map of shape (..., T, T): entry (i, j) becomes A[perm[i], perm[j]]."""
    return weights[..., perm, :][..., :, perm]


@dataclass(frozen=True)
class PermutationResult:
    """One run of the experiment for one choice of positions and mask.

    Attributes:
        perm: (T,) the permutation; slot i of the shuffled input holds token perm[i].
        weights: (H, T, T) map of the original order, A(x + PE).
        weights_shuffled: (H, T, T) map of the shuffled tokens, A(P x + PE).
        weights_predicted: (H, T, T) what equivariance predicts, P A(x + PE) Pᵀ.
        difference: (H, T, T) |A(P x + PE) - P A(x + PE) Pᵀ|.
        map_max_diff: its maximum (≈ 1e-16 without positions or mask).
        output_max_diff: max |out(P x + PE) - P out(x + PE)|.
    """

    perm: torch.Tensor
    weights: torch.Tensor
    weights_shuffled: torch.Tensor
    weights_predicted: torch.Tensor
    difference: torch.Tensor
    map_max_diff: float
    output_max_diff: float


def permutation_experiment(
    module: MultiHeadAttention,
    x: torch.Tensor,
    perm: torch.Tensor,
    positions: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
) -> PermutationResult:
    """Self-attention on x and on its shuffled tokens, with positions added to the slots.

    Args:
        module: the multi-head attention to probe (run without gradients).
        x: (T, d_model) token vectors (content only).
        perm: (T,) permutation of range(T), e.g. from :func:`make_permutation`.
        positions: optional (T, d_model) table added to both inputs by slot; None = no encoding.
        mask: optional bool (T, T), True where a query may attend (e.g. causal).

    Raises:
        ValueError: on mismatched shapes or a ``perm`` that is not a permutation of range(T).
    """
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError("x must be a (T, d_model) tensor")
    T = x.shape[0]
    perm = torch.as_tensor(perm, dtype=torch.long)
    if perm.shape != (T,) or not torch.equal(perm.sort().values, torch.arange(T)):
        raise ValueError(f"perm must be a permutation of range({T})")
    if positions is not None and positions.shape != x.shape:
        raise ValueError(f"positions must have the shape of x {tuple(x.shape)}, got {tuple(positions.shape)}")
    pos = torch.zeros_like(x) if positions is None else positions.to(x.dtype)
    with torch.no_grad():
        out, w = module((x + pos)[None], (x + pos)[None], (x + pos)[None], mask=mask)
        xs = x[perm] + pos  # tokens move, positions stay with the slots
        out_s, w_s = module(xs[None], xs[None], xs[None], mask=mask)
    w, w_s, out, out_s = w[0], w_s[0], out[0], out_s[0]  # (H, T, T), (T, d_model)
    predicted = permute_map(w, perm)
    difference = (w_s - predicted).abs()  # (H, T, T)
    return PermutationResult(
        perm=perm,
        weights=w,
        weights_shuffled=w_s,
        weights_predicted=predicted,
        difference=difference,
        map_max_diff=float(difference.max()),
        output_max_diff=float((out_s - out[perm]).abs().max()),
    )
