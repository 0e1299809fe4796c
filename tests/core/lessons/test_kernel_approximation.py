"""core.lessons.kernel_approximation against independent references: brute-force loops over seeds,
the exact kernels, random features recomputed one draw at a time, and the page's sentences checked
against the numbers."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core import random_features as rf
from core.data import post_data
from core.lessons import kernel_approximation as ka
from tests.core.conftest import qkv


def test_fourier_feature_error_falls_like_one_over_sqrt_m():
    d = post_data()
    conv = ka.rff_convergence(d.x, d.y, np.linspace(-3, 3, 41), 0.5, (8, 32, 128, 512, 2048), n_seeds=6)
    assert -0.6 < conv.slope < -0.4
    assert conv.kernel_rms[-1] < conv.kernel_rms[0] / 8  # 256x the features, ~16x less error
    assert conv.fit_rms[-1] < conv.fit_rms[0]
    np.testing.assert_allclose(conv.reference * np.sqrt(conv.m), conv.reference[-1] * math.sqrt(2048))


def test_rff_convergence_plots_medians_of_the_draws_the_fit_shows():
    """Issue 22.6: the metric beside the chart is the chart's median at m; draw 0 is the fit on the
    left, recomputed here with rff_nw_predict (one seed at a time)."""
    d = post_data()
    xq = np.linspace(-3, 3, 61)
    m_values, seeds = (4, 16, 64), 5
    conv = ka.rff_convergence(d.x, d.y, xq, 0.3, m_values, n_seeds=seeds, seed=2)
    for i, m in enumerate(m_values):
        draws = [rf.rff_nw_predict(d.x, d.y, xq, 0.3, m, seed=2 + s).rms_error for s in range(seeds)]
        np.testing.assert_allclose(conv.fit_rms_draws[i], draws, rtol=1e-12)
        assert conv.fit_rms[i] == pytest.approx(float(np.median(draws)), rel=1e-12)
        z = [rf.fourier_features(m, 0.3, 2 + s) for s in range(seeds)]
        xs = d.x[:: max(1, d.x.size // ka.KERNEL_ERROR_SAMPLES)]
        exact = np.exp(-0.5 * ((xq[:, None] - xs[None, :]) / 0.3) ** 2)
        kernel = [np.sqrt(np.mean((f(xq) @ f(xs).T - exact) ** 2)) for f in z]
        assert conv.kernel_rms[i] == pytest.approx(float(np.median(kernel)), rel=1e-12)


def test_one_seed_draw_is_the_fit_of_that_seed_and_the_convergence_its_median():
    """``rff_draw`` (one seed, what the page caches per seed) against rff_nw_predict recomputed
    for that seed; medians of consecutive seeds' draws are ``rff_convergence``'s."""
    d = post_data()
    xq = np.linspace(-3, 3, 31)
    m_values = (2, 8, 32)
    kernel, fit = ka.rff_draw(d.x, d.y, xq, 0.5, m_values, seed=7)
    assert kernel.shape == fit.shape == (3,)
    for i, m in enumerate(m_values):
        assert fit[i] == pytest.approx(rf.rff_nw_predict(d.x, d.y, xq, 0.5, m, seed=7).rms_error, rel=1e-12)
    draws = [ka.rff_draw(d.x, d.y, xq, 0.5, m_values, seed=s) for s in (6, 7, 8)]
    conv = ka.rff_convergence(d.x, d.y, xq, 0.5, m_values, n_seeds=3, seed=6)
    np.testing.assert_allclose(conv.fit_rms_draws[:, 1], fit, rtol=1e-12)
    np.testing.assert_allclose(conv.kernel_rms, np.median([k for k, _ in draws], axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="m_values"):
        ka.rff_draw(d.x, d.y, xq, 0.5, (), seed=0)


def test_orthogonal_features_beat_iid_on_average():
    q, k, _ = qkv(L=16, d=16, sigma=0.5, seed=4)
    cmp = ka.compare_features(q, k, (8, 16, 32, 64), ("positive_orthogonal", "positive_iid"), n_seeds=48)
    orth, iid = cmp.error
    assert orth.mean() < iid.mean()
    assert (orth < iid).sum() >= 3


def test_positive_feature_error_falls_like_one_over_sqrt_m():
    q, k, _ = qkv(L=16, d=8, sigma=0.4, seed=5)
    cmp = ka.compare_features(q, k, (4, 16, 64, 256), ("positive_iid",), n_seeds=24)
    slope = np.polyfit(np.log(cmp.m), np.log(cmp.error[0]), 1)[0]
    assert -0.65 < slope < -0.35
    # the page's dashed 1/√m guide: through the last measured point, times 2 for each 4x fewer features
    ref = cmp.sqrt_m_reference
    assert ref[-1] == cmp.error[0, -1]
    np.testing.assert_allclose(ref[:-1] / ref[1:], [2.0, 2.0, 2.0])


def test_trigonometric_denominators_go_negative_and_positive_ones_never_do():
    q, k, _ = qkv(L=16, d=16, sigma=0.75, seed=0)
    cmp = ka.compare_features(q, k, (2, 8, 32), n_seeds=16)
    trig = cmp.kinds.index("trigonometric")
    for i, kind in enumerate(cmp.kinds):
        if kind != "trigonometric":
            assert (cmp.negative_share[i] == 0).all()
    assert cmp.negative_share[trig, 0] > 0.1
    assert (cmp.near_zero_share[trig] >= cmp.negative_share[trig]).all()


@pytest.mark.parametrize("feature_map", ["favor", "elu"])
def test_causal_prefix_sums_equal_the_masked_quadratic_form(feature_map):
    q, k, v = qkv(L=40, d=8, sigma=0.7, seed=3)
    check = ka.causal_check(q, k, v, 32, "positive_orthogonal", 5, feature_map)
    assert check.max_abs_diff < 1e-10
    np.testing.assert_allclose(check.prefix, check.masked, rtol=0, atol=1e-10)
    # the first query sees only the first key: its output is v_0 exactly
    np.testing.assert_allclose(check.prefix[0], v[0].numpy(), atol=1e-12)


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
    q, k, _ = qkv(L=5, S=7, d=4, sigma=1.0, seed=10)
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


def test_peak_memory_sees_the_attention_matrix():
    L = 512
    exact = ka.measure_cost("exact", L, 16, 32, repeat=1)
    linear = ka.measure_cost("linear", L, 16, 32, repeat=1)
    assert exact.peak_bytes >= L * L * 4  # the (L, L) float32 scores
    assert linear.peak_bytes < L * L * 4
    assert exact.seconds > 0
    assert exact.method == "exact"
    assert exact.L == L


def _compare_one_seed_at_a_time(q, k, m, kind, seeds):
    """compare_features' statistics written out per seed with favor_features (no batching)."""
    s = 1 / math.sqrt(q.shape[-1])
    exact_k = torch.exp(s * q @ k.T)
    exact_w = exact_k / exact_k.sum(-1, keepdim=True)
    errors, mses, negatives = [], [], 0
    for seed in seeds:
        phi_q, phi_k = rf.favor_features(q, k, m, kind, seed, s, stabilise=False)
        k_hat = phi_q @ phi_k.T
        den = k_hat.sum(-1)
        errors.append(float((k_hat / den[:, None] - exact_w).norm() / exact_w.norm()))
        mses.append(float(((k_hat - exact_k) ** 2).mean() / (exact_k**2).mean()))
        negatives += int((den <= 0).sum())
    return float(np.median(errors)), float(np.median(mses)), negatives / (len(seeds) * q.shape[0])


@pytest.mark.parametrize("batch_entries", [1 << 22, 16 * 12 * 3])  # all seeds at once; 3 per batch
def test_compare_features_matches_a_loop_over_seeds(monkeypatch, batch_entries):
    monkeypatch.setattr(ka, "_COMPARE_BATCH_ENTRIES", batch_entries)
    q, k, _ = qkv(L=16, d=8, sigma=0.8, seed=3)
    k = k[:12]
    cmp = ka.compare_features(q, k, (2, 8, 32), n_seeds=10, seed=5)
    for a, kind in enumerate(cmp.kinds):
        for b, m in enumerate((2, 8, 32)):
            err, mse, neg = _compare_one_seed_at_a_time(q, k, m, kind, range(5, 15))
            assert cmp.error[a, b] == pytest.approx(err, rel=1e-9)
            assert cmp.kernel_mse[a, b] == pytest.approx(mse, rel=1e-9)
            assert cmp.negative_share[a, b] == neg


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
        cmp = ka.compare_features(inp.q, inp.k, grid, rf.FEATURE_KINDS, 12, 0)
        errors = dict(zip(cmp.kinds, cmp.error, strict=True))
        best_positive = np.minimum(errors["positive_orthogonal"], errors["positive_iid"])
        if sigma == 0.25:
            assert np.all(errors["trigonometric"] < best_positive), sigma
            assert set(cmp.versus("trigonometric", positive)) == {"better"}
        else:
            assert errors["trigonometric"][0] > 1.1 * best_positive[0], sigma
            assert cmp.versus("trigonometric", positive)[0] == "worse"


_Q, _K, _V = qkv(L=4, d=4)
_X = np.linspace(0, 1, 5)
BAD_CASES = [
    lambda: ka.rff_convergence(_X, _X, _X, 0.5, ()),
    lambda: ka.causal_check(_Q, _K, _V, 8, feature_map="relu"),
    lambda: ka.dissection_weights(_Q, _K, "laplace"),
    lambda: ka.attention_inputs(4, 4, 0.0),
    lambda: ka.attention_inputs(0, 4, 0.5),
    lambda: ka.cost_function("flash", _Q, _K, _V, 8),
]


@pytest.mark.parametrize("case", range(len(BAD_CASES)))
def test_bad_inputs_raise_value_error(case):
    with pytest.raises(ValueError, match=r"."):
        BAD_CASES[case]()


# ----------------------------------------------------------------------------------------------
# the cost run and the page's sentences (moved here from ui.kernel_approximation)
# ----------------------------------------------------------------------------------------------


def _fake_measure_cost(method, L, d, m, repeat=3):
    """Exact attention costs L² / 10⁶ s and L² bytes, the linear methods L / 10⁴ s and 64 L bytes."""
    quadratic = method == "exact"
    return ka.CostPoint(method, L, L * L / 1e6 if quadratic else L / 1e4, L * L if quadratic else 64 * L)


def test_measure_costs_measures_in_order_and_stops_a_method_over_its_budget(monkeypatch):
    monkeypatch.setattr(ka, "measure_cost", _fake_measure_cost)
    progress = []
    run = ka.measure_costs(
        (128, 512, 1024, 2048),
        16,
        32,
        max_length=4096,
        point_budget_s=0.5,
        total_budget_s=1e9,
        on_progress=lambda fraction, method: progress.append((round(fraction, 3), method)),
    )
    # exact: 0.016 s, 0.26 s, 1.05 s (over 0.5: stops after measuring 1024); the others go on
    assert [(p.method, p.L) for p in run.points if p.method == "exact"] == [
        ("exact", 128),
        ("exact", 512),
        ("exact", 1024),
    ]
    assert [p.L for p in run.points if p.method == "favor"] == [128, 512, 1024, 2048]
    assert run.stopped == {"exact": 1024}
    assert (run.d, run.m, run.max_length) == (16, 32, 4096)
    assert progress[0] == (round(1 / 12, 3), "exact")
    assert progress[-1] == (1.0, "linear")
    assert len(progress) == len(run.points)


def test_measure_costs_stops_every_method_when_the_total_budget_is_spent(monkeypatch):
    monkeypatch.setattr(ka, "measure_cost", _fake_measure_cost)
    clock = iter(range(1000))  # each look at the clock: one more second
    monkeypatch.setattr(ka, "time", types.SimpleNamespace(perf_counter=lambda: float(next(clock))))
    run = ka.measure_costs((128, 256, 512), 16, 32, max_length=512, point_budget_s=1e9, total_budget_s=2.5)
    # start = 0; the checks before the 1st, 2nd and 3rd points read 1, 2, 3: the 3rd is over 2.5
    assert [(p.method, p.L) for p in run.points] == [("exact", 128), ("favor", 128)]
    assert run.stopped == {"linear": 128, "exact": 256, "favor": 256}


def test_cost_run_series_and_crossover_against_a_brute_force_reading():
    points = [_fake_measure_cost(method, L, 16, 32) for L in (64, 128, 256) for method in ka.COST_METHODS]
    points = tuple(p for p in points if (p.method, p.L) != ("linear", 256))  # linear stopped at 256
    run = ka.CostRun(points, 16, 32, 256, {"linear": 256}, 1.0, "x")
    lengths, seconds = run.series("exact", "seconds")
    np.testing.assert_array_equal(lengths, [64.0, 128.0, 256.0])
    np.testing.assert_allclose(seconds, [64**2 / 1e6, 128**2 / 1e6, 256**2 / 1e6])
    assert run.series("linear", "peak_bytes")[1].tolist() == [64 * 64, 64 * 128]
    # exact L²/10⁶ against favor L/10⁴ seconds: equal at L = 100, between the measured 64 and 128
    # (interpolated on log-log axes: log-linear in between, so exactly 100)
    assert run.crossover("favor", "seconds") == pytest.approx(100.0)
    # bytes: L² against 64 L, equal at 64 (the first length measured), then favor cheaper
    assert run.crossover("favor", "peak_bytes") == pytest.approx(64.0)
    assert ka.CostRun((), 16, 32, 256, {}, 0.0, "x").crossover("favor", "seconds") is None


def test_outcome_runs_and_comparison_runs_group_consecutive_m():
    m = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    assert ka.outcome_runs(m, ("worse", "worse", "same", "better", "better")) == [
        ("worse", (2, 4)),
        ("same", (8,)),
        ("better", (16, 32)),
    ]
    cmp = ka.FeatureComparison(
        m=m,
        kinds=("a", "b"),
        error=np.array([[2.0, 3.0, 1.0, 0.5, 0.8], [1.0, 1.0, 1.0, 1.0, 1.0]]),
        kernel_mse=np.zeros((2, 5)),
        negative_share=np.zeros((2, 5)),
        near_zero_share=np.zeros((2, 5)),
    )
    assert ka.comparison_runs(cmp, "a", ("b",)) == [
        ka.OutcomeRun("worse", "2–4", "×2.00–3.00"),
        ka.OutcomeRun("same", "8", "×1.00"),
        ka.OutcomeRun("better", "16–32", "×0.50–0.80"),
    ]


def test_regression_grid_spans_the_posts_data_range():
    grid = ka.regression_grid(241)
    assert grid.size == 241
    assert (grid[0], grid[-1]) == (-3.0, 3.0)
    np.testing.assert_allclose(np.diff(grid), 6.0 / 240)
    with pytest.raises(ValueError, match="n_points"):
        ka.regression_grid(1)
