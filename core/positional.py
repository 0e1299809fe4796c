"""Positional encodings: attention is permutation-equivariant, so order must be injected.

Sinusoidal encoding (Vaswani et al., 2017, section 3.5):

    PE[p, 2i]   = sin(p / 10000^(2i / d_model))
    PE[p, 2i+1] = cos(p / 10000^(2i / d_model))

PE·PEᵀ depends only on the distance between positions (a "position kernel"), which is why the
encoding lets attention prefer nearby positions. A learned table is the alternative.
"""

from __future__ import annotations

import torch
from torch import nn


def sinusoidal_encoding(length: int, d_model: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (length, d_model) sinusoidal table. An odd d_model drops the last cosine column.

    Raises:
        ValueError: if length or d_model is not a positive integer.
    """
    for name, n in (("length", length), ("d_model", d_model)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    position = torch.arange(length, dtype=torch.float64)[:, None]  # (length, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (length, ceil(d/2))
    pe = torch.zeros(length, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(dtype)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to (B, T, d_model) inputs; no parameters."""

    def __init__(self, d_model: int, max_len: int = 512) -> None:
        super().__init__()
        self.register_buffer("table", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[-2]
        if T > self.table.shape[0]:
            raise ValueError(f"sequence length {T} exceeds max_len {self.table.shape[0]}")
        return x + self.table[:T].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trainable (max_len, d_model) table to (B, T, d_model) inputs."""

    def __init__(self, d_model: int, max_len: int = 512, init_std: float = 0.02) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(max_len, d_model) * init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[-2]
        if T > self.table.shape[0]:
            raise ValueError(f"sequence length {T} exceeds max_len {self.table.shape[0]}")
        return x + self.table[:T].to(x.dtype)
