"""WCAG 2.1 AA in Chromium, in both languages (issue 24): audited as a school's IT department would.

- axe-core (the npm package pinned in ``tests/e2e/package.json``; ``npm ci --prefix tests/e2e``,
  which ``.ci/run`` does, installs it; offline afterwards) on every page in English and Chinese with
  every fold open, in presentation mode and on a phone: no serious or critical violation, apart from
  :data:`EXCEPTIONS` (inside Streamlit's own widgets, out of the app's reach; each with its reason).
  Locally a missing axe-core skips these tests loudly; under ``CI=true`` it fails them.
- ``<html lang>`` and the page's own title in its language, on every page and after a language switch.
- Every chart has a non-empty accessible name and description (Playwright's own accname computation).
- Headings in order (no h3 straight after h1).
- A keyboard-only walk of one page (Tab, Shift+Tab, arrows, Space, Enter) reaches every control and
  changes each; the skip link leads to the first control; a wide table scrolls by keyboard at 320 px.

The audits share one browser page (one server for the whole run); each (page, language) is loaded
once and its results are read by several tests.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lessons import PAGES
from tests.app.conftest import fold_keys
from tests.e2e.conftest import assert_no_exception, wait_for_app
from ui.i18n import load_catalogue
from ui.link_keys import is_answer_param

pytestmark = pytest.mark.e2e

AXE_JS = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
#: The version pinned in package.json: a different one may judge differently.
AXE_VERSION = "4.14.1"
URL_PATHS = [p.url_path for p in PAGES]
TITLE_KEYS = {p.url_path: p.title_key for p in PAGES}
HTML_LANG = {"en": "en", "zh": "zh-Hans"}
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}
#: Tallest viewport an audit grows to (px): the whole page in view, so that axe can judge the
#: contrast of everything (text scrolled out of Streamlit's main area is left "incomplete").
MAX_HEIGHT = 24_000


@dataclass(frozen=True)
class Excused:
    """A serious finding the app cannot fix: the axe rule, where (a substring of the node's HTML or
    selector), and why."""

    rule: str
    where: str
    reason: str


#: Findings inside Streamlit's own widgets that the app cannot reach (empty: none so far).
EXCEPTIONS: tuple[Excused, ...] = ()

RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .flatMap(v => v.nodes.map(n => ({rule: v.id, impact: v.impact, target: n.target.join(' '),
                                     html: n.html.slice(0, 300), summary: n.failureSummary || ''})));
}"""

#: Every chart drawn (its SVG is there).
CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .every(c => c.querySelector('svg.main-svg'))"""
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

#: Levels of the headings of the main area, in page order.
HEADINGS = """() => [...document.querySelectorAll('[data-testid="stMain"] :is(h1,h2,h3,h4,h5,h6)')]
  .map(h => Number(h.tagName[1]))"""


def wait_for_a11y_script(page) -> None:
    """Wait until assets/a11y.js has run on this document (its skip link is there) and has had two
    animation frames to catch up with the last re-render (it loads a moment after the page draws)."""
    page.wait_for_selector("#attn-skip-controls", state="attached", timeout=60_000)
    page.evaluate(TWO_FRAMES)


@dataclass
class Audit:
    """What one load of one page showed."""

    url: str
    lang: str = ""
    title: str = ""
    findings: list[dict[str, Any]] = field(default_factory=list)
    excused: list[tuple[dict[str, Any], Excused]] = field(default_factory=list)
    charts: int = 0
    named: int = 0
    undescribed: list[str] = field(default_factory=list)
    headings: list[int] = field(default_factory=list)
    seconds: float = 0.0


def _axe_or_skip() -> Path:
    if AXE_JS.exists():
        return AXE_JS
    reason = (
        "NO AXE-CORE: the accessibility audit did not run. Install it with `npm ci --prefix tests/e2e` "
        "(.ci/run does)."
    )
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(reason)
    pytest.skip(reason)


def _excuse(finding: dict[str, Any]) -> Excused | None:
    where = finding["html"] + finding["target"]
    return next((e for e in EXCEPTIONS if e.rule == finding["rule"] and e.where in where), None)


def _query(path: str, lang: str, params: dict[str, str]) -> str:
    folds = dict.fromkeys(fold_keys(path), "true") if path != "home" else {}
    query = {**folds, "lang": lang, **params}
    return "&".join(f"{k}={v}" for k, v in query.items())


def audit_page(page, base: str, path: str, lang: str, *, viewport: dict[str, int], **params: str) -> Audit:
    """Load ``path`` (every fold open) in ``lang`` at ``viewport``'s width, the whole page in view,
    and run axe-core and the other checks on it."""
    start = time.monotonic()
    url = f"{base}/{'' if path == 'home' else path}?{_query(path, lang, params)}"
    page.set_viewport_size(viewport)
    page.goto(url)
    wait_for_app(page)
    assert_no_exception(page)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": viewport["width"], "height": min(int(height) + 50, MAX_HEIGHT)})
    page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
    wait_for_a11y_script(page)
    out = Audit(url=url, lang=page.evaluate("() => document.documentElement.lang"), title=page.title())
    if page.evaluate("() => typeof axe === 'undefined'"):
        page.add_script_tag(path=str(_axe_or_skip()))
    assert page.evaluate("() => axe.version") == AXE_VERSION
    for finding in page.evaluate(RUN_AXE):
        excuse = _excuse(finding)
        (out.excused.append((finding, excuse)) if excuse else out.findings.append(finding))
    charts = page.locator('[data-testid="stPlotlyChart"]')
    out.charts = charts.count()
    # Playwright's own accessible-name computation (not our attributes read back)
    out.named = page.get_by_role("figure", name=re.compile(r"\S")).count()
    for i in range(out.charts):
        described = charts.nth(i).evaluate(
            "c => { const d = document.getElementById(c.getAttribute('aria-describedby') || '');"
            " return d ? d.textContent.trim() : ''; }"
        )
        if not described:
            out.undescribed.append(charts.nth(i).evaluate("c => c.closest('[class*=st-key-]')?.className"))
    out.headings = page.evaluate(HEADINGS)
    out.seconds = time.monotonic() - start
    page.set_viewport_size(viewport)
    return out


@pytest.fixture(scope="module")
def audit(browser, app_url) -> Iterator[Callable[..., Audit]]:
    """``audit(path, lang, viewport=DESKTOP, **params)``: each distinct view audited once per module."""
    _axe_or_skip()
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    done: dict[tuple, Audit] = {}

    def run(path: str, lang: str, viewport: dict[str, int] = DESKTOP, **params: str) -> Audit:
        key = (path, lang, tuple(viewport.items()), tuple(sorted(params.items())))
        if key not in done:
            done[key] = audit_page(page, app_url, path, lang, viewport=viewport, **params)
        return done[key]

    yield run
    total = sum(a.seconds for a in done.values())
    print(f"\naccessibility audits: {len(done)} views in {total:.0f} s")
    context.close()


def _report(a: Audit) -> str:
    return "\n".join(f"{f['rule']} ({f['impact']}) at {f['target']}: {f['summary']}" for f in a.findings)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", URL_PATHS)
def test_axe_finds_nothing_serious_with_every_fold_open(audit, path, lang):
    a = audit(path, lang)
    assert a.findings == [], f"{a.url}\n{_report(a)}"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", URL_PATHS)
def test_lang_title_charts_and_headings(audit, path, lang):
    a = audit(path, lang)
    cat = load_catalogue(lang)
    assert a.lang == HTML_LANG[lang]
    assert a.title == cat["a11y.page_title"].format(page=cat[TITLE_KEYS[path]])
    assert a.named == a.charts, f"{a.charts - a.named} of {a.charts} charts have no accessible name"
    assert a.undescribed == []
    assert a.headings[:1] == [1], a.headings
    jumps = [(p, n) for p, n in zip(a.headings, a.headings[1:], strict=False) if n > p + 1]
    assert jumps == [], f"heading levels skipped: {a.headings}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_axe_in_presentation_mode(audit, lang):
    path = "scaled-dot-product"
    for slide in ("1", "2"):
        a = audit(path, lang, present="1", slide=slide)
        assert a.findings == [], f"{a.url}\n{_report(a)}"
        assert a.lang == HTML_LANG[lang]
        assert a.named == a.charts


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", ["kernel-regression", "scaled-dot-product"])
def test_axe_on_a_phone(audit, path, lang):
    a = audit(path, lang, viewport=PHONE)
    assert a.findings == [], f"{a.url}\n{_report(a)}"
    assert a.named == a.charts


def test_axe_with_code_and_numbers_open(page):
    """The lazy boxes under a chart: highlighted source and the numbers table."""
    page.open("kernel-regression", folded=True, lang="zh")
    cat = load_catalogue("zh")
    for label in (cat["common.show_code"], cat["a11y.show_numbers"]):
        page.locator('[data-testid="stExpander"] summary', has_text=label).first.click()
        wait_for_app(page)
    page.wait_for_selector('[data-testid="stCode"] .token', timeout=60_000)
    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=60_000)
    assert_no_exception(page)
    wait_for_a11y_script(page)
    page.add_script_tag(path=str(_axe_or_skip()))
    findings = [f for f in page.evaluate(RUN_AXE) if _excuse(f) is None]
    assert findings == [], findings


def test_language_switch_moves_lang_and_title(page):
    page.open("kernel-regression", folded=True, lang="en")
    wait_for_a11y_script(page)
    en, zh = load_catalogue("en"), load_catalogue("zh")
    assert page.evaluate("() => document.documentElement.lang") == "en"
    assert page.title() == en["a11y.page_title"].format(page=en["nav.kernel_regression"])
    page.locator('[data-testid="stSidebar"]').get_by_text("zh", exact=True).click()
    zh_title = zh["a11y.page_title"].format(page=zh["nav.kernel_regression"])
    page.wait_for_function(f"() => document.title === {zh_title!r}", timeout=60_000)
    wait_for_app(page)
    page.wait_for_function("() => document.documentElement.lang === 'zh-Hans'", timeout=30_000)
    # another page, by its link: the language and the title follow
    page.locator('[data-testid="stSidebarNavLink"]', has_text=zh["nav.multi_head"]).click()
    wait_for_app(page)
    zh_title = zh["a11y.page_title"].format(page=zh["nav.multi_head"])
    page.wait_for_function(f"() => document.title === {zh_title!r}", timeout=60_000)
    page.wait_for_function("() => document.documentElement.lang === 'zh-Hans'", timeout=30_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("en", exact=True).click()
    page.wait_for_function("() => document.documentElement.lang === 'en'", timeout=60_000)
    assert page.title() == en["a11y.page_title"].format(page=en["nav.multi_head"])


# --- keyboard only -------------------------------------------------------------------------------

#: The focused element: (key of its widget, the widget's data-testid, tag, role or input type, text).
FOCUSED = """() => { const e = document.activeElement;
  if (!e || e === document.body) return null;
  const box = e.closest('[class*="st-key-"]');
  const key = box ? [...box.classList].find(c => c.startsWith('st-key-')).slice(7) : '';
  const w = e.closest('[data-testid^="st"]');
  return {key, testid: w ? w.getAttribute('data-testid') : '', tag: e.tagName,
          role: e.getAttribute('role') || e.type || '', id: e.id,
          text: (e.getAttribute('aria-label') || e.innerText || '').trim().slice(0, 60),
          open: e.tagName === 'SUMMARY' ? e.parentElement.open : null}; }"""

#: Notes a click on a file input (what an upload button's Enter does) in ``window``.
FILE_INPUT_CLICKED = """() => { window.__attnFileInputClicked = false;
  document.addEventListener('click', e => {
    if (e.target.type === 'file') window.__attnFileInputClicked = true; }, {capture: true}); }"""

#: Tab stops that are not controls of the page: help "?" buttons, a chart's toolbar, links.
NOT_CONTROLS = {"stTooltipHoverTarget", "stPlotlyChart", "stHeaderActionElements", "stSidebarNavLink"}


def _focused(page) -> dict[str, Any] | None:
    return page.evaluate(FOCUSED)


def _params(page) -> dict[str, str]:
    from urllib.parse import parse_qsl, urlparse

    return dict(parse_qsl(urlparse(page.url).query))


def _settle(page) -> None:
    page.wait_for_timeout(250)  # the key's rerun starts on the next frames; wait_for_app sees it finish
    wait_for_app(page)


def _change(page, f: dict[str, Any]) -> str:
    """Change the focused control with keys only; returns what changed (raises if nothing did)."""
    key, before = f["key"], _params(page)
    if f["role"] == "range":
        page.keyboard.press("ArrowRight")
    elif f["role"] == "combobox":
        page.keyboard.press("ArrowDown")  # opens the list on the current option
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
    elif f["role"] == "number":
        # ArrowUp steps a number; an empty one (a question's answer) takes a typed digit
        value = page.evaluate("() => document.activeElement.value")
        page.keyboard.press("1" if value == "" else "ArrowUp")
        page.keyboard.press("Enter")
        if is_answer_param(key):  # an answer is never kept in a link (issue 22.2): its box shows it
            _settle(page)
            now = page.locator(f".st-key-{key} input").input_value()
            assert now != value, f
            return f"{key}: {value!r} -> {now!r} (not in the link)"
    elif f["role"] == "switch":
        page.keyboard.press("Space")
        _settle(page)
        assert _params(page).get(key) != before.get(key), f
        page.keyboard.press("Space")  # and back: the walk goes on in the same view
        _settle(page)
        assert _params(page).get(key) == before.get(key), f
        return f"{key} toggled and back"
    elif f["tag"] == "SUMMARY":
        page.keyboard.press("Enter")
        _settle(page)
        now = _focused(page)
        assert now is not None, "focus lost"
        assert now["open"], f
        assert key == "" or not key.startswith("open_") or _params(page).get(key) == "true", f
        page.keyboard.press("Enter")  # and closed again: the walk stays on this view
        _settle(page)
        assert not _focused(page)["open"], f
        return f"{key or f['text']} opened and closed"
    elif key.endswith("_csv") or key.startswith("handout"):
        with page.expect_download(timeout=60_000) as download:
            page.keyboard.press("Enter")
        return f"{key} downloaded {download.value.suggested_filename}"
    elif f["testid"] == "stBaseButton-secondary" and "upload" in f["text"].lower():
        # Enter reaches the file input (what opens the system's file dialog; headless Chromium
        # shows it or not depending on an earlier dialog, which is the browser's business)
        page.evaluate(FILE_INPUT_CLICKED)
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.__attnFileInputClicked === true", timeout=30_000)
        return f"{key} opened the file dialog"
    elif f["tag"] == "BUTTON":
        text = page.locator('[data-testid="stMain"]').inner_text()
        page.keyboard.press("Enter")
        _settle(page)
        assert page.locator('[data-testid="stMain"]').inner_text() != text, f
        return f"{key} pressed"
    else:
        raise AssertionError(f"no keyboard recipe for {f}")
    _settle(page)
    assert _params(page).get(key) != before.get(key), f"{f} did not change the view"
    return f"{key}: {before.get(key)} -> {_params(page).get(key)}"


def _tab_to_top(page) -> None:
    """Tab on until the focus comes round to the first stop, the skip link."""
    for _ in range(300):
        page.keyboard.press("Tab")
        if (_focused(page) or {}).get("id") == "attn-skip-controls":
            return
    raise AssertionError("Tab never came back round to the skip link: a keyboard trap")


def _not_changed(wanted: list[str], done: dict[str, str]) -> list[str]:
    """The controls of ``wanted`` not changed yet; a question's "Show me" counts once its Check has
    shown the answer (the button goes: nothing left to press)."""
    return [k for k in wanted if k not in done and not (k.endswith("_show") and f"{k[:-5]}_check" in done)]


def test_keyboard_alone_reaches_and_changes_every_control(page):
    """Kernel regression as a learner first opens it, with Tab, Shift+Tab, arrows, Space, Enter."""
    # answered=False: no "Show me" clicked, which would move Chromium's focus starting point
    page.open("kernel-regression", folded=True, answered=False, lang="en")
    wait_for_a11y_script(page)
    # the first Tab stop skips to the main controls: the kernel, not the 30 stops before it
    page.keyboard.press("Tab")
    skip = _focused(page)
    assert skip["id"] == "attn-skip-controls", skip
    page.keyboard.press("Enter")
    assert _focused(page)["key"] == "kr_kernel"

    # one round of Tab stops: every control of the view is reached, and none traps the focus
    _tab_to_top(page)
    walked: list[dict[str, Any]] = []
    for _ in range(300):
        page.keyboard.press("Tab")
        f = _focused(page)
        if f is not None and f["id"] == "attn-skip-controls":
            break
        if f is not None:  # None: the browser's own stop between the last element and the first
            walked.append(f)
    else:
        raise AssertionError("Tab never came back round: a keyboard trap")
    controls = [f for f in walked if f["key"] and f["testid"] not in NOT_CONTROLS and f["key"] != "lang"]
    wanted = list(dict.fromkeys(f["key"] for f in controls))
    assert {"kr_target", "kr_n", "kr_noise", "kr_seed", "kr_kernel", "kr_h", "kr_xq"} <= set(wanted)

    # backwards: Shift+Tab retraces the last stops
    seen_back = []
    for _ in range(5):
        page.keyboard.press("Shift+Tab")
        f = _focused(page)
        if f is not None:
            seen_back.append((f["key"], f["text"]))
        if len(seen_back) == 2:
            break
    assert seen_back == [(walked[-1]["key"], walked[-1]["text"]), (walked[-2]["key"], walked[-2]["text"])]

    # change each one, walking forward; a control that appears on the way (a question's Check
    # button, once answered) is changed too
    done: dict[str, str] = {}
    for _ in range(600):
        page.keyboard.press("Tab")
        f = _focused(page)
        if f is None:  # the browser's own stop, or a rerun dropped the focus: Tab goes on
            continue
        if f["key"] and f["testid"] not in NOT_CONTROLS and f["key"] != "lang" and f["key"] not in done:
            done[f["key"]] = _change(page, f)
            assert_no_exception(page)
        if f["id"] == "attn-skip-controls" and not _not_changed(wanted, done):
            break
    missing = _not_changed(wanted, done)
    assert missing == [], f"not changed by keyboard: {missing}\n{done}"
    assert any(k.startswith("q_") and k.endswith("_check") for k in done), done  # a Check that appeared

    # the language last: arrows move along the switch, Space picks
    for _ in range(30):
        page.keyboard.press("Tab")
        f = _focused(page) or {}
        if f.get("key") == "lang" and f.get("testid") == "stButtonGroup":
            break
    else:
        raise AssertionError(f"Tab did not reach the language switch; last stop {f}")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    page.wait_for_function("() => document.documentElement.lang === 'zh-Hans'", timeout=60_000)
    assert _params(page).get("lang") == "zh"
