"""Linear-time attention: φ(Q) (φ(K)ᵀ V) / φ(Q) (φ(K)ᵀ 1), never forming the (L, S) matrix.

With a kernel written as an inner product of feature maps, ``K(q, k) = φ(q)ᵀ φ(k)`` (exactly, or
approximately with random features, ``core.random_features``),

    out_i = Σ_j K(q_i, k_j) v_j / Σ_j K(q_i, k_j) = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j))

and the two sums are computed once for all queries: time and memory linear in the length.

* :func:`kernel_attention`: the linear-time attention for any features, non-causal and causal
  (prefix sums: the "RNN" form), beside :func:`quadratic_kernel_attention`, the same thing with
  the (L, S) matrix formed, for display and for tests.
* :func:`favor_attention`: FAVOR+, the Performer's approximation of softmax attention
  (Choromanski et al., ICLR 2021).
* :func:`linear_attention` with the feature map ``elu(x) + 1`` (Katharopoulos et al., "Transformers
  are RNNs", ICML 2020): a deterministic feature map, not an approximation of softmax.

The exact reference is :func:`core.attention.scaled_dot_product_attention`.

Shapes (legend in ``core/__init__.py``): query (..., L, D), key (..., S, D), value (..., S, Dv),
features (..., L, m) and (..., S, m), output (..., L, Dv), weights (..., L, S) (rows = queries).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from core.random_features import favor_features


def check_tensor(name: str, x: object, min_dim: int = 2) -> torch.Tensor:
    """``x`` if it is a finite floating-point tensor of at least ``min_dim`` dimensions.

    Raises:
        ValueError: naming ``name`` otherwise.
    """
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions, got shape {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains NaN or inf")
    return x


def check_qkv(q: object, k: object, v: object) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Query (..., L, D), key (..., S, D), value (..., S, Dv): checked tensors of one dtype.

    Raises:
        ValueError: on a non-tensor, a non-float or non-finite one, or mismatched D, S or dtype.
    """
    q, k, v = check_tensor("query", q), check_tensor("key", k), check_tensor("value", v)
    if not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"query, key and value must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"query and key must share the last dimension D, got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"key and value must have the same length S, got {k.shape[-2]} and {v.shape[-2]}")
    return q, k, v


def elu_features(x: torch.Tensor) -> torch.Tensor:
    """Katharopoulos et al.'s feature map φ(x) = elu(x) + 1 (> 0): (..., L, D) -> (..., L, D)."""
    return F.elu(x) + 1.0


@dataclass(frozen=True)
class KernelAttentionResult:
    """Linear-time attention output and its denominators.

    Attributes:
        output: (..., L, Dv).
        denominator: (..., L) φ(q_i)ᵀ Σ_j φ(k_j) (for causal: j <= i).
    """

    output: torch.Tensor
    denominator: torch.Tensor


def kernel_attention(
    phi_q: torch.Tensor, phi_k: torch.Tensor, value: torch.Tensor, *, causal: bool = False
) -> KernelAttentionResult:
    """Attention with kernel φ(q)·φ(k) in O((L + S) m Dv) time, never forming the (L, S) matrix.

    Non-causal: out = φ(Q) (φ(K)ᵀ V) / φ(Q) (φ(K)ᵀ 1).
    Causal (L = S): prefix sums over the keys, s_i = Σ_{j<=i} φ(k_j) v_jᵀ (m, Dv) and
    z_i = Σ_{j<=i} φ(k_j) (m,); out_i = φ(q_i)ᵀ s_i / φ(q_i)ᵀ z_i: the recurrent ("RNN") form.

    Args:
        phi_q: (..., L, m) query features.
        phi_k: (..., S, m) key features.
        value: (..., S, Dv).
        causal: query i sees keys j <= i only (needs L = S).

    Returns:
        :class:`KernelAttentionResult`. A zero denominator gives inf/NaN there (it cannot happen
        with positive features).

    Raises:
        ValueError: on mismatched shapes or dtypes, or causal with L != S.
    """
    phi_q, phi_k, value = check_qkv(phi_q, phi_k, value)
    if causal:
        if phi_q.shape[-2] != phi_k.shape[-2]:
            raise ValueError(f"causal attention needs L = S, got {phi_q.shape[-2]} and {phi_k.shape[-2]}")
        kv = torch.cumsum(phi_k.unsqueeze(-1) * value.unsqueeze(-2), dim=-3)  # (..., S, m, Dv)
        z = torch.cumsum(phi_k, dim=-2)  # (..., S, m)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)  # (..., L, m, 1) * (..., L, m, Dv) -> (..., L, Dv)
        den = (phi_q * z).sum(dim=-1)  # (..., L)
    else:
        kv = phi_k.transpose(-2, -1) @ value  # (..., m, S) x (..., S, Dv) -> (..., m, Dv)
        num = phi_q @ kv  # (..., L, m) x (..., m, Dv) -> (..., L, Dv)
        den = phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)  # (..., L, m) x (..., m, 1) -> (..., L, 1)
        den = den.squeeze(-1)
    return KernelAttentionResult(output=num / den.unsqueeze(-1), denominator=den)


def quadratic_kernel_attention(
    phi_q: torch.Tensor, phi_k: torch.Tensor, value: torch.Tensor, *, causal: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same attention with the (L, S) matrix formed: returns ``(output, weights)``.

    weights = A / A.sum(-1) with A = φ(Q) φ(K)ᵀ (..., L, S), masked to j <= i when causal;
    output = weights V (..., L, Dv). For display at small L and as the reference in tests.

    Raises:
        ValueError: on mismatched shapes or dtypes, or causal with L != S.
    """
    phi_q, phi_k, value = check_qkv(phi_q, phi_k, value)
    a = phi_q @ phi_k.transpose(-2, -1)  # (..., L, m) x (..., m, S) -> (..., L, S)
    if causal:
        L, S = a.shape[-2], a.shape[-1]
        if L != S:
            raise ValueError(f"causal attention needs L = S, got {L} and {S}")
        a = a * torch.ones(L, S, dtype=torch.bool).tril()
    weights = a / a.sum(dim=-1, keepdim=True)
    return weights @ value, weights


def favor_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    m: int,
    kind: str = "positive_orthogonal",
    seed: int = 0,
    scale: float | None = None,
    *,
    causal: bool = False,
) -> KernelAttentionResult:
    """FAVOR+ approximation of softmax(scale · Q Kᵀ) V in time linear in L and S.

    Args:
        query: (..., L, D); key: (..., S, D); value: (..., S, Dv).
        m: number of random features.
        kind: ``positive_orthogonal`` (FAVOR+), ``positive_iid`` or ``trigonometric``.
        seed: seed of the random directions.
        scale: multiplies the scores; defaults to 1/√D like the exact attention.
        causal: prefix-sum form, query i sees keys j <= i (L = S).

    Returns:
        :class:`KernelAttentionResult` with output (..., L, Dv) and denominators (..., L).

    Raises:
        ValueError: on bad shapes, kind, m, seed or scale.
    """
    query, key, value = check_qkv(query, key, value)
    phi_q, phi_k = favor_features(query, key, m, kind, seed, scale)
    return kernel_attention(phi_q, phi_k, value, causal=causal)


def linear_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, causal: bool = False
) -> KernelAttentionResult:
    """Katharopoulos et al.'s linear attention, φ = elu + 1 (D features), non-causal or causal.

    Shapes as :func:`kernel_attention` with m = D.

    Raises:
        ValueError: on bad shapes, or causal with L != S.
    """
    query, key, value = check_qkv(query, key, value)
    return kernel_attention(elu_features(query), elu_features(key), value, causal=causal)
