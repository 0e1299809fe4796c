"""The permutation experiment, checked with torch.nn.MultiheadAttention and index loops written here."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from core.attention import causal_mask
from core.lessons.multi_head import make_permutation, permutation_experiment, permute_map
from core.multihead import MultiHeadAttention, seeded_multihead
from core.positional import positional_table
from core.tokens import input_tokens


def _torch_maps(module: nn.MultiheadAttention, x: torch.Tensor, mask=None) -> torch.Tensor:
    with torch.no_grad():
        _, w = module(x[None], x[None], x[None], attn_mask=None if mask is None else ~mask,
                      need_weights=True, average_attn_weights=False)  # fmt: skip
    return w[0]  # (H, T, T)


@pytest.mark.parametrize("kind", ["shuffle", "reverse"])
def test_without_positions_shuffling_only_permutes_rows_and_columns(kind):
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(16, 4, batch_first=True).double().eval()
    T = 9
    x = torch.randn(T, 16, dtype=torch.float64)
    perm = make_permutation(T, kind, seed=3)
    before, after = _torch_maps(ref, x), _torch_maps(ref, x[perm])
    for h in range(4):  # A(Px)[i, j] == A(x)[perm[i], perm[j]], entry by entry
        for i in range(T):
            for j in range(T):
                assert float(after[h, i, j]) == pytest.approx(float(before[h, perm[i], perm[j]]), abs=1e-12)
    result = permutation_experiment(MultiHeadAttention.from_torch(ref), x, perm)
    assert result.map_max_diff < 1e-12
    assert result.output_max_diff < 1e-12
    assert torch.allclose(result.weights_shuffled, after, atol=1e-12)


@pytest.mark.parametrize("pe", ["sinusoidal", "learned"])
def test_with_positions_the_map_itself_changes(pe):
    torch.manual_seed(1)
    ref = nn.MultiheadAttention(16, 4, batch_first=True).double().eval()
    T = 9
    x = torch.randn(T, 16, dtype=torch.float64)
    perm = make_permutation(T, "shuffle", seed=0)
    table = positional_table(pe, T, 16, seed=0)
    # the independent check: torch's maps of the two inputs, with the encoding added to the slots
    before, after = _torch_maps(ref, x + table), _torch_maps(ref, x[perm] + table)
    predicted = torch.stack([before[h][perm][:, perm] for h in range(4)])
    assert float((after - predicted).abs().max()) > 1e-3
    result = permutation_experiment(MultiHeadAttention.from_torch(ref), x, perm, positions=table)
    assert result.map_max_diff == pytest.approx(float((after - predicted).abs().max()), abs=1e-12)
    assert result.output_max_diff > 1e-3


def test_a_causal_mask_alone_breaks_the_symmetry():
    m = seeded_multihead(16, 2, seed=0)
    x = torch.randn(6, 16, dtype=torch.float64)
    result = permutation_experiment(m, x, make_permutation(6, "reverse"), mask=causal_mask(6))
    assert result.map_max_diff > 1e-3


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sentence_repeats_a_word_so_without_positions_its_columns_coincide(lang):
    x, words = input_tokens("sentence", 32, seed=0, sentence=lang)
    first = next(i for i, w in enumerate(words) if words.count(w) > 1)
    second = words.index(words[first], first + 1)
    m = seeded_multihead(32, 4, seed=0)
    table = positional_table("sinusoidal", len(words), 32)
    with torch.no_grad():
        _, w = m(x[None], x[None], x[None])
        _, w_pe = m(*(x[None] + table,) * 3)
    assert torch.allclose(w[0, :, :, first], w[0, :, :, second], atol=1e-14)  # same key, same column
    assert torch.allclose(w[0, :, first], w[0, :, second], atol=1e-14)  # same query, same row
    assert not torch.allclose(w_pe[0, :, first], w_pe[0, :, second], atol=1e-3)


def test_permutations_and_errors():
    assert make_permutation(4, "reverse").tolist() == [3, 2, 1, 0]
    for seed in range(20):
        p = make_permutation(5, "shuffle", seed)
        assert sorted(p.tolist()) == [0, 1, 2, 3, 4]
        assert p.tolist() != [0, 1, 2, 3, 4]
    assert make_permutation(1, "shuffle").tolist() == [0]
    with pytest.raises(ValueError, match="unknown permutation"):
        make_permutation(4, "rotate")
    with pytest.raises(ValueError, match="positive"):
        make_permutation(0)
    w = torch.arange(9.0).reshape(3, 3)
    assert permute_map(w, torch.tensor([2, 0, 1])).tolist() == [[8, 6, 7], [2, 0, 1], [5, 3, 4]]
    m = seeded_multihead(8, 2, seed=0)
    with pytest.raises(ValueError, match="permutation"):
        permutation_experiment(m, torch.randn(3, 8, dtype=torch.float64), torch.tensor([0, 0, 1]))
    with pytest.raises(ValueError, match="positions"):
        permutation_experiment(m, torch.randn(3, 8, dtype=torch.float64), torch.arange(3), torch.zeros(4, 8))
