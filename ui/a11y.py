"""Accessibility (WCAG 2.1 AA in both languages, issue 24): what every page and every chart needs.

- :func:`page_setup` (``app.main``, once per run, after ``st.navigation``): the page's own title in
  the current language (2.4.2), ``assets/a11y.css`` (contrast AA, visible focus) and the mount of
  ``assets/a11y.js``, which sets ``<html lang>`` (3.1.1), adds "Skip to the main controls" (2.4.1),
  names the charts and makes wide tables and formulas reachable by keyboard (2.1.1).
- :func:`label_chart` and :func:`show_numbers` (``ui.layout.show_figure``, once per chart): the
  chart's accessible name and a description generated from its data (``figures.describe``), and a
  lazy "Show the numbers" expander with the figure's values as a table (1.1.1).

Streamlit gives no ``aria-*`` parameters, so the attributes are set in the browser by the script,
from small hidden elements written here; ``tests/e2e/test_accessibility.py`` checks the result
with axe-core in Chromium on every page in both languages.
"""

from __future__ import annotations

import functools
import html
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from figures.describe import ChartText, describe, word_templates
from figures.export import HTML_LANG, figure_table
from ui.i18n import current_language, t, translator

ASSETS = Path(__file__).resolve().parent.parent / "assets"
#: Widget key of the script's mount (hidden by ``assets/a11y.css``: it draws nothing).
MOUNT_KEY = "attn_a11y"
#: Chart descriptions kept per process (a cached figure is described once per language).
DESCRIPTION_ENTRIES = 512


@functools.cache
def _script() -> Any:
    """The ``st.components.v2`` component running ``assets/a11y.js`` (registered once per process)."""
    return st.components.v2.component("attn_a11y", js=(ASSETS / "a11y.js").read_text(encoding="utf-8"))


def html_lang(lang: str) -> str:
    """The ``<html lang>`` value of a UI language: ``en``, ``zh-Hans`` (Simplified Chinese)."""
    return HTML_LANG.get(lang, lang)


def page_title(page_title_text: str) -> str:
    """The browser tab's title of a page: its own title, then the app's, in the current language."""
    return t("a11y.page_title", page=page_title_text)


def page_setup(title: str) -> None:
    """Title, language, skip link, contrast and focus styles of the page shown in this run.

    Args:
        title: the page's title in the current language (``st.Page.title``).
    """
    st.set_page_config(page_title=page_title(title))
    st.html(ASSETS / "a11y.css")  # style only: sent to the event container, takes no space
    words = {
        "lang": html_lang(current_language()),
        "skipMain": t("a11y.skip_main"),
        "skipControls": t("a11y.skip_controls"),
        "scrollTable": t("a11y.scroll_table"),
        "scrollFormula": t("a11y.scroll_formula"),
        "scrollCode": t("a11y.scroll_code"),
    }
    with st.sidebar:
        _script()(key=MOUNT_KEY, data=words)


class _Descriptions:
    """``(figure, language, summary) -> ChartText``, bounded, for figures still alive.

    Figures are compared by identity (a ``go.Figure`` is not hashable); a weak reference tells a
    figure that was garbage-collected from a new one that got its ``id``.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[int, str, str | None], tuple[Any, ChartText]] = OrderedDict()

    def get(self, fig: go.Figure, lang: str, summary: str | None) -> ChartText:
        key = (id(fig), lang, summary)
        hit = self._entries.get(key)
        if hit is not None and hit[0]() is fig:
            self._entries.move_to_end(key)
            return hit[1]
        text = describe(fig, word_templates(lookup=translator()), summary=summary)
        self._entries[key] = (weakref.ref(fig), text)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return text


_DESCRIPTIONS = _Descriptions(DESCRIPTION_ENTRIES)


def chart_text(fig: go.Figure, *, summary: str | None = None) -> ChartText:
    """The name and description of ``fig`` in the current language (``figures.describe``), cached."""
    return _DESCRIPTIONS.get(fig, current_language(), summary)


def label_chart(fig: go.Figure, *, key: str, summary: str | None = None) -> ChartText:
    """Give the chart drawn with ``key`` its accessible name and description.

    Writes one hidden element (``assets/a11y.css`` gives it no room) that ``assets/a11y.js`` links
    to the chart: ``aria-label`` = the name, ``aria-describedby`` = this element's text.

    Args:
        fig: the figure's data (without marks drawn over it).
        key: the ``st.plotly_chart`` key.
        summary: a sentence that leads the generated description.
    """
    text = chart_text(fig, summary=summary)
    st.html(
        f'<div class="attn-chart-text" id="attn-chart-{html.escape(key)}" data-chart="{html.escape(key)}" '
        f'data-name="{html.escape(text.name)}">{html.escape(text.description)}</div>'
    )
    return text


def show_numbers(fig: go.Figure, *, key: str, text: ChartText) -> None:
    """A lazy "Show the numbers" expander: the chart's description and its values as a table.

    The table is ``figures.export.figure_table`` (the CSV download's rows), built only while the
    expander is open (``on_change="rerun"``, as ``ui.layout.show_code``). ``key`` is the chart's.
    """
    box = st.expander(
        t("a11y.show_numbers"), icon=":material/table_chart:", key=f"{key}_numbers", on_change="rerun"
    )
    if box.open:
        with box:
            st.caption(text.description)
            table = figure_table(fig)  # English column names, as in the CSV; shown translated
            headers = {c: t(f"a11y.col_{c}") for c in table.columns if c not in ("x", "y")}
            st.dataframe(table.rename(columns=headers), hide_index=True, width="stretch")
            st.caption(t("a11y.numbers_note"))
