"""core.diagnostics on hand-made weight maps, against scipy's entropy and Jensen-Shannon distance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy as scipy_entropy

from core.diagnostics import (
    attention_entropy,
    effective_support,
    head_diversity_penalty,
    head_similarity,
    js_divergence,
    max_weight,
    normalized_entropy,
    per_head_summary,
    redundancy_score,
    redundant_pairs,
)


@pytest.mark.parametrize("S", [2, 5, 32])
def test_uniform_rows_have_maximal_entropy_and_full_support(S):
    w = torch.full((3, 4, S), 1.0 / S, dtype=torch.float64)
    assert torch.allclose(attention_entropy(w), torch.full((3, 4), math.log(S), dtype=torch.float64))
    assert torch.allclose(normalized_entropy(w), torch.ones(3, 4, dtype=torch.float64))
    assert torch.allclose(effective_support(w), torch.full((3, 4), float(S), dtype=torch.float64))
    assert torch.allclose(max_weight(w), torch.full((3, 4), 1.0 / S, dtype=torch.float64))
    # any other row has less entropy than the uniform one
    rng = np.random.default_rng(S)
    other = torch.tensor(rng.dirichlet(np.ones(S), size=50))
    assert bool((attention_entropy(other) < math.log(S)).all())


def test_one_hot_rows_have_zero_entropy_and_support_one():
    w = torch.eye(6, dtype=torch.float64)[[2, 0, 5]]  # (3, 6) one-hot rows
    assert torch.allclose(attention_entropy(w), torch.zeros(3, dtype=torch.float64))
    assert torch.allclose(effective_support(w), torch.ones(3, dtype=torch.float64))
    assert torch.allclose(max_weight(w), torch.ones(3, dtype=torch.float64))


def test_fully_masked_rows_count_as_zero():
    w = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    assert attention_entropy(w).tolist() == pytest.approx([0.0, math.log(2)])
    assert effective_support(w).tolist() == pytest.approx([0.0, 2.0])


def test_entropy_and_js_match_scipy():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(7), size=20)
    q = rng.dirichlet(np.ones(7) * 0.3, size=20)
    assert np.allclose(attention_entropy(p).numpy(), scipy_entropy(p, axis=-1), atol=1e-12)
    # scipy returns the JS *distance*, the square root of the divergence (natural log by default)
    assert np.allclose(js_divergence(p, q).numpy(), jensenshannon(p, q, axis=-1) ** 2, atol=1e-12)
    assert np.allclose(js_divergence(p, q).numpy(), js_divergence(q, p).numpy())
    assert float(js_divergence(np.eye(3)[0], np.eye(3)[1])) == pytest.approx(math.log(2))


def test_identical_heads_have_zero_divergence_and_similarity_one():
    rng = np.random.default_rng(1)
    head = rng.dirichlet(np.ones(5), size=4)  # (L=4, S=5)
    w = torch.tensor(np.stack([head, head, head]))  # (H=3, L, S)
    sim = head_similarity(w)
    assert torch.allclose(sim, torch.ones(3, 3, dtype=torch.float64), atol=1e-12)
    assert float(js_divergence(w[0], w[1]).max()) == pytest.approx(0.0, abs=1e-15)
    assert redundancy_score(w) == pytest.approx(1.0)
    assert redundant_pairs(w, threshold=0.99) == [(0, 1, pytest.approx(1.0)), (0, 2, pytest.approx(1.0)),
                                                   (1, 2, pytest.approx(1.0))]  # fmt: skip


def test_disjoint_heads_have_similarity_zero_and_pairs_are_ranked():
    eye = torch.eye(4, dtype=torch.float64)
    a = eye  # query i looks at key i
    b = eye[[1, 2, 3, 0]]  # query i looks at key i+1: never overlaps a
    c = 0.9 * eye + 0.1 * eye[[1, 2, 3, 0]]  # mostly like a
    w = torch.stack([a, b, c])  # (3, 4, 4)
    sim = head_similarity(w)
    assert float(sim[0, 1]) == pytest.approx(0.0, abs=1e-12)
    # similarity(a, c) = 1 - JS(one-hot, (0.9, 0.1)) / log 2, by hand
    p, q = np.array([1.0, 0.0]), np.array([0.9, 0.1])
    expected = 1 - jensenshannon(p, q) ** 2 / math.log(2)
    assert float(sim[0, 2]) == pytest.approx(expected, abs=1e-12)
    sim_bc = 1 - jensenshannon(np.array([0.0, 1.0]), q) ** 2 / math.log(2)
    assert float(sim[1, 2]) == pytest.approx(sim_bc, abs=1e-12)
    assert redundant_pairs(w, threshold=0.5) == [(0, 2, pytest.approx(expected))]
    assert redundant_pairs(w, threshold=0.01) == [
        (0, 2, pytest.approx(expected)),
        (1, 2, pytest.approx(sim_bc)),
    ]
    brute = np.mean([float(sim[i, j]) for i in range(3) for j in range(3) if i != j])
    assert redundancy_score(w) == pytest.approx(brute)
    with pytest.raises(ValueError, match="one example"):
        redundant_pairs(w[None, None])


def test_a_single_head_is_not_redundant():
    w = torch.softmax(torch.randn(2, 1, 5, 5), -1)
    assert redundancy_score(w) == 0.0
    assert float(head_diversity_penalty(w)) == 0.0


def test_penalty_is_differentiable_and_lowers_when_heads_diverge():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: head_diversity_penalty(torch.softmax(z, -1)), (logits,))
    penalty = head_diversity_penalty(torch.softmax(logits, -1))
    penalty.backward()
    assert torch.isfinite(logits.grad).all()
    assert float(logits.grad.abs().sum()) > 0
    with torch.no_grad():
        stepped = logits - 0.5 * logits.grad
    assert float(head_diversity_penalty(torch.softmax(stepped, -1))) < float(penalty.detach())
    # with causal zeros in the maps the gradient stays finite
    mask = torch.ones(4, 5, dtype=torch.bool).tril()
    z = torch.randn(1, 3, 4, 5, dtype=torch.float64, requires_grad=True)
    w = torch.softmax(z.masked_fill(~mask, -1e9), -1) * mask
    head_diversity_penalty(w).backward()
    assert torch.isfinite(z.grad).all()


def test_per_head_summary_is_the_mean_over_batch_and_queries():
    rng = np.random.default_rng(3)
    w = torch.tensor(rng.dirichlet(np.ones(6), size=(2, 3, 4)))  # (B=2, H=3, L=4, S=6)
    summary = per_head_summary(w)
    for h in range(3):
        rows = [w[b, h, i] for b in range(2) for i in range(4)]
        assert float(summary.entropy[h]) == pytest.approx(np.mean([scipy_entropy(r.numpy()) for r in rows]))
        assert float(summary.effective_support[h]) == pytest.approx(
            np.mean([1 / float((r**2).sum()) for r in rows])
        )
        assert float(summary.max_weight[h]) == pytest.approx(np.mean([float(r.max()) for r in rows]))
        assert float(summary.normalized_entropy[h]) == pytest.approx(float(summary.entropy[h]) / math.log(6))


def test_bad_weights_raise():
    with pytest.raises(ValueError, match="NaN"):
        attention_entropy(torch.tensor([[float("nan"), 1.0]]))
    with pytest.raises(ValueError, match="non-negative"):
        effective_support(torch.tensor([[-0.5, 1.5]]))
    with pytest.raises(ValueError, match="H, L, S"):
        head_similarity(torch.ones(3, 3) / 3)
    with pytest.raises(ValueError, match="H, L, S"):
        per_head_summary(torch.ones(3) / 3)
