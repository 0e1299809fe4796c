"""core.kernel_approximation against independent references: brute-force loops, the exact kernels,
core.nadaraya_watson.nw_predict and torch's F.scaled_dot_product_attention."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core import kernel_approximation as ka
from core.data import post_data
from core.nadaraya_watson import nw_predict


def _qkv(L=12, S=None, d=8, dv=3, sigma=0.5, seed=0, batch=()):
    gen = torch.Generator().manual_seed(seed)
    S = L if S is None else S
    q = sigma * torch.randn(*batch, L, d, generator=gen, dtype=torch.float64)
    k = sigma * torch.randn(*batch, S, d, generator=gen, dtype=torch.float64)
    v = torch.randn(*batch, S, dv, generator=gen, dtype=torch.float64)
    return q, k, v


# ----------------------------------------------------------------------------------------------
# random Fourier features (Rahimi & Recht)
# ----------------------------------------------------------------------------------------------


def test_fourier_features_are_unbiased_over_seeds():
    x = np.array([-1.0, 0.0, 0.4, 2.0])
    y = np.array([0.1, 0.3, -0.5])
    h = 0.7
    exact = ka.gaussian_kernel_matrix(x, y, h)  # (4, 3)
    estimates = np.stack([(z := ka.fourier_features(16, h, s))(x) @ z(y).T for s in range(2000)])
    # one estimate has sd <= 1/sqrt(16) = 0.25 per entry; the mean of 2000 has sd <= 0.0056
    assert np.abs(estimates.mean(axis=0) - exact).max() < 0.03
    # and a single draw is really random (not the kernel itself)
    assert np.abs(estimates[0] - exact).max() > 0.05


def test_fourier_feature_error_falls_like_one_over_sqrt_m():
    d = post_data()
    conv = ka.rff_convergence(d.x, d.y, np.linspace(-3, 3, 41), 0.5, (8, 32, 128, 512, 2048), n_seeds=6)
    assert -0.6 < conv.slope < -0.4
    assert conv.kernel_rms[-1] < conv.kernel_rms[0] / 8  # 256x the features, ~16x less error
    assert conv.fit_rms[-1] < conv.fit_rms[0]
    np.testing.assert_allclose(conv.reference * np.sqrt(conv.m), conv.reference[-1] * math.sqrt(2048))


def test_rff_nadaraya_watson_matches_its_formula_and_converges_to_the_exact_fit():
    d = post_data()
    xq = np.linspace(-2.5, 2.5, 31)
    fit = ka.rff_nw_predict(d.x, d.y, xq, 0.4, 64, seed=3)
    z = ka.fourier_features(64, 0.4, 3)
    k_hat = z(xq) @ z(d.x).T  # brute force: the (Q, N) estimated kernel
    np.testing.assert_allclose(fit.numerator, k_hat @ d.y, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fit.denominator, k_hat.sum(axis=1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fit.exact, nw_predict(d.x, d.y, xq, "gaussian", 0.4))
    big = ka.rff_nw_predict(d.x, d.y, xq, 0.4, 16384, seed=3)
    assert big.rms_error < 0.05 < fit.rms_error + 0.05
    assert big.rms_error < fit.rms_error


def test_every_m_is_a_fresh_draw():
    """Issue 22.6: statistics over m used the same leading directions at every m (m features were
    the first m of a larger draw), so one bad direction sat in every point of a seed's curve."""
    small, large = ka.fourier_features(4, 0.5, seed=7), ka.fourier_features(8, 0.5, seed=7)
    assert not np.isclose(small.w, large.w[:4]).any()
    for kind in ka.FEATURE_KINDS:
        w4, w8 = ka.draw_directions(kind, 4, 8, seed=7), ka.draw_directions(kind, 8, 8, seed=7)
        assert not torch.isclose(w4, w8[: w4.shape[0]]).any(), kind
    assert ka.draw_directions("positive_iid", 8, 8, seed=7).equal(
        ka.draw_directions("positive_iid", 8, 8, seed=7)
    )
    assert len({ka.draw_seed(s, m) for s in range(20) for m in (2, 4, 8, 16)}) == 80


def test_rff_convergence_plots_medians_of_the_draws_the_fit_shows():
    """Issue 22.6: the metric beside the chart is the chart's median at m; draw 0 is the fit on the
    left, recomputed here with rff_nw_predict (one seed at a time)."""
    d = post_data()
    xq = np.linspace(-3, 3, 61)
    m_values, seeds = (4, 16, 64), 5
    conv = ka.rff_convergence(d.x, d.y, xq, 0.3, m_values, n_seeds=seeds, seed=2)
    for i, m in enumerate(m_values):
        draws = [ka.rff_nw_predict(d.x, d.y, xq, 0.3, m, seed=2 + s).rms_error for s in range(seeds)]
        np.testing.assert_allclose(conv.fit_rms_draws[i], draws, rtol=1e-12)
        assert conv.fit_rms[i] == pytest.approx(float(np.median(draws)), rel=1e-12)
        z = [ka.fourier_features(m, 0.3, 2 + s) for s in range(seeds)]
        xs = d.x[:: max(1, d.x.size // ka.KERNEL_ERROR_SAMPLES)]
        exact = np.exp(-0.5 * ((xq[:, None] - xs[None, :]) / 0.3) ** 2)
        kernel = [np.sqrt(np.mean((f(xq) @ f(xs).T - exact) ** 2)) for f in z]
        assert conv.kernel_rms[i] == pytest.approx(float(np.median(kernel)), rel=1e-12)


# ----------------------------------------------------------------------------------------------
# FAVOR+ features for the softmax kernel
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ka.FEATURE_KINDS)
def test_softmax_features_are_unbiased_over_seeds(kind):
    q, k, _ = _qkv(L=3, d=4, sigma=0.4)
    exact = torch.exp(q @ k.T)
    mean = torch.zeros_like(exact)
    n = 1500
    for s in range(n):
        w = ka.draw_directions(kind, 8, 4, seed=s)
        mean += ka.softmax_features(q, w, kind) @ ka.softmax_features(k, w, kind).T / n
    assert float(((mean - exact).abs() / exact).max()) < 0.05


def test_orthogonal_directions_are_orthogonal_within_a_block_and_gaussian_in_length():
    w = ka.gaussian_directions(40, 16, orthogonal=True, seed=1)
    assert w.shape == (40, 16)
    for start in (0, 16):
        block = w[start : start + 16]
        gram = block @ block.T
        off = gram - torch.diag(torch.diagonal(gram))
        assert float(off.abs().max()) < 1e-10
    norms = ka.gaussian_directions(4096, 16, orthogonal=True, seed=2).norm(dim=1) ** 2
    assert abs(float(norms.mean()) - 16) < 0.5  # E|w|^2 = D for w ~ N(0, I_D)
    iid = ka.gaussian_directions(64, 16, orthogonal=False, seed=1)
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
    assert torch.equal(ka.gaussian_directions(m, d, orthogonal=True, seed=5), expected)


def test_orthogonal_features_beat_iid_on_average():
    q, k, _ = _qkv(L=16, d=16, sigma=0.5, seed=4)
    cmp = ka.compare_features(q, k, (8, 16, 32, 64), ("positive_orthogonal", "positive_iid"), n_seeds=48)
    orth, iid = cmp.error
    assert orth.mean() < iid.mean()
    assert (orth < iid).sum() >= 3


def test_positive_feature_error_falls_like_one_over_sqrt_m():
    q, k, _ = _qkv(L=16, d=8, sigma=0.4, seed=5)
    cmp = ka.compare_features(q, k, (4, 16, 64, 256), ("positive_iid",), n_seeds=24)
    slope = np.polyfit(np.log(cmp.m), np.log(cmp.error[0]), 1)[0]
    assert -0.65 < slope < -0.35
    # the page's dashed 1/√m guide: through the last measured point, times 2 for each 4x fewer features
    ref = cmp.sqrt_m_reference
    assert ref[-1] == cmp.error[0, -1]
    np.testing.assert_allclose(ref[:-1] / ref[1:], [2.0, 2.0, 2.0])


def test_trigonometric_denominators_go_negative_and_positive_ones_never_do():
    q, k, _ = _qkv(L=16, d=16, sigma=0.75, seed=0)
    cmp = ka.compare_features(q, k, (2, 8, 32), n_seeds=16)
    trig = cmp.kinds.index("trigonometric")
    for i, kind in enumerate(cmp.kinds):
        if kind != "trigonometric":
            assert (cmp.negative_share[i] == 0).all()
    assert cmp.negative_share[trig, 0] > 0.1
    assert (cmp.near_zero_share[trig] >= cmp.negative_share[trig]).all()


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
    q, k, v = _qkv(L=7, d=4, sigma=0.6, seed=2)
    m, seed = 8, 11
    scale = 1 / math.sqrt(4)
    w = ka.draw_directions(kind, m, 4, seed)
    ref = _brute_force_attention(q * scale**0.5, k * scale**0.5, v, w, kind, causal=causal)
    got = ka.favor_attention(q, k, v, m, kind, seed, causal=causal).output
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("feature_map", ["favor", "elu"])
def test_causal_prefix_sums_equal_the_masked_quadratic_form(feature_map):
    q, k, v = _qkv(L=40, d=8, sigma=0.7, seed=3)
    check = ka.causal_check(q, k, v, 32, "positive_orthogonal", 5, feature_map)
    assert check.max_abs_diff < 1e-10
    np.testing.assert_allclose(check.prefix, check.masked, rtol=0, atol=1e-10)
    # the first query sees only the first key: its output is v_0 exactly
    np.testing.assert_allclose(check.prefix[0], v[0].numpy(), atol=1e-12)


def test_kernel_attention_causal_equals_masked_for_batched_inputs():
    q, k, v = _qkv(L=9, d=5, seed=6, batch=(2, 3))
    phi_q, phi_k = ka.elu_features(q), ka.elu_features(k)
    fast = ka.kernel_attention(phi_q, phi_k, v, causal=True)
    slow, weights = ka.quadratic_kernel_attention(phi_q, phi_k, v, causal=True)
    assert fast.output.shape == (2, 3, 9, 3)
    assert fast.denominator.shape == (2, 3, 9)
    assert weights.shape == (2, 3, 9, 9)
    assert float(weights.triu(1).abs().max()) == 0.0
    torch.testing.assert_close(fast.output, slow, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_equals_its_quadratic_form(causal):
    q, k, v = _qkv(L=10, d=6, sigma=1.0, seed=7)
    got = ka.linear_attention(q, k, v, causal=causal).output
    # written out: sim(q, k) = (elu(q) + 1) . (elu(k) + 1), then a weighted average
    fq = torch.where(q > 0, q + 1, torch.exp(q))
    fk = torch.where(k > 0, k + 1, torch.exp(k))
    sim = fq @ fk.T
    if causal:
        sim = torch.tril(sim)
    ref = (sim / sim.sum(-1, keepdim=True)) @ v
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)


def test_favor_attention_approaches_softmax_attention_with_many_features():
    q, k, v = _qkv(L=16, d=8, sigma=0.5, seed=8)
    ref = F.scaled_dot_product_attention(q, k, v)
    errors = []
    for m in (8, 4096):
        out = ka.favor_attention(q, k, v, m, "positive_orthogonal", seed=1).output
        errors.append(float((out - ref).norm() / ref.norm()))
    assert errors[1] < 0.1
    assert errors[1] < errors[0] / 4


def test_favor_attention_keeps_batch_shapes_and_accepts_a_scale():
    q, k, v = _qkv(L=6, S=9, d=4, dv=5, seed=9, batch=(2, 3))
    r = ka.favor_attention(q, k, v, 16, scale=0.3)
    assert r.output.shape == (2, 3, 6, 5)
    assert r.denominator.shape == (2, 3, 6)
    assert bool((r.denominator > 0).all())


def test_approximate_attention_takes_numpy_and_reports_errors():
    inp = ka.attention_inputs(10, 8, 0.5, seed=0)
    small = ka.approximate_attention(inp.q, inp.k, inp.v, 4, "positive_iid", 0)
    big = ka.approximate_attention(inp.q, inp.k, inp.v, 2048, "positive_iid", 0)
    assert small.exact.shape == small.approx.shape == (10, 10)
    np.testing.assert_allclose(small.approx.sum(axis=1), 1.0)
    ref = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (inp.q, inp.k, inp.v)))
    assert ref.shape == (10, 4)
    assert big.relative_error < small.relative_error
    assert big.min_denominator_ratio > 0


def test_dissection_kernels():
    q, k, _ = _qkv(L=5, S=7, d=4, sigma=1.0, seed=10)
    w_exp = ka.dissection_weights(q, k, "exponential")
    ref = torch.softmax(q @ k.T / 2, dim=-1).numpy()
    np.testing.assert_allclose(w_exp, ref, rtol=1e-12)
    w_rbf = ka.dissection_weights(q, k, "rbf")
    brute = np.array(
        [[math.exp(-0.25 * float(((q[i] - k[j]) ** 2).sum())) for j in range(7)] for i in range(5)]
    )
    np.testing.assert_allclose(w_rbf, brute / brute.sum(1, keepdims=True), rtol=1e-10)
    w_poly = ka.dissection_weights(q, k, "polynomial")
    assert (w_poly >= 0).all()
    np.testing.assert_allclose(w_poly.sum(1), 1.0)


# ----------------------------------------------------------------------------------------------
# cost measurement helpers (no timed assertions)
# ----------------------------------------------------------------------------------------------


def test_peak_memory_sees_the_attention_matrix():
    peak = ka.peak_torch_memory(lambda: torch.ones(1024, 256, dtype=torch.float32) * 2)
    assert peak >= 2 * 1024 * 256 * 4  # the ones and the product are alive together
    L = 512
    exact = ka.measure_cost("exact", L, 16, 32, repeat=1)
    linear = ka.measure_cost("linear", L, 16, 32, repeat=1)
    assert exact.peak_bytes >= L * L * 4  # the (L, L) float32 scores
    assert linear.peak_bytes < L * L * 4
    assert exact.seconds > 0
    assert exact.method == "exact"
    assert exact.L == L


def test_crossover_length():
    L = np.array([100.0, 200.0, 400.0, 800.0])
    exact = np.array([1.0, 4.0, 16.0, 64.0])
    approx = np.array([8.0, 8.0, 8.0, 8.0])
    # log ratio 3 ln2, ln2, -ln2 at 100, 200, 400: crosses zero halfway between 200 and 400 in log L
    assert ka.crossover_length(L, exact, approx) == pytest.approx(200 * math.sqrt(2))
    assert ka.crossover_length(L, exact, exact * 2) is None
    assert ka.crossover_length(L, exact, exact / 2) == 100.0
    assert ka.crossover_length(L, exact, np.full(4, np.nan)) is None


# ----------------------------------------------------------------------------------------------
# bad inputs
# ----------------------------------------------------------------------------------------------


_Q, _K, _V = _qkv(L=4, d=4)
_X = np.linspace(0, 1, 5)
BAD_CASES = [
    lambda: ka.fourier_features(0, 0.5),
    lambda: ka.fourier_features(8, 0.0),
    lambda: ka.fourier_features(8, float("nan")),
    lambda: ka.fourier_features(8, 0.5, seed=-1),
    lambda: ka.rff_nw_predict(_X, _X[:4], _X, 0.5, 8),
    lambda: ka.rff_nw_predict(_X, np.array([np.nan] * 5), _X, 0.5, 8),
    lambda: ka.rff_nw_predict(np.zeros((2, 2)), _X, _X, 0.5, 8),
    lambda: ka.rff_convergence(_X, _X, _X, 0.5, ()),
    lambda: ka.draw_directions("gaussian", 8, 4),
    lambda: ka.draw_directions("trigonometric", 7, 4),
    lambda: ka.gaussian_directions(ka.MAX_FEATURES + 1, 4, orthogonal=True),
    lambda: ka.favor_attention(_Q, _K, _V, 0),
    lambda: ka.favor_attention(_Q, _K[:, :3], _V, 8),
    lambda: ka.favor_attention(_Q, _K, _V[:3], 8),
    lambda: ka.favor_attention(_Q, _K, _V, 8, scale=-1.0),
    lambda: ka.favor_attention(_Q.float(), _K, _V, 8),
    lambda: ka.favor_attention(_Q, _K, _V, 8, kind="cosine"),
    lambda: ka.favor_attention(_Q.numpy(), _K, _V, 8),
    lambda: ka.favor_attention(_Q * float("nan"), _K, _V, 8),
    lambda: ka.kernel_attention(_Q, _K[:3], _V[:3], causal=True),
    lambda: ka.quadratic_kernel_attention(_Q, _K[:3], _V[:3], causal=True),
    lambda: ka.linear_attention(_Q[0], _K, _V),
    lambda: ka.causal_check(_Q, _K, _V, 8, feature_map="relu"),
    lambda: ka.dissection_weights(_Q, _K, "laplace"),
    lambda: ka.attention_inputs(4, 4, 0.0),
    lambda: ka.attention_inputs(0, 4, 0.5),
    lambda: ka.cost_function("flash", _Q, _K, _V, 8),
    lambda: ka.softmax_features(_Q, torch.randn(8, 3, dtype=torch.float64), "positive_iid"),
]


@pytest.mark.parametrize("case", range(len(BAD_CASES)))
def test_bad_inputs_raise_value_error(case):
    with pytest.raises(ValueError, match=r"."):
        BAD_CASES[case]()


def _compare_one_seed_at_a_time(q, k, m, kind, seeds):
    """compare_features' statistics written out per seed with favor_features (no batching)."""
    s = 1 / math.sqrt(q.shape[-1])
    exact_k = torch.exp(s * q @ k.T)
    exact_w = exact_k / exact_k.sum(-1, keepdim=True)
    errors, mses, negatives = [], [], 0
    for seed in seeds:
        phi_q, phi_k = ka.favor_features(q, k, m, kind, seed, s, stabilise=False)
        k_hat = phi_q @ phi_k.T
        den = k_hat.sum(-1)
        errors.append(float((k_hat / den[:, None] - exact_w).norm() / exact_w.norm()))
        mses.append(float(((k_hat - exact_k) ** 2).mean() / (exact_k**2).mean()))
        negatives += int((den <= 0).sum())
    return float(np.median(errors)), float(np.median(mses)), negatives / (len(seeds) * q.shape[0])


@pytest.mark.parametrize("batch_entries", [1 << 22, 16 * 12 * 3])  # all seeds at once; 3 per batch
def test_compare_features_matches_a_loop_over_seeds(monkeypatch, batch_entries):
    monkeypatch.setattr(ka, "_COMPARE_BATCH_ENTRIES", batch_entries)
    q, k, _ = _qkv(L=16, d=8, sigma=0.8, seed=3)
    k = k[:12]
    cmp = ka.compare_features(q, k, (2, 8, 32), n_seeds=10, seed=5)
    for a, kind in enumerate(cmp.kinds):
        for b, m in enumerate((2, 8, 32)):
            err, mse, neg = _compare_one_seed_at_a_time(q, k, m, kind, range(5, 15))
            assert cmp.error[a, b] == pytest.approx(err, rel=1e-9)
            assert cmp.kernel_mse[a, b] == pytest.approx(mse, rel=1e-9)
            assert cmp.negative_share[a, b] == neg


# ----------------------------------------------------------------------------------------------
# the page's sentences, checked against the numbers (issue 22.6)
# ----------------------------------------------------------------------------------------------


def test_polynomial_kernel_tracks_exp_of_twice_the_score():
    """(1 + s)² = 1 + 2s + s² ~ exp(2s), not exp(s): within 5 % for |s| <= radius, on a dense grid."""
    inp = ka.attention_inputs(16, 16, 0.5, 0)
    match = ka.polynomial_match(inp.q, inp.k)
    s = np.linspace(-match.radius, match.radius, 20001)
    poly = (1 + s) ** 2
    assert np.max(np.abs(poly / np.exp(2 * s) - 1)) <= match.rtol == 0.05
    edge = match.radius + 0.005  # just beyond the radius, on one side or the other, the gap exceeds 5 %
    assert max(abs((1 + x) ** 2 / math.exp(2 * x) - 1) for x in (edge, -edge)) > match.rtol
    assert 0.15 < match.radius < 0.3
    # the old sentence ("close to the exponential", i.e. exp(s)) fails already inside the range
    x = match.radius
    assert abs((1 + x) ** 2 / math.exp(x) - 1) > 3 * match.rtol
    scores = inp.q @ inp.k.T / math.sqrt(16)  # (L, S), brute force
    assert match.share == pytest.approx(float(np.mean(np.abs(scores) <= match.radius)))
    assert (match.lowest, match.highest) == pytest.approx((scores.min(), scores.max()))


def test_versus_and_ratio_on_a_hand_made_comparison():
    cmp = ka.FeatureComparison(
        m=np.array([2.0, 4.0, 8.0]),
        kinds=("a", "b", "c"),
        error=np.array([[1.0, 1.0, 1.0], [2.0, 1.05, 0.5], [3.0, 0.5, 2.0]]),
        kernel_mse=np.zeros((3, 3)),
        negative_share=np.zeros((3, 3)),
        near_zero_share=np.zeros((3, 3)),
    )
    assert cmp.versus("a", ("b", "c")) == ("better", "worse", "worse")  # against the best of b, c
    assert cmp.versus("b", ("a",)) == ("worse", "same", "better")  # 1.05 is within 10 %
    np.testing.assert_allclose(cmp.ratio("a", ("b", "c")), [0.5, 2.0, 2.0])
    with pytest.raises(ValueError, match="not in this comparison"):
        cmp.versus("d", ("a",))


@pytest.mark.slow
def test_the_trigonometric_sentence_holds_at_d8_on_the_pages_inputs():
    """ka.trig_depends: "at D = 8 trigonometric features are worse at small m from σ = 0.5 on, and
    better at every m at σ = 0.25", on the page's inputs (L = 16, seed 0, 12 draws per m)."""
    grid = (2, 4, 8, 16, 32, 64, 128, 256, 512)
    positive = ("positive_orthogonal", "positive_iid")
    for sigma in (0.25, 0.5, 0.75, 1.0):
        inp = ka.attention_inputs(16, 8, sigma, 0, 4)
        cmp = ka.compare_features(inp.q, inp.k, grid, ka.FEATURE_KINDS, 12, 0)
        errors = dict(zip(cmp.kinds, cmp.error, strict=True))
        best_positive = np.minimum(errors["positive_orthogonal"], errors["positive_iid"])
        if sigma == 0.25:
            assert np.all(errors["trigonometric"] < best_positive), sigma
            assert set(cmp.versus("trigonometric", positive)) == {"better"}
        else:
            assert errors["trigonometric"][0] > 1.1 * best_positive[0], sigma
            assert cmp.versus("trigonometric", positive)[0] == "worse"
