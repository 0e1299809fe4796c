"""core.attention against torch's built-in ``scaled_dot_product_attention`` and brute-force loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.attention import (
    attention_steps,
    causal_mask,
    compare_with_torch,
    fully_masked_rows,
    mask_from_string,
    mask_to_string,
    masked_softmax,
    naive_masked_attention,
    padding_mask,
    random_qkv,
    scale_for,
    scaled_dot_product_attention,
)
from core.tokens import PAD, pad_tokens, sentence_qkv, sentence_tokens, token_embeddings, token_labels

F64 = torch.float64


def _qkv(shape_q, shape_k, dv, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*shape_q, generator=g, dtype=F64)
    k = torch.randn(*shape_k, generator=g, dtype=F64)
    v = torch.randn(*shape_k[:-1], dv, generator=g, dtype=F64)
    return q, k, v


def _allowed_rows(mask, out_shape):
    """Bool over the (..., L) rows of ``out_shape`` that have at least one allowed key."""
    if mask is None:
        return torch.ones(out_shape[:-1], dtype=torch.bool)
    return mask.any(-1).expand(out_shape[:-1])


CASES = [
    # (query shape, key shape, Dv, mask builder, scale)
    ((5, 4), (7, 4), 3, None, None),
    ((2, 6, 8), (2, 6, 8), 5, "causal", None),
    ((2, 3, 6, 8), (2, 3, 9, 8), 4, "random_full", 0.3),
    ((2, 3, 6, 8), (2, 3, 9, 8), 4, "padding", 1.0),
    ((3, 1, 4, 16), (3, 1, 4, 16), 2, "random_broadcast", 2.5),
    ((4, 32), (32, 32), 32, "random_with_empty_rows", None),
]


def _mask(kind, q, k, seed):
    L, S = q.shape[-2], k.shape[-2]
    g = torch.Generator().manual_seed(seed + 100)
    if kind is None:
        return None
    if kind == "causal":
        return causal_mask(L, S)
    if kind == "padding":
        lengths = torch.randint(1, S + 1, (q.shape[0],), generator=g).tolist()
        return padding_mask(lengths, S)[:, None]  # (B, 1, 1, S) against (B, H, L, S)
    if kind == "random_full":
        return torch.rand(*q.shape[:-2], L, S, generator=g) > 0.4
    if kind == "random_broadcast":
        return torch.rand(L, S, generator=g) > 0.5  # (L, S) against (B, H, L, S)
    m = torch.rand(L, S, generator=g) > 0.5
    m[0] = False  # a fully masked row
    m[2] = False
    return m


@pytest.mark.parametrize(("shape_q", "shape_k", "dv", "mask_kind", "scale"), CASES)
def test_matches_torch_builtin(shape_q, shape_k, dv, mask_kind, scale):
    q, k, v = _qkv(shape_q, shape_k, dv)
    mask = _mask(mask_kind, q, k, seed=1)
    out, w = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    keep = _allowed_rows(mask, out.shape)
    assert keep.any()
    assert torch.allclose(out[keep], ref[keep], rtol=0, atol=1e-10)
    # weights: rows sum to 1 where something is allowed, 0 where nothing is
    sums = w.sum(-1)
    assert torch.allclose(sums[keep], torch.ones_like(sums[keep]), atol=1e-12)
    assert (sums[~keep] == 0).all()
    assert torch.isfinite(out).all()
    assert torch.isfinite(w).all()
    if mask is not None:
        assert (w.masked_select(~mask.expand(w.shape)) == 0).all(), "masked weights must be exactly 0"


def test_weights_match_a_loop_over_rows():
    """The weights, one query at a time with math.exp: an independent reference."""
    q, k, v = _qkv((4, 3), (5, 3), 2, seed=3)
    mask = torch.tensor(
        [[1, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool
    )
    _, w = scaled_dot_product_attention(q, k, v, mask=mask, scale=0.7)
    for i in range(4):
        allowed = [j for j in range(5) if mask[i, j]]
        scores = {j: 0.7 * sum(q[i, d].item() * k[j, d].item() for d in range(3)) for j in allowed}
        z = sum(math.exp(s) for s in scores.values())
        for j in range(5):
            expected = math.exp(scores[j]) / z if j in allowed else 0.0
            assert w[i, j].item() == pytest.approx(expected, abs=1e-14)


def test_default_scale_is_one_over_sqrt_d():
    q, k, v = _qkv((3, 9), (4, 9), 2)
    out, _ = scaled_dot_product_attention(q, k, v)
    out3, _ = scaled_dot_product_attention(q, k, v, scale=1 / 3)
    assert torch.equal(out, out3)


def test_fully_masked_row_naive_nan_safe_zero():
    q, k, v = _qkv((3, 4), (5, 4), 2)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    out_safe, w_safe = scaled_dot_product_attention(q, k, v, mask=mask)
    out_naive, w_naive = naive_masked_attention(q, k, v, mask=mask)
    assert torch.isnan(w_naive[1]).all()
    assert torch.isnan(out_naive[1]).all()
    assert (w_safe[1] == 0).all()
    assert (out_safe[1] == 0).all()
    # elsewhere the two agree
    assert torch.allclose(out_safe[[0, 2]], out_naive[[0, 2]], atol=1e-14)
    assert fully_masked_rows(mask).tolist() == [False, True, False]


def test_gradients_flow_and_stay_finite():
    q, k, v = _qkv((2, 4, 3), (2, 5, 3), 2, seed=7)
    for x in (q, k, v):
        x.requires_grad_(True)
    mask = torch.rand(2, 4, 5, generator=torch.Generator().manual_seed(0)) > 0.3
    mask[0, 1] = False  # a fully masked row

    def f(q, k, v):
        return scaled_dot_product_attention(q, k, v, mask=mask, scale=0.8)[0]

    assert torch.autograd.gradcheck(f, (q, k, v))
    f(q, k, v).sum().backward()
    for x in (q, k, v):
        assert x.grad is not None
        assert torch.isfinite(x.grad).all()
    assert q.grad.abs().sum() > 0


def test_causal_mask_matches_torch_is_causal():
    q, k, v = _qkv((2, 6, 4), (2, 6, 4), 3)
    out, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(6))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(out, ref, atol=1e-12)
    m = causal_mask(3, 4)
    assert m.tolist() == [[True, False, False, False], [True, True, False, False], [True, True, True, False]]


def test_padding_mask_by_loop():
    m = padding_mask([2, 0, 4], S=4)
    assert m.shape == (3, 1, 4)
    for b, n in enumerate([2, 0, 4]):
        assert m[b, 0].tolist() == [j < n for j in range(4)]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda q, k, v: scaled_dot_product_attention(q, k[..., :3], v), "last dimension"),
        (lambda q, k, v: scaled_dot_product_attention(q, k, v[:3]), "same length"),
        (lambda q, k, v: scaled_dot_product_attention(q, k, v, scale=-1.0), "scale"),
        (lambda q, k, v: scaled_dot_product_attention(q, k, v, scale=float("nan")), "scale"),
        (lambda q, k, v: scaled_dot_product_attention(q, k, v, mask=torch.ones(4, 5)), "boolean"),
        (
            lambda q, k, v: scaled_dot_product_attention(q, k, v, mask=torch.ones(3, 5, dtype=torch.bool)),
            "broadcast",
        ),
        (
            lambda q, k, v: scaled_dot_product_attention(q, k, v, mask=torch.ones(2, 4, 5, dtype=torch.bool)),
            "enlarge",
        ),
        (lambda q, k, v: scaled_dot_product_attention(q.float(), k, v), "dtype"),
        (lambda q, k, v: scaled_dot_product_attention(q[0], k, v), "at least 2"),
        (lambda q, k, v: attention_steps(q, k, v, normalizer="magic"), "unknown normalizer"),
        (lambda q, k, v: causal_mask(0), "positive"),
        (lambda q, k, v: padding_mask([3, 9], S=4), "between"),
    ],
)
def test_invalid_input_raises_value_error(call, message):
    q, k, v = _qkv((4, 4), (5, 4), 2)
    with pytest.raises(ValueError, match=message):
        call(q, k, v)


def test_attention_steps_expose_the_pipeline():
    q, k, v = _qkv((2, 4, 8), (2, 6, 8), 3, seed=5)
    mask = causal_mask(4, 6)
    steps = attention_steps(q, k, v, mask=mask, scale=0.25)
    raw_loop = torch.tensor(
        [
            [[sum(q[b, i, d] * k[b, j, d] for d in range(8)) for j in range(6)] for i in range(4)]
            for b in range(2)
        ],
        dtype=F64,
    )
    assert torch.allclose(steps.raw, raw_loop, atol=1e-12)
    assert torch.allclose(steps.scaled, raw_loop * 0.25, atol=1e-12)
    assert torch.isneginf(steps.masked[..., ~mask]).all()
    assert torch.equal(steps.masked[..., mask], steps.scaled[..., mask])
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.25)
    assert torch.allclose(steps.output, ref, atol=1e-12)
    assert steps.weights.shape == (2, 4, 6)


def test_compare_with_torch_reports_small_difference():
    q, k, v = _qkv((2, 8, 16), (2, 8, 16), 4)
    mask = causal_mask(8)
    mask[3] = False
    cmp = compare_with_torch(q, k, v, mask=mask, repeat=2)
    assert cmp.max_abs_diff < 1e-12
    assert cmp.rows_compared == 2 * 7
    assert cmp.ours_nan_rows == 0
    assert cmp.seconds_ours > 0
    assert cmp.seconds_torch > 0


def test_mask_string_round_trip_and_validation():
    g = torch.Generator().manual_seed(0)
    for L, S in ((1, 1), (5, 7), (32, 32)):
        m = torch.rand(L, S, generator=g) > 0.5
        assert torch.equal(mask_from_string(mask_to_string(m), L, S), m)
    assert mask_to_string(causal_mask(3)) == "1-3-7"
    for bad in ("1-3", "1-3-7-f", "1-x-7", "1-3-8", "", "1--7", "1-3-7-"):
        with pytest.raises(ValueError, match="row"):
            mask_from_string(bad, 3, 3)


def test_masked_softmax_without_mask_is_softmax():
    x = torch.randn(3, 5, dtype=F64)
    assert torch.equal(masked_softmax(x), torch.softmax(x, -1))


def test_scale_for_and_random_inputs():
    assert scale_for("sqrt_dk", 16) == 0.25
    assert scale_for("one", 16) == 1.0
    assert scale_for("custom", 16, 4.0) == 0.25
    with pytest.raises(ValueError, match="unknown scale"):
        scale_for("half", 16)
    with pytest.raises(ValueError, match="temperature"):
        scale_for("custom", 16, 0.0)
    q, k, v = random_qkv(5, 8, 3, seed=1)
    assert (q.shape, k.shape, v.shape) == ((5, 8), (5, 8), (5, 3))
    q2, _, _ = random_qkv(5, 8, 3, seed=1)
    assert torch.equal(q, q2)
    with pytest.raises(ValueError, match="length"):
        random_qkv(33, 8)
    with pytest.raises(ValueError, match="d_k"):
        random_qkv(4, 513)


def test_sentence_embeddings_are_deterministic_and_repeat_with_the_token():
    tokens = sentence_tokens("en")
    assert tokens.count("the") == 3
    labels = token_labels(tokens)
    assert len(set(labels)) == len(labels)
    assert labels[0] == "0:the"
    x = token_embeddings(tokens, 16)
    assert x.shape == (11, 16)
    assert np.array_equal(x[0], x[4])  # the same word, the same vector
    assert not np.array_equal(x[0], x[1])
    assert np.array_equal(x, token_embeddings(tokens, 16))
    padded = pad_tokens(sentence_tokens("zh"), 3)
    assert padded[-3:] == [PAD] * 3
    assert (token_embeddings(padded, 4)[-1] == 0).all()
    q, k, v = sentence_qkv(padded, 8, 4, seed=2)
    assert (q.shape, k.shape, v.shape) == ((13, 8), (13, 8), (13, 4))
    # identical tokens give identical attention rows (no positions)
    _, w = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(w[0], w[7], atol=0)
    with pytest.raises(ValueError, match="unknown sentence"):
        sentence_tokens("fr")
    with pytest.raises(ValueError, match="n_pad"):
        pad_tokens(tokens, 30)
