"""Kernel registry: shape, symmetry, support, normalisation, against statsmodels' sandbox kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from statsmodels.sandbox.nonparametric import kernels as sm_kernels

from core.kernels import FORMULAS, KERNELS, SUPPORT, check_kernel, get_kernel, support_radius

#: our name -> statsmodels sandbox kernel class (an independent implementation of each formula)
SM = {
    "uniform": sm_kernels.Uniform,
    "triangular": sm_kernels.Triangular,
    "epanechnikov": sm_kernels.Epanechnikov,
    "cosine": sm_kernels.Cosine,
    "tricube": sm_kernels.Tricube,
    "gaussian": sm_kernels.Gaussian,
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


@pytest.mark.parametrize("bad", ["laplace", "Gaussian", "", None, 3])
def test_unknown_kernel_lists_the_known_ones(bad):
    for fn in (check_kernel, get_kernel, support_radius):
        with pytest.raises(ValueError, match="unknown kernel") as err:
            fn(bad)
        assert "gaussian" in str(err.value)
        assert "epanechnikov" in str(err.value)


def test_lookups():
    assert get_kernel("epanechnikov") is KERNELS["epanechnikov"]
    assert support_radius("gaussian") == math.inf
    assert support_radius("tricube") == 1.0
