"""Multi-head attention: H attention heads, each in its own learned query/key/value subspace.

    head_h = Attention(X W_Q^h, X W_K^h, X W_V^h),   MHA(X) = concat(head_1..head_H) W_O

(Vaswani et al., 2017, section 3.2.2; the post's section 3.2.) Each head is one Nadaraya-Watson
regressor with its own learned metric: the projections choose what "similar" means. Built on
``core.attention.scaled_dot_product_attention``; ``MultiHeadAttention.from_torch`` copies the
weights of a ``torch.nn.MultiheadAttention(batch_first=True)`` so the two can be compared
(:func:`compare_with_library` does it and returns the largest differences).

Shapes: B batch, H heads, L queries, S keys, d_model model width, d_k per-head key/query width,
d_v per-head value width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from core.attention import scaled_dot_product_attention

#: Most heads the page offers (the post tried 32).
MAX_HEADS = 32


def _check_positive_int(name: str, n: object) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return n


def head_options(d_model: int, max_heads: int = MAX_HEADS) -> list[int]:
    """Head counts H that split ``d_model`` evenly (d_model % H == 0), 1 <= H <= max_heads, ascending.

    Raises:
        ValueError: if d_model or max_heads is not a positive integer.
    """
    _check_positive_int("d_model", d_model)
    _check_positive_int("max_heads", max_heads)
    return [h for h in range(1, min(d_model, max_heads) + 1) if d_model % h == 0]


@dataclass(frozen=True)
class MultiHeadTrace:
    """Every intermediate of one multi-head forward pass (for teaching; see ``forward_trace``).

    Attributes:
        q: (B, H, L, d_k) per-head queries.
        k: (B, H, S, d_k) per-head keys.
        v: (B, H, S, d_v) per-head values.
        weights: (B, H, L, S) attention weights (before dropout).
        heads: (B, H, L, d_v) each head's output, weights @ v.
        concat: (B, L, H * d_v) the heads side by side (input of W_O).
        output: (B, L, d_model) the module's output, concat @ W_Oᵀ + b_O.
    """

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    weights: torch.Tensor
    heads: torch.Tensor
    concat: torch.Tensor
    output: torch.Tensor


class MultiHeadAttention(nn.Module):
    """Batch-first multi-head attention that also returns every head's weights.

    Args:
        d_model: model width (input and output feature size).
        n_heads: number of heads H.
        d_k: per-head query/key width; default d_model // n_heads.
        d_v: per-head value width; default d_model // n_heads.
        bias: whether the four projections have a bias.
        dropout: dropout on the attention weights (training only).
        scale: score scale; default 1/√d_k. Set 1.0 to reproduce the "no √d_k" pitfall.

    Raises:
        ValueError: if a size is not a positive integer, d_k/d_v are omitted and n_heads does not
            divide d_model, dropout is outside [0, 1), or scale is not finite and positive.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_k: int | None = None,
        d_v: int | None = None,
        bias: bool = True,
        dropout: float = 0.0,
        scale: float | None = None,
    ) -> None:
        super().__init__()
        _check_positive_int("d_model", d_model)
        _check_positive_int("n_heads", n_heads)
        if (d_k is None or d_v is None) and d_model % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model} unless d_k and d_v are given")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        if scale is not None and not (float(scale) > 0 and float(scale) < float("inf")):
            raise ValueError(f"scale must be a finite positive number, got {scale}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = _check_positive_int("d_k", d_k) if d_k is not None else d_model // n_heads
        self.d_v = _check_positive_int("d_v", d_v) if d_v is not None else d_model // n_heads
        self.scale = scale
        self.w_query = nn.Linear(d_model, n_heads * self.d_k, bias=bias)
        self.w_key = nn.Linear(d_model, n_heads * self.d_k, bias=bias)
        self.w_value = nn.Linear(d_model, n_heads * self.d_v, bias=bias)
        self.w_out = nn.Linear(n_heads * self.d_v, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Re-draw the weights as ``torch.nn.MultiheadAttention`` does: Xavier-uniform, zero biases.

        With a ``generator`` the draw is reproducible without touching torch's global RNG (safe in
        a multi-user server). Xavier keeps the scores' standard deviation near 1, so random heads
        are neither uniform nor one-hot.
        """
        for linear in (self.w_query, self.w_key, self.w_value, self.w_out):
            nn.init.xavier_uniform_(linear.weight, generator=generator)
            if linear.bias is not None:
                nn.init.zeros_(linear.bias)

    def _split(self, x: torch.Tensor, width: int) -> torch.Tensor:
        B, T, _ = x.shape
        # (B, T, H * width) -> (B, T, H, width) -> (B, H, T, width)
        return x.view(B, T, self.n_heads, width).transpose(1, 2)

    def _check_inputs(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            if not isinstance(x, torch.Tensor) or x.dim() != 3:
                raise ValueError(f"{name} must be a (batch, length, d_model) tensor")
            if x.shape[-1] != self.d_model:
                raise ValueError(f"{name} has width {x.shape[-1]}, expected d_model={self.d_model}")
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(
                f"batch sizes must agree and key/value lengths must match, got query "
                f"{tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )

    def forward_trace(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> MultiHeadTrace:
        """Like :meth:`forward`, but returns every intermediate (per-head q, k, v, outputs, concat).

        Raises:
            ValueError: on inputs that are not (B, T, d_model), mismatched lengths, or a bad mask.
        """
        self._check_inputs(query, key, value)
        q = self._split(self.w_query(query), self.d_k)  # (B, H, L, d_k)
        k = self._split(self.w_key(key), self.d_k)  # (B, H, S, d_k)
        v = self._split(self.w_value(value), self.d_v)  # (B, H, S, d_v)
        _, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=self.scale)  # (B, H, L, S)
        heads = self.attn_dropout(weights) @ v  # (B, H, L, S) x (B, H, S, d_v) -> (B, H, L, d_v)
        B, H, L, _ = heads.shape
        # transpose makes the tensor non-contiguous; view needs contiguous memory (the post's pitfall,
        # run for real in core.lessons.multi_head)
        concat = heads.transpose(1, 2).contiguous().view(B, L, H * self.d_v)  # (B, L, H * d_v)
        output = self.w_out(concat)  # (B, L, H * d_v) -> (B, L, d_model)
        return MultiHeadTrace(q=q, k=k, v=v, weights=weights, heads=heads, concat=concat, output=output)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``query`` (B, L, d_model) to ``key``/``value`` (B, S, d_model).

        Args:
            mask: bool, broadcastable to (B, H, L, S) — e.g. (L, S) causal or (B, 1, 1, S)
                padding — True where a query may attend.

        Returns:
            output (B, L, d_model) and weights (B, H, L, S). The weights are those *before*
            dropout (``torch.nn.MultiheadAttention`` returns them after); in eval mode, or with
            dropout 0, the two agree.

        Raises:
            ValueError: on inputs that are not (B, T, d_model), mismatched lengths, or a bad mask.
        """
        trace = self.forward_trace(query, key, value, mask)
        return trace.output, trace.weights

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``module`` (``torch.nn.MultiheadAttention(batch_first=True)``) with its weights.

        Outputs and per-head weights then match
        ``module(q, k, v, need_weights=True, average_attn_weights=False)`` (torch's boolean
        ``attn_mask`` is True where attending is *forbidden*: pass it ``~mask``).

        Raises:
            ValueError: if the module is not batch-first, uses kdim/vdim different from
                embed_dim, or has bias_k/bias_v or add_zero_attn.
        """
        if not isinstance(module, nn.MultiheadAttention):
            raise ValueError(f"expected torch.nn.MultiheadAttention, got {type(module).__name__}")
        if not module.batch_first:
            raise ValueError("only batch_first=True modules are supported")
        if not module._qkv_same_embed_dim or module.bias_k is not None or module.add_zero_attn:
            raise ValueError("kdim/vdim != embed_dim, bias_k/bias_v and add_zero_attn are not supported")
        d_model, n_heads = module.embed_dim, module.num_heads
        has_bias = module.in_proj_bias is not None
        ours = cls(d_model, n_heads, bias=has_bias, dropout=module.dropout)
        ours = ours.to(dtype=module.in_proj_weight.dtype, device=module.in_proj_weight.device)
        # torch stacks W_Q, W_K, W_V as one (3 * d_model, d_model) matrix; head h owns rows
        # h*d_k..(h+1)*d_k of each block, the same split as our view(B, T, H, d_k).
        w_q, w_k, w_v = module.in_proj_weight.detach().chunk(3, dim=0)  # each (d_model, d_model)
        with torch.no_grad():
            ours.w_query.weight.copy_(w_q)
            ours.w_key.weight.copy_(w_k)
            ours.w_value.weight.copy_(w_v)
            ours.w_out.weight.copy_(module.out_proj.weight)
            if has_bias:
                b_q, b_k, b_v = module.in_proj_bias.detach().chunk(3)
                ours.w_query.bias.copy_(b_q)
                ours.w_key.bias.copy_(b_k)
                ours.w_value.bias.copy_(b_v)
                ours.w_out.bias.copy_(module.out_proj.bias)
        ours.train(module.training)
        return ours


def seeded_multihead(
    d_model: int,
    n_heads: int,
    d_k: int | None = None,
    d_v: int | None = None,
    *,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> MultiHeadAttention:
    """A ``MultiHeadAttention`` in eval mode whose weights are drawn reproducibly from ``seed``.

    Raises:
        ValueError: as :class:`MultiHeadAttention`.
    """
    module = MultiHeadAttention(d_model, n_heads, d_k, d_v).to(dtype)
    module.reset_parameters(torch.Generator().manual_seed(int(seed)))
    return module.eval()


@dataclass(frozen=True)
class LibraryComparison:
    """Largest absolute differences between our module and a library reference on the same input.

    Attributes:
        reference: ``"torch.nn.MultiheadAttention"`` or, when d_k/d_v do not split d_model (torch's
            module cannot express that), ``"F.scaled_dot_product_attention"`` on our projections.
        output_max_diff: max |ours - reference| over the (B, L, d_model) outputs.
        weights_max_diff: max difference of the (B, H, L, S) weights, or None when the reference
            does not return weights.
        dtype: the floating type both ran in (``"float64"`` or ``"float32"``).
    """

    reference: str
    output_max_diff: float
    weights_max_diff: float | None
    dtype: str


def compare_with_library(
    module: MultiHeadAttention,
    x: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    dtype: torch.dtype = torch.float64,
) -> LibraryComparison:
    """Run ``module`` (self-attention on ``x``) and a library implementation with the same weights.

    With d_k = d_v = d_model / H and the default scale, the reference is
    ``torch.nn.MultiheadAttention`` loaded with our weights; otherwise (torch's module cannot express
    other head widths) it is ``torch.nn.functional.scaled_dot_product_attention`` on our own
    projections, all heads at once (it returns no weights).

    Args:
        x: (B, T, d_model) or (T, d_model) input.
        mask: optional bool (T, T), True where a query may attend.
        dtype: precision of the comparison.

    Raises:
        ValueError: if x does not have width d_model or the mask is not (T, T) boolean.
    """
    if x.dim() == 2:
        x = x[None]
    if x.dim() != 3 or x.shape[-1] != module.d_model:
        raise ValueError(f"x must be (B, T, {module.d_model}), got {tuple(x.shape)}")
    T = x.shape[1]
    if mask is not None and (mask.dtype != torch.bool or tuple(mask.shape) != (T, T)):
        raise ValueError(f"mask must be a boolean ({T}, {T}) tensor")
    has_bias = module.w_query.bias is not None
    ours = MultiHeadAttention(
        module.d_model, module.n_heads, module.d_k, module.d_v, bias=has_bias, scale=module.scale
    ).to(dtype)
    ours.load_state_dict(module.state_dict())
    ours.eval()
    x = x.to(dtype)
    with torch.no_grad():
        out, weights = ours(x, x, x, mask=mask)
        if (
            module.scale is None
            and module.d_model % module.n_heads == 0
            and module.d_k == module.d_v == module.d_model // module.n_heads
        ):
            lib = nn.MultiheadAttention(module.d_model, module.n_heads, bias=has_bias, batch_first=True)
            lib = lib.to(dtype).eval()
            lib.in_proj_weight.copy_(torch.cat([ours.w_query.weight, ours.w_key.weight, ours.w_value.weight]))
            lib.out_proj.weight.copy_(ours.w_out.weight)
            if has_bias:
                lib.in_proj_bias.copy_(torch.cat([ours.w_query.bias, ours.w_key.bias, ours.w_value.bias]))
                lib.out_proj.bias.copy_(ours.w_out.bias)
            ref_out, ref_w = lib(
                x, x, x, attn_mask=None if mask is None else ~mask,
                need_weights=True, average_attn_weights=False,
            )  # fmt: skip
            return LibraryComparison(
                reference="torch.nn.MultiheadAttention",
                output_max_diff=float((out - ref_out).abs().max()),
                weights_max_diff=float((weights - ref_w).abs().max()),
                dtype=str(dtype).removeprefix("torch."),
            )
        trace = ours.forward_trace(x, x, x, mask=mask)
        heads = F.scaled_dot_product_attention(trace.q, trace.k, trace.v, attn_mask=mask, scale=module.scale)
        # (B, H, L, d_v)
        B, H, L, _ = heads.shape
        ref_out = ours.w_out(heads.transpose(1, 2).reshape(B, L, H * ours.d_v))
        return LibraryComparison(
            reference="F.scaled_dot_product_attention",
            output_max_diff=float((out - ref_out).abs().max()),
            weights_max_diff=None,
            dtype=str(dtype).removeprefix("torch."),
        )
