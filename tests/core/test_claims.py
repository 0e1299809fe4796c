"""core.claims: the post's claims measured on its data, against brute-force references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core import claims
from core.data import post_data
from core.nadaraya_watson import nw_predict


def _loo_cv_by_hand(x: np.ndarray, y: np.ndarray, h: float) -> float:
    """Leave-one-out CV of the Gaussian NW fit, one point at a time (the definition)."""
    errors = []
    for i in range(x.size):
        keep = np.arange(x.size) != i
        w = np.exp(-0.5 * ((x[i] - x[keep]) / h) ** 2)
        errors.append((y[i] - w @ y[keep] / w.sum()) ** 2)
    return float(np.mean(errors))


@pytest.fixture(scope="module")
def found() -> claims.PostClaims:
    return claims.post_claims()


def test_gaussian_cv_at_the_claimed_bandwidths_matches_the_definition(found):
    d = post_data()
    for h, cv in found.claim_cv:
        assert cv == pytest.approx(_loo_cv_by_hand(d.x, d.y, h), rel=1e-9)
    assert [h for h, _ in found.claim_cv] == [0.2, claims.POST_H, 0.4]


def test_the_gaussian_optimum_lies_below_the_claimed_range(found):
    d = post_data()
    h_star, cv_star = found.best["gaussian"]
    assert not found.in_claimed_range("gaussian")
    assert h_star < claims.POST_CLAIM[0]
    # a minimum: better than its neighbours and than every h the post names
    for h in (0.9 * h_star, 1.1 * h_star, 0.2, 0.3, 0.4):
        assert cv_star <= _loo_cv_by_hand(d.x, d.y, h) + 1e-12
    assert set(found.best) == {
        "gaussian",
        "laplace",
        "uniform",
        "epanechnikov",
        "biweight",
        "triangular",
        "cosine",
        "tricube",
    }


def test_turning_points_and_sweep(found):
    d = post_data()
    grid = np.linspace(-3, 3, claims.FIT_POINTS)
    fit = nw_predict(d.x, d.y, grid, "uniform", claims.POST_H)
    slope = np.sign(np.diff(fit[~np.isnan(fit)]))
    slope = slope[slope != 0]
    by_hand = int(np.count_nonzero(slope[1:] != slope[:-1]))
    assert found.turning_points_at_post_h["uniform"] == by_hand
    assert found.turning_points_at_post_h["uniform"] > found.turning_points_at_post_h["gaussian"]
    assert [p.h for p in found.sweep] == list(claims.SWEEP)
    tps = [p.turning_points for p in found.sweep]
    assert tps == sorted(tps, reverse=True)  # wider h, smoother fit


def test_loop_vs_matrix_timing_agrees_and_rejects_bad_input():
    d = post_data()
    grid = np.linspace(-3, 3, 50)
    r = claims.time_loop_vs_matrix(d.x, d.y, grid, 0.3, repeat=1)
    assert r.points == 50
    assert r.samples == d.x.size
    assert r.max_diff < 1e-12
    assert r.loop_nan == r.vector_nan == 0
    assert r.speedup == pytest.approx(r.loop_s / r.vector_s)
    assert math.isfinite(r.speedup)
    with pytest.raises(ValueError, match="repeat"):
        claims.time_loop_vs_matrix(d.x, d.y, grid, 0.3, repeat=0)
