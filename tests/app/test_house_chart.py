"""Every chart is drawn by the kept chart element (``ui.house_chart``) while sliders are live, with
the figure ``st.plotly_chart`` draws under ``?live=0``; an unchanged figure sends the same data."""

from __future__ import annotations

import json

import pytest

from tests.app.conftest import assert_clean, charts, open_page
from ui.house_chart import COMPONENT_NAME, merged, theme

PAGES = ["kernel-regression", "kernels-to-attention", "scaled-dot-product", "multi-head"]


def _by_key(at) -> dict[str, tuple[bool, dict]]:
    return {c.proto.id.rsplit("-", 1)[-1]: (c.kept, json.loads(c.proto.spec)) for c in charts(at)}


def _without_template(spec: dict) -> dict:
    layout = {k: v for k, v in spec["layout"].items() if k != "template"}
    return {"data": spec["data"], "layout": layout}


@pytest.mark.parametrize("page", PAGES)
def test_kept_charts_draw_the_figures_streamlit_draws(page):
    kept = open_page(page)
    assert_clean(kept)
    streamlit = open_page(page, params={"live": "0"})
    assert_clean(streamlit)
    drawn, plain = _by_key(kept), _by_key(streamlit)
    assert list(drawn) == list(plain)  # the same charts, in the same order
    assert drawn, f"{page} shows no chart"
    assert all(is_kept for is_kept, _ in drawn.values())
    assert not any(is_kept for is_kept, _ in plain.values())
    for key in drawn:
        # the same data and layout; the template is the house template with the theme merged in
        assert _without_template(drawn[key][1]) == _without_template(plain[key][1]), key
        template = plain[key][1]["layout"]["template"]
        assert drawn[key][1]["layout"]["template"]["layout"] == merged(template["layout"], theme()), key
        assert drawn[key][1]["layout"]["template"]["data"] == template["data"], key


def _house_data(at) -> dict[str, str]:
    return {
        node.proto.id.rsplit("-", 1)[-1]: node.proto.json
        for node in at._tree
        if node.type == "bidi_component" and node.proto.component_name == COMPONENT_NAME
    }


def test_a_rerun_without_a_change_sends_the_same_data():
    """The browser compares a chart's data with the last it drew: an unchanged figure is not drawn."""
    at = open_page("kernel-regression")
    before = _house_data(at)
    at.run()
    assert _house_data(at) == before
    at.session_state["kr_h"] = 1.0  # the live slider's commit
    at.run()
    after = _house_data(at)
    assert after["chart_kr_fig_fit"] != before["chart_kr_fig_fit"]  # h is in the fit
    assert after["chart_kr_fig_kernels"] == before["chart_kr_fig_kernels"]  # the kernel shapes are not


def test_marks_travel_with_the_chart():
    """scaled dot-product's d_k marker is drawn over a figure cached on its data: the marks travel
    in the chart's data, added to the figure's shapes as the browser adds them."""
    at = open_page("scaled-dot-product", params={"sdp_dk": "64"})
    assert_clean(at)
    (dk,) = [json.loads(c.proto.spec) for c in charts(at) if c.proto.id.endswith("-sdp_fig_dk")]
    plain = open_page("scaled-dot-product", params={"sdp_dk": "64", "live": "0"})
    (ref,) = [json.loads(c.proto.spec) for c in charts(plain) if c.proto.id.endswith("-sdp_fig_dk")]
    assert dk["layout"]["shapes"] == ref["layout"]["shapes"]
    assert dk["layout"]["annotations"] == ref["layout"]["annotations"]
    assert len(dk["layout"]["shapes"]) > 0
