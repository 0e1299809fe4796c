"""Charts on a phone (390x844), every fold open, both languages: no two texts of a chart overlap,
no title is cut.

The app learns that the viewport is narrow from its probe (``ui.viewport``) and lays every figure
out for it (``figures.common.narrow_layout``, the builders' ``narrow=True``). Here, in Chromium,
every text Plotly drew in a chart is measured as the quadrilateral it covers on screen (rotated
tick labels included): the title, axis titles, panel titles and other annotations, legend
entries, colour bar titles, tick labels of different axes (two axes' labels closer than
:data:`TICK_GAP_PX` read as one number: "30" and "0" as "300"), and the numbers in heatmap cells.
A title, annotation or legend entry reaching outside the chart's SVG is cut.
"""

from __future__ import annotations

import pytest

from figures.common import MARGIN_LEFT, NARROW_MARGIN_LEFT
from lessons import LESSONS
from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

PAGES = tuple(lesson.url_path for lesson in LESSONS)
PHONE = {"width": 390, "height": 844}
#: Tick labels of two different axes must stay this far apart (px).
TICK_GAP_PX = 3

#: Every clash between two texts of one chart, and every text cut at the chart's edge.
CLASHES = """(tickGap) => {
  const quad = (el) => {  // the four corners of a text on screen, rotation included
    const b = el.getBBox();
    if (!b.width || !b.height) return null;
    const m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const span = (q, ax) => { const d = q.map(p => p[0] * ax[0] + p[1] * ax[1]);
                            return [Math.min(...d), Math.max(...d)]; };
  const meet = (p, q, gap) => {  // separating axis test of two convex quadrilaterals
    for (const poly of [p, q]) for (let i = 0; i < 4; i++) {
      const a = poly[i], b = poly[(i + 1) % 4], len = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
      const ax = [-(b[1] - a[1]) / len, (b[0] - a[0]) / len];
      const [p0, p1] = span(p, ax), [q0, q1] = span(q, ax);
      if (p1 + gap <= q0 || q1 + gap <= p0) return false;
    }
    return true;
  };
  const keyOf = (el) => { for (; el; el = el.parentElement) {
    const c = [...(el.classList || [])].find(c => c.startsWith('st-key-')); if (c) return c.slice(7); } };
  const out = [];
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const svg = chart.querySelector('svg.main-svg');
    if (!svg || !svg.getBoundingClientRect().width) continue;  // in a closed expander
    const box = svg.getBoundingClientRect(), items = [];
    const add = (el, group, kind) => {
      const q = el.textContent.trim() && quad(el);
      if (q) items.push({group, kind, q, text: el.textContent.trim().slice(0, 40)});
    };
    chart.querySelectorAll('.gtitle').forEach(e => add(e, 'title', 'title'));
    chart.querySelectorAll('.infolayer text').forEach(e => {
      const c = e.getAttribute('class') || '';
      if (/^[xy]\\d*title$/.test(c)) add(e, c, 'title');
    });
    chart.querySelectorAll('.annotation-text').forEach((e, i) => add(e, 'note' + i, 'title'));
    chart.querySelectorAll('.legendtext').forEach((e, i) => add(e, 'legend' + i, 'title'));
    chart.querySelectorAll('.cbtitle text').forEach((e, i) => add(e, 'bar title' + i, 'title'));
    chart.querySelectorAll('.colorbar').forEach((bar, i) =>
      bar.querySelectorAll('.cbaxis text').forEach(e => add(e, 'bar' + i, 'tick')));
    chart.querySelectorAll('.subplot').forEach(sp => {
      const name = [...sp.classList].find(c => c !== 'subplot');
      sp.querySelectorAll('.xaxislayer-above .xtick text').forEach(e => add(e, name + ' x ticks', 'tick'));
      sp.querySelectorAll('.yaxislayer-above .ytick text').forEach(e => add(e, name + ' y ticks', 'tick'));
    });
    chart.querySelectorAll('.heatmaplayer .hm').forEach((trace, t) =>  // cell numbers: each its own
      trace.querySelectorAll('.heatmap-label text').forEach((e, i) => add(e, `cell ${t}.${i}`, 'cell')));
    const key = keyOf(chart);
    for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      if (a.group === b.group) continue;
      const gap = a.kind === 'tick' && b.kind === 'tick' ? tickGap : -1;  // -1: touching is allowed
      if (meet(a.q, b.q, gap)) out.push(`${key}: "${a.text}" (${a.group}) meets "${b.text}" (${b.group})`);
    }
    for (const a of items.filter(a => a.kind === 'title')) {
      const xs = a.q.map(p => p[0]), ys = a.q.map(p => p[1]);
      if (Math.min(...xs) < box.left - 1 || Math.max(...xs) > box.right + 1
          || Math.min(...ys) < box.top - 1 || Math.max(...ys) > box.bottom + 1)
        out.push(`${key}: "${a.text}" (${a.group}) is cut at the chart's edge`);
    }
  }
  return out;
}"""

#: Every chart drawn, with its final layout: its latest figure (a kept chart far from the window
#: draws a newer figure, the phone layout's, once the page is idle: ``data-pending`` meanwhile,
#: ``static/chart/chart.js``).
DRAWN = """(n) => { const gds = [...document.querySelectorAll('.js-plotly-plot')];
  return gds.length >= n
    && gds.every(gd => gd._fullLayout && gd._fullLayout._size && !gd.dataset.pending); }"""


def _open_narrow(page, path: str, **params: str) -> None:
    """Open ``path`` with its folds open and wait until the page is laid out for a phone."""
    page.set_viewport_size(PHONE)
    page.open(path, **params)
    # the probe reports the narrow viewport after the first run: one more run lays the page out for it
    page.wait_for_selector('html[data-layout="narrow"]', state="attached", timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    page.wait_for_selector('[data-testid="stPlotlyChart"]', state="attached", timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", PAGES)
def test_no_two_texts_of_a_chart_meet_on_a_phone(page, path, lang):
    _open_narrow(page, path, lang=lang)
    assert_no_exception(page)
    shown = page.locator('[data-testid="stPlotlyChart"]').count()
    assert shown >= 3
    page.wait_for_function(DRAWN, arg=shown, timeout=RUN_TIMEOUT_MS)
    assert page.evaluate(CLASHES, TICK_GAP_PX) == []
    # the page never scrolls sideways
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= window.innerWidth")


def test_a_window_crossing_the_breakpoint_lays_the_figures_out_again(page):
    """Narrow, then wide: the probe reports each change once, and the figures follow it (read by
    their left margins: the kernel-regression page's figures all have the house's)."""
    margins = "() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => gd.layout.margin.l)"
    _open_narrow(page, "kernel-regression", folded=True, lang="en")
    page.wait_for_function(DRAWN, arg=3, timeout=RUN_TIMEOUT_MS)
    assert set(page.evaluate(margins)) == {NARROW_MARGIN_LEFT}
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.wait_for_selector('html[data-layout="wide"]', state="attached", timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    page.wait_for_function(f"({margins})().every(m => m === {MARGIN_LEFT})", timeout=RUN_TIMEOUT_MS)
    assert_no_exception(page)
