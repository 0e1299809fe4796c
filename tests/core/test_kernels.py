"""Kernel registry: shape, symmetry, support, normalisation, against statsmodels' sandbox kernels
and scipy; the records' properties; the shared stable-softmax (Gaussian-weights) helper."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from scipy import integrate, special, stats
from statsmodels.sandbox.nonparametric import kernels as sm_kernels

import core.nadaraya_watson
from core.kernels import (
    FORMULAS,
    KERNELS,
    NAMES,
    REGISTRY,
    SUPPORT,
    Kernel,
    check_kernel,
    gaussian,
    gaussian_weights,
    get_kernel,
    softmax_weights,
    support_radius,
)

#: our name -> statsmodels sandbox kernel class (an independent implementation of each formula)
SM = {
    "uniform": sm_kernels.Uniform,
    "triangular": sm_kernels.Triangular,
    "epanechnikov": sm_kernels.Epanechnikov,
    "cosine": sm_kernels.Cosine,
    "tricube": sm_kernels.Tricube,
    "gaussian": sm_kernels.Gaussian,
    "biweight": sm_kernels.Biweight,
    "laplace": lambda: stats.laplace.pdf,  # scipy's density exp(-|u|)/2 (statsmodels has none)
}


def test_registry_has_the_posts_kernels_and_metadata():
    assert {"uniform", "gaussian", "epanechnikov"} <= set(KERNELS)
    assert set(KERNELS) == set(SUPPORT) == set(FORMULAS) == set(SM)


@pytest.mark.parametrize("name", list(KERNELS))
def test_matches_statsmodels_inside_the_support(name):
    u = np.linspace(-0.999, 0.999, 101) if SUPPORT[name] == 1 else np.linspace(-6, 6, 101)
    np.testing.assert_allclose(KERNELS[name](u), SM[name]()(u), rtol=1e-12, atol=0)


def test_gaussian_is_the_standard_normal_pdf():
    u = np.linspace(-10, 10, 201)
    np.testing.assert_allclose(KERNELS["gaussian"](u), stats.norm.pdf(u), rtol=1e-12)


@pytest.mark.parametrize("name", list(KERNELS))
def test_symmetric_non_negative_and_shape_preserving(name):
    u = np.random.default_rng(0).normal(0, 1.5, size=(7, 9))
    k = KERNELS[name](u)
    assert k.shape == u.shape
    np.testing.assert_array_equal(k, KERNELS[name](-u))
    assert (k >= 0).all()


@pytest.mark.parametrize("name", list(KERNELS))
def test_support(name):
    r = SUPPORT[name]
    outside = np.array([1.0000001, 1.5, 3.0, 100.0])
    inside = np.array([0.0, 0.25, 0.5, 0.9])
    if math.isinf(r):
        assert (KERNELS[name](np.linspace(-30, 30, 61)) > 0).all()
    else:
        assert r == 1.0
        np.testing.assert_array_equal(KERNELS[name](outside), 0.0)
        np.testing.assert_array_equal(KERNELS[name](-outside), 0.0)
        assert (KERNELS[name](inside) > 0).all()


@pytest.mark.parametrize("name", list(KERNELS))
def test_integrates_to_one(name):
    r = SUPPORT[name]
    f = lambda u: float(KERNELS[name](np.array(u)))  # noqa: E731
    if math.isinf(r):
        total, _ = integrate.quad(f, -np.inf, np.inf, epsabs=1e-12)
    else:
        total, _ = integrate.quad(f, -r, r, epsabs=1e-12, points=[0.0])
    assert total == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("bad", ["cauchy", "Gaussian", "", None, 3])
def test_unknown_kernel_lists_the_known_ones(bad):
    for fn in (check_kernel, get_kernel, support_radius):
        with pytest.raises(ValueError, match="unknown kernel") as err:
            fn(bad)
        assert "gaussian" in str(err.value)
        assert "epanechnikov" in str(err.value)


def test_lookups():
    assert get_kernel("epanechnikov").fn is KERNELS["epanechnikov"]
    assert get_kernel("biweight").formula == FORMULAS["biweight"]
    assert support_radius("gaussian") == math.inf
    assert support_radius("laplace") == math.inf
    assert support_radius("tricube") == 1.0


# ---------------------------------------------------------------------------------------------
# the records: one tuple, properties consistent with the functions
# ---------------------------------------------------------------------------------------------


def test_registry_is_one_tuple_of_records_and_the_views_follow_it():
    assert isinstance(REGISTRY, tuple)
    assert all(isinstance(k, Kernel) for k in REGISTRY)
    assert NAMES == tuple(k.name for k in REGISTRY) == tuple(KERNELS)
    assert len(set(NAMES)) == len(NAMES) == 8
    assert NAMES[0] == "gaussian"  # the page's default
    for k in REGISTRY:
        assert KERNELS[k.name] is k.fn
        assert SUPPORT[k.name] == k.support
        assert FORMULAS[k.name] == k.formula
    with pytest.raises(TypeError):
        KERNELS["box"] = KERNELS["uniform"]  # type: ignore[index]


@pytest.mark.parametrize("name", list(KERNELS))
def test_log_fn_is_log_k_up_to_a_constant(name):
    k = get_kernel(name)
    u = np.linspace(-8, 8, 161) if not k.compact else np.linspace(-0.99, 0.99, 67)
    if k.compact:
        assert k.log_fn is None
        assert k.log_power is None
        with pytest.raises(ValueError, match="compact"):
            k.log_weights(u, 1.0)
        return
    diff = k.log_fn(u) - np.log(k.fn(u))
    np.testing.assert_allclose(diff, diff[0], rtol=0, atol=1e-12)
    assert k.log_fn(np.array(0.0)) == 0.0
    # log_weights(d, h) is log_fn(d / h)
    np.testing.assert_allclose(k.log_weights(u, 0.37), k.log_fn(u / 0.37), rtol=1e-13)


def test_properties_the_regression_code_branches_on():
    assert [k.name for k in REGISTRY if not k.compact] == ["gaussian", "laplace"]
    assert [k.name for k in REGISTRY if k.piecewise_constant] == ["uniform"]
    assert get_kernel("gaussian").log_power == 2.0
    assert get_kernel("laplace").log_power == 1.0
    u = np.linspace(-0.99, 0.99, 11)
    assert np.unique(get_kernel("uniform").fn(u)).size == 1  # constant on its support


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"support": math.inf}, "log_power"),  # would silently take the compact path
        ({"support": 1.0, "log_power": 2.0}, "log_power"),
        ({"support": math.inf, "log_power": 0.0}, "log_power"),
        ({"support": 0.0}, "support"),
        ({"support": math.inf, "log_power": 1.0, "piecewise_constant": True}, "compact"),
    ],
)
def test_inconsistent_records_are_refused(fields, match):
    with pytest.raises(ValueError, match=match):
        Kernel("odd", gaussian, formula="K", **fields)


def test_regression_code_never_branches_on_a_kernel_name():
    """Properties, not names: a new kernel must not fall into another kernel's branch."""
    source = inspect.getsource(core.nadaraya_watson)
    names = "|".join(NAMES)
    assert not re.search(rf"""[!=]=\s*["']({names})["']""", source)
    assert not re.search(rf"""["']({names})["']\s*[!=]=""", source)
    assert not re.search(r"KERNELS|SUPPORT\[", source)


# ---------------------------------------------------------------------------------------------
# the shared stable-softmax helper
# ---------------------------------------------------------------------------------------------


def test_softmax_weights_match_scipy_and_a_loop():
    rng = np.random.default_rng(0)
    log_k = rng.normal(0, 3, size=(2, 5, 7))
    np.testing.assert_allclose(softmax_weights(log_k), special.softmax(log_k, axis=-1), rtol=1e-13)
    loop = np.empty_like(log_k)
    for idx in np.ndindex(*log_k.shape[:-1]):
        e = [math.exp(v - max(log_k[idx])) for v in log_k[idx]]
        loop[idx] = e
    np.testing.assert_allclose(softmax_weights(log_k, normalise=False), loop, rtol=1e-13)
    before = log_k.copy()
    softmax_weights(log_k)
    np.testing.assert_array_equal(log_k, before)  # not overwritten unless asked
    shifted = log_k - log_k.max(axis=-1, keepdims=True)
    np.testing.assert_allclose(softmax_weights(shifted, shift=False), special.softmax(log_k, axis=-1))
    out = softmax_weights(shifted, overwrite=True)
    assert out is shifted


def test_softmax_weights_never_underflow_and_mask_minus_inf():
    log_k = np.array([[-5000.0, -5001.0, -np.inf], [-np.inf, 0.0, -1e300]])
    w = softmax_weights(log_k)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w[0], [1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1)), 0.0])
    np.testing.assert_array_equal(w[1], [0.0, 1.0, 0.0])


def test_gaussian_weights_are_normalised_gaussian_kernel_values():
    rng = np.random.default_rng(1)
    xq, xt = rng.uniform(-3, 3, 9), rng.uniform(-3, 3, 13)
    d2 = (xq[:, None] - xt[None, :]) ** 2
    for h in (0.05, 0.4, 3.0):
        k = stats.norm.pdf((xq[:, None] - xt[None, :]) / h)
        np.testing.assert_allclose(gaussian_weights(d2, h), k / k.sum(axis=1, keepdims=True), rtol=1e-12)
    # a bandwidth per row, inf = the plain mean, +inf distance = left out
    hs = np.array([0.3, np.inf])[:, None]
    w = gaussian_weights(d2[:2], hs)
    np.testing.assert_allclose(w[0], gaussian_weights(d2[0], 0.3))
    np.testing.assert_allclose(w[1], np.full(13, 1 / 13))
    d2[0, 0] = np.inf
    assert gaussian_weights(d2, 0.4)[0, 0] == 0.0
    # a tiny h: nearest neighbour, not 0/0
    assert gaussian_weights(np.array([[4.0, 1.0, 9.0]]), 1e-4).tolist() == [[0.0, 1.0, 0.0]]
