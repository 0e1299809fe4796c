"""One dropped request for a served script does not leave the page blank (``ui.static_module``).

The kept charts' ``chart.js``, the live sliders' ``live.js`` and ``math.js``, and plotly.js are fetched
from ``/app/static``. A browser keeps a failed module import for the page's life, so before the retry
one connection reset on ``chart.js`` left every chart of the page missing, each with a component error
(the symptom of a CI failure: a phone view with no chart element). Here the first fetch of each file is
reset; the page must still draw every chart and every live slider, with no error box, and each file must
have been asked for again.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

#: The served files whose first fetch is dropped (globs under /app/static/).
DROPPED = ("chart/chart.js*", "live/live.js*", "live/math.js*", "vendor/plotly-*.min.js*")

#: Every kept chart drawn (its graph div has a Plotly layout) and every live slider's input there.
DRAWN = """() => {
  const charts = [...document.querySelectorAll('.attn-chart')];
  const sliders = [...document.querySelectorAll('[class*="st-key-live_"]')];
  return charts.length >= 2 && charts.every(c => c.firstChild && c.firstChild._fullLayout)
    && sliders.length >= 2 && sliders.every(b => b.querySelector('.attn-live input[type=range]'));
}"""


@pytest.mark.parametrize("width", [1400, 390])
def test_a_dropped_fetch_of_a_served_script_is_asked_again(browser, app_url, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    asked: dict[str, list[str]] = {glob: [] for glob in DROPPED}

    def drop_first(glob):
        def handle(route):
            asked[glob].append(route.request.url)
            if len(asked[glob]) == 1:
                route.abort("connectionreset")
            else:
                route.continue_()

        return handle

    try:
        for glob in DROPPED:
            page.route(f"**/app/static/{glob}", drop_first(glob))
        page.goto(f"{app_url}/kernel-regression?lang=en")
        wait_for_app(page)
        page.wait_for_function(DRAWN, timeout=RUN_TIMEOUT_MS)
        assert_no_exception(page)
        for glob, urls in asked.items():
            assert len(urls) >= 2, f"{glob}: fetched {urls}, never asked again after the reset"
            assert "retry=" in urls[1], urls  # a new URL: the failed import is not asked back
    finally:
        context.close()
