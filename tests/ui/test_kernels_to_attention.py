"""ui.kernels_to_attention's texts: each quotes the numbers of the run it is given (English catalogue)."""

from __future__ import annotations

import pytest

from core.lessons import kernels_to_attention as k2a
from ui import kernels_to_attention as lesson_ui
from ui.i18n import load_catalogue

EN = load_catalogue("en")
RUN = {"steps": 20, "lr": 0.05, "init_bandwidth": 1.0}


@pytest.fixture(scope="module")
def bandwidths() -> k2a.BandwidthLearning:
    fits = (k2a.learned_bandwidth(30, 3, leave_one_out=loo, **RUN) for loo in (True, False))
    return k2a.bandwidth_learning(*fits)


@pytest.fixture(scope="module")
def metrics() -> k2a.MetricLearning:
    return k2a.MetricLearning(*(k2a.learned_metric(30, 3, leave_one_out=loo, **RUN) for loo in (True, False)))


def test_objective_names_are_the_catalogues_in_the_order_of_fits():
    assert lesson_ui.objective_names() == (EN["k2a.name_loo"], EN["k2a.name_no_loo"])


def test_the_1d_pitfall_and_the_question_quote_the_same_test_errors(bandwidths):
    loo, no_loo = bandwidths.fits
    text = lesson_ui.pitfall(bandwidths)
    for number in (f"{no_loo.fit.bandwidth:.1e}", f"{loo.fit.bandwidth:.3f}", f"{bandwidths.h_cv:.3f}"):
        assert number in text
    explain = lesson_ui.no_loo_explain(bandwidths)
    assert explain["test_loo"] == f"{loo.test_mse:.4f}"
    assert explain["test_no"] == f"{no_loo.test_mse:.4f}"
    assert explain["test_loo"] in text
    assert explain["test_no"] in text
    assert explain["h_no"] == f"{no_loo.fit.bandwidth:.2e}"
    assert explain["h_loo"] == f"{loo.fit.bandwidth:.3f}"


def test_the_2d_pitfall_quotes_both_length_scales_and_test_errors(metrics):
    loo, no_loo = metrics.fits
    text = lesson_ui.pitfall(metrics)
    assert text.startswith(EN["k2a.pitfall_2d"][:12])
    for number in (
        f"{loo.fit.length_scales[0]:.3f}",
        f"{no_loo.fit.length_scales[1]:.2e}",
        f"{loo.test_mse:.4f}",
        f"{no_loo.test_mse:.4f}",
    ):
        assert number in text


def test_the_tau_explanation_quotes_h_squared():
    grid = k2a.nw_vs_attention(40, 0, 0.3)
    assert lesson_ui.tau_explain(0.3, grid) == {
        "h": 0.3,
        "tau": "0.09",
        "diff": f"{grid.max_diff_weights:.1e}",
    }
