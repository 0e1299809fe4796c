"""Multi-head attention: H attention heads, each in its own learned query/key/value subspace.

    head_h = Attention(X W_Q^h, X W_K^h, X W_V^h),   MHA(X) = concat(head_1..head_H) W_O

(Vaswani et al., 2017, section 3.2.2.) Each head is one Nadaraya-Watson regressor with its own
learned metric: the projections choose what "similar" means. Built on
``core.attention.scaled_dot_product_attention``; ``MultiHeadAttention.from_torch`` copies the
weights of a ``torch.nn.MultiheadAttention(batch_first=True)`` so the two can be compared.

Shapes: B batch, H heads, L queries, S keys, d_model model width, d_k per-head key/query width,
d_v per-head value width.
"""

from __future__ import annotations

import torch
from torch import nn

from core.attention import scaled_dot_product_attention


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
        ValueError: if a size is not positive, or d_k/d_v are omitted and n_heads does not
            divide d_model.
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
        if d_model < 1 or n_heads < 1:
            raise ValueError(f"d_model and n_heads must be positive, got {d_model} and {n_heads}")
        if (d_k is None or d_v is None) and d_model % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model} unless d_k and d_v are given")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_k if d_k is not None else d_model // n_heads
        self.d_v = d_v if d_v is not None else d_model // n_heads
        if self.d_k < 1 or self.d_v < 1:
            raise ValueError(f"d_k and d_v must be positive, got {self.d_k} and {self.d_v}")
        self.scale = scale
        self.w_query = nn.Linear(d_model, n_heads * self.d_k, bias=bias)
        self.w_key = nn.Linear(d_model, n_heads * self.d_k, bias=bias)
        self.w_value = nn.Linear(d_model, n_heads * self.d_v, bias=bias)
        self.w_out = nn.Linear(n_heads * self.d_v, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)

    def _split(self, x: torch.Tensor, width: int) -> torch.Tensor:
        B, T, _ = x.shape
        # (B, T, H * width) -> (B, T, H, width) -> (B, H, T, width)
        return x.view(B, T, self.n_heads, width).transpose(1, 2)

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
            output (B, L, d_model) and weights (B, H, L, S).
        """
        if query.dim() != 3 or key.dim() != 3 or value.dim() != 3:
            raise ValueError("query, key and value must be (batch, length, d_model) tensors")
        q = self._split(self.w_query(query), self.d_k)  # (B, H, L, d_k)
        k = self._split(self.w_key(key), self.d_k)  # (B, H, S, d_k)
        v = self._split(self.w_value(value), self.d_v)  # (B, H, S, d_v)
        _, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=self.scale)
        dropped = self.attn_dropout(weights)
        heads = dropped @ v  # (B, H, L, S) x (B, H, S, d_v) -> (B, H, L, d_v)
        B, H, L, _ = heads.shape
        # transpose makes the tensor non-contiguous; view needs contiguous memory (the post's pitfall)
        concat = heads.transpose(1, 2).contiguous().view(B, L, H * self.d_v)  # (B, L, H * d_v)
        return self.w_out(concat), weights

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``module`` (``torch.nn.MultiheadAttention(batch_first=True)``) with its weights.

        Outputs and per-head weights then match
        ``module(q, k, v, need_weights=True, average_attn_weights=False)``.

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
        return ours
