"""Helpers for Streamlit ``AppTest`` tests: run the real router and switch to one page."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Widget

from lessons import by_url_path
from tests.conftest import ROOT

#: AppTest's per-run timeout (s). Generous: the CI machine has 2 cores shared with other tests.
TIMEOUT = 120


@dataclass(frozen=True)
class ChartProto:
    """What tests read of a chart: ``id`` ends with ``-<key>``, ``spec`` is the figure's JSON."""

    id: str
    spec: str


@dataclass(frozen=True)
class Chart:
    """A chart of the page: ``st.plotly_chart``'s, or a live slider's kept chart (``ui.house_chart``,
    ``kept``), read the same way (``chart.proto.id``, ``chart.proto.spec``)."""

    proto: ChartProto
    kept: bool = False


def is_chart(node) -> bool:
    """Whether an element is a chart: ``st.plotly_chart``'s or a kept chart of ``ui.house_chart``."""
    from ui.house_chart import COMPONENT_NAME

    if node.type == "plotly_chart":
        return True
    return node.type == "bidi_component" and node.proto.component_name == COMPONENT_NAME


def charts(at: AppTest) -> list[Chart]:
    """Every chart of the page, in page order: ``st.plotly_chart`` elements and kept charts.

    A kept chart's figure is read from its copy in the page, the hidden ``st.html`` element above its
    component (``ui.house_chart.figure_of``: the figure with its marks), its title without the bold
    Streamlit's theme adds (the figure as built). The component's data must name that copy: the same
    head line, and the digest of the same figure.
    """
    from ui.house_chart import COMPONENT_NAME, copy_data, figure_of

    found = []
    copy = None  # the last page copy of a kept chart's data (it comes just before its component)
    for node in at._tree:
        if node.type == "plotly_chart":
            found.append(Chart(ChartProto(node.proto.id, node.proto.spec)))
        elif node.type == "html" and node.proto.body.startswith('<div class="attn-figure"'):
            copy = node.proto.body
        elif node.type == "bidi_component" and node.proto.component_name == COMPONENT_NAME:
            assert copy is not None, f"the kept chart {node.proto.id} has no copy of its figure in the page"
            data = copy_data(copy)
            head, _, figure = data.partition("\n")
            digest = hashlib.blake2b(figure.encode("utf-8"), digest_size=8).hexdigest()
            assert json.loads(node.proto.json) == f"{head}\n{digest}", "the component names another figure"
            spec = figure_of(copy)
            copy = None
            title = spec["layout"].get("title")
            if isinstance(title, dict) and isinstance(title.get("text"), str):
                # the bold goes on every title, one without text too (as Streamlit's theme does)
                title["text"] = title["text"].removeprefix("<b>").removesuffix("</b>")
                if not title["text"]:
                    del title["text"]
            head, _, name = node.proto.id.rpartition("-")
            found.append(
                Chart(ChartProto(f"{head}-{name.removeprefix('chart_')}", json.dumps(spec)), kept=True)
            )
    return found


def fold_keys(page: str) -> list[str]:
    """URL keys of the folded sections of ``pages/<page>.py`` (``ui.sections.Section.open_key``),
    read from the page's source: ``Section("sdp.nan_title", ..., folded=True)`` -> ``open_sdp_nan``."""
    from ui.sections import Section

    source = (ROOT / "pages" / f"{page}.py").read_text(encoding="utf-8")
    titles = re.findall(r'Section\(\s*"([\w.]+)"[^\n]*folded=True', source)
    return [Section(title, lambda: None, folded=True).open_key for title in titles]


def open_page(
    page: str,
    *,
    lang: str = "en",
    params: dict[str, str] | None = None,
    folded: bool = False,
    answered: bool = True,
) -> AppTest:
    """Run ``app.py`` with ``?lang=...&params`` and switch to ``pages/<page>.py``.

    Language and URL parameters are set the way a shared link sets them (query parameters),
    so this also exercises the ``bind="query-params"`` seeding of every bound control. Unless
    ``folded``, the link opens every folded section (``?open_...=true``), so a test sees the whole
    page; ``params`` may still close one (``open_sdp_nan="false"``). Unless ``answered=False`` (the
    view a learner first gets), "Show me" is pressed on every question (:func:`show_answers`):
    what answers a question is drawn only then (``ui.questions.reveal``).
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    if not folded and page != "home":
        for key in fold_keys(page):
            at.query_params[key] = "true"
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    if page != "home":
        at.switch_page(by_url_path(page).script)
        at.run()
    if answered:
        show_answers(at)
    return at


def _show_buttons(node) -> list[str]:
    """Keys of the "Show me" buttons of the questions under ``node``, in page order."""
    if isinstance(node, Widget):
        key = node.key or ""
        return [key] if node.type == "button" and key.startswith("q_") and key.endswith("_show") else []
    if isinstance(node, Block):
        return [k for i in sorted(node.children) for k in _show_buttons(node.children[i])]
    return []


def show_answers(at: AppTest, *qids: str) -> AppTest:
    """Press "Show me" on the questions ``qids`` (none: every question on the page) and run once.

    A page draws what answers a question (a chart, a metric, a sentence with the number) only once
    it is answered; a question that appears only later (after a training) needs another call.
    """
    keys = [f"q_{qid}_show" for qid in qids] or _show_buttons(at._tree)
    for key in keys:
        at.button(key=key).click()
    if keys:
        at.run()
    return at


def assert_clean(at: AppTest) -> None:
    """No uncaught exception on the page (an ``st.exception`` box means a traceback reached users)."""
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def page_runner() -> Callable[..., AppTest]:
    return open_page


#: Two sentence marks in a row ("。，", "，。", "。。", "：。", ...), or a Chinese mark beside an
#: ASCII one ("。.", ",，"): doubled punctuation, in a catalogue or in text composed from several.
#: A token shown as "position:token" ("5:，", the comma of the Chinese sentence) is a word, not a mark.
DOUBLED_PUNCTUATION = re.compile(
    r"(?<!\d:)[。，、；：！？][。，、；：！？.,;:!?]|(?<![\d.])[.,;:!?][。，、；：！？]"
)


def page_texts(at: AppTest) -> list[str]:
    """Every text a reader sees on the page: headings, paragraphs, captions, alerts, metrics, tables,
    fold titles, and the charts' titles, axis titles, annotations and legend names."""
    import json

    texts = [
        e.value for kind in ("title", "header", "subheader", "markdown", "caption") for e in at.get(kind)
    ]
    texts += [e.value for kind in ("info", "warning", "success", "error") for e in at.get(kind)]
    texts += [part for m in at.metric for part in (m.label, str(m.value))]
    texts += [str(cell) for table in at.table for cell in table.value.to_numpy().ravel()]
    texts += [str(column) for table in at.table for column in table.value.columns]
    texts += [e.label for e in at.expander]
    for chart in charts(at):
        spec = json.loads(chart.proto.spec)
        layout = spec.get("layout", {})
        texts += [str((layout.get("title") or {}).get("text") or "")]
        texts += [str(a.get("text") or "") for a in layout.get("annotations", [])]
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                texts.append(str((axis.get("title") or {}).get("text") or ""))
        texts += [str(trace.get("name") or "") for trace in spec.get("data", [])]
    return [t for t in texts if t]
