"""Positional encodings: attention is permutation-equivariant, so order must be injected.

The post (section 3.3): "Transformer computes in parallel and has no built-in notion of order;
swap two positions and their attention scores do not change, so position information has to be
added." ``core.lessons.multi_head`` runs that experiment.

Sinusoidal encoding (Vaswani et al., 2017, section 3.5):

    PE[p, 2i]   = sin(p / 10000^(2i / d_model))
    PE[p, 2i+1] = cos(p / 10000^(2i / d_model))

PE·PEᵀ depends only on the distance between positions (a "position kernel"):
PE_p · PE_q = Σ_i cos((p - q) ω_i) with ω_i = 10000^(-2i/d_model) (for even d_model), which is why
the encoding lets attention prefer nearby positions. A learned table is the alternative.

Shapes: B batch, T sequence length, d_model model width.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def _check_positive_int(name: str, n: object) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return n


def sinusoidal_frequencies(d_model: int, *, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The angular frequencies ω_i = 10000^(-2i/d_model), i = 0..ceil(d_model/2)-1 (radians/position).

    Raises:
        ValueError: if d_model is not a positive integer.
    """
    _check_positive_int("d_model", d_model)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)
    return torch.pow(10000.0, -two_i / d_model).to(dtype)


def sinusoidal_encoding(length: int, d_model: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (length, d_model) sinusoidal table. An odd d_model drops the last cosine column.

    Computed in float64 and cast to ``dtype``.

    Raises:
        ValueError: if length or d_model is not a positive integer.
    """
    _check_positive_int("length", length)
    omega = sinusoidal_frequencies(d_model)  # (ceil(d/2),)
    position = torch.arange(length, dtype=torch.float64)[:, None]  # (length, 1)
    angle = position * omega  # (length, ceil(d/2))
    pe = torch.zeros(length, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(dtype)


def position_kernel(table: torch.Tensor) -> torch.Tensor:
    """The Gram matrix of a positional table, PE·PEᵀ: (T, d_model) -> (T, T).

    Entry (p, q) is how much position p's code "matches" position q's: the score two tokens with
    identical content would get from their positions alone (with identity projections).

    Raises:
        ValueError: if ``table`` is not 2-D.
    """
    if not isinstance(table, torch.Tensor) or table.dim() != 2:
        raise ValueError("table must be a (length, d_model) tensor")
    return table @ table.T  # (T, d) x (d, T) -> (T, T)


def sinusoidal_kernel_of_distance(distance: torch.Tensor, d_model: int) -> torch.Tensor:
    """PE_p · PE_q as a function of δ = p - q alone, for an even d_model: Σ_i cos(δ ω_i).

    (sin a sin b + cos a cos b = cos(a - b).) For an odd d_model the last sine column adds
    sin(p ω) sin(q ω), which is not a function of δ: this function then raises.

    Args:
        distance: any shape, in positions (may be negative or fractional).

    Returns:
        Same shape as ``distance``, float64.

    Raises:
        ValueError: if d_model is not a positive even integer.
    """
    _check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"the kernel depends only on distance for an even d_model, got {d_model}")
    omega = sinusoidal_frequencies(d_model)  # (d/2,)
    delta = torch.as_tensor(distance, dtype=torch.float64)
    return torch.cos(delta[..., None] * omega).sum(-1)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to (B, T, d_model) inputs; no parameters.

    Raises:
        ValueError: if d_model or max_len is not a positive integer.
    """

    def __init__(self, d_model: int, max_len: int = 512) -> None:
        super().__init__()
        _check_positive_int("d_model", d_model)
        _check_positive_int("max_len", max_len)
        self.d_model = d_model
        # float64 so float64 inputs get the exact table; forward casts to the input dtype.
        self.register_buffer(
            "table", sinusoidal_encoding(max_len, d_model, dtype=torch.float64), persistent=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., T, d_model) -> x + PE[:T].

        Raises:
            ValueError: if T exceeds max_len or the width is not d_model.
        """
        return _add_table(x, self.table, self.d_model)


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trainable (max_len, d_model) table to (B, T, d_model) inputs.

    Args:
        init_std: standard deviation of the random start (GPT-2 uses 0.02, tiny next to token
            embeddings; before training the table is only noise).
        generator: optional ``torch.Generator`` for a reproducible start.

    Raises:
        ValueError: if d_model or max_len is not a positive integer, or init_std is negative.
    """

    def __init__(
        self,
        d_model: int,
        max_len: int = 512,
        init_std: float = 0.02,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        _check_positive_int("d_model", d_model)
        _check_positive_int("max_len", max_len)
        if not (init_std >= 0 and math.isfinite(init_std)):
            raise ValueError(f"init_std must be finite and non-negative, got {init_std}")
        self.d_model = d_model
        self.table = nn.Parameter(torch.randn(max_len, d_model, generator=generator) * init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., T, d_model) -> x + table[:T].

        Raises:
            ValueError: if T exceeds max_len or the width is not d_model.
        """
        return _add_table(x, self.table, self.d_model)


def _add_table(x: torch.Tensor, table: torch.Tensor, d_model: int) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.dim() < 2:
        raise ValueError("x must be a (..., length, d_model) tensor")
    T = x.shape[-2]
    if x.shape[-1] != d_model:
        raise ValueError(f"x has width {x.shape[-1]}, expected d_model={d_model}")
    if T > table.shape[0]:
        raise ValueError(f"sequence length {T} exceeds max_len {table.shape[0]}")
    return x + table[:T].to(x.dtype)


#: The choices the multi-head page offers.
POSITIONAL_KINDS = ("none", "sinusoidal", "learned")
#: Start of an untrained learned table: the RMS of the sinusoidal table (each sin/cos column has
#: mean square 1/2), so both encodings are as loud as each other next to unit-variance tokens.
LEARNED_INIT_STD = math.sqrt(0.5)


def positional_table(
    kind: str, length: int, d_model: int, *, seed: int = 0, dtype: torch.dtype = torch.float64
) -> torch.Tensor | None:
    """The (length, d_model) table that ``kind`` adds to the tokens, or None for ``"none"``.

    ``"learned"`` is an *untrained* :class:`LearnedPositionalEmbedding` drawn from ``seed`` with
    ``init_std=LEARNED_INIT_STD``: random codes, one per position (training shapes them).

    Raises:
        ValueError: if ``kind`` is unknown or a size is not a positive integer.
    """
    if kind not in POSITIONAL_KINDS:
        raise ValueError(f"unknown positional encoding {kind!r}; known: {list(POSITIONAL_KINDS)}")
    _check_positive_int("length", length)
    _check_positive_int("d_model", d_model)
    if kind == "none":
        return None
    if kind == "sinusoidal":
        return sinusoidal_encoding(length, d_model, dtype=dtype)
    generator = torch.Generator().manual_seed(int(seed) + 3)
    learned = LearnedPositionalEmbedding(d_model, length, LEARNED_INIT_STD, generator=generator)
    return learned.table.detach().to(dtype)
