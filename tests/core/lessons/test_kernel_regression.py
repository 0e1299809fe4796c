"""core.lessons.kernel_regression: the post's claims measured on its data, and the page's arithmetic
around its fit, against brute-force references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.csv_data import CsvError
from core.data import make_data, post_data
from core.kernels import KERNELS
from core.lessons import kernel_regression as claims
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


# --- the page's arithmetic around its fit ------------------------------------------------------


def test_synthetic_data_is_make_data_with_its_truth_on_the_posts_grid():
    page = claims.synthetic_data(50, 0.2, 3, "sinc")
    d = make_data(n=50, noise=0.2, seed=3, target="sinc")
    np.testing.assert_array_equal(page.x, d.x)
    np.testing.assert_array_equal(page.y, d.y)
    assert page.grid.size == claims.FIT_POINTS
    assert (page.grid[0], page.grid[-1]) == (-3.0, 3.0)
    np.testing.assert_allclose(page.truth, np.sinc(page.grid))
    assert (page.scale, page.uploaded) == (1.0, False)


def test_uploaded_data_spans_the_files_x_and_refuses_a_file_without_spread():
    page = claims.uploaded_data(b"x,y\n1,0\n4,1\n7,0\n", max_rows=10)
    np.testing.assert_array_equal(page.x, [1.0, 4.0, 7.0])
    assert (page.grid[0], page.grid[-1], page.grid.size) == (1.0, 7.0, claims.FIT_POINTS)
    assert (page.truth, page.scale, page.uploaded) == (None, 1.0, True)
    with pytest.raises(CsvError) as err:
        claims.uploaded_data(b"2,0\n2,1\n", max_rows=10)
    assert err.value.code == "no_spread"


def test_snap_picks_the_nearest_grid_value_on_a_log_scale():
    grid = [0.1, 0.2, 0.5, 1.0, 2.0]
    for value in (0.09, 0.14, 0.15, 0.3, 0.33, 0.7, 0.72, 1.5, 5.0):
        by_hand = min(grid, key=lambda g: abs(math.log(g) - math.log(value)))
        assert claims.snap(value, grid) == by_hand
    assert (
        claims.snap(0.3, grid) == 0.2
    )  # log-nearest (0.3/0.2 = 1.5 < 0.5/0.3 = 1.67), not 0.2 vs 0.5 linearly


def test_best_bandwidth_is_the_loo_optimum_with_its_cv_error():
    d = post_data()
    h, cv = claims.best_bandwidth(d.x, d.y, "gaussian")
    assert cv == pytest.approx(_loo_cv_by_hand(d.x, d.y, h), rel=1e-9)
    assert cv <= min(_loo_cv_by_hand(d.x, d.y, f * h) for f in (0.9, 1.1))


def test_query_row_is_the_normalised_kernel_row_and_its_estimate():
    d = make_data(n=40, noise=0.1, seed=1)
    row = claims.query_row(d.x, d.y, 0.25, "gaussian", 0.4)
    k = np.exp(-0.5 * ((0.25 - d.x) / 0.4) ** 2)
    np.testing.assert_allclose(row.weights, k / k.sum(), rtol=1e-12)
    assert row.y_hat == pytest.approx(float(k @ d.y / k.sum()), rel=1e-12)
    assert row.active == sum(1 for w in k / k.sum() if w > 1e-3 * (k / k.sum()).max())
    # a query out of every sample's reach: undefined, nothing active
    empty = claims.query_row(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 5.0, "uniform", 0.1)
    assert math.isnan(empty.y_hat)
    assert empty.active == 0


def test_grids_nearest_row_kernel_shapes_and_undefined_fraction():
    grid = np.linspace(-2.0, 4.0, 500)
    queries = claims.heatmap_queries(grid)
    assert queries.size == claims.HEATMAP_QUERIES
    assert (queries[0], queries[-1]) == (-2.0, 4.0)
    for xq in (-5.0, -1.37, 0.0, 2.51, 9.0):
        by_hand = min(range(queries.size), key=lambda i: abs(queries[i] - xq))
        assert claims.nearest_row(queries, xq) == by_hand
    shapes = claims.kernel_shapes(claims.KERNEL_U)
    assert set(shapes) == set(KERNELS)
    for name, values in shapes.items():
        np.testing.assert_array_equal(values, KERNELS[name](claims.KERNEL_U))
    assert claims.undefined_fraction(np.array([1.0, np.nan, 2.0, np.nan])) == (2, 4)
