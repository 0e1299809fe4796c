"""core.multihead against torch.nn.MultiheadAttention and against a head-by-head loop written here."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from core.attention import causal_mask
from core.multihead import (
    MultiHeadAttention,
    compare_with_library,
    head_options,
    seeded_multihead,
)

CONFIGS = [(8, 1), (16, 4), (64, 8), (64, 32), (96, 3), (32, 32)]


def _torch_module(d_model: int, n_heads: int, seed: int, bias: bool = True) -> nn.MultiheadAttention:
    torch.manual_seed(seed)
    module = nn.MultiheadAttention(d_model, n_heads, bias=bias, batch_first=True).double().eval()
    if bias:  # torch starts biases at 0; random biases make the comparison stricter
        with torch.no_grad():
            module.in_proj_bias.normal_()
            module.out_proj.bias.normal_()
    return module


@pytest.mark.parametrize(("d_model", "n_heads"), CONFIGS)
@pytest.mark.parametrize("causal", [False, True])
def test_from_torch_matches_torch_outputs_and_per_head_weights(d_model, n_heads, causal):
    ref = _torch_module(d_model, n_heads, seed=d_model + n_heads)
    ours = MultiHeadAttention.from_torch(ref)
    x = torch.randn(3, 7, d_model, dtype=torch.float64)
    mask = causal_mask(7) if causal else None
    with torch.no_grad():
        ref_out, ref_w = ref(
            x, x, x, attn_mask=None if mask is None else ~mask, need_weights=True, average_attn_weights=False
        )
        out, w = ours(x, x, x, mask=mask)
    assert out.shape == (3, 7, d_model)
    assert w.shape == (3, n_heads, 7, 7)
    assert torch.allclose(out, ref_out, rtol=0, atol=1e-10)
    assert torch.allclose(w, ref_w, rtol=0, atol=1e-10)


@pytest.mark.parametrize("bias", [True, False])
def test_from_torch_cross_attention_different_lengths(bias):
    ref = _torch_module(24, 4, seed=3, bias=bias)
    ours = MultiHeadAttention.from_torch(ref)
    q = torch.randn(2, 5, 24, dtype=torch.float64)
    kv = torch.randn(2, 9, 24, dtype=torch.float64)
    v = torch.randn(2, 9, 24, dtype=torch.float64)
    with torch.no_grad():
        ref_out, ref_w = ref(q, kv, v, need_weights=True, average_attn_weights=False)
        out, w = ours(q, kv, v)
    assert w.shape == (2, 4, 5, 9)
    assert torch.allclose(out, ref_out, rtol=0, atol=1e-10)
    assert torch.allclose(w, ref_w, rtol=0, atol=1e-10)


def test_from_torch_rejects_what_it_cannot_copy():
    with pytest.raises(ValueError, match="batch_first"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2))
    with pytest.raises(ValueError, match="kdim"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, kdim=4, batch_first=True))
    with pytest.raises(ValueError, match="expected"):
        MultiHeadAttention.from_torch(nn.Linear(2, 2))


def _loop_reference(m: MultiHeadAttention, x: torch.Tensor, mask: torch.Tensor | None):
    """Head by head with explicit slices of the weight matrices and an explicit softmax."""
    outs, weights = [], []
    for h in range(m.n_heads):
        rows_k = slice(h * m.d_k, (h + 1) * m.d_k)
        rows_v = slice(h * m.d_v, (h + 1) * m.d_v)
        q = x @ m.w_query.weight[rows_k].T + m.w_query.bias[rows_k]
        k = x @ m.w_key.weight[rows_k].T + m.w_key.bias[rows_k]
        v = x @ m.w_value.weight[rows_v].T + m.w_value.bias[rows_v]
        s = q @ k.transpose(1, 2) / math.sqrt(m.d_k)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        e = torch.exp(s - s.amax(-1, keepdim=True))
        a = e / e.sum(-1, keepdim=True)
        weights.append(a)
        outs.append(a @ v)
    concat = torch.cat(outs, dim=-1)  # (B, T, H * d_v)
    return concat @ m.w_out.weight.T + m.w_out.bias, torch.stack(weights, dim=1), concat


@pytest.mark.parametrize(
    ("d_model", "n_heads", "d_k", "d_v"), [(12, 5, 3, 7), (16, 2, 16, 1), (10, 3, None, 4)]
)
@pytest.mark.parametrize("causal", [False, True])
def test_custom_head_widths_match_a_loop(d_model, n_heads, d_k, d_v, causal):
    if d_k is None and d_model % n_heads:
        with pytest.raises(ValueError, match="divide"):
            MultiHeadAttention(d_model, n_heads, d_k, d_v)
        return
    torch.manual_seed(0)
    m = MultiHeadAttention(d_model, n_heads, d_k, d_v).double()
    x = torch.randn(2, 6, d_model, dtype=torch.float64)
    mask = causal_mask(6) if causal else None
    with torch.no_grad():
        trace = m.forward_trace(x, x, x, mask=mask)
        ref_out, ref_w, ref_concat = _loop_reference(m, x, mask)
    assert trace.q.shape == (2, n_heads, 6, m.d_k)
    assert trace.heads.shape == (2, n_heads, 6, m.d_v)
    assert torch.allclose(trace.weights, ref_w, rtol=0, atol=1e-12)
    assert torch.allclose(trace.concat, ref_concat, rtol=0, atol=1e-12)
    assert torch.allclose(trace.output, ref_out, rtol=0, atol=1e-12)


def test_head_options_are_the_divisors_up_to_32():
    assert head_options(64) == [1, 2, 4, 8, 16, 32]
    assert head_options(48) == [1, 2, 3, 4, 6, 8, 12, 16, 24]
    assert head_options(7) == [1, 7]
    assert head_options(256) == [1, 2, 4, 8, 16, 32]
    for bad in (0, -4, "64", 2.0, True):
        with pytest.raises(ValueError, match="d_model"):
            head_options(bad)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((64, 7), {}, "divide"),
        ((0, 1), {}, "d_model"),
        ((8, 0), {}, "n_heads"),
        ((8, True), {}, "n_heads"),
        ((8, 2), {"d_k": 0, "d_v": 2}, "d_k"),
        ((8, 2), {"dropout": 1.0}, "dropout"),
        ((8, 2), {"scale": 0.0}, "scale"),
        ((8, 2), {"scale": float("nan")}, "scale"),
    ],
)
def test_constructor_rejects_bad_sizes(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention(*args, **kwargs)


def test_forward_rejects_wrong_widths_and_shapes():
    m = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="d_model=8"):
        m(torch.randn(1, 3, 6), torch.randn(1, 3, 6), torch.randn(1, 3, 6))
    with pytest.raises(ValueError, match="batch, length"):
        m(torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8))
    with pytest.raises(ValueError, match="lengths"):
        m(torch.randn(1, 3, 8), torch.randn(1, 4, 8), torch.randn(1, 5, 8))


def test_weights_are_returned_before_dropout():
    torch.manual_seed(0)
    m = MultiHeadAttention(8, 2, dropout=0.5).train()
    _, w = m(*(torch.randn(2, 5, 8),) * 3)
    assert torch.allclose(w.sum(-1), torch.ones(2, 2, 5), atol=1e-6)


def test_seeded_multihead_is_reproducible_and_xavier_like():
    a, b, c = (
        seeded_multihead(32, 4, seed=1),
        seeded_multihead(32, 4, seed=1),
        seeded_multihead(32, 4, seed=2),
    )
    assert torch.equal(a.w_query.weight, b.w_query.weight)
    assert not torch.equal(a.w_query.weight, c.w_query.weight)
    bound = math.sqrt(6 / (32 + 32))  # xavier_uniform bound for a (32, 32) matrix
    assert a.w_key.weight.abs().max() <= bound
    assert float(a.w_key.weight.detach().abs().max()) > 0.9 * bound
    assert torch.count_nonzero(a.w_out.bias) == 0
    assert not a.training


@pytest.mark.parametrize(
    ("d_model", "n_heads", "d_k", "d_v"), [(64, 8, None, None), (64, 32, None, None), (20, 3, 5, 2)]
)
@pytest.mark.parametrize("causal", [False, True])
def test_compare_with_library_finds_float64_agreement(d_model, n_heads, d_k, d_v, causal):
    m = seeded_multihead(d_model, n_heads, d_k, d_v, seed=5)
    with torch.no_grad():
        m.w_query.bias.normal_()
    x = torch.randn(1, 9, d_model, dtype=torch.float64)
    result = compare_with_library(m, x, causal_mask(9) if causal else None)
    assert result.output_max_diff < 1e-10
    if d_k is None:
        assert result.reference == "torch.nn.MultiheadAttention"
        assert result.weights_max_diff < 1e-10
    else:
        assert result.reference == "F.scaled_dot_product_attention"
        assert result.weights_max_diff is None
    f32 = compare_with_library(m, x, dtype=torch.float32)
    assert f32.dtype == "float32"
    assert 0 <= f32.output_max_diff < 1e-4


def test_a_changed_weight_shows_up_as_a_difference():
    """The equivalence checks can fail: perturb one weight of the copy and torch disagrees."""
    ref = _torch_module(16, 4, seed=0)
    ours = MultiHeadAttention.from_torch(ref)
    with torch.no_grad():
        ours.w_query.weight[0, 0] += 0.5
        x = torch.randn(1, 6, 16, dtype=torch.float64)
        ref_out, _ = ref(x, x, x)
        out, _ = ours(x, x, x)
    assert float((out - ref_out).abs().max()) > 1e-4
    with pytest.raises(ValueError, match="mask"):
        compare_with_library(ours, x, torch.ones(6, 6))
