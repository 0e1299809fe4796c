"""core.random_features against independent references: the exact kernels (averaged over many
seeds), the feature formulas written out, core.nadaraya_watson.nw_predict, and the block-by-block
construction of orthogonal directions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core import random_features as rf
from core.data import post_data
from core.nadaraya_watson import nw_predict
from tests.core.conftest import qkv


def test_fourier_features_are_unbiased_over_seeds():
    x = np.array([-1.0, 0.0, 0.4, 2.0])
    y = np.array([0.1, 0.3, -0.5])
    h = 0.7
    exact = rf.gaussian_kernel_matrix(x, y, h)  # (4, 3)
    estimates = np.stack([(z := rf.fourier_features(16, h, s))(x) @ z(y).T for s in range(2000)])
    # one estimate has sd <= 1/sqrt(16) = 0.25 per entry; the mean of 2000 has sd <= 0.0056
    assert np.abs(estimates.mean(axis=0) - exact).max() < 0.03
    # and a single draw is really random (not the kernel itself)
    assert np.abs(estimates[0] - exact).max() > 0.05


def test_rff_nadaraya_watson_matches_its_formula_and_converges_to_the_exact_fit():
    d = post_data()
    xq = np.linspace(-2.5, 2.5, 31)
    fit = rf.rff_nw_predict(d.x, d.y, xq, 0.4, 64, seed=3)
    z = rf.fourier_features(64, 0.4, 3)
    k_hat = z(xq) @ z(d.x).T  # brute force: the (Q, N) estimated kernel
    np.testing.assert_allclose(fit.numerator, k_hat @ d.y, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fit.denominator, k_hat.sum(axis=1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fit.exact, nw_predict(d.x, d.y, xq, "gaussian", 0.4))
    big = rf.rff_nw_predict(d.x, d.y, xq, 0.4, 16384, seed=3)
    assert big.rms_error < 0.05 < fit.rms_error + 0.05
    assert big.rms_error < fit.rms_error


def test_every_m_is_a_fresh_draw():
    """Issue 22.6: statistics over m used the same leading directions at every m (m features were
    the first m of a larger draw), so one bad direction sat in every point of a seed's curve."""
    small, large = rf.fourier_features(4, 0.5, seed=7), rf.fourier_features(8, 0.5, seed=7)
    assert not np.isclose(small.w, large.w[:4]).any()
    for kind in rf.FEATURE_KINDS:
        w4, w8 = rf.draw_directions(kind, 4, 8, seed=7), rf.draw_directions(kind, 8, 8, seed=7)
        assert not torch.isclose(w4, w8[: w4.shape[0]]).any(), kind
    assert rf.draw_directions("positive_iid", 8, 8, seed=7).equal(
        rf.draw_directions("positive_iid", 8, 8, seed=7)
    )
    assert len({rf.draw_seed(s, m) for s in range(20) for m in (2, 4, 8, 16)}) == 80


def test_a_new_bandwidth_scales_the_unit_draw_bit_for_bit():
    """fourier_features keeps one draw per (m, seed) at unit bandwidth and divides it by h: the
    same numbers as drawing w ~ N(0, 1/h²) and b ~ U[0, 2π) directly from the pair's generator."""
    for m, seed in ((1, 0), (7, 3), (2048, 11)):
        unit, b = rf.unit_fourier_draw(m, seed)
        assert not unit.flags.writeable  # shared: never written to
        assert not b.flags.writeable
        for h in (0.1, 0.3, 0.7, 1.2):
            rng = np.random.default_rng(rf.draw_seed(seed, m))  # the draw written out
            w_ref, b_ref = rng.normal(0.0, 1.0 / h, m), rng.uniform(0.0, 2.0 * np.pi, m)
            z = rf.fourier_features(m, h, seed)
            np.testing.assert_array_equal(z.w, w_ref)
            np.testing.assert_array_equal(z.b, b_ref)
            x = np.linspace(-3.0, 3.0, 41)  # the features: the formula in numpy (libm's cosine)
            want = np.sqrt(2.0 / m) * np.cos(x[:, None] * w_ref[None, :] + b_ref[None, :])
            np.testing.assert_allclose(z(x), want, rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="m"):
        rf.unit_fourier_draw(0, 0)
    with pytest.raises(ValueError, match="seed"):
        rf.unit_fourier_draw(4, -1)


def test_feature_sums_are_the_estimated_kernel_times_y_and_one():
    rng = np.random.default_rng(3)
    zq, zt, y = rng.normal(size=(7, 5)), rng.normal(size=(4, 5)), rng.normal(size=4)
    numerator, denominator = rf.feature_sums(zq, zt, y)
    for q in range(7):  # the (Q, N) estimated kernel, entry by entry
        k = [sum(zq[q, j] * zt[i, j] for j in range(5)) for i in range(4)]
        assert numerator[q] == pytest.approx(sum(k[i] * y[i] for i in range(4)), rel=1e-12, abs=1e-12)
        assert denominator[q] == pytest.approx(sum(k), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("kind", rf.FEATURE_KINDS)
def test_softmax_features_are_unbiased_over_seeds(kind):
    q, k, _ = qkv(L=3, d=4, sigma=0.4)
    exact = torch.exp(q @ k.T)
    mean = torch.zeros_like(exact)
    n = 1500
    for s in range(n):
        w = rf.draw_directions(kind, 8, 4, seed=s)
        mean += rf.softmax_features(q, w, kind) @ rf.softmax_features(k, w, kind).T / n
    assert float(((mean - exact).abs() / exact).max()) < 0.05


def test_orthogonal_directions_are_orthogonal_within_a_block_and_gaussian_in_length():
    w = rf.gaussian_directions(40, 16, orthogonal=True, seed=1)
    assert w.shape == (40, 16)
    for start in (0, 16):
        block = w[start : start + 16]
        gram = block @ block.T
        off = gram - torch.diag(torch.diagonal(gram))
        assert float(off.abs().max()) < 1e-10
    norms = rf.gaussian_directions(4096, 16, orthogonal=True, seed=2).norm(dim=1) ** 2
    assert abs(float(norms.mean()) - 16) < 0.5  # E|w|^2 = D for w ~ N(0, I_D)
    iid = rf.gaussian_directions(64, 16, orthogonal=False, seed=1)
    assert float((iid[:16] @ iid[:16].T - torch.diag(torch.diagonal(iid[:16] @ iid[:16].T))).abs().max()) > 1


@pytest.mark.parametrize(("m", "d"), [(7, 2), (40, 16), (512, 8), (3, 64)])
def test_orthogonal_directions_are_the_per_block_construction(m, d):
    """The batched QR gives exactly the directions of the construction block by block (a Gaussian
    block, its QR, signs from R's diagonal, rows orthonormal, then χ_D lengths): same stream."""
    gen = torch.Generator().manual_seed(5)
    blocks = []
    for _ in range(-(-m // d)):
        q, r = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))
        blocks.append((q * torch.sign(torch.diagonal(r))).T)
    lengths = torch.randn(m, d, generator=gen, dtype=torch.float64).norm(dim=1, keepdim=True)
    expected = torch.cat(blocks)[:m] * lengths
    assert torch.equal(rf.gaussian_directions(m, d, orthogonal=True, seed=5), expected)


_Q, _K, _V = qkv(L=4, d=4)
_X = np.linspace(0, 1, 5)
BAD_CASES = [
    lambda: rf.fourier_features(0, 0.5),
    lambda: rf.fourier_features(8, 0.0),
    lambda: rf.fourier_features(8, float("nan")),
    lambda: rf.fourier_features(8, 0.5, seed=-1),
    lambda: rf.rff_nw_predict(_X, _X[:4], _X, 0.5, 8),
    lambda: rf.rff_nw_predict(_X, np.array([np.nan] * 5), _X, 0.5, 8),
    lambda: rf.rff_nw_predict(np.zeros((2, 2)), _X, _X, 0.5, 8),
    lambda: rf.draw_directions("gaussian", 8, 4),
    lambda: rf.draw_directions("trigonometric", 7, 4),
    lambda: rf.gaussian_directions(rf.MAX_FEATURES + 1, 4, orthogonal=True),
    lambda: rf.softmax_features(_Q, torch.randn(8, 3, dtype=torch.float64), "positive_iid"),
]


@pytest.mark.parametrize("case", range(len(BAD_CASES)))
def test_bad_inputs_raise_value_error(case):
    with pytest.raises(ValueError, match=r"."):
        BAD_CASES[case]()
