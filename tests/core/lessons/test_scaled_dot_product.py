"""core.lessons.scaled_dot_product: the scaled dot-product page's measurements and the d_k experiment,
against brute force and theory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.lessons import scaled_dot_product as aa


def _brute_row_stats(w: np.ndarray) -> tuple[float, float, int, int]:
    maxes, ents, nan_rows, zero_rows = [], [], 0, 0
    for row in w:
        if any(math.isnan(x) for x in row):
            nan_rows += 1
        elif sum(row) == 0:
            zero_rows += 1
        else:
            maxes.append(max(row))
            ents.append(-sum(x * math.log(x) for x in row if x > 0))
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    return mean(maxes), mean(ents), nan_rows, zero_rows


def test_row_stats_against_a_loop():
    rng = np.random.default_rng(0)
    w = rng.random((6, 5))
    w /= w.sum(-1, keepdims=True)
    w[2] = np.nan
    w[4] = 0.0
    s = aa.row_stats(w)
    max_w, ent, nan_rows, zero_rows = _brute_row_stats(w)
    assert s.max_weight == pytest.approx(max_w, abs=1e-9)
    assert s.entropy == pytest.approx(ent, abs=1e-6)
    assert (s.nan_rows, s.zero_rows) == (nan_rows, zero_rows) == (1, 1)
    with pytest.raises(AttributeError):  # frozen
        s.nan_rows = 3  # type: ignore[misc]


def test_score_std_ignores_masked_entries():
    z = np.array([[1.0, -np.inf, 3.0], [2.0, 5.0, -np.inf]])
    assert aa.score_std(z) == pytest.approx(np.std([1.0, 3.0, 2.0, 5.0], ddof=1))
    assert aa.score_std(np.array([[-np.inf, 4.0]])) == 0.0


@pytest.mark.parametrize("mode", ["none", "causal", "padding"])
def test_pipeline_matches_torch(mode):
    inp = aa.make_inputs("random", 7, 16, seed=3, n_pad=2)
    mask = aa.build_mask(mode, 7, inp.n_pad, None)
    steps = aa.pipeline_steps(inp, mask, 0.25)
    m = None if mask is None else torch.from_numpy(mask)
    ref = F.scaled_dot_product_attention(
        torch.from_numpy(inp.q), torch.from_numpy(inp.k), torch.from_numpy(inp.v), attn_mask=m, scale=0.25
    )
    assert np.allclose(steps.output, ref.numpy(), atol=1e-12)
    assert np.allclose(steps.weights.sum(-1), 1.0)


def test_naive_weights_nan_exactly_where_every_key_is_masked():
    inp = aa.make_inputs("sentence_en", 0, 8, seed=0, n_pad=0)
    L = len(inp.labels)
    text = "0" + aa.default_custom_mask(L)[1:]
    mask = aa.build_mask("custom", L, 0, text)
    naive = aa.naive_weights(inp, mask, 1 / math.sqrt(8))
    assert aa.count_fully_masked(mask) == 1
    assert np.isnan(naive[0]).all()
    assert not np.isnan(naive[1:]).any()
    safe = aa.pipeline_steps(inp, mask, 1 / math.sqrt(8)).weights
    assert (safe[0] == 0).all()


def test_sentence_inputs_repeat_rows_and_pad():
    inp = aa.make_inputs("sentence_en", 0, 8, seed=1, n_pad=3)
    assert inp.tokens[-3:] == ("<pad>",) * 3
    assert inp.n_pad == 3
    steps = aa.pipeline_steps(inp, aa.build_mask("padding", len(inp.labels), inp.n_pad, None), 0.3)
    rep = aa.repeated_token_rows(inp.tokens, steps.weights)
    the = next(r for r in rep if r.token == "the")
    assert the.positions == (0, 4, 7)
    assert the.max_diff < 1e-12  # identical embeddings, no positions: identical rows
    assert all(r.token != "<pad>" for r in rep)
    with pytest.raises(ValueError, match="source"):
        aa.make_inputs("poem", 4, 8, 0, 0)


def test_normalizer_zeros_and_underflow():
    inp = aa.make_inputs("random", 8, 512, seed=0, n_pad=0)
    res = {r.name: r for r in aa.normalizer_weights(inp, None, 1.0)}
    assert list(res) == ["softmax", "sparsemax", "entmax15"]
    soft = res["softmax"]
    assert soft.allowed == 64
    assert soft.zeros == soft.underflow  # every softmax zero is an exp underflow
    assert res["sparsemax"].zeros > 0
    for r in res.values():
        assert np.allclose(r.weights.sum(-1), 1.0)


def test_nw_normalizers_sparsemax_is_epanechnikov():
    nw = aa.nw_normalizers(0.3, 0.5)
    assert nw.max_diff_epanechnikov < 1e-9
    assert nw.nonzero["softmax"] == len(nw.x)
    assert 1 <= nw.nonzero["sparsemax"] < len(nw.x)


def test_mask_editor_text_round_trip():
    labels = tuple(str(i) for i in range(4))
    assert aa.default_custom_mask(4) == "1-3-7-f"
    text = aa.apply_editor_edits("1-3-7-f", 4, {2: {"0": False}, 0: {"3": True}}, labels)
    assert text == "9-3-6-f"
    assert aa.mask_text(aa.build_mask("custom", 4, 0, text)) == text
    assert aa.apply_editor_edits("garbage", 4, {9: {"0": True}, 1: {"x": True}}, labels) == "1-3-7-f"
    with pytest.raises(ValueError, match="mask mode"):
        aa.build_mask("all", 4, 0, None)


def test_dk_experiment_against_theory():
    e = aa.dk_experiment([1, 16, 256], length=16, n_trials=64, seed=0)
    assert e.length == 16
    assert e.log_s == pytest.approx(math.log(16))
    # Var(q·k) = D for unit-variance independent entries; scaled variance is 1
    for measured, d in zip(e.var_measured, e.d_k, strict=True):
        assert measured == pytest.approx(d, rel=0.15)
    assert e.var_scaled == pytest.approx([1, 1, 1], rel=0.15)
    # without the scale softmax saturates as D grows; with it, it does not
    assert e.max_weight_unscaled[-1] > 0.85 > 0.35 > e.max_weight_scaled[-1]
    assert e.entropy_unscaled[-1] < 0.5 * e.entropy_scaled[-1]
    assert e.saturated_unscaled[-1] > 0.3
    assert e.saturated_scaled[-1] == 0
    assert e.grad_scores_unscaled[-1] < 0.1 * e.grad_scores_scaled[-1]
    # D = 1: scale 1/√1 = 1, both columns identical
    assert e.entropy_scaled[0] == e.entropy_unscaled[0]
    with pytest.raises(ValueError, match="d_k"):
        aa.dk_experiment([0])
