"""core.linear_attention against independent references: brute-force loops over queries, keys and
features, the quadratic (L, S) form written out, and torch's F.scaled_dot_product_attention."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core import linear_attention as la
from core import random_features as rf
from tests.core.conftest import qkv


def _brute_force_attention(q, k, v, w, kind, causal=False):
    """Loops over queries, keys and features: the kernel estimate written out term by term."""
    L, S, r = q.shape[0], k.shape[0], w.shape[0]

    def feats(x):
        out = []
        for i in range(r):
            proj = float(sum(w[i, a] * x[a] for a in range(x.shape[0])))
            sq = float(sum(x[a] * x[a] for a in range(x.shape[0])))
            if kind == "trigonometric":
                out.append(math.exp(sq / 2) * math.sin(proj) / math.sqrt(r))
            else:
                out.append(math.exp(proj - sq / 2) / math.sqrt(r))
        if kind == "trigonometric":
            out += [
                math.exp(float((x * x).sum()) / 2) * math.cos(float(w[i] @ x)) / math.sqrt(r)
                for i in range(r)
            ]
        return out

    fq = [feats(q[i]) for i in range(L)]
    fk = [feats(k[j]) for j in range(S)]
    out = torch.zeros(L, v.shape[1], dtype=torch.float64)
    for i in range(L):
        num, den = torch.zeros(v.shape[1], dtype=torch.float64), 0.0
        for j in range(S):
            if causal and j > i:
                continue
            kij = sum(a * b for a, b in zip(fq[i], fk[j], strict=True))
            num += kij * v[j]
            den += kij
        out[i] = num / den
    return out


@pytest.mark.parametrize("kind", ["positive_orthogonal", "positive_iid", "trigonometric"])
@pytest.mark.parametrize("causal", [False, True])
def test_favor_attention_equals_a_brute_force_computation_of_the_same_features(kind, causal):
    q, k, v = qkv(L=7, d=4, sigma=0.6, seed=2)
    m, seed = 8, 11
    scale = 1 / math.sqrt(4)
    w = rf.draw_directions(kind, m, 4, seed)
    ref = _brute_force_attention(q * scale**0.5, k * scale**0.5, v, w, kind, causal=causal)
    got = la.favor_attention(q, k, v, m, kind, seed, causal=causal).output
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)


def test_kernel_attention_causal_equals_masked_for_batched_inputs():
    q, k, v = qkv(L=9, d=5, seed=6, batch=(2, 3))
    phi_q, phi_k = la.elu_features(q), la.elu_features(k)
    fast = la.kernel_attention(phi_q, phi_k, v, causal=True)
    slow, weights = la.quadratic_kernel_attention(phi_q, phi_k, v, causal=True)
    assert fast.output.shape == (2, 3, 9, 3)
    assert fast.denominator.shape == (2, 3, 9)
    assert weights.shape == (2, 3, 9, 9)
    assert float(weights.triu(1).abs().max()) == 0.0
    torch.testing.assert_close(fast.output, slow, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_equals_its_quadratic_form(causal):
    q, k, v = qkv(L=10, d=6, sigma=1.0, seed=7)
    got = la.linear_attention(q, k, v, causal=causal).output
    # written out: sim(q, k) = (elu(q) + 1) . (elu(k) + 1), then a weighted average
    fq = torch.where(q > 0, q + 1, torch.exp(q))
    fk = torch.where(k > 0, k + 1, torch.exp(k))
    sim = fq @ fk.T
    if causal:
        sim = torch.tril(sim)
    ref = (sim / sim.sum(-1, keepdim=True)) @ v
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)


def test_favor_attention_approaches_softmax_attention_with_many_features():
    q, k, v = qkv(L=16, d=8, sigma=0.5, seed=8)
    ref = F.scaled_dot_product_attention(q, k, v)
    errors = []
    for m in (8, 4096):
        out = la.favor_attention(q, k, v, m, "positive_orthogonal", seed=1).output
        errors.append(float((out - ref).norm() / ref.norm()))
    assert errors[1] < 0.1
    assert errors[1] < errors[0] / 4


def test_favor_attention_keeps_batch_shapes_and_accepts_a_scale():
    q, k, v = qkv(L=6, S=9, d=4, dv=5, seed=9, batch=(2, 3))
    r = la.favor_attention(q, k, v, 16, scale=0.3)
    assert r.output.shape == (2, 3, 6, 5)
    assert r.denominator.shape == (2, 3, 6)
    assert bool((r.denominator > 0).all())


_Q, _K, _V = qkv(L=4, d=4)
_X = np.linspace(0, 1, 5)
BAD_CASES = [
    lambda: la.favor_attention(_Q, _K, _V, 0),
    lambda: la.favor_attention(_Q, _K[:, :3], _V, 8),
    lambda: la.favor_attention(_Q, _K, _V[:3], 8),
    lambda: la.favor_attention(_Q, _K, _V, 8, scale=-1.0),
    lambda: la.favor_attention(_Q.float(), _K, _V, 8),
    lambda: la.favor_attention(_Q, _K, _V, 8, kind="cosine"),
    lambda: la.favor_attention(_Q.numpy(), _K, _V, 8),
    lambda: la.favor_attention(_Q * float("nan"), _K, _V, 8),
    lambda: la.kernel_attention(_Q, _K[:3], _V[:3], causal=True),
    lambda: la.quadratic_kernel_attention(_Q, _K[:3], _V[:3], causal=True),
    lambda: la.linear_attention(_Q[0], _K, _V),
]


@pytest.mark.parametrize("case", range(len(BAD_CASES)))
def test_bad_inputs_raise_value_error(case):
    with pytest.raises(ValueError, match=r"."):
        BAD_CASES[case]()
