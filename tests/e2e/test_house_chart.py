"""The live sliders' kept charts (``ui/house_chart.py``) look exactly as ``st.plotly_chart`` draws them.

Each chart a live slider redraws is drawn by the app's own chart element while the sliders are live
and by ``st.plotly_chart`` with ``?live=0``. Both are opened in Chromium and every text Plotly drew
(its words, type size and place) and the chart's size must be the same: the Streamlit theme applied
in Python (``assets/streamlit_plotly_theme.json``) is what Streamlit applies in the browser. The
theme itself is checked against a chart Streamlit drew: the template it handed Plotly is the house
template with the theme merged in.
"""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest
from plotly.utils import PlotlyJSONEncoder

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app
from ui.house_chart import merged, theme

#: Every chart of the page as drawn: {key: {kept, size, texts: [(text, font size, x, y, transform)]}}.
_CHARTS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .map((chart) => [chart, chart.closest('[class*="st-key-"]')])
  .filter(([chart, box]) => box && chart.querySelector('.main-svg'))
  .map(([chart, box]) => {
    // a kept chart's nearest key is its component's (chart_<key>), inside the container <key>
    const key = [...box.classList].find((c) => c.startsWith('st-key-')).slice(7).replace(/^chart_/, '');
    const gd = chart.querySelector('.js-plotly-plot');
    return [key, {
      kept: chart.classList.contains('attn-chart'),
      rev: gd.dataset.rev ?? null,
      size: [gd.clientWidth, gd.clientHeight],
      texts: [...gd.querySelectorAll('text')].map((t) => [t.textContent, getComputedStyle(t).fontSize,
        t.getAttribute('x'), t.getAttribute('y'), t.getAttribute('transform')]),
    }];
  }))"""


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _same_texts(ours: list, theirs: list) -> bool:
    """The same texts, type sizes and kinds of placement, each coordinate within 1 px (the two
    plotly.js builds, the wheel's 4.1.1 and Streamlit's 4.2.0, may place a tick a fraction of a
    pixel apart)."""
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs, strict=True):
        if a[:2] != b[:2] or _NUMBER.sub("#", str(a[2:])) != _NUMBER.sub("#", str(b[2:])):
            return False
        xs, ys = _NUMBER.findall(str(a[2:])), _NUMBER.findall(str(b[2:]))
        if any(abs(float(x) - float(y)) > 1 for x, y in zip(xs, ys, strict=True)):
            return False
    return True


def _charts(page) -> dict:
    return page.evaluate(_CHARTS)


CASES = [
    ("kernel-regression", {}),
    ("kernel-regression", {"lang": "zh", "present": "1"}),
    ("kernels-to-attention", {"lang": "zh"}),
    ("scaled-dot-product", {}),
]


@pytest.mark.parametrize(
    ("path", "params"), CASES, ids=[f"{p}-{'-'.join(q.values()) or 'en'}" for p, q in CASES]
)
def test_kept_charts_draw_as_streamlit_draws_them(page, path, params):
    page.open(path, **params)
    live = _charts(page)
    kept = {key: chart for key, chart in live.items() if chart["kept"]}
    assert kept, f"no kept chart on {path}: the live sliders' charts should be drawn by ui.house_chart"
    assert all(chart["rev"] == "1" for chart in kept.values()), {k: c["rev"] for k, c in kept.items()}

    page.open(path, live="0", **params)
    streamlit = _charts(page)
    assert not any(chart["kept"] for chart in streamlit.values())  # ?live=0: st.plotly_chart everywhere
    for key, chart in kept.items():
        assert key in streamlit, f"{key} is not drawn with ?live=0"
        assert chart["size"] == streamlit[key]["size"], key
        assert _same_texts(chart["texts"], streamlit[key]["texts"]), (
            key,
            chart["texts"],
            streamlit[key]["texts"],
        )
        assert len(chart["texts"]) > 5, key  # titles, ticks, legend: a drawn chart


def test_theme_is_what_streamlit_applies(page):
    """A chart Streamlit drew got the house template with ``assets/streamlit_plotly_theme.json``
    merged into its layout, and a bold title: what ``ui.house_chart.themed`` does."""
    page.open("kernel-regression", live="0")
    drawn = page.evaluate(
        """() => { const gd = document.querySelector('.st-key-kr_fig_row .js-plotly-plot');
        return {template: gd.layout.template.layout, title: gd.layout.title.text}; }"""
    )
    house = json.loads(json.dumps(go.Figure().layout.template.to_plotly_json(), cls=PlotlyJSONEncoder))
    assert drawn["template"] == merged(house["layout"], theme())
    assert drawn["title"].startswith("<b>")
    assert drawn["title"].endswith("</b>")


#: Per chart key: its drawing count (``data-rev``), whether it is near the window (``chart.js``),
#: and the times of its last figure given and last drawn (``chart:show`` / ``chart:drawn`` marks).
_DRAWINGS = """(keys) => Object.fromEntries(keys.map((k) => {
  const el = document.querySelector('.st-key-' + k + ' .attn-chart');
  const last = (what) => performance.getEntriesByName(`chart:${what}:chart_${k}`).at(-1)?.startTime ?? null;
  return [k, {rev: Number(el.querySelector('.js-plotly-plot').dataset.rev), near: el.__chart.near,
    show: last('show'), drawn: last('drawn')}];
}))"""


def test_a_far_chart_draws_after_the_charts_in_view(browser, app_url):
    """d_k changes both the Q/K/V chart and the pipeline under it. With the pipeline in view and the
    Q/K/V chart far above the window (not under a live overlay), the Q/K/V figure comes first but
    waits: the pipeline is drawn first, then the Q/K/V chart once the page is idle, without being
    scrolled to (``static/chart/chart.js``)."""
    context = browser.new_context(viewport={"width": 1400, "height": 800})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/scaled-dot-product?lang=en")
        wait_for_app(page)
        keys = ["sdp_fig_qkv", "sdp_fig_pipeline"]
        # the pipeline at the window's top: the Q/K/V chart ends ~460 px above it, more than half a
        # window (400 px) away; d_k's place is above the window, so its slider is docked in view
        page.evaluate("() => document.querySelector('.st-key-sdp_fig_pipeline').scrollIntoView()")
        page.wait_for_function(
            "() => document.querySelector('.attn-live.st-key-sdp_dk').classList.contains('docked')"
            " && document.querySelector('.st-key-sdp_fig_qkv .attn-chart').__chart.near === false",
            timeout=RUN_TIMEOUT_MS,
        )
        before = page.evaluate(_DRAWINGS, keys)
        slider = page.locator('.st-key-sdp_dk input[type="range"]')
        slider.focus()
        slider.press("ArrowRight")  # d_k 16 -> 32, committed
        page.wait_for_function(
            "([keys, before]) => { const now = (" + _DRAWINGS + ")(keys);"
            " return keys.every((k) => now[k].rev > before[k].rev); }",
            arg=[keys, before],
            timeout=RUN_TIMEOUT_MS,
        )
        assert "sdp_dk=32" in page.url
        now = page.evaluate(_DRAWINGS, keys)
        qkv, pipeline = now["sdp_fig_qkv"], now["sdp_fig_pipeline"]
        assert qkv["near"] is False, "the Q/K/V chart came near the window: the test saw nothing"
        assert qkv["rev"] == before["sdp_fig_qkv"]["rev"] + 1, (before, now)  # drawn once, not scrolled to
        assert qkv["show"] < pipeline["show"], now  # its figure came first ...
        assert pipeline["drawn"] < qkv["drawn"], now  # ... and was drawn after the chart in view
        assert_no_exception(page)
    finally:
        context.close()


#: Per chart key: the times of every ``chart:show`` and ``chart:drawn`` mark of its chart so far.
_MARKS = """(k) => Object.fromEntries(['show', 'drawn'].map((what) =>
  [what, performance.getEntriesByName(`chart:${what}:chart_${k}`).map((e) => e.startTime)]))"""


def test_a_changed_figure_is_drawn_from_the_page_before_the_component_brings_it(page):
    """A commit of x* changes the fit. Its kept chart is given the new figure twice: first from the
    copy React writes into the page in its commit (``ui/house_chart.py``), where the chart draws it,
    then by the component's own call after the page's paint, which finds it drawn: one drawing."""
    page.open("kernel-regression", lang="en")
    key = "kr_fig_fit"
    page.evaluate("(k) => document.querySelector('.st-key-' + k).scrollIntoView()", key)
    page.wait_for_function(
        "(k) => document.querySelector('.st-key-' + k + ' .attn-chart').__chart.near", arg=key
    )
    rev = page.evaluate(_DRAWINGS, [key])[key]["rev"]
    before = page.evaluate(_MARKS, key)
    slider = page.locator('.st-key-kr_xq input[type="range"]')
    slider.focus()
    slider.press("ArrowRight")  # x* one step up, committed: one run
    page.wait_for_function(
        "([k, n]) => performance.getEntriesByName(`chart:show:chart_${k}`).length >= n + 2",
        arg=[key, len(before["show"])],
        timeout=RUN_TIMEOUT_MS,
    )
    wait_for_app(page)
    marks = page.evaluate(_MARKS, key)
    shows, drawn = marks["show"][len(before["show"]) :], marks["drawn"][len(before["drawn"]) :]
    # from the page, then from the component (a later run of the page brings it again, unchanged)
    assert len(shows) >= 2, marks
    assert len(drawn) == 1, marks
    assert shows[0] < drawn[0] < shows[1], marks  # drawn before the component's call came
    assert page.evaluate(_DRAWINGS, [key])[key]["rev"] == rev + 1
    assert "kr_xq=" in page.url
    assert_no_exception(page)


#: A kept chart built by chart.js's own ``mount`` in a keyed box of its own on the page, before any
#: copy of its figure is in the page (as a component's call could come before Streamlit's html
#: element is drawn); then the copy of the fit's data is put above it, then a changed one.
_LATE_COPY = """async () => {
  const copy = document.querySelector('.st-key-kr_fig_fit .stElementContainer:has(> .stHtml > .attn-figure)');
  const data = copy.querySelector('.attn-figure').textContent;
  const head = JSON.parse(data.slice(0, data.indexOf('\\n')));
  const chart = await import(head.module);
  const box = document.createElement('div');
  box.className = 'st-key-late_copy';
  const holder = document.createElement('div');
  holder.className = 'stElementContainer';
  const root = document.createElement('div');
  holder.appendChild(root);
  box.appendChild(holder);
  copy.closest('.stMain').appendChild(box);
  box.scrollIntoView();
  const rev = () => root.querySelector('.attn-chart > div').dataset.rev;
  const title = () => root.querySelector('.gtitle')?.textContent ?? null;
  const until = async (ok) => {
    for (let i = 0; i < 200 && !ok(); i += 1) await new Promise((r) => setTimeout(r, 50));
    return ok();
  };
  chart.mount({ parentElement: root }, head, 'digest');
  await new Promise((r) => setTimeout(r, 300));
  const before = rev();
  const waited = performance.getEntriesByName('chart:await-copy').length;
  const late = copy.cloneNode(true);
  box.insertBefore(late, holder);
  const first = await until(() => rev() === '1');
  const firstTitle = title();
  late.querySelector('.attn-figure').textContent = data.replace('h = 0.3', 'h = 9.9');
  const second = await until(() => rev() === '2');
  return { before, waited, first, firstTitle, second, secondTitle: title() };
}"""


def test_a_chart_whose_page_copy_comes_after_its_component_draws_it_when_it_comes(page):
    """The figure travels only in the page's copy (``ui/house_chart.py``); a component's call that
    finds no copy yet waits for it (``static/chart/chart.js``, ``Chart.watch``), draws it when it is
    written, and draws a changed copy in place."""
    page.open("kernel-regression", lang="en")
    page.wait_for_function("() => document.querySelector('.st-key-kr_fig_fit .main-svg')")
    got = page.evaluate(_LATE_COPY)
    assert got["before"] == "0", got  # nothing to draw yet
    assert got["waited"] >= 1, got
    assert got["first"], got
    assert "h = 0.3" in got["firstTitle"], got
    assert got["second"], got
    assert "h = 9.9" in got["secondTitle"], got
    assert_no_exception(page)
