"""core.positional against the formula written out with loops, and the position kernel's symmetry."""

from __future__ import annotations

import math

import pytest
import torch

from core.positional import (
    LEARNED_INIT_STD,
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    position_kernel,
    positional_table,
    sinusoidal_encoding,
    sinusoidal_kernel_of_distance,
)


def _formula(length: int, d: int) -> list[list[float]]:
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)), one entry at a time."""
    table = [[0.0] * d for _ in range(length)]
    for p in range(length):
        for j in range(d):
            two_i = j - (j % 2)
            angle = p / 10000 ** (two_i / d)
            table[p][j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return table


@pytest.mark.parametrize(("length", "d"), [(1, 1), (10, 2), (17, 7), (50, 16), (32, 64), (5, 255)])
def test_sinusoidal_encoding_matches_the_formula(length, d):
    pe = sinusoidal_encoding(length, d, dtype=torch.float64)
    assert pe.shape == (length, d)
    assert torch.allclose(pe, torch.tensor(_formula(length, d), dtype=torch.float64), rtol=0, atol=1e-12)


def test_default_dtype_is_float32_and_bad_sizes_raise():
    assert sinusoidal_encoding(3, 4).dtype == torch.float32
    for bad in ((0, 4), (3, 0), (2.5, 4), (3, True)):
        with pytest.raises(ValueError, match="positive integer"):
            sinusoidal_encoding(*bad)


@pytest.mark.parametrize("d", [2, 8, 64, 128])
def test_position_kernel_depends_only_on_distance(d):
    T = 24
    K = position_kernel(sinusoidal_encoding(T, d, dtype=torch.float64))  # (T, T)
    for p in range(T):
        for q in range(T):
            shifted = [(p + s, q + s) for s in range(1, T - max(p, q))]
            for a, b in shifted:
                assert K[a, b] == pytest.approx(float(K[p, q]), abs=1e-10)
    # and it is the closed form sum_i cos(delta * w_i), written here with a loop
    for delta in range(-T + 1, T):
        loop = sum(math.cos(delta / 10000 ** (2 * i / d)) for i in range(d // 2))
        p, q = max(delta, 0), max(-delta, 0)
        assert float(K[p, q]) == pytest.approx(loop, abs=1e-10)
        assert float(sinusoidal_kernel_of_distance(torch.tensor(delta), d)) == pytest.approx(loop, abs=1e-10)
    # the diagonal is the largest value: each position matches itself best
    assert torch.allclose(K.diagonal(), torch.full((T,), d / 2, dtype=torch.float64))
    assert bool((K <= d / 2 + 1e-9).all())


def test_kernel_of_distance_needs_an_even_width_and_a_learned_table_is_not_shift_invariant():
    with pytest.raises(ValueError, match="even"):
        sinusoidal_kernel_of_distance(torch.tensor(1.0), 7)
    learned = positional_table("learned", 12, 16, seed=0)
    K = position_kernel(learned)
    assert abs(float(K[0, 1] - K[5, 6])) > 1e-3
    with pytest.raises(ValueError, match="length, d_model"):
        position_kernel(torch.zeros(3))


def test_sinusoidal_module_adds_the_table_in_the_input_dtype():
    module = SinusoidalPositionalEncoding(16, max_len=20)
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    expected = x + torch.tensor(_formula(7, 16), dtype=torch.float64)
    assert torch.allclose(module(x), expected, rtol=0, atol=1e-12)
    assert list(module.parameters()) == []
    with pytest.raises(ValueError, match="max_len"):
        module(torch.randn(1, 21, 16))
    with pytest.raises(ValueError, match="d_model=16"):
        module(torch.randn(1, 5, 8))


def test_learned_embedding_is_trainable_and_reproducible():
    a = LearnedPositionalEmbedding(8, max_len=10, init_std=1.0, generator=torch.Generator().manual_seed(0))
    b = LearnedPositionalEmbedding(8, max_len=10, init_std=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a.table, b.table)
    x = torch.zeros(3, 4, 8)
    out = a(x)
    assert torch.equal(out[1], a.table[:4].detach())
    out.sum().backward()
    assert torch.equal(a.table.grad[:4], torch.full((4, 8), 3.0))
    assert torch.count_nonzero(a.table.grad[4:]) == 0
    with pytest.raises(ValueError, match="init_std"):
        LearnedPositionalEmbedding(8, init_std=-1.0)
    with pytest.raises(ValueError, match="max_len"):
        a(torch.zeros(1, 11, 8))


def test_positional_table_kinds():
    assert positional_table("none", 5, 8) is None
    assert torch.allclose(
        positional_table("sinusoidal", 5, 8), sinusoidal_encoding(5, 8, dtype=torch.float64)
    )
    learned = positional_table("learned", 200, 64, seed=1)
    assert learned.shape == (200, 64)
    assert float(learned.std()) == pytest.approx(LEARNED_INIT_STD, rel=0.05)
    assert torch.equal(learned, positional_table("learned", 200, 64, seed=1))
    with pytest.raises(ValueError, match="unknown positional"):
        positional_table("rotary", 5, 8)
