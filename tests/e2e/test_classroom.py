"""Classroom views in Chromium: presentation mode on a 16:9 projector, pages on a phone."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import assert_no_exception, wait_for_app, wait_for_chart
from ui.i18n import load_catalogue

pytestmark = pytest.mark.e2e

#: Width of the page's content vs the window, and the body text size in px.
MEASURE = """() => ({
  scroll: document.scrollingElement.scrollWidth, window: window.innerWidth,
  main: document.querySelector('[data-testid="stMain"]').scrollWidth,
  mainClient: document.querySelector('[data-testid="stMain"]').clientWidth,
  body: parseFloat(getComputedStyle(
    document.querySelector('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')).fontSize),
  charts: [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .map(c => c.getBoundingClientRect().right),
})"""


#: Font size (px) of the slide's first paragraph of text (not a button's label).
BODY_TEXT = """() => parseFloat(getComputedStyle(
  [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')]
    .find(p => !p.closest('button'))).fontSize)"""


def _open(browser, app_url, path: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    return context, page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presentation_mode_on_a_projector(browser, app_url, lang):
    context, page = _open(browser, app_url, f"scaled-dot-product?lang={lang}&present=1&slide=2", 1280, 720)
    try:
        assert_no_exception(page)
        wait_for_chart(page)
        m = page.evaluate(MEASURE)
        assert m["scroll"] <= m["window"]  # no horizontal scroll
        assert m["main"] <= m["mainClient"] + 1
        assert page.evaluate(BODY_TEXT) >= 20  # readable from the back row
        assert all(right <= m["window"] for right in m["charts"])
        assert "slide=2" in page.url  # the link keeps naming its slide
        box = page.locator('[data-testid="stSidebar"]').bounding_box()
        assert box is None or box["x"] + box["width"] <= 1  # collapsed: the slide gets the screen
        # one section: the pipeline's header, not the others'
        assert page.locator('[data-testid="stMain"] h2').count() == 1
        page.locator(".st-key-slide_next button").click()
        wait_for_app(page)
        assert "slide=3" in page.url
        assert page.locator('[data-testid="stMain"] h2').count() == 1
        assert_no_exception(page)
    finally:
        context.close()


#: Projectors the slides must fit (16:9).
PROJECTORS = [(1280, 720), (1920, 1080)]

#: What a slide shows above the fold: its header, the slide bar, the first chart's box, and the
#: computed font size of every text of every chart's svg (tick labels, legends, axis and colour-bar
#: titles, panel titles, cell values), with the text itself for the message.
SLIDE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, height: r.height};
  };
  const charts = [...main.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return {
    height: window.innerHeight,
    h1: [...main.querySelectorAll('h1')].map(h => ({
      text: h.innerText, size: parseFloat(getComputedStyle(h).fontSize),
      inBar: !!h.closest('.st-key-slide_bar'),
    })),
    headings: [...main.querySelectorAll('h2, h3')].map(h => h.innerText),
    text: main.innerText,
    bar: box(main.querySelector('.st-key-slide_bar')),
    chart: charts.length ? box(charts[0]) : null,
    small: charts.flatMap(c => [...c.querySelectorAll('svg text')])
      .map(e => [e.textContent, parseFloat(getComputedStyle(e).fontSize)])
      .filter(([text, size]) => text.trim() && size < 16),
    texts: charts.flatMap(c => [...c.querySelectorAll('svg text')]).filter(e => e.textContent.trim()).length,
  };
}"""


def _slide(browser, app_url, path: str, size: tuple[int, int]):
    context, page = _open(browser, app_url, path, *size)
    assert_no_exception(page)
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stPlotlyChart"] svg text', timeout=60_000)
    return context, page


def _settled_slide(page) -> dict:
    """The slide once its first chart has its final height (the presentation script sizes it to the
    window after Plotly's first draw, and Plotly then redraws it at that height). Waited for: the
    script's decision on the chart (``data-present-fit``), then the drawing at that height; the first
    drawing alone, at the figure's own height, matched its element until the script had sized it."""
    page.wait_for_function(
        """() => { const c = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"]');
                   const plot = c && c.querySelector('.js-plotly-plot');
                   return plot && plot._fullLayout && c.dataset.naturalHeight && c.dataset.presentFit
                     && Math.abs(plot._fullLayout.height - c.getBoundingClientRect().height) < 2; }""",
        timeout=30_000,
    )
    return page.evaluate(SLIDE)


@pytest.mark.parametrize("size", PROJECTORS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_later_slide_fits_a_projector(browser, app_url, lang, size):
    """Slide 2+: no page header, a one-line slide bar, the whole first chart above the fold, and
    every text of it (and its hover label) at least 16 px."""
    cat = load_catalogue(lang)
    path = f"kernel-regression?lang={lang}&present=1&slide=2&questions=0"
    context, page = _slide(browser, app_url, path, size)
    try:
        s = _settled_slide(page)
        assert s["headings"] == [cat["kr.row_header"]]  # the slide's section, alone
        # the page title only as the slide bar's small running head; no introduction
        assert [(h["text"], h["inBar"]) for h in s["h1"]] == [(cat["kr.title"], True)]
        assert s["h1"][0]["size"] <= 24
        assert cat["kr.intro"].split("**")[0].strip()[:30] not in s["text"]
        assert s["bar"]["top"] < 30  # at the top, beside the sidebar's button
        assert s["bar"]["height"] <= 60  # one line
        assert 0 < s["chart"]["top"] < s["height"] / 3
        assert s["chart"]["bottom"] <= s["height"]  # the whole chart, no scrolling
        assert s["chart"]["height"] >= 0.55 * s["height"]  # sized to the window, not a strip
        assert s["texts"] > 10
        assert s["small"] == []
        # the hover label: over one of the samples (a marker of the first chart)
        page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"] .scatterlayer .point').nth(
            5
        ).hover(force=True)
        page.wait_for_selector(".hoverlayer .hovertext text", timeout=10_000)
        hover = page.evaluate(
            "() => [...document.querySelectorAll('.hoverlayer .hovertext text')]"
            ".map(e => parseFloat(getComputedStyle(e).fontSize))"
        )
        assert hover
        assert min(hover) >= 16
    finally:
        context.close()


@pytest.mark.parametrize("size", PROJECTORS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_heatmap_slide_on_a_projector(browser, app_url, lang, size):
    """A slide of six heatmaps (cell values, colour bars, panel titles): its top above the fold, no
    page header, every text at least 16 px. Too tall to shrink to 720 px, it keeps its height."""
    cat = load_catalogue(lang)
    context, page = _slide(browser, app_url, f"scaled-dot-product?lang={lang}&present=1&slide=2", size)
    try:
        s = _settled_slide(page)
        assert s["headings"][0] == cat["sdp.pipeline_title"]
        assert all(h["inBar"] for h in s["h1"])
        assert cat["sdp.intro"][:30] not in s["text"]
        assert "Attention(Q,K,V)" not in s["text"]  # the page's formula is on the first slide only
        assert 0 < s["chart"]["top"] < s["height"] * 0.7
        assert s["texts"] > 100
        assert s["small"] == []
    finally:
        context.close()


#: Every page with slides, for the walk through all of them.
SLIDE_PAGES = (
    "home",
    "kernel-regression",
    "kernels-to-attention",
    "scaled-dot-product",
    "multi-head",
    "kernel-approximation",
    "in-context",
    "training",
)

#: The slide picker's "n / count" and the top of the slide's first chart (outside folds and the
#: controls popover), or null on a slide without a chart.
FIRST_CHART = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const picked = document.querySelector('.st-key-slide input');
  const chart = [...main.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .find(c => !c.closest('[data-testid="stExpander"], [data-testid="stPopoverBody"]'));
  return {picked: picked ? picked.value : '', top: chart ? chart.getBoundingClientRect().top : null};
}"""


#: Whether the slide picker shows its "n / count · title" label.
PICKED = r"""() => /^\d+ \/ \d+ /.test((document.querySelector('.st-key-slide input') || {}).value || '')"""


#: Every page in English; in Chinese the two whose slides once pushed a chart below the fold (its
#: text runs shorter, so English is the harder case; the pair keeps the check honest in both).
SLIDE_VIEWS = [(path, "en") for path in SLIDE_PAGES] + [
    (path, "zh") for path in ("kernels-to-attention", "kernel-approximation") if path in SLIDE_PAGES
]


@pytest.mark.parametrize(("path", "lang"), SLIDE_VIEWS)
def test_every_slide_starts_its_first_chart_on_a_projector(browser, app_url, path, lang):
    """At 1280x720, on every slide of the page (the first one too), the first chart starts on the
    screen, not below the fold (questions hidden, so that every chart is drawn)."""
    width, height = PROJECTORS[0]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        tops, slide, count = {}, 1, 1
        while slide <= count:
            page.goto(f"{app_url}/{path}?lang={lang}&present=1&questions=0&slide={slide}")
            wait_for_app(page)
            assert_no_exception(page)
            page.wait_for_function(PICKED)  # the slide picker has its label
            if page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]').count():
                page.wait_for_selector('[data-testid="stMain"] [data-testid="stPlotlyChart"] svg text')
            shown = page.evaluate(FIRST_CHART)
            number, count = (int(n) for n in re.match(r"(\d+) / (\d+)", shown["picked"]).groups())
            assert number == slide
            tops[slide] = shown["top"]
            slide += 1
        below = {n: top for n, top in tops.items() if top is not None and not 0 < top < height}
        assert below == {}, f"{path}: first chart's top (px) beyond the {height} px screen: {below}"
    finally:
        context.close()


#: The value of a query parameter of the page's URL (null when absent).
URL_PARAM = "name => new URLSearchParams(location.search).get(name)"


def _press(page, key: str, *, until: tuple[str, str | None]) -> None:
    """Press ``key`` and wait until the URL's parameter ``until[0]`` reads ``until[1]`` (None: any
    value), which the rerun the key caused writes, and the app is idle again."""
    page.keyboard.press(key)
    name, value = until
    page.wait_for_function(
        f"([name, value]) => {{ const got = ({URL_PARAM})(name);"
        " return value === null ? got !== null : got === value; }",
        arg=[name, value],
    )
    wait_for_app(page)


def _shown(page) -> tuple[str, str]:
    """The slide number in the URL and the title of the section shown."""
    heading = page.locator('[data-testid="stMain"] :is(h2, h3)').first.inner_text()
    return page.evaluate(f"({URL_PARAM})('slide')"), heading


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_arrow_keys_and_a_clicker_step_the_slides(browser, app_url, lang):
    """→ / PageDown: next slide, ← / PageUp: previous (URL and section), but not while the focus is
    in a slider, which the arrow keys move."""
    cat = load_catalogue(lang)
    row, formula, matrix = cat["kr.row_header"], cat["kr.formula_header"], cat["kr.matrix_header"]
    context, page = _open(browser, app_url, f"kernel-regression?lang={lang}&present=1&slide=2", 1280, 720)
    try:
        page.wait_for_selector("html[data-present-keys]", state="attached")  # the script is listening
        assert _shown(page) == ("2", row)
        # in a text field (the slide's question) the arrow keys move the caret, not the slide
        answer = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first
        answer.fill("12")
        answer.press("ArrowLeft")
        answer.press("ArrowRight")
        answer.press("ArrowRight")
        page.evaluate("document.activeElement.blur()")
        _press(page, "ArrowRight", until=("slide", "3"))
        assert _shown(page) == ("3", formula)  # one step: the keys in the field did not step
        _press(page, "ArrowLeft", until=("slide", "2"))
        assert _shown(page) == ("2", row)
        _press(page, "PageDown", until=("slide", "3"))
        _press(page, "PageDown", until=("slide", "4"))
        assert _shown(page) == ("4", matrix)
        _press(page, "PageUp", until=("slide", "3"))
        assert _shown(page) == ("3", formula)
        # the page-wide controls, in the slide bar's popover: the arrow keys move a focused slider
        page.locator('.st-key-slide_bar [data-testid="stPopoverButton"]').click()
        popover = page.locator('[data-testid="stPopoverBody"]')
        slider = popover.locator('.st-key-kr_h input[type="range"]')  # the live bandwidth slider
        slider.focus()
        assert page.evaluate(f"({URL_PARAM})('kr_h')") is None  # the default bandwidth
        _press(page, "ArrowRight", until=("kr_h", None))  # the slider took the key: one step up
        assert _shown(page) == ("3", formula)  # and still the same slide
        assert_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", ["kernel-regression", "scaled-dot-product", "training"])
def test_pages_fit_a_phone(browser, app_url, path, lang):
    context, page = _open(browser, app_url, f"{path}?lang={lang}", 390, 844)
    try:
        assert_no_exception(page)
        wait_for_chart(page)
        m = page.evaluate(MEASURE)
        assert m["scroll"] <= m["window"]  # the page never scrolls sideways
        assert m["main"] <= m["mainClient"] + 1
        assert all(right <= m["window"] + 1 for right in m["charts"])  # figures fit the width
    finally:
        context.close()
