"""Live sliders (``ui.live_slider``) in AppTest: every one keyed and kept in the URL, links read and
refused as for any control, the commit callback's checks, and the release-only path (``?live=0``).

AppTest runs no JavaScript: a test commits a value as the component's release does, into session
state before a run (``tests/app/live.py``). The drag itself is tested in Chromium
(``tests/e2e/test_live_drag.py``), the browser's math against ``core`` in ``test_live_math.py``.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from lessons import PAGES
from tests.app.conftest import assert_clean, charts, open_page
from tests.app.live import live_elements, live_slider
from ui.i18n import load_catalogue
from ui.live_slider import url_text

#: The live sliders of the app, by page (issue 25: where the story is).
LIVE = {
    "kernel-regression": {"kr_h", "kr_xq"},
    "kernels-to-attention": {"k2a_h", "k2a_x0"},
    "scaled-dot-product": {"sdp_dk"},
}


def _other_value(data: dict) -> float:
    """A value of the slider other than the one it shows."""
    if data.get("options"):
        options = data["options"]
        return options[1] if options[0] == data["value"] else options[0]
    return data["min"] if data["value"] != data["min"] else data["max"]


@pytest.mark.parametrize("page", [p.url_path for p in PAGES])
def test_every_live_slider_is_keyed_and_kept_in_the_url(page):
    at = open_page(page, folded=True)
    assert_clean(at)
    sliders = live_elements(at)
    assert set(sliders) == LIVE.get(page, set())
    for key, data in sliders.items():
        assert data["label"], key
        assert data["targets"], key
        assert key not in at.query_params  # the default is not written
        value = _other_value(data)
        live_slider(at, key).set_value(value).run()
        assert_clean(at)
        assert live_slider(at, key).value == value
        assert at.query_params[key] == url_text(value), key  # as a bound control writes it
        live_slider(at, key).set_value(data["value"]).run()  # back to the default: out of the URL
        assert key not in at.query_params


@pytest.mark.parametrize("page", sorted(LIVE))
def test_the_sliders_are_kept_in_view_on_the_scrolling_page_not_while_presenting(page):
    """The browser pins a live slider at the window's bottom once its place has scrolled away (the
    dock, static/live/live.js) only where the data allows it: the scrolling page, not presentation
    mode, whose controls are in the slide bar's box."""
    scrolling = live_elements(open_page(page, folded=True))
    assert scrolling
    assert all(d["dock"] is True for d in scrolling.values()), scrolling
    at = open_page(page, folded=True, params={"present": "1"})
    assert_clean(at)
    presenting = live_elements(at)
    assert set(presenting) == set(scrolling)  # drawn in the slide bar's box
    assert all(d["dock"] is False for d in presenting.values()), presenting


def test_the_temperature_is_live_in_custom_scale():
    at = open_page("scaled-dot-product", params={"sdp_scale": "custom", "sdp_temp": "0.5"}, folded=True)
    assert_clean(at)
    assert set(live_elements(at)) == {"sdp_dk", "sdp_temp"}
    assert live_slider(at, "sdp_temp").value == 0.5


@pytest.mark.parametrize(
    ("page", "params", "key", "shown"),
    [
        ("kernel-regression", {"kr_h": "1"}, "kr_h", 1.0),
        ("kernel-regression", {"kr_h": "1.0"}, "kr_h", 1.0),
        ("kernel-regression", {"kr_xq": "-1.5"}, "kr_xq", -1.5),
        ("kernel-regression", {"kr_xq": "-1.53"}, "kr_xq", -1.55),  # on the step grid
        ("kernels-to-attention", {"k2a_h": "0.75"}, "k2a_h", 0.75),
        ("scaled-dot-product", {"sdp_dk": "512"}, "sdp_dk", 512),
    ],
)
def test_a_link_sets_a_live_slider(page, params, key, shown):
    at = open_page(page, params=params, folded=True)
    assert_clean(at)
    assert live_slider(at, key).value == pytest.approx(shown)
    assert at.session_state[key] == pytest.approx(shown)
    assert not at.warning


@pytest.mark.parametrize(
    ("page", "key", "raw", "shown"),
    [
        ("kernel-regression", "kr_h", "0.33333", "0.3"),
        ("kernel-regression", "kr_h", "abc", "0.3"),
        ("kernel-regression", "kr_xq", "1e9", "0.5"),
        ("kernel-regression", "kr_xq", "nan", "0.5"),
        ("kernels-to-attention", "k2a_x0", "inf", "0.5"),
        ("scaled-dot-product", "sdp_dk", "13", "16"),
        ("scaled-dot-product", "sdp_dk", "<script>", "16"),
    ],
)
def test_a_tampered_link_is_refused_once_with_the_pages_warning(page, key, raw, shown):
    at = open_page(page, params={key: raw}, folded=True, answered=False)
    assert_clean(at)
    label = live_slider(at, key).label
    (warning,) = [w.value for w in at.warning]
    assert label in warning
    assert raw in warning
    assert f"shows {shown} instead" in warning
    assert key not in at.query_params
    at.run()
    assert not at.warning
    zh = open_page(page, lang="zh", params={key: raw}, folded=True, answered=False)
    (warning,) = [w.value for w in zh.warning]
    assert load_catalogue("zh")["common.link_value_refused"].split("{")[0] in warning


def test_a_value_set_by_code_that_the_slider_cannot_take_falls_back_to_the_default():
    at = open_page("kernel-regression", folded=True)
    live_slider(at, "kr_h").set_value(0.123).run()  # not an option of the grid
    assert_clean(at)
    assert live_slider(at, "kr_h").value == 0.3
    live_slider(at, "kr_xq").set_value("left").run()
    assert live_slider(at, "kr_xq").value == 0.5


def _commit_script() -> None:
    import streamlit as st

    from ui import live_slider as live

    c = live.Control("kr.bandwidth", key="h", value=0.3, options=(0.1, 0.3, 1.0))
    q = live.Control("kr.query", key="q", value=0.5, min_value=-3.0, max_value=3.0, step=0.05)
    for control, raw in ((c, st.session_state.get("raw_h")), (q, st.session_state.get("raw_q"))):
        st.session_state[control.component_key] = {"commit": {"value": raw, "n": 1}}
        live._on_commit(control)
    st.write(f"h={st.session_state.get('h')!r} q={st.session_state.get('q')!r}")


@pytest.mark.parametrize(
    ("raw_h", "raw_q", "text"),
    [
        (1.0, -1.5, "h=1.0 q=-1.5"),
        (1, 2.999, "h=1.0 q=3.0"),  # 1 names the option 1.0; x* snaps to its step
        (0.2, 7.0, "h=None q=None"),  # not an option, out of range: ignored
        ("1e400", None, "h=None q=None"),
        (True, "NaN", "h=None q=None"),
    ],
)
def test_the_commit_takes_only_values_the_slider_can_take(raw_h, raw_q, text):
    at = AppTest.from_function(_commit_script)
    at.session_state["raw_h"] = raw_h
    at.session_state["raw_q"] = raw_q
    at.run()
    assert not at.exception
    assert at.markdown[0].value == text


def test_live_0_draws_the_release_only_sliders_on_the_same_keys():
    at = open_page("kernel-regression", params={"live": "0", "kr_h": "1"}, folded=True)
    assert_clean(at)
    assert live_elements(at) == {}
    assert at.select_slider(key="kr_h").value == 1.0
    assert at.slider(key="kr_xq").value == 0.5
    at.select_slider(key="kr_h").set_value(2.0).run()
    assert_clean(at)
    assert "h = 2" in next(c for c in charts(at) if "h = 2" in c.proto.spec).proto.spec
