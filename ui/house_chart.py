"""The live sliders' charts: a chart element of our own that keeps its ``div`` across reruns (issue 25).

``st.plotly_chart`` in Streamlit 1.67 draws a changed figure into a *new* chart element, then draws
it a second time once the element has measured its width and re-applied its theme: two full Plotly
drawings per changed chart on every release of a live slider (``python -m benchmarks redraw``
measures it). A chart the live sliders redraw is instead drawn by this v2 component
(``st.components.v2.component``): one ``div`` kept from run to run, one ``Plotly.react`` when its
figure changes, nothing when it does not. The live overlay (``static/live/live.js``) hands over to
the same element once it has drawn the new figure (it carries ``data-rev``, the count of its drawings).

What Streamlit does to a figure in the browser is done here, in Python, to the same result:

* its theme: ``assets/streamlit_plotly_theme.json`` is what Streamlit 1.67's ``applyStreamlitTheme``
  merges into the figure's ``template.layout`` (font, title, axes, colour bar, margins, resolved to
  the app's light theme), and the title in bold (``tests/e2e/test_house_chart.py`` compares a chart
  drawn both ways, layout and drawn texts);
* its width: the element's width, followed on resize (``static/chart/chart.js``), and its height: the
  figure's, or the element's while presentation mode fits it to the window (``assets/present.js``);
* its element: ``data-testid="stPlotlyChart"`` like Streamlit's, so the page's scripts
  (``assets/a11y.js``: accessible name; ``assets/present.js``: height) and the tests find every
  chart one way.

plotly.js is the pinned plotly wheel's ``plotly.min.js`` (4.8 MB; Streamlit's own copy is an internal
chunk), copied under ``static/vendor`` on first use (gitignored; the Docker image copies it when
built) and served by Streamlit's static serving with a content hash in its name: the browser loads it
once, from this server, no network.

The chart is wrapped in ``st.container(key=key)``, so ``.st-key-<key>`` finds it as it finds a keyed
``st.plotly_chart``, and the handout records it in page order. AppTest cannot draw it: the figure
travels in a hidden ``st.html`` element above the component (:func:`figure_of` reads it back for
tests); the component's data names it by a digest.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import threading
import weakref
from functools import cache
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from ui.i18n import t
from ui.plotly_spec import Marks
from ui.static_module import loader

ROOT = Path(__file__).resolve().parent.parent
STATIC_DIR = ROOT / "static"
CHART_JS = STATIC_DIR / "chart" / "chart.js"
#: Where the wheel's plotly.min.js is copied to be served (``/app/static/vendor/``); gitignored.
VENDOR_DIR = STATIC_DIR / "vendor"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
THEME_FILE = ROOT / "assets" / "streamlit_plotly_theme.json"
COMPONENT_NAME = "attention_lesson.house_chart"

_LOADER = loader("""  const data = component.data;
  const at = data.indexOf("\\n");
  const head = JSON.parse(data.slice(0, at));
  const chart = await load(head.module);
  return chart.mount(component, head, data.slice(at + 1));""")


@cache
def theme() -> dict[str, Any]:
    """What Streamlit merges into a figure's ``template.layout`` (``assets/streamlit_plotly_theme.json``)."""
    return json.loads(THEME_FILE.read_text(encoding="utf-8"))["template_layout"]


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` deep-merged into it (a new dict; lodash ``merge`` on plain objects)."""
    out = dict(base)
    for name, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(name), dict):
            out[name] = merged(out[name], value)
        else:
            out[name] = value
    return out


def themed(fig: go.Figure) -> dict[str, Any]:
    """``fig`` as the dict Streamlit hands plotly.js: theme merged into its template, title in bold."""
    spec = fig.to_plotly_json()
    layout = dict(spec["layout"])
    template = dict(layout.get("template") or {})
    template["layout"] = merged(template.get("layout") or {}, theme())
    layout["template"] = template
    if isinstance(layout.get("title"), dict):
        title = dict(layout["title"])
        title["text"] = f"<b>{title.get('text') if isinstance(title.get('text'), str) else ''}</b>"
        layout["title"] = title
    return {"data": spec["data"], "layout": layout}


#: id(figure) -> (a weak reference to it, its themed JSON, that JSON's digest): a figure shown again
#: (every rerun of a cached figure) is serialised once. Dropped with the figure.
_json: dict[int, tuple[weakref.ref, str, str]] = {}
_lock = threading.Lock()


def _figure_entry(fig: go.Figure) -> tuple[str, str]:
    key = id(fig)
    with _lock:
        entry = _json.get(key)
    if entry is not None and entry[0]() is fig:
        return entry[1], entry[2]
    text = pio.to_json(themed(fig), validate=False, remove_uids=False)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()

    def forget(_: Any, key: int = key) -> None:
        with _lock:
            _json.pop(key, None)

    with _lock:
        _json[key] = (weakref.ref(fig, forget), text, digest)
    return text, digest


def figure_json(fig: go.Figure) -> str:
    """The themed figure's JSON (:func:`themed`), made once per figure object."""
    return _figure_entry(fig)[0]


def figure_digest(fig: go.Figure) -> str:
    """A digest of :func:`figure_json` (16 hex digits), made with it."""
    return _figure_entry(fig)[1]


@cache
def plotly_js_name() -> str:
    """The served copy of the wheel's ``plotly.min.js`` (made on first use): its file name."""
    data = PLOTLY_JS.read_bytes()
    name = f"plotly-{plotly.__version__}-{hashlib.sha256(data).hexdigest()[:12]}.min.js"
    target = VENDOR_DIR / name
    if not target.exists() or target.stat().st_size != len(data):
        VENDOR_DIR.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{name}.{os.getpid()}.part")
        partial.write_bytes(data)
        os.replace(partial, target)  # atomic: another process may be copying it too
    return name


@cache
def _module_digest() -> str:
    return hashlib.sha256(CHART_JS.read_bytes()).hexdigest()[:12]


def _static_url(base_path: str, path: str) -> str:
    prefix = f"/{base_path.strip('/')}" if base_path.strip("/") else ""
    return f"{prefix}/app/static/{path}"


@cache
def _component() -> Any:
    return st.components.v2.component(COMPONENT_NAME, js=_LOADER, isolate_styles=False)


def _marks_json(marks: Marks | None) -> str:
    if marks is None:
        return "null"
    return json.dumps({"shapes": list(marks.shapes), "annotations": list(marks.annotations)}, allow_nan=False)


def head_text(marks: Marks | None, config: dict[str, Any]) -> str:
    """One line of JSON: the module, plotly.js, config and marks of a chart (no figure)."""
    base = str(st.get_option("server.baseUrlPath") or "")
    head = {
        "module": _static_url(base, f"chart/chart.js?v={_module_digest()}"),
        "plotly": _static_url(base, f"vendor/{plotly_js_name()}"),
        "fullscreen": t("common.chart_fullscreen"),  # the toolbar button st.plotly_chart has
        # Streamlit removes Plotly's "edit in Chart Studio" button from every chart
        "config": {
            **config,
            "modeBarButtonsToRemove": [*config.get("modeBarButtonsToRemove", ()), "sendChartToCloud"],
        },
    }
    text = json.dumps(head, separators=(",", ":"))
    return f'{text[:-1]},"marks":{_marks_json(marks)}}}'


def data_text(fig: go.Figure, marks: Marks | None, config: dict[str, Any]) -> str:
    """A chart's data: its head line (:func:`head_text`), then the figure's JSON as it is cached (not
    parsed and written again inside another JSON text). Written into the page (:func:`figure_html`)."""
    return f"{head_text(marks, config)}\n{figure_json(fig)}"


def figure_html(data: str) -> str:
    """The chart's data as a hidden element of the page (``st.html``): what hands a changed figure
    to the kept chart in the commit that brings it (``static/chart/chart.js``)."""
    return f'<div class="attn-figure" hidden>{html.escape(data, quote=False)}</div>'


class _Markup:
    """HTML ``st.html`` takes as it is (through ``_repr_html_``).

    ``st.html`` dedents a string body (``textwrap.dedent``: two regular-expression passes over every
    line), ~4.5 ms for the weight map's ~155 KB copy on the test machine, on every rerun; a body
    with ``_repr_html_`` is used as given. :func:`figure_html` has no indentation to remove.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_html_(self) -> str:
        return self.text


def copy_data(page_copy: str) -> str:
    """The chart's data (:func:`data_text`) from its page copy: the inverse of :func:`figure_html`."""
    return html.unescape(page_copy[page_copy.index(">") + 1 : page_copy.rindex("</div>")])


def house_chart(fig: go.Figure, *, key: str, config: dict[str, Any], marks: Marks | None = None) -> Any:
    """Draw ``fig`` (with ``marks`` over it) as a kept chart element; returns its container.

    ``key`` names the container (``.st-key-<key>``), as ``st.plotly_chart(key=key)`` names its chart.

    The chart's data (:func:`data_text`) travels once, in a hidden ``st.html`` element above the
    component (``assets/app.css`` gives it no room). ``st.html`` writes its text into the page during
    React's commit, where ``st.plotly_chart`` draws too: chart.js watches that element and draws a
    changed figure there, before the paint. The component itself (whose JavaScript runs in an effect
    after the paint, ~25-60 ms after the run's last message on the test machine) carries only the
    head line and the figure's digest: a changed figure calls it too, and it reads the page's copy
    (its first drawing; a copy React wrote into a new element, which it watches from then on).
    (The figure used to travel in the component too: the same 100-200 KB twice per chart and run.)
    """
    data = data_text(fig, marks, config)
    head = data[: data.index("\n")]
    box = st.container(key=key)
    with box:
        st.html(_Markup(figure_html(data)))
        _component()(key=f"chart_{key}", data=f"{head}\n{figure_digest(fig)}")
    return box


def figure_of(page_copy: str) -> dict[str, Any]:
    """The figure a chart draws (for tests), from its page copy (the ``st.html`` body of
    :func:`figure_html`) or its data (:func:`data_text`): the figure's JSON with the marks added as
    chart.js adds them."""
    if page_copy.startswith("<div"):
        page_copy = copy_data(page_copy)
    head_line, _, spec_text = page_copy.partition("\n")
    head = json.loads(head_line)
    spec = json.loads(spec_text)
    marks = head.get("marks")
    if marks:
        layout = spec.setdefault("layout", {})
        layout["shapes"] = [*layout.get("shapes", []), *marks["shapes"]]
        layout["annotations"] = [*layout.get("annotations", []), *marks["annotations"]]
    return spec
