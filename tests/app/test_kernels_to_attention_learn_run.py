"""The learnable-kernel section's Run button and its cached training (ui.kernels_to_attention.k2a_learn)."""

from __future__ import annotations

from core.lessons.kernels_to_attention import BandwidthLearning, MetricLearning
from tests.app.conftest import assert_clean, open_page
from ui import kernels_to_attention as ua
from ui.i18n import load_catalogue

PAGE = "kernels-to-attention"
EN = load_catalogue("en")
FAST = {"k2a_steps": "250", "k2a_n": "100"}


def test_a_rerun_elsewhere_keeps_the_result_current():
    """The run kept in session state still equals the controls' run after any rerun of the page.

    (A run class defined in the page script is a new class on every rerun, so the kept run never
    equalled the new one: every rerun announced the shown result as stale.)
    """
    at = open_page(PAGE, params=FAST)
    shown = at.table[-1].value.copy()
    stale = EN["k2a.learn_stale"].split("(")[0]
    for step in (lambda: at.select_slider(key="k2a_h").set_value(0.5), lambda: at):
        step().run()
        assert_clean(at)
        assert at.button(key="k2a_learn_run").disabled
        assert not any(stale in i.value for i in at.info)
        assert at.table[-1].value.equals(shown)


def test_k2a_learn_reports_progress_and_caches_each_fit():
    run = ua.LearnRun("1d", n=37, seed=123, steps=7, lr=0.05, h0=1.0)
    cache = ua._learned_bandwidth
    misses = cache.misses
    calls: list[int] = []
    res = ua.k2a_learn(run, on_fit=calls.append)
    assert calls == [1, 2]
    assert isinstance(res, BandwidthLearning)
    assert [f.fit.leave_one_out for f in res.fits] == [True, False]
    assert cache.misses == misses + 2  # two fits, two entries
    hits = cache.hits
    calls.clear()
    again = ua.k2a_learn(run, on_fit=calls.append)
    assert calls == [1, 2]
    assert cache.hits == hits + 2
    assert cache.misses == misses + 2
    assert again.loo.fit.bandwidth == res.loo.fit.bandwidth
    metric = ua.k2a_learn(ua.LearnRun("2d", n=37, seed=123, steps=7, lr=0.05, h0=1.0))
    assert isinstance(metric, MetricLearning)
    assert [f.fit.leave_one_out for f in metric.fits] == [True, False]
