"""Synthetic data: the post's set reproduced literally, every target, every bad argument."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import TARGETS, Dataset, make_data, post_data


def _posts_code():
    # section 2.4 of the post, verbatim
    rng = np.random.default_rng(42)
    X = np.sort(rng.uniform(-3, 3, 200))
    y = np.sinc(X) + 0.1 * rng.normal(0, 1, 200)
    return X, y


def test_defaults_are_the_posts_data_bit_for_bit():
    X, y = _posts_code()
    for d in (make_data(), post_data()):
        np.testing.assert_array_equal(d.x, X)
        np.testing.assert_array_equal(d.y, y)
        assert d.target == "sinc"
        assert d.noise == 0.1


def test_sinc_is_the_normalised_sinc():
    x = np.linspace(0.1, 3, 30)
    np.testing.assert_allclose(TARGETS["sinc"](x), np.sin(np.pi * x) / (np.pi * x), rtol=1e-14)


@pytest.mark.parametrize("target", list(TARGETS))
def test_every_target(target):
    d = make_data(n=123, noise=0.0, seed=7, target=target)
    assert isinstance(d, Dataset)
    assert d.x.shape == d.y.shape == (123,)
    assert (np.diff(d.x) >= 0).all()
    assert d.x.min() >= -3
    assert d.x.max() <= 3
    np.testing.assert_array_equal(d.y, TARGETS[target](d.x))  # noise 0: y is the truth
    np.testing.assert_array_equal(d.truth(d.x), TARGETS[target](d.x))


def test_reference_functions():
    x = np.array([-2.0, -0.5, 0.5, 2.0])
    np.testing.assert_allclose(TARGETS["sine"](x), np.sin(x))
    np.testing.assert_allclose(TARGETS["step"](x), [-0.5, -0.5, 0.5, 0.5])
    np.testing.assert_allclose(TARGETS["vee"](x), [2 / 3, 1 / 6, 1 / 6, 2 / 3])
    np.testing.assert_allclose(TARGETS["chirp"](x), np.sin(x**2))


def test_noise_level_and_seed():
    a = make_data(n=20_000, noise=0.5, seed=3, target="sine")
    assert np.std(a.y - np.sin(a.x)) == pytest.approx(0.5, rel=0.03)
    b = make_data(n=20_000, noise=0.5, seed=3, target="sine")
    c = make_data(n=20_000, noise=0.5, seed=4, target="sine")
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"target": "cosh"},
        {"target": None},
        {"n": 0},
        {"n": -5},
        {"n": 2.5},
        {"n": True},
        {"n": 10**7},
        {"noise": -0.1},
        {"noise": float("nan")},
        {"noise": float("inf")},
        {"noise": "0.1"},
        {"seed": -1},
        {"seed": 1.5},
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=r"target|n must|noise|seed"):
        make_data(**kwargs)
