"""Every chart is drawn in one pass: its margins already hold what Plotly draws in them.

When a margin is too small for its tick labels, axis title, legend or colour bar, Plotly grows it
(``margin.autoexpand``) and draws the whole figure a second time: on a two-core machine that was
half the browser's work of a slider step (``figures.common.MARGIN_LEFT`` and its neighbours). Here
each chart's final plot area (Plotly's ``_fullLayout._size``) must equal the margins its figure
asked for, on every page with every fold open, in both languages.
"""

from __future__ import annotations

import pytest

from lessons import LESSONS
from tests.e2e.conftest import assert_no_exception, wait_for_app, wait_for_chart

pytestmark = pytest.mark.e2e

PAGES = tuple(lesson.url_path for lesson in LESSONS)

_GROWN = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(gd => {
  let el = gd, key = '';
  while (el && !key) {
    const c = [...(el.classList || [])].find(c => c.startsWith('st-key-'));
    if (c) key = c.slice(7);
    el = el.parentElement;
  }
  const size = gd._fullLayout._size, asked = gd._fullLayout.margin;
  return ['l', 'r', 't', 'b']
    .filter(side => size[side] > asked[side] + 1)
    .map(side => `${key}: ${side} ${asked[side]} -> ${Math.round(size[side])}`);
})"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", PAGES)
def test_no_chart_grows_a_margin(page, path, lang):
    page.open(path, lang=lang)
    assert_no_exception(page)
    wait_for_chart(page)
    wait_for_app(page)
    shown = page.locator('[data-testid="stPlotlyChart"]').count()
    page.wait_for_function(  # Plotly's code loads on demand: every chart drawn, with its latest figure
        f"""(() => {{ const gds = [...document.querySelectorAll('.js-plotly-plot')];
            return gds.length >= {shown}
              && gds.every(gd => gd._fullLayout && gd._fullLayout._size && !gd.dataset.pending); }})()""",
        timeout=60_000,
    )
    assert page.evaluate(_GROWN) == []
