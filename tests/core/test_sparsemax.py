"""Sparse normalisers (sparsemax, entmax-1.5) against independent references.

Sparsemax's reference is a brute-force loop over the paper's definition (Martins & Astudillo,
2016, eq. 2-3): sort, find the support size k, threshold τ, clip. Entmax-1.5's reference finds the
threshold τ of p_i = max(z_i/2 - τ, 0)² by bisection on Σ p_i = 1 (Peters et al., 2019, eq. 9).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.attention import NORMALIZERS, entmax15, masked_softmax, normalize_scores, sparsemax
from core.data import make_data
from core.kernel_attention import gaussian_scores, nw_attention_weights, sparsemax_radius
from core.nadaraya_watson import nw_weights

F64 = torch.float64


def _data(n, noise, seed):
    d = make_data(n=n, noise=noise, seed=seed)
    return d.x, d.y


def sparsemax_reference(z: list[float]) -> list[float]:
    """Sparsemax of one row, by the textbook loop."""
    zs = sorted(z, reverse=True)
    k_star, running = 0, 0.0
    for k in range(1, len(zs) + 1):
        running += zs[k - 1]
        if 1 + k * zs[k - 1] > running:
            k_star = k
    tau = (sum(zs[:k_star]) - 1) / k_star
    return [max(zi - tau, 0.0) for zi in z]


def entmax15_reference(z: list[float]) -> list[float]:
    """Entmax-1.5 of one row: bisection for τ with Σ max(z_i/2 - τ, 0)² = 1."""
    x = [zi / 2 for zi in z]
    lo, hi = max(x) - 1.0, max(x)  # mass(lo) >= 1 >= mass(hi) = 0

    def mass(tau: float) -> float:
        return sum(max(xi - tau, 0.0) ** 2 for xi in x)

    for _ in range(200):
        mid = (lo + hi) / 2
        if mass(mid) > 1:
            lo = mid
        else:
            hi = mid
    tau = (lo + hi) / 2
    return [max(xi - tau, 0.0) ** 2 for xi in x]


@pytest.mark.parametrize(
    ("z", "expected"),
    [
        # worked by hand from the definition: support {1, 0.5}, τ = (1 + 0.5 - 1) / 2 = 0.25
        ([1.0, 0.5, -1.0], [0.75, 0.25, 0.0]),
        # every entry within 1 of the max: τ = (0.6 - 1) / 3 = -2/15
        ([0.1, 0.2, 0.3], [0.1 + 2 / 15, 0.2 + 2 / 15, 0.3 + 2 / 15]),
        # a gap of 2: only the top survives, τ = 1
        ([2.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        # ties: uniform
        ([3.0, 3.0, 3.0, 3.0], [0.25, 0.25, 0.25, 0.25]),
        # τ = (0 + (-0.5) - 1) / 2 = -0.75 -> (0.75, 0.25, 0, 0)
        ([0.0, -0.5, -1.5, -4.0], [0.75, 0.25, 0.0, 0.0]),
    ],
)
def test_sparsemax_hand_computed(z, expected):
    got = sparsemax(torch.tensor([z], dtype=F64))[0].tolist()
    assert got == pytest.approx(expected, abs=1e-15)
    assert sparsemax_reference(z) == pytest.approx(expected, abs=1e-15)


def test_sparsemax_matches_reference_loop_on_random_rows():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(200, 9, generator=g, dtype=F64) * torch.rand(200, 1, generator=g, dtype=F64) * 4
    got = sparsemax(z)
    for row, out in zip(z.tolist(), got.tolist(), strict=True):
        assert out == pytest.approx(sparsemax_reference(row), abs=1e-12)


def test_entmax15_matches_bisection_reference():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(100, 7, generator=g, dtype=F64) * 3
    got = entmax15(z)
    for row, out in zip(z.tolist(), got.tolist(), strict=True):
        assert out == pytest.approx(entmax15_reference(row), abs=1e-10)
    # by hand: z = (2, 0): x = (1, 0); support {1} iff (1 - τ)² = 1 with τ = 0 >= 0 -> p = (1, 0)
    assert entmax15(torch.tensor([[2.0, 0.0]], dtype=F64))[0].tolist() == pytest.approx([1.0, 0.0])
    # z = (0, 0): p = (1/2, 1/2)
    assert entmax15(torch.tensor([[0.0, 0.0]], dtype=F64))[0].tolist() == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_rows_sum_to_one_and_are_non_negative(name):
    z = torch.randn(4, 6, 10, generator=torch.Generator().manual_seed(2), dtype=F64) * 3
    w = normalize_scores(z, normalizer=name)
    assert (w >= 0).all()
    assert torch.allclose(w.sum(-1), torch.ones(4, 6, dtype=F64), atol=1e-12)


def test_sparse_normalisers_give_exact_zeros_softmax_does_not():
    z = torch.randn(50, 16, generator=torch.Generator().manual_seed(3), dtype=F64) * 3
    assert (masked_softmax(z) > 0).all(), "softmax (a Gaussian kernel) is never exactly 0"
    for fn in (sparsemax, entmax15):
        w = fn(z)
        assert (w == 0).sum() > 0
        # anything at least 2 below the row max is exactly 0 for both
        far = z <= z.amax(-1, keepdim=True) - 2
        assert far.any()
        assert (w[far] == 0).all()
    # sparsemax is sparser than entmax-1.5 on the same scores
    assert (sparsemax(z) == 0).sum() > (entmax15(z) == 0).sum()


@pytest.mark.parametrize("fn", [sparsemax, entmax15])
def test_masks_and_fully_masked_rows(fn):
    z = torch.randn(5, 6, generator=torch.Generator().manual_seed(4), dtype=F64)
    mask = torch.rand(5, 6, generator=torch.Generator().manual_seed(5)) > 0.4
    mask[2] = False
    w = fn(z, mask)
    assert (w[~mask] == 0).all()
    assert (w[2] == 0).all()
    assert torch.isfinite(w).all()
    # each other row equals the normaliser applied to its allowed entries only
    ref = sparsemax_reference if fn is sparsemax else entmax15_reference
    for i in range(5):
        allowed = mask[i].nonzero().flatten().tolist()
        if not allowed:
            continue
        expected = ref([z[i, j].item() for j in allowed])
        assert w[i, allowed].tolist() == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("fn", [sparsemax, entmax15])
def test_gradcheck(fn):
    z = (torch.randn(3, 7, generator=torch.Generator().manual_seed(6), dtype=F64)).requires_grad_(True)
    mask = torch.rand(3, 7, generator=torch.Generator().manual_seed(7)) > 0.3
    mask[1] = False
    assert torch.autograd.gradcheck(lambda x: fn(x), (z,))
    assert torch.autograd.gradcheck(lambda x: fn(x, mask), (z,))


def test_sparsemax_jacobian_is_the_papers():
    """Martins & Astudillo (2016) eq. 12: J = diag(s) - s sᵀ / |S| with s the support indicator."""
    z = torch.tensor([1.0, 0.5, -1.0, 0.8], dtype=F64)
    jac = torch.autograd.functional.jacobian(sparsemax, z)
    s = (sparsemax(z) > 0).to(F64)
    expected = torch.diag(s) - torch.outer(s, s) / s.sum()
    assert torch.allclose(jac, expected, atol=1e-12)


def test_unknown_normaliser():
    with pytest.raises(ValueError, match="known"):
        normalize_scores(torch.zeros(2, 2, dtype=F64), normalizer="hardmax")


def test_sparsemax_over_gaussian_scores_is_epanechnikov_nw():
    """sparsemax(-(q - x_i)²/(2h²)) = normalised (1 - (q - x_i)²/r²)₊: Epanechnikov NW of radius r."""
    x, _ = _data(150, 0.1, 3)
    xq = np.linspace(-2.9, 2.9, 9)
    for h in (0.1, 0.4):
        p = nw_attention_weights(x, xq, h, "sparsemax")
        radius = sparsemax_radius(x, xq, h)
        for i, (q, r) in enumerate(zip(xq, radius, strict=True)):
            ref = nw_weights(x, np.array([q]), kernel="epanechnikov", bandwidth=float(r))[0]
            assert np.abs(p[i] - ref).max() < 1e-14
            assert ((np.abs(x - q) < r * (1 - 1e-9)) == (p[i] > 0)).all()
        # softmax (the Gaussian) is zero only where exp underflows in float64; sparsemax is zero
        # for samples just outside r, where the Gaussian weight is far from underflow
        soft = nw_attention_weights(x, xq, h, "softmax")
        z = gaussian_scores(xq, x, h)
        assert (soft[z - z.max(1, keepdims=True) > -700] > 0).all()
        assert ((p == 0) & (z - z.max(1, keepdims=True) > -5)).sum() > 0
