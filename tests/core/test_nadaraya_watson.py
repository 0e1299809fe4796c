"""Nadaraya-Watson core against independent references: statsmodels KernelReg (local constant),
brute-force per-query and leave-one-out loops written from the formula, and dense vs chunked paths."""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax
from statsmodels.nonparametric.kernel_regression import KernelReg
from statsmodels.sandbox.nonparametric import kernels as sm_kernels

from core.kernels import KERNELS, SUPPORT
from core.nadaraya_watson import (
    MAX_DENSE,
    count_turning_points,
    loo_cv_errors,
    nw_predict,
    nw_predict_loop,
    nw_weights,
    select_bandwidth,
)

#: Independent kernel formulas (statsmodels' sandbox), masked to their support by hand.
SM = {
    "uniform": sm_kernels.Uniform(),
    "triangular": sm_kernels.Triangular(),
    "epanechnikov": sm_kernels.Epanechnikov(),
    "cosine": sm_kernels.Cosine(),
    "tricube": sm_kernels.Tricube(),
    "gaussian": sm_kernels.Gaussian(),
    "biweight": sm_kernels.Biweight(),
    "laplace": stats.laplace.pdf,  # exp(-|u|)/2; statsmodels has no Laplace kernel
}
#: log K(u) up to a constant, written from the formulas, for the kernels that never vanish.
LOG_K = {"gaussian": lambda u: -0.5 * u * u, "laplace": lambda u: -np.abs(u)}


def ref_kernel(name: str, u: np.ndarray) -> np.ndarray:
    u = np.asarray(u, dtype=float)
    if math.isinf(SUPPORT[name]):
        return SM[name](u)
    inside = np.abs(u) <= 1
    out = np.zeros_like(u)
    out[inside] = SM[name](u[inside])
    return out


def brute_predict(x, y, q, name, h):
    """The formula, one query at a time, plain Python sums. The weights of a kernel that never
    vanishes (Gaussian, Laplace) are computed as scipy's softmax of log K(u) (the same weights,
    without underflow when every u is large)."""
    out = []
    for xq in q:
        u = (xq - x) / h
        if name in LOG_K:
            out.append(float(sum(softmax(LOG_K[name](u)) * y)))
            continue
        k = ref_kernel(name, u)
        total = float(sum(k))
        out.append(float(sum(k * y)) / total if total > 0 else math.nan)
    return np.array(out)


def brute_loo(x, y, name, h):
    """CV(h) by literally deleting each sample and refitting."""
    errs = []
    for i in range(x.size):
        xi, yi = np.delete(x, i), np.delete(y, i)
        pred = brute_predict(xi, yi, [x[i]], name, h)[0]
        if math.isnan(pred):
            return math.nan
        errs.append((y[i] - pred) ** 2)
    return float(np.mean(errs))


def posts_data():
    rng = np.random.default_rng(42)
    X = np.sort(rng.uniform(-3, 3, 200))
    y = np.sinc(X) + 0.1 * rng.normal(0, 1, 200)
    return X, y


def statsmodels_fit(x, y, q, h):
    kr = KernelReg(y, x, var_type="c", reg_type="lc", bw=[h], rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # its marginal effects, not the mean
        return kr.fit(q)[0]


# ---------------------------------------------------------------------------------------------
# against statsmodels and brute force
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h", [0.03, 0.1607, 0.3, 1.0, 2.5])
def test_predict_matches_statsmodels_kernelreg(h):
    x, y = posts_data()
    q = np.linspace(-3.5, 3.5, 301)  # beyond the data too
    ref = statsmodels_fit(x, y, q, h)
    np.testing.assert_allclose(nw_predict(x, y, q, "gaussian", h), ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(nw_weights(x, q, "gaussian", h) @ y, ref, rtol=0, atol=1e-8)


def test_statsmodels_bandwidth_convention_is_ours():
    """statsmodels scales u = (x - x_i)/h with the standard normal pdf; a single sample pair shows it."""
    x, y = np.array([0.0, 1.0]), np.array([0.0, 1.0])
    h = 0.7
    w1 = math.exp(-0.5 * (0.4 / h) ** 2)
    w0 = math.exp(-0.5 * (0.6 / h) ** 2)
    expected = w1 / (w0 + w1)  # at query 0.6
    assert statsmodels_fit(x, y, np.array([0.6]), h)[0] == pytest.approx(expected, abs=1e-14)
    assert nw_predict(x, y, [0.6], "gaussian", h)[0] == pytest.approx(expected, abs=1e-14)


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("h", [0.02, 0.25, 1.3])
def test_predict_and_weights_match_brute_force(name, h):
    rng = np.random.default_rng(1)
    x = rng.uniform(-3, 3, 60)
    y = np.sin(x) + rng.normal(0, 0.2, 60)
    q = np.concatenate([np.linspace(-4, 4, 41), x[:5]])  # include exact sample positions
    ref = brute_predict(x, y, q, name, h)
    got = nw_predict(x, y, q, name, h)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10)
    w = nw_weights(x, q, name, h)
    assert w.shape == (q.size, x.size)
    defined = ~np.isnan(ref)
    np.testing.assert_allclose(w[defined].sum(axis=1), 1.0, atol=1e-12)
    assert np.isnan(w[~defined]).all()
    np.testing.assert_allclose(w[defined] @ y, ref[defined], atol=1e-10)


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("chunk", [1, 7, 64, 10_000])
def test_chunked_equals_unchunked(name, chunk):
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, 300)
    y = x**2 + rng.normal(0, 0.1, 300)
    q = rng.uniform(-4, 4, 257)
    dense = nw_weights(x, q, name, 0.2) @ y
    got = nw_predict(x, y, q, name, 0.2, chunk_size=chunk)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(dense))
    np.testing.assert_allclose(got, dense, rtol=0, atol=1e-12, equal_nan=True)


def test_large_problem_never_builds_the_q_by_n_matrix():
    """N = Q = 100,000: the dense matrix would be 80 GB; peak memory must stay tiny."""
    rng = np.random.default_rng(3)
    n = 100_000
    x = rng.uniform(-3, 3, n)
    y = np.sinc(x) + 0.1 * rng.normal(0, 1, n)
    q = rng.uniform(-3.2, 3.2, n)
    for name, h in (("epanechnikov", 0.01), ("gaussian", 0.002)):
        tracemalloc.start()
        try:
            got = nw_predict(x, y, q, name, h)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert got.shape == (n,)
        assert peak < 64 * 2**20, f"{name}: peak {peak / 2**20:.0f} MiB"
        some = rng.choice(n, 40, replace=False)
        np.testing.assert_allclose(
            got[some], nw_weights(x, q[some], name, h) @ y, rtol=0, atol=1e-10, equal_nan=True
        )


def test_posts_loop_matches_vectorised():
    x, y = posts_data()
    q = np.linspace(-3, 3, 500)
    for h in (0.1, 0.3, 2.0):
        np.testing.assert_allclose(
            nw_predict_loop(x, y, q, h), nw_predict(x, y, q, "gaussian", h), atol=1e-12
        )


# ---------------------------------------------------------------------------------------------
# undefined fits: NaN for compact kernels, nearest neighbour for the Gaussian, never a warning
# ---------------------------------------------------------------------------------------------


def test_zero_weight_queries_are_nan_silently():
    x = np.array([0.0, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0])
    q = np.array([0.0, 0.5, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("uniform", "epanechnikov", "biweight", "triangular", "cosine", "tricube"):
            pred = nw_predict(x, y, q, name, 0.1)
            assert pred[0] == 1.0
            assert np.isnan(pred[1:]).all()
            w = nw_weights(x, q, name, 0.1)
            assert np.isnan(w[1:]).all()
            assert w[0].tolist() == [1.0, 0.0, 0.0]
            assert np.isnan(loo_cv_errors(x, y, name, [0.1, 0.5])[0])
            assert not np.isnan(loo_cv_errors(x, y, name, [0.1, 1.5])[1])


@pytest.mark.parametrize("name", ["gaussian", "laplace"])
def test_tiny_bandwidth_tends_to_nearest_neighbour(name):
    x = np.array([0.0, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0])
    q = np.array([-50.0, 0.9, 1.7, 400.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(nw_predict(x, y, q, name, 1e-3), [1.0, 2.0, 3.0, 3.0])
        assert np.isfinite(nw_weights(x, q, name, 1e-3)).all()
        # left out, x=0 and x=2 get y=2 (error 1 each); x=1 the mean of its two equidistant neighbours, 2
        np.testing.assert_allclose(loo_cv_errors(x, y, name, [1e-3]), [2 / 3], rtol=1e-15)
        # the post's unshifted loop underflows to 0/0 there
        assert np.isnan(nw_predict_loop(x, y, q, 1e-3)).all()


# ---------------------------------------------------------------------------------------------
# leave-one-out CV and bandwidth selection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(KERNELS))
def test_loo_matches_brute_force(name):
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 3, 40)
    y = np.cos(x) + rng.normal(0, 0.3, 40)
    hs = np.array([0.05, 0.2, 0.6, 2.0, 10.0])
    ref = np.array([brute_loo(x, y, name, h) for h in hs])
    got = loo_cv_errors(x, y, name, hs)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=1e-10, equal_nan=True)


def test_loo_matches_statsmodels_cv_loo():
    x, y = posts_data()
    kr = KernelReg(y, x, var_type="c", reg_type="lc", bw=[0.3], rng=0)
    hs = [0.05, 0.16, 0.4, 1.5]
    ref = [float(np.ravel(kr.cv_loo(np.array([h]), kr.est["lc"]))[0]) for h in hs]
    np.testing.assert_allclose(loo_cv_errors(x, y, "gaussian", hs), ref, rtol=1e-10)


@pytest.mark.parametrize("name", ["gaussian", "laplace", "biweight"])
def test_loo_with_large_n_uses_row_blocks(name):
    """N^2 above the cache size: blocks are recomputed; same numbers as the brute-force formula."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, 2500)
    y = np.sin(2 * x) + rng.normal(0, 0.2, 2500)
    h = 0.15
    k = ref_kernel(name, (x[:, None] - x[None, :]) / h)
    np.fill_diagonal(k, 0.0)
    ref = np.mean((y - k @ y / k.sum(axis=1)) ** 2)
    assert loo_cv_errors(x, y, name, [h])[0] == pytest.approx(ref, rel=1e-10)


def test_select_bandwidth_agrees_with_statsmodels_cv_ls():
    x, y = posts_data()
    kr = KernelReg(y, x, var_type="c", reg_type="lc", bw="cv_ls", rng=0)
    h_sm = abs(float(kr.bw[0]))  # fmin may return the negative of h (the kernel is even)
    h = select_bandwidth(x, y, "gaussian")
    cv_ours, cv_sm = loo_cv_errors(x, y, "gaussian", [h, h_sm])
    assert abs(h / h_sm - 1) < 0.01 or cv_ours <= cv_sm


@pytest.mark.parametrize("name", ["gaussian", "laplace", "uniform", "epanechnikov", "biweight", "tricube"])
@pytest.mark.parametrize("target", ["sinc", "chirp"])
def test_select_bandwidth_is_stable_to_one_percent(name, target):
    rng = np.random.default_rng(6)
    x = np.sort(rng.uniform(-3, 3, 150))
    f = np.sinc if target == "sinc" else (lambda t: np.sin(t * t))
    y = f(x) + 0.15 * rng.normal(0, 1, 150)
    h = select_bandwidth(x, y, name)
    # A much finer brute grid around h* (0.03% steps) must not find a clearly better bandwidth.
    grid = np.geomspace(h / 1.5, h * 1.5, 1400)
    cv = loo_cv_errors(x, y, name, grid)
    j = int(np.nanargmin(cv))
    (cv_h,) = loo_cv_errors(x, y, name, [h])
    assert abs(grid[j] / h - 1) < 0.01 or cv_h <= cv[j]
    # and no bandwidth on a wide coarse grid beats it
    wide = loo_cv_errors(x, y, name, np.geomspace(0.005, 6, 200))
    assert cv_h <= np.nanmin(wide) * (1 + 1e-9)


@pytest.mark.parametrize("name", ["gaussian", "laplace", "biweight"])
def test_select_bandwidth_matches_a_grid_search_over_the_loop(name):
    """h* against the best of a fine log grid (0.5% steps) of CV(h) computed by literally deleting
    each sample and refitting: no grid bandwidth is clearly better, and the best one is within 2%."""
    rng = np.random.default_rng(8)
    x = np.sort(rng.uniform(-3, 3, 40))
    y = np.sinc(x) + 0.15 * rng.normal(0, 1, 40)
    h = select_bandwidth(x, y, name)
    grid = np.geomspace(h / 1.25, h * 1.25, 90)
    cv = np.array([brute_loo(x, y, name, g) for g in grid])
    best = int(np.nanargmin(cv))
    cv_h = brute_loo(x, y, name, h)
    assert cv_h <= cv[best] * (1 + 1e-6)
    assert abs(grid[best] / h - 1) < 0.02
    coarse = np.geomspace(0.02, 6, 60)  # and no bandwidth far away beats it
    assert cv_h <= np.nanmin([brute_loo(x, y, name, g) for g in coarse]) * (1 + 1e-9)


def test_select_bandwidth_constant_signal_returns_a_large_h():
    rng = np.random.default_rng(7)
    x = np.sort(rng.uniform(0, 10, 100))
    y = rng.normal(0, 1, 100)  # pure noise: the best fit is (close to) the mean
    h = select_bandwidth(x, y)
    assert h > 1.0
    assert loo_cv_errors(x, y, "gaussian", [h])[0] <= loo_cv_errors(x, y, "gaussian", [0.3])[0]


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

X3 = np.array([0.0, 1.0, 2.0])
Y3 = np.array([1.0, 0.0, 1.0])


@pytest.mark.parametrize("h", [0, -0.1, float("nan"), float("inf"), -float("inf"), "0.3", None, True, [0.3]])
def test_bad_bandwidth(h):
    with pytest.raises(ValueError, match="bandwidth"):
        nw_predict(X3, Y3, X3, "gaussian", h)
    with pytest.raises(ValueError, match="bandwidth"):
        nw_weights(X3, X3, "gaussian", h)
    with pytest.raises(ValueError, match="bandwidth"):
        nw_predict_loop(X3, Y3, X3, h)


@pytest.mark.parametrize(
    "call",
    [
        lambda: nw_predict(X3, Y3, X3, "cauchy", 0.5),
        lambda: nw_weights(X3, X3, "cauchy", 0.5),
        lambda: loo_cv_errors(X3, Y3, "cauchy", [0.5]),
        lambda: select_bandwidth(X3, Y3, "cauchy"),
    ],
)
def test_unknown_kernel(call):
    with pytest.raises(ValueError, match=r"unknown kernel.*gaussian"):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: nw_predict(X3, Y3[:2], X3), "same length"),
        (lambda: loo_cv_errors(X3, Y3[:2]), "same length"),
        (lambda: select_bandwidth(X3[:2], Y3), "same length"),
        (lambda: nw_predict([], [], X3), "empty"),
        (lambda: nw_predict(X3, Y3, []), "empty"),
        (lambda: nw_weights([], X3), "empty"),
        (lambda: loo_cv_errors([], []), "empty"),
        (lambda: nw_predict([0, np.nan, 2], Y3, X3), "NaN or inf"),
        (lambda: nw_predict(X3, [0, np.inf, 2], X3), "NaN or inf"),
        (lambda: nw_predict(X3, Y3, [np.nan]), "NaN or inf"),
        (lambda: nw_weights(X3, [-np.inf]), "NaN or inf"),
        (lambda: loo_cv_errors(X3, [1, 2, np.nan]), "NaN or inf"),
        (lambda: select_bandwidth([np.nan, 1, 2], Y3), "NaN or inf"),
        (lambda: nw_predict(X3[:, None], Y3, X3), "1-D"),
        (lambda: nw_predict(X3, Y3, 0.5), "1-D"),
        (lambda: nw_predict(["a", "b", "c"], Y3, X3), "real numbers"),
        (lambda: nw_predict(X3, Y3, X3, chunk_size=0), "chunk_size"),
        (lambda: loo_cv_errors([1.0], [2.0]), "at least 2"),
        (lambda: loo_cv_errors(X3, Y3, "gaussian", [0.5, 0.0]), "bandwidth"),
        (lambda: loo_cv_errors(X3, Y3, "gaussian", [0.5, np.nan]), "NaN or inf"),
        (lambda: select_bandwidth([1.0, 1.0, 1.0], Y3), "no spread"),
        (lambda: nw_weights(np.zeros(MAX_DENSE // 1000 + 1), np.zeros(1000)), "too large"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------------------------
# wiggliness
# ---------------------------------------------------------------------------------------------


def test_count_turning_points():
    t = np.linspace(0, 4 * np.pi, 1000)
    assert count_turning_points(np.sin(t)) == 4  # maxima at π/2, 5π/2; minima at 3π/2, 7π/2
    assert count_turning_points(np.array([0, 0, 1, 1, 1, 0, 0.0])) == 1  # a plateau is one maximum
    assert count_turning_points(np.array([0, 1, np.nan, 2, 1, 3.0])) == 2  # NaN skipped
    assert count_turning_points(np.linspace(0, 1, 50)) == 0
    assert count_turning_points(np.ones(10)) == 0
    with pytest.raises(ValueError, match="1-D"):
        count_turning_points(np.ones((2, 2)))
