"""The kernels-to-attention page in AppTest: every control, both languages, odd URL values."""

from __future__ import annotations

import pytest

from tests.app.conftest import assert_clean, charts, open_page
from tests.app.live import live_slider
from ui.i18n import load_catalogue

PAGE = "kernels-to-attention"
EN = load_catalogue("en")
#: Smaller training so the tests stay fast (the page defaults to N = 200, 300 steps).
FAST = {"k2a_steps": "250", "k2a_n": "100"}


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _charts(at) -> int:
    return len(charts(at))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_in_both_languages(lang):
    at = open_page(PAGE, lang=lang, params=FAST)
    assert_clean(at)
    title = at.title[0].value
    assert ("From kernels to attention" in title) if lang == "en" else ("从核函数到注意力" in title)
    assert _charts(at) >= 8
    assert len(at.table) >= 2  # the mapping table and the learned-bandwidth table


def test_bridge_numbers_are_rounding_sized_for_every_bandwidth():
    at = open_page(PAGE, params=FAST)
    for h in (0.02, 0.3, 2.0):
        live_slider(at, "k2a_h").set_value(h).run()
        assert_clean(at)
        m = _metrics(at)
        assert float(m["Largest weight difference"]) < 1e-13
        assert float(m["Largest fit difference"]) < 1e-13
        assert float(m["Temperature τ = h²"]) == pytest.approx(h * h, rel=1e-3)
    live_slider(at, "k2a_x0").set_value(-2.5).run()
    at.slider(key="k2a_n").set_value(60).run()
    at.number_input(key="k2a_seed").set_value(3).run()
    assert_clean(at)
    assert "x = -2.5" in " ".join(_metrics(at))


def test_dot_vs_distance_controls():
    at = open_page(PAGE, params=FAST)
    assert float(_metrics(at)["Largest |dot − Gaussian| weight"]) < 1e-14
    assert at.success, "unit norms: the identity is announced"
    at.select_slider(key="k2a_tau").set_value(0.1).run()
    at.select_slider(key="k2a_dim").set_value(32).run()
    assert float(_metrics(at)["Largest |dot − Gaussian| weight"]) < 1e-14
    charts_before = _charts(at)
    at.slider(key="k2a_spread").set_value(1.0).run()
    assert_clean(at)
    assert float(_metrics(at)["Largest |dot − Gaussian| weight"]) > 1e-3
    assert at.warning
    assert _charts(at) == charts_before + 1  # the key-norm chart appears


def test_learnable_bandwidth_shows_the_pitfall():
    at = open_page(PAGE, params=FAST)
    assert_clean(at)
    m = _metrics(at)
    h_loo = float(m["Learned h, leave-one-out"])
    h_cv = float(m["LOO-CV h (kernel regression page)"])
    h_no = float(m["Learned h, point included"])
    assert h_no < 0.1 * h_loo
    assert h_loo == pytest.approx(h_cv, rel=0.1)
    table = at.table[-1].value
    train = table.iloc[:, 2].astype(float).tolist()
    test = table.iloc[:, 3].astype(float).tolist()
    assert train[1] < 0.2 * train[0]  # point included: a better training score...
    assert test[1] > test[0]  # ...and a worse error on fresh data
    shown = at.table[-1].value.copy()
    at.select_slider(key="k2a_lr").set_value(0.1).run()
    at.select_slider(key="k2a_h0").set_value(0.5).run()
    at.slider(key="k2a_steps").set_value(150).run()
    assert_clean(at)
    # a slider step never trains: the last result stays, with a note and the button to learn
    assert at.table[-1].value.equals(shown)
    stale = EN["k2a.learn_stale"].split("(")[0]
    assert any(stale in i.value for i in at.info)
    assert not at.button(key="k2a_learn_run").disabled
    at.button(key="k2a_learn_run").click().run()
    assert_clean(at)
    assert not at.table[-1].value.equals(shown)
    assert at.button(key="k2a_learn_run").disabled  # the result shown is the controls' own
    assert not any(stale in i.value for i in at.info)


def test_learnable_metric_in_two_dimensions():
    at = open_page(PAGE, params=FAST)
    at.radio(key="k2a_dims").set_value("2d").run()
    at.button(key="k2a_learn_run").click().run()
    assert_clean(at)
    table = at.table[-1].value
    ls1 = table.iloc[:, 1].astype(float).tolist()
    ls2 = table.iloc[:, 2].astype(float).tolist()
    assert ls2[0] > 5 * ls1[0]  # leave-one-out: x2 (irrelevant) gets a long length scale
    assert max(ls1[1], ls2[1]) < ls1[0]  # point included: both collapse


def test_two_dimensional_choice_from_a_url():
    at = open_page(PAGE, params={**FAST, "k2a_dims": EN["k2a.dims_2d"]})
    assert_clean(at)
    assert at.radio(key="k2a_dims").value == "2d"


@pytest.mark.parametrize(
    "params",
    [
        {"k2a_h": "0", "k2a_x0": "1e9", "k2a_n": "100000", "k2a_seed": "-5"},
        {"k2a_h": "-1", "k2a_tau": "abc", "k2a_spread": "99", "k2a_dim": "3"},
        {"k2a_steps": "1000000", "k2a_lr": "5", "k2a_h0": "0", "k2a_dims": "3d"},
    ],
)
def test_odd_url_values_never_break_the_page(params):
    at = open_page(PAGE, params={**FAST, **params})
    assert_clean(at)
    assert _charts(at) >= 8
