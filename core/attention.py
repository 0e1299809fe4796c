"""Scaled dot-product attention, written out so every step can be shown.

    Attention(Q, K, V) = softmax(Q Kᵀ / √D) V            (Vaswani et al., 2017, eq. 1)

Read as Nadaraya-Watson kernel regression: each query row is a query point, the keys are the
samples x_i, the values are the y_i, ``exp(q·k / √D)`` is the kernel and the softmax is the
normaliser. The readable manual path lives beside the library call
(``torch.nn.functional.scaled_dot_product_attention``); ``tests/core/test_attention.py`` checks
that they agree.

Shapes (legend in ``core/__init__.py``): query (..., L, D), key (..., S, D), value (..., S, Dv),
output (..., L, Dv), weights (..., L, S). A boolean ``mask`` broadcastable to (..., L, S) is True
where a query may attend (torch's convention).
"""

from __future__ import annotations

import math

import torch


def _check_qkv(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
    for name, x in (("query", query), ("key", key), ("value", value)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dim() < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., length, dim), got {tuple(x.shape)}"
            )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must share the last dimension D, got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"key and value must have the same length S, got {key.shape[-2]} and {value.shape[-2]}"
        )


def _resolve_scale(scale: float | None, d: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d)
    scale = float(scale)
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite positive number, got {scale}")
    return scale


def _check_mask(mask: torch.Tensor | None, scores_shape: torch.Size) -> torch.Tensor | None:
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError("mask must be a boolean torch.Tensor (True = may attend)")
    try:
        torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError as err:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the scores {tuple(scores_shape)}"
        ) from err
    return mask


def attention_scores(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """Raw scores Q Kᵀ: (..., L, D) x (..., D, S) -> (..., L, S)."""
    return query @ key.transpose(-2, -1)


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax attention that never produces NaN: returns ``(output, weights)``.

    Args:
        query: (..., L, D).
        key: (..., S, D).
        value: (..., S, Dv).
        mask: optional bool, broadcastable to (..., L, S); True where the query may attend.
        scale: multiplies the scores; defaults to 1/√D (the "bandwidth" of the kernel).

    Returns:
        output (..., L, Dv) and weights (..., L, S). Rows of weights sum to 1, except a query whose
        keys are all masked: its weights and output are exactly 0 (not NaN), and gradients stay
        finite. Compare :func:`naive_masked_attention`, which adds -inf and yields NaN there.

    Raises:
        ValueError: on mismatched shapes, a non-boolean or non-broadcastable mask, or a scale that
            is not finite and positive.
    """
    _check_qkv(query, key, value)
    scale = _resolve_scale(scale, query.shape[-1])
    scores = attention_scores(query, key) * scale  # (..., L, S)
    mask = _check_mask(mask, scores.shape)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        # masked_fill with the dtype's lowest finite value, not -inf: the max-subtraction inside
        # softmax then stays finite even for a row with no allowed key.
        filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = torch.softmax(filled, dim=-1) * mask  # fully masked rows -> exactly 0
    output = weights @ value  # (..., L, S) x (..., S, Dv) -> (..., L, Dv)
    return output, weights


def naive_masked_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The textbook version that *adds* -inf to masked scores. Kept to demonstrate its NaN.

    Identical to :func:`scaled_dot_product_attention` unless a query has every key masked: then
    softmax sees a row of -inf, computes exp(-inf - (-inf)) = exp(nan), and the whole row (and its
    output) is NaN. Shapes as in :func:`scaled_dot_product_attention`.
    """
    _check_qkv(query, key, value)
    scale = _resolve_scale(scale, query.shape[-1])
    scores = attention_scores(query, key) * scale
    mask = _check_mask(mask, scores.shape)
    if mask is not None:
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def causal_mask(L: int, S: int | None = None, *, device: torch.device | str | None = None) -> torch.Tensor:
    """Boolean (L, S) mask, True on and below the diagonal: query i may attend keys 0..i.

    The diagonal is aligned top-left (query i sees keys 0..i), the convention of
    ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)``.

    Raises:
        ValueError: if L or S is not a positive integer.
    """
    S = L if S is None else S
    for name, n in (("L", L), ("S", S)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return torch.ones(L, S, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: torch.Tensor | list[int], S: int | None = None) -> torch.Tensor:
    """Boolean (B, 1, S) key mask from sequence lengths: True for the first ``lengths[b]`` keys.

    Broadcasts against scores of shape (B, L, S); add a head axis with ``mask[:, None]`` for
    (B, H, L, S).

    Raises:
        ValueError: if a length is negative or larger than S.
    """
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    if lengths.dim() != 1 or lengths.numel() == 0:
        raise ValueError("lengths must be a non-empty 1-D sequence of integers")
    S = int(lengths.max()) if S is None else S
    if (lengths < 0).any() or (lengths > S).any():
        raise ValueError(f"every length must be between 0 and S={S}, got {lengths.tolist()}")
    positions = torch.arange(S)  # (S,)
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, 1, S)
