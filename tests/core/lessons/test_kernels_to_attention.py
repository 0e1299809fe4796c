"""core.lessons.kernels_to_attention (what the kernels-to-attention page shows) against references
written here: statsmodels KernelReg, NW and softmax loops from the formula, test errors recomputed
by hand from the returned bandwidth or metric, and a brute-force leave-one-out scan."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from statsmodels.nonparametric.kernel_regression import KernelReg

from core.data import make_data
from core.kernel_attention import data_2d, random_vectors
from core.lessons.kernels_to_attention import (
    GRID_HIGH,
    GRID_LOW,
    N_CURVE,
    N_TEST,
    NOISE_2D,
    TEST_SEED_OFFSET,
    BandwidthLearning,
    LearnedBandwidth,
    LearnedMetric,
    MetricLearning,
    NwVsAttention,
    QueryWeights,
    bandwidth_learning,
    learned_bandwidth,
    learned_metric,
    nw_vs_attention,
    query_weights,
    random_dot_vs_gaussian,
)

#: Small training runs so the tests stay quick.
FAST = {"steps": 40, "lr": 0.05, "init_bandwidth": 1.0}


def _gaussian_nw_loop(x: np.ndarray, y: np.ndarray, queries: np.ndarray, h: float) -> tuple[list, list]:
    """Gaussian NW from the formula, one query at a time: (predictions, weight rows)."""
    preds, rows = [], []
    for q in queries:
        k = [math.exp(-((q - xi) ** 2) / (2 * h * h)) for xi in x]
        total = sum(k)
        rows.append([ki / total for ki in k])
        preds.append(sum(ki * yi for ki, yi in zip(k, y, strict=True)) / total)
    return preds, rows


def _kernel_reg(x: np.ndarray, y: np.ndarray, queries: np.ndarray, h: float) -> np.ndarray:
    """statsmodels' local-constant (Nadaraya-Watson) regression with a Gaussian kernel."""
    kr = KernelReg(y, x, var_type="c", reg_type="lc", bw=[h], rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # its marginal effects, not the mean
        return kr.fit(queries)[0]


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def bandwidths() -> tuple[LearnedBandwidth, LearnedBandwidth]:
    return (
        learned_bandwidth(60, 5, leave_one_out=True, **FAST),
        learned_bandwidth(60, 5, leave_one_out=False, **FAST),
    )


@pytest.fixture(scope="module")
def metrics() -> tuple[LearnedMetric, LearnedMetric]:
    return (
        learned_metric(50, 2, leave_one_out=True, **FAST),
        learned_metric(50, 2, leave_one_out=False, **FAST),
    )


# ----------------------------------------------------------------------------------------------
# NW vs attention, one query, dot vs Gaussian
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "seed", "h"), [(40, 42, 0.3), (25, 3, 1.5), (60, 0, 0.08)])
def test_nw_vs_attention_against_statsmodels_and_a_loop(n, seed, h):
    r = nw_vs_attention(n, seed, h, n_queries=17)
    data = make_data(n=n, seed=seed)
    assert r.x.shape == r.y.shape == (n,)
    assert r.x_query.shape == r.truth.shape == r.fit_nw.shape == r.fit_attention.shape == (17,)
    assert r.weights_nw.shape == r.weights_attention.shape == (17, n)  # rows = queries
    np.testing.assert_array_equal(r.x, data.x)
    np.testing.assert_allclose(r.x_query, [GRID_LOW + i * (GRID_HIGH - GRID_LOW) / 16 for i in range(17)])
    np.testing.assert_allclose(r.truth, np.sinc(r.x_query), rtol=0, atol=1e-15)
    preds, rows = _gaussian_nw_loop(data.x, data.y, r.x_query, h)
    for w in (r.weights_nw, r.weights_attention):
        np.testing.assert_allclose(w, rows, rtol=0, atol=1e-14)
    for fit in (r.fit_nw, r.fit_attention):
        np.testing.assert_allclose(fit, preds, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fit, _kernel_reg(data.x, data.y, r.x_query, h), rtol=0, atol=1e-10)
    assert r.max_diff_weights == np.abs(r.weights_nw - r.weights_attention).max() < 1e-13
    assert r.max_diff_fit == np.abs(r.fit_nw - r.fit_attention).max() < 1e-13


def test_query_weights_against_a_loop():
    h, x0 = 0.4, -1.3
    r = query_weights(30, 7, h, x0)
    data = make_data(n=30, seed=7)
    preds, rows = _gaussian_nw_loop(data.x, data.y, [x0], h)
    assert r.query == x0
    assert r.scores.shape == r.weights_nw.shape == r.weights_attention.shape == (30,)
    np.testing.assert_allclose(r.scores, [-((x0 - xi) ** 2) / (2 * h * h) for xi in data.x], rtol=1e-15)
    np.testing.assert_allclose(r.weights_nw, rows[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.weights_attention, rows[0], rtol=0, atol=1e-15)
    assert r.prediction == pytest.approx(preds[0], abs=1e-14)
    assert r.max_diff == np.abs(r.weights_nw - r.weights_attention).max()


@pytest.mark.parametrize("spread", [0.0, 0.8])
def test_random_dot_vs_gaussian_against_a_softmax_written_here(spread):
    tau = 0.5
    r = random_dot_vs_gaussian(6, 4, tau, spread, seed=11)
    q = random_vectors(6, 4, norm_spread=spread, seed=11)
    k = random_vectors(6, 4, norm_spread=spread, seed=12)  # keys: seed + 1
    dot = _softmax(q @ k.T / tau)
    dist2 = ((q[:, None, :] - k[None, :, :]) ** 2).sum(-1)
    gauss = _softmax(-dist2 / (2 * tau))
    np.testing.assert_allclose(r.dot, dot, rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.gaussian, gauss, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(r.diff, r.dot - r.gaussian)
    np.testing.assert_allclose(r.key_norms, np.linalg.norm(k, axis=1), rtol=1e-15)
    np.testing.assert_allclose(r.key_log_bias, np.linalg.norm(k, axis=1) ** 2 / (2 * tau), rtol=1e-15)
    if spread == 0:
        assert r.max_abs_diff < 1e-14
    else:
        # each row: dot ∝ gaussian · exp(|k|²/(2τ))
        np.testing.assert_allclose(r.dot, _softmax(np.log(gauss) + r.key_log_bias), rtol=1e-12)
        assert r.max_abs_diff > 1e-3


# ----------------------------------------------------------------------------------------------
# the learnable kernels
# ----------------------------------------------------------------------------------------------


def _loo_mse(x: np.ndarray, y: np.ndarray, h: float) -> float:
    """Leave-one-out training MSE of Gaussian NW, a loop over the points."""
    errors = []
    for i in range(x.size):
        k = np.exp(-((x[i] - x) ** 2) / (2 * h * h))
        k[i] = 0.0
        errors.append((k @ y / k.sum() - y[i]) ** 2)
    return float(np.mean(errors))


def test_learned_bandwidth_errors_recomputed_from_its_h(bandwidths):
    data = make_data(n=60, seed=5)
    test = make_data(n=N_TEST, seed=5 + TEST_SEED_OFFSET)
    grid = np.linspace(GRID_LOW, GRID_HIGH, N_CURVE)
    for learned, loo in zip(bandwidths, (True, False), strict=True):
        h = learned.fit.bandwidth
        assert learned.fit.leave_one_out is loo
        assert (learned.n, learned.seed) == (60, 5)
        assert learned.fit.losses.shape == (FAST["steps"],)
        assert learned.fit.bandwidths.shape == (FAST["steps"] + 1,)
        assert learned.fit.bandwidths[0] == FAST["init_bandwidth"]
        assert learned.curve.shape == (N_CURVE,)
        test_pred = np.array(_gaussian_nw_loop(data.x, data.y, test.x, h)[0])
        assert learned.test_mse == pytest.approx(float(np.mean((test_pred - test.y) ** 2)), rel=1e-12)
        np.testing.assert_allclose(learned.curve, _kernel_reg(data.x, data.y, grid, h), rtol=0, atol=1e-10)
    # the training MSE is the last loss: the one at the h before the last step
    loo = bandwidths[0]
    assert loo.train_mse == pytest.approx(_loo_mse(data.x, data.y, loo.fit.bandwidths[-2]), rel=1e-10)


def test_bandwidth_learning_puts_the_data_and_the_cv_bandwidth_beside_the_fits(bandwidths):
    res = bandwidth_learning(*bandwidths)
    data = make_data(n=60, seed=5)
    np.testing.assert_array_equal(res.x, data.x)
    np.testing.assert_array_equal(res.y, data.y)
    assert res.grid.shape == res.truth.shape == (N_CURVE,)
    np.testing.assert_allclose(res.truth, np.sinc(res.grid), rtol=0, atol=1e-15)
    assert res.fits == (res.loo, res.no_loo) == bandwidths
    # h_cv minimises the LOO error: a brute-force scan on a fine log grid agrees to ~1%
    hs = np.geomspace(0.02, 2.0, 801)
    best = hs[np.argmin([_loo_mse(data.x, data.y, h) for h in hs])]
    assert res.h_cv == pytest.approx(best, rel=0.015)


def test_leave_one_out_training_lands_on_the_cv_bandwidth_and_included_collapses():
    """The page's lesson, at its defaults (N = 100, 300 steps): LOO ~ h_cv, included h -> 0."""
    loo = learned_bandwidth(100, 42, leave_one_out=True)
    no_loo = learned_bandwidth(100, 42, leave_one_out=False)
    res = bandwidth_learning(loo, no_loo)
    assert loo.fit.bandwidth == pytest.approx(res.h_cv, rel=0.05)
    assert no_loo.fit.bandwidth < 0.1 * loo.fit.bandwidth
    assert no_loo.train_mse < loo.train_mse
    assert no_loo.test_mse > loo.test_mse


def test_learned_metric_errors_recomputed_from_its_metric(metrics):
    x, y = data_2d(50, NOISE_2D, 2)
    x_test, y_test = data_2d(N_TEST, NOISE_2D, 2 + TEST_SEED_OFFSET)
    for learned, loo in zip(metrics, (True, False), strict=True):
        m = learned.fit.metric
        assert learned.fit.leave_one_out is loo
        assert m.shape == (2, 2)
        assert learned.fit.length_scale_path.shape == (FAST["steps"] + 1, 2)
        np.testing.assert_allclose(learned.fit.length_scales, 1 / np.sqrt(np.diagonal(m)), rtol=1e-12)
        preds = []
        for q in x_test:
            d = q - x  # (N, 2)
            k = np.exp(-0.5 * np.einsum("nd,de,ne->n", d, m, d))
            preds.append(k @ y / k.sum())
        assert learned.test_mse == pytest.approx(float(np.mean((np.array(preds) - y_test) ** 2)), rel=1e-10)
        assert learned.train_mse == learned.fit.losses[-1]
    res = MetricLearning(*metrics)
    assert res.fits == metrics


def test_results_are_frozen(bandwidths, metrics):
    results = [
        nw_vs_attention(20, 1, 0.5, n_queries=5),
        query_weights(20, 1, 0.5, 0.0),
        random_dot_vs_gaussian(3, 2, 1.0, 0.0, 0),
        bandwidths[0],
        bandwidth_learning(*bandwidths),
        metrics[0],
        MetricLearning(*metrics),
    ]
    kinds = (NwVsAttention, QueryWeights, LearnedBandwidth, BandwidthLearning, LearnedMetric, MetricLearning)
    assert {type(r) for r in results} >= set(kinds)
    for r in results:
        field = dataclasses.fields(r)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(r, field, None)


def test_same_arguments_same_results():
    a, b = nw_vs_attention(30, 9, 0.2), nw_vs_attention(30, 9, 0.2)
    np.testing.assert_array_equal(a.weights_attention, b.weights_attention)
    c = learned_bandwidth(30, 9, leave_one_out=True, steps=5)
    d = learned_bandwidth(30, 9, leave_one_out=True, steps=5)
    np.testing.assert_array_equal(c.fit.bandwidths, d.fit.bandwidths)
    assert c.test_mse == d.test_mse


def test_the_learning_results_refuse_mismatched_fits(bandwidths, metrics):
    loo, no_loo = bandwidths
    with pytest.raises(ValueError, match="leave-one-out"):
        bandwidth_learning(no_loo, loo)
    other = learned_bandwidth(30, 5, leave_one_out=False, steps=3)
    with pytest.raises(ValueError, match="different data"):
        bandwidth_learning(loo, other)
    with pytest.raises(ValueError, match="leave-one-out"):
        MetricLearning(metrics[1], metrics[0])
    with pytest.raises(ValueError, match="different data"):
        MetricLearning(metrics[0], learned_metric(30, 2, leave_one_out=False, steps=3))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nw_vs_attention(0, 1, 0.5), "n must"),
        (lambda: nw_vs_attention(10_000, 1, 0.5), "n must"),
        (lambda: nw_vs_attention(20, -1, 0.5), "seed"),
        (lambda: nw_vs_attention(20, True, 0.5), "seed"),
        (lambda: nw_vs_attention(20, 1, float("nan")), "bandwidth"),
        (lambda: nw_vs_attention(20, 1, 0.0), "bandwidth"),
        (lambda: nw_vs_attention(20, 1, 0.5, n_queries=0), "n_queries"),
        (lambda: query_weights(20, 1, 0.5, float("nan")), "x0"),
        (lambda: query_weights(20, 1, 0.5, float("inf")), "x0"),
        (lambda: query_weights(20, 1, -0.5, 0.0), "bandwidth"),
        (lambda: random_dot_vs_gaussian(0, 2, 1.0, 0.0, 0), "n must"),
        (lambda: random_dot_vs_gaussian(3, 2, float("nan"), 0.0, 0), "temperature"),
        (lambda: random_dot_vs_gaussian(3, 2, 1.0, float("nan"), 0), "norm_spread"),
        (lambda: learned_bandwidth(1, 1, leave_one_out=True), "n must"),
        (lambda: learned_bandwidth(20, 1, leave_one_out=True, lr=float("nan")), "lr"),
        (lambda: learned_bandwidth(20, 1, leave_one_out=True, init_bandwidth=float("nan")), "init_bandwidth"),
        (lambda: learned_bandwidth(20, 1, leave_one_out=True, steps=0), "steps"),
        (lambda: learned_metric(1, 1, leave_one_out=True), "n must"),
        (lambda: learned_metric(20, -3, leave_one_out=True), "seed"),
        (lambda: learned_metric(20, 1, leave_one_out=True, lr=float("nan")), "lr"),
    ],
)
def test_invalid_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
