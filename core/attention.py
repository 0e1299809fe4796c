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

Beyond the contract of the page issue, this module exposes what a teacher wants to show:

- :func:`attention_steps` returns every intermediate of the pipeline (raw, scaled, masked scores,
  weights, output) so each can be drawn as its own heatmap;
- sparse normalisers :func:`sparsemax` (Martins & Astudillo, 2016) and :func:`entmax15`
  (Peters, Niculae & Martins, 2019): the attention analogue of a compactly supported kernel
  (Epanechnikov) where softmax is the Gaussian: they give *exact* zeros;
- :func:`compare_with_torch`: the manual path against the library call, difference and timing;
- :func:`mask_to_string` / :func:`mask_from_string`: a compact text form of a boolean mask, so a
  hand-edited mask can live in a URL.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch


def _check_qkv(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
    for name, x in (("query", query), ("key", key), ("value", value)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dim() < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., length, dim), got {tuple(x.shape)}"
            )
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if not query.dtype == key.dtype == value.dtype:
        raise ValueError(
            f"query, key and value must share one dtype, got {query.dtype}, {key.dtype}, {value.dtype}"
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
    # Broadcasting rules checked by hand: torch.broadcast_shapes imports sympy on first use (seconds).
    m, s = tuple(mask.shape), tuple(scores_shape)
    if any(a not in (b, 1) and b != 1 for a, b in zip(m[::-1], s[::-1], strict=False)):
        raise ValueError(f"mask of shape {m} does not broadcast to the scores {s}")
    broadcast = torch.Size(
        b if a == 1 else a
        for a, b in zip((1,) * (len(s) - len(m)) + m, (1,) * (len(m) - len(s)) + s, strict=True)
    )
    if broadcast != scores_shape:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} would enlarge the scores {tuple(scores_shape)}; "
            "it must broadcast *to* (..., L, S)"
        )
    return mask


def attention_scores(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """Raw scores Q Kᵀ: (..., L, D) x (..., D, S) -> (..., L, S)."""
    return query @ key.transpose(-2, -1)


def _scaled_scores(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    scale: float | None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Both attention paths' first steps: check Q, K, V and the mask, and scale the scores.

    Returns the scaled scores (..., L, S) (``scale`` or 1/√D) and the checked mask (None: none).

    Raises:
        ValueError: as :func:`scaled_dot_product_attention`.
    """
    _check_qkv(query, key, value)
    scores = attention_scores(query, key) * _resolve_scale(scale, query.shape[-1])
    return scores, _check_mask(mask, scores.shape)


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
    scores, mask = _scaled_scores(query, key, value, mask, scale)  # (..., L, S)
    weights = masked_softmax(scores, mask)  # (..., L, S)
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
    scores, mask = _scaled_scores(query, key, value, mask, scale)
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


# --------------------------------------------------------------------------------------------
# Normalisers: scores (..., L, S) -> weights (..., L, S), each row on the simplex.
# --------------------------------------------------------------------------------------------


def _row_mask(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor | None:
    if not isinstance(scores, torch.Tensor) or not torch.is_floating_point(scores):
        raise ValueError("scores must be a floating-point torch.Tensor")
    if scores.dim() < 1 or scores.shape[-1] < 1:
        raise ValueError(f"scores need a key axis of length >= 1, got shape {tuple(scores.shape)}")
    return _check_mask(mask, scores.shape)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis that ignores masked keys and never returns NaN.

    Args:
        scores: (..., L, S) floating scores (the kernel's log, in the kernel-regression reading).
        mask: optional bool broadcastable to the scores; True = may attend.

    Returns:
        weights (..., L, S): each row sums to 1 over its allowed keys; masked entries are exactly
        0; a row with no allowed key is all 0.

    Raises:
        ValueError: on non-float scores or a mask that is not boolean / does not broadcast.
    """
    mask = _row_mask(scores, mask)
    if mask is None:
        return torch.softmax(scores, dim=-1)
    # masked_fill with the dtype's lowest finite value, not -inf: the max-subtraction inside
    # softmax then stays finite even for a row with no allowed key.
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1) * mask  # fully masked rows -> exactly 0


def _shift_masked_below(scores: torch.Tensor, mask: torch.Tensor | None, margin: float) -> torch.Tensor:
    """Subtract each row's max over allowed keys; put masked keys ``margin`` below that max.

    Sparse normalisers zero every score further than a fixed margin below the row max (1 for
    sparsemax, 2 for entmax-1.5), so a masked key placed there gets exactly 0 without touching
    the threshold, and no infinities enter the arithmetic (or its gradient).
    """
    if mask is None:
        return scores - scores.detach().amax(-1, keepdim=True)
    allowed_max = scores.detach().masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)
    allowed_max = torch.where(torch.isfinite(allowed_max), allowed_max, torch.zeros_like(allowed_max))
    shifted = scores - allowed_max
    return shifted.masked_fill(~mask, -margin)


def _sparse_threshold(
    z: torch.Tensor,
    mask: torch.Tensor | None,
    in_support: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    threshold: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    power: int,
) -> torch.Tensor:
    """The sort-based sparse normaliser both :func:`sparsemax` and :func:`entmax15` are.

    Sort each row of ``z`` (..., L, S) descending; ``in_support(sorted, ranks)`` is True for the
    first k* sorted entries (computed without gradient: the support size is piecewise constant);
    ``threshold(sorted, k_star)`` gives τ (..., L, 1) from the differentiably gathered sorted
    scores; the weights are ``max(z - τ, 0) ** power`` (0 on masked keys).
    """
    ranks = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)  # (S,)
    with torch.no_grad():
        order = torch.sort(z, dim=-1, descending=True)
        k_star = in_support(order.values, ranks).sum(-1, keepdim=True)  # (..., L, 1), >= 1
    tau = threshold(z.gather(-1, order.indices), k_star)  # the same sort, differentiable
    weights = torch.clamp(z - tau, min=0) ** power
    return weights if mask is None else weights * mask


def _cum_at(values: torch.Tensor, k_star: torch.Tensor) -> torch.Tensor:
    """Mean of the first k* entries of each row: (..., S), (..., 1) -> (..., 1)."""
    return values.cumsum(-1).gather(-1, k_star - 1) / k_star.to(values.dtype)


def sparsemax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Sparsemax over the last axis: the Euclidean projection of each row onto the simplex.

    ``sparsemax(z) = argmin_{p in simplex} |p - z|²  = max(z - τ(z), 0)`` with the threshold
    ``τ = (Σ_{j≤k} z_(j) - 1) / k`` over the k largest scores, k the largest index with
    ``1 + k z_(k) > Σ_{j≤k} z_(j)`` (Martins & Astudillo, 2016, Algorithm 1). Scores more than 1
    below the row max get an *exact* zero: the attention analogue of a kernel with compact support
    (Epanechnikov), where softmax is the Gaussian (every weight > 0). Differentiable almost
    everywhere (autograd through the gathered threshold gives the paper's Jacobian).

    Args:
        scores: (..., L, S).
        mask: optional bool broadcastable to the scores; True = may attend.

    Returns:
        weights (..., L, S): rows sum to 1 (0 for a row with no allowed key); masked entries 0.

    Raises:
        ValueError: on non-float scores or a bad mask.
    """
    mask = _row_mask(scores, mask)
    z = _shift_masked_below(scores, mask, margin=2.0)  # row max 0, masked keys at -2
    return _sparse_threshold(
        z,
        mask,
        in_support=lambda zs, k: 1 + k * zs > zs.cumsum(-1),  # True for the first k* sorted entries
        threshold=lambda zs, k_star: _cum_at(zs, k_star) - 1 / k_star.to(zs.dtype),
        power=1,
    )


def _entmax_tau(xs: torch.Tensor, rho: torch.Tensor | None = None) -> torch.Tensor:
    """entmax-1.5's threshold candidates of sorted rows xs (..., S): τ_ρ = mean - √δ over the
    first ρ entries (every ρ, or the row's k* when ``rho`` (..., 1) is given)."""
    if rho is None:
        ranks = torch.arange(1, xs.shape[-1] + 1, dtype=xs.dtype, device=xs.device)
        mean, mean_sq, n, floor = xs.cumsum(-1) / ranks, (xs * xs).cumsum(-1) / ranks, ranks, 0.0
    else:
        mean, mean_sq, n = _cum_at(xs, rho), _cum_at(xs * xs, rho), rho.to(xs.dtype)
        floor = torch.finfo(xs.dtype).tiny  # δ > 0 on the true support
    delta = (1 - n * (mean_sq - mean * mean)) / n
    return mean - torch.sqrt(torch.clamp(delta, min=floor))


def entmax15(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """α-entmax with α = 1.5 over the last axis: ``p_i = max(z_i/2 - τ, 0)²`` with Σ p_i = 1.

    Between softmax (α = 1, dense) and sparsemax (α = 2, sparsest): exact zeros for scores far
    below the max, smoother than sparsemax near it. Exact sort-based threshold (Peters, Niculae &
    Martins, 2019, Algorithm 2); differentiable almost everywhere. Arguments, result and errors
    as :func:`sparsemax`: scores (..., L, S) and an optional mask in, weights (..., L, S) out.
    """
    mask = _row_mask(scores, mask)
    x = _shift_masked_below(scores, mask, margin=3.0) / 2  # row max 0; masked at -1.5
    return _sparse_threshold(
        x,
        mask,
        in_support=lambda xs, _: _entmax_tau(xs) <= xs,  # support size, >= 1
        threshold=_entmax_tau,
        power=2,
    )


#: Normalisers by id (selectbox options, test loops). Each: (scores, mask=None) -> weights.
NORMALIZERS: dict[str, Callable[..., torch.Tensor]] = {
    "softmax": masked_softmax,
    "sparsemax": sparsemax,
    "entmax15": entmax15,
}


def normalize_scores(
    scores: torch.Tensor, mask: torch.Tensor | None = None, normalizer: str = "softmax"
) -> torch.Tensor:
    """Turn scores (..., L, S) into weights (..., L, S) with the normaliser named ``normalizer``.

    Raises:
        ValueError: for an unknown normaliser (the message lists the known ones) or bad inputs.
    """
    if normalizer not in NORMALIZERS:
        raise ValueError(f"unknown normalizer {normalizer!r}; known: {sorted(NORMALIZERS)}")
    return NORMALIZERS[normalizer](scores, mask)


# --------------------------------------------------------------------------------------------
# The pipeline, step by step
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of ``softmax(mask(Q Kᵀ · scale)) V``, for drawing one heatmap per step."""

    raw: torch.Tensor  # (..., L, S) Q Kᵀ: the dot products before any scaling
    scaled: torch.Tensor  # (..., L, S) raw * scale: what the kernel "bandwidth" acts on
    masked: torch.Tensor  # (..., L, S) scaled, -inf where the mask forbids (the textbook picture)
    weights: torch.Tensor  # (..., L, S) the normalised weights; rows = queries
    output: torch.Tensor  # (..., L, Dv) weights @ V
    scale: float  # the multiplier used (1/√D by default; 1/τ for a temperature τ)
    mask: torch.Tensor | None  # bool, broadcast to (..., L, S), or None


def attention_steps(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
    normalizer: str = "softmax",
) -> AttentionSteps:
    """Run attention and keep every step: raw, scaled, masked scores, weights and output.

    Shapes as in :func:`scaled_dot_product_attention`. With ``normalizer="softmax"`` the weights
    and output are those of :func:`scaled_dot_product_attention` (safe masking: a row with no
    allowed key gives zeros). ``masked`` holds -inf at forbidden positions, as drawn in
    textbooks; the weights are computed without ever feeding that -inf to the exponential.

    Raises:
        ValueError: on bad shapes, dtype, mask, scale or normaliser.
    """
    _check_qkv(query, key, value)
    scale = _resolve_scale(scale, query.shape[-1])
    raw = attention_scores(query, key)  # (..., L, S)
    scaled = raw * scale
    mask = _check_mask(mask, scaled.shape)
    if mask is None:
        masked = scaled
    else:
        mask = mask.expand(scaled.shape)
        masked = scaled.masked_fill(~mask, float("-inf"))
    weights = normalize_scores(scaled, mask, normalizer)  # (..., L, S)
    output = weights @ value  # (..., L, S) x (..., S, Dv) -> (..., L, Dv)
    return AttentionSteps(raw, scaled, masked, weights, output, scale, mask)


def fully_masked_rows(mask: torch.Tensor) -> torch.Tensor:
    """Bool (..., L): True for a query whose every key is masked (the NaN trap of additive -inf)."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() < 1:
        raise ValueError("mask must be a boolean torch.Tensor with a key axis")
    return ~mask.any(-1)


# --------------------------------------------------------------------------------------------
# Manual vs library
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TorchComparison:
    """Our attention against ``torch.nn.functional.scaled_dot_product_attention`` on one input."""

    max_abs_diff: float  # largest |ours - torch| over outputs of rows with >= 1 allowed key
    rows_compared: int  # number of query rows compared
    torch_nan_rows: int  # rows where torch's output holds NaN (fully masked rows, on some versions)
    ours_nan_rows: int  # rows where ours holds NaN (always 0)
    seconds_ours: float  # best-of-``repeat`` wall time of one call
    seconds_torch: float


def compare_with_torch(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
    *,
    repeat: int = 20,
) -> TorchComparison:
    """Run both implementations on the same inputs; report the largest difference and the time.

    Fully masked rows are left out of the difference (ours gives 0 there by design; torch's
    result depends on its version and backend), and counted separately.

    Raises:
        ValueError: on bad inputs (as :func:`scaled_dot_product_attention`) or ``repeat`` < 1.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    out, _ = scaled_dot_product_attention(query, key, value, mask=mask, scale=scale)
    s = _resolve_scale(scale, query.shape[-1])
    ref = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=s)
    if mask is None:
        keep = torch.ones(out.shape[:-1], dtype=torch.bool)
    else:
        keep = ~fully_masked_rows(mask.expand(*out.shape[:-1], key.shape[-2]))
    diff = (out - ref).abs()[keep]
    max_diff = float(diff.max()) if diff.numel() else 0.0

    def best(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    with torch.no_grad():
        t_ours = best(lambda: scaled_dot_product_attention(query, key, value, mask=mask, scale=scale))
        t_torch = best(
            lambda: torch.nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=mask, scale=s
            )
        )
    return TorchComparison(
        max_abs_diff=max_diff,
        rows_compared=int(keep.sum()),
        torch_nan_rows=int(torch.isnan(ref).any(-1).sum()),
        ours_nan_rows=int(torch.isnan(out).any(-1).sum()),
        seconds_ours=t_ours,
        seconds_torch=t_torch,
    )


# --------------------------------------------------------------------------------------------
# A mask as compact text (so a hand-edited mask fits in a URL)
# --------------------------------------------------------------------------------------------

_ROW_HEX = re.compile(r"^[0-9a-f]{1,16}$")


def mask_to_string(mask: torch.Tensor) -> str:
    """Encode a boolean (L, S) mask as L hex numbers joined by ``-``; bit j of row i = key j allowed.

    Example: the 3x3 causal mask is ``"1-3-7"``.

    Raises:
        ValueError: if ``mask`` is not a 2-D boolean tensor with S <= 64.
    """
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() != 2:
        raise ValueError("mask must be a 2-D boolean torch.Tensor (L, S)")
    if mask.shape[1] > 64:
        raise ValueError(f"at most 64 keys can be encoded, got {mask.shape[1]}")
    rows = []
    for row in mask.tolist():
        rows.append(format(sum(1 << j for j, allowed in enumerate(row) if allowed), "x"))
    return "-".join(rows)


def mask_from_string(text: str, L: int, S: int) -> torch.Tensor:
    """Decode :func:`mask_to_string`'s text into a boolean (L, S) mask.

    Raises:
        ValueError: if the text does not hold exactly L hex rows, or a row sets a key >= S.
    """
    if not isinstance(text, str):
        raise ValueError("the mask text must be a string")
    parts = text.strip().lower().split("-")
    if len(parts) != L:
        raise ValueError(f"the mask text must hold {L} rows separated by '-', got {len(parts)}")
    mask = torch.zeros(L, S, dtype=torch.bool)
    for i, part in enumerate(parts):
        if not _ROW_HEX.match(part):
            raise ValueError(f"row {i} of the mask text is not a hex number: {part!r}")
        bits = int(part, 16)
        if bits >> S:
            raise ValueError(f"row {i} of the mask text allows a key beyond the last one (S={S})")
        for j in range(S):
            mask[i, j] = bool(bits >> j & 1)
    return mask


# --------------------------------------------------------------------------------------------
# Inputs and the scale choices of the page
# --------------------------------------------------------------------------------------------

#: Caps for interactive use: longest sequence and widest key dimension a page may request.
MAX_LENGTH = 32
MAX_DK = 512
#: Scale choices, the one vocabulary of the app (``core.transformer`` and the pages use it):
#: ``sqrt_dk`` divides the scores by
#: the temperature τ = √d_k (the Transformer's; the scale factor is the inverse temperature
#: 1/√d_k), ``one`` does not scale, ``custom`` divides by a chosen temperature τ.
SCALE_MODES = ("sqrt_dk", "one", "custom")


def scale_for(mode: str, d_k: int, temperature: float = 1.0) -> float:
    """The scale factor the scores are multiplied by: 1/√d_k, 1, or 1/τ (the inverse temperature).

    Raises:
        ValueError: for an unknown mode, d_k < 1, or a temperature that is not finite and > 0.
    """
    if mode not in SCALE_MODES:
        raise ValueError(f"unknown scale mode {mode!r}; known: {list(SCALE_MODES)}")
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if mode == "sqrt_dk":
        return 1 / math.sqrt(d_k)
    if mode == "one":
        return 1.0
    if not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be finite and > 0, got {temperature}")
    return 1 / float(temperature)


def random_qkv(
    length: int, d_k: int, d_v: int = 4, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random self-attention inputs with N(0, 1) entries (float64, seeded).

    Returns:
        query (L, D), key (L, D), value (L, Dv) with L = S = ``length``.

    Raises:
        ValueError: if length is not in 1..MAX_LENGTH, d_k not in 1..MAX_DK or d_v not in 1..64.
    """
    for name, n, hi in (("length", length, MAX_LENGTH), ("d_k", d_k, MAX_DK), ("d_v", d_v, 64)):
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= hi:
            raise ValueError(f"{name} must be an integer in 1..{hi}, got {n!r}")
    gen = torch.Generator().manual_seed(int(seed))
    q = torch.randn(length, d_k, generator=gen, dtype=torch.float64)
    k = torch.randn(length, d_k, generator=gen, dtype=torch.float64)
    v = torch.randn(length, d_v, generator=gen, dtype=torch.float64)
    return q, k, v
