"""What leaves the app: a figure's numbers as a tidy table (CSV), a page's figures as an HTML handout.

Both are built only when a user clicks a download button (issue 10.4), never on a rerun path.
``figure_table`` reads the arrays back out of a Plotly figure, so the CSV is exactly what is drawn;
``build_html`` writes one self-contained, offline HTML file: plotly.js is embedded once in the
head (from the plotly package, no CDN), each figure after it stays interactive.

No Streamlit here: the ``ui.handout`` registry collects the items and the words in the current
language, and hands them to :func:`build_html`.
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from figures.common import DARK_GREY, LIGHT_GREY, MID_GREY, PANEL

#: Columns of :func:`figure_table`, in order; a column with no value in any row is left out.
TABLE_COLUMNS = ("subplot", "trace", "x", "y", "row", "column", "value")


def _values(array: Any) -> list[Any] | None:
    """A trace's data array as a flat Python list (None when the property is unset)."""
    if array is None:
        return None
    if isinstance(array, np.ndarray):
        return array.ravel().tolist()
    return list(array)


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _subplot_names(fig: go.Figure) -> dict[tuple[str, str], str]:
    """``(xaxis, yaxis) -> title`` for every subplot a trace of ``fig`` sits on.

    A subplot's title is the annotation ``make_subplots`` places at the middle of its x domain and
    the top of its y domain; panels laid out by hand fall back to their y axis title, then to the
    axis ids (``"x2 y2"``).
    """
    layout = fig.layout
    titles = [a for a in layout.annotations if a.xref == "paper" and a.yref == "paper" and a.text]
    names: dict[tuple[str, str], str] = {}
    for trace in fig.data:
        xa, ya = getattr(trace, "xaxis", None) or "x", getattr(trace, "yaxis", None) or "y"
        if (xa, ya) in names:
            continue
        x_axis = layout[f"xaxis{xa[1:]}"]
        y_axis = layout[f"yaxis{ya[1:]}"]
        x_mid = sum(x_axis.domain) / 2 if x_axis.domain else 0.5
        y_top = y_axis.domain[1] if y_axis.domain else 1.0
        match = next(
            (a.text for a in titles if abs(a.x - x_mid) < 1e-6 and abs(a.y - y_top) < 1e-6),
            None,
        )
        names[(xa, ya)] = match or (y_axis.title.text if y_axis.title else None) or f"{xa} {ya}"
    return names


def _trace_rows(trace: Any) -> list[dict[str, Any]]:
    """The data rows of one trace; [] for a decorative trace (no data, separators only)."""
    kind = trace.type
    if kind == "heatmap":
        z = trace.z
        if z is None:
            return []
        z = np.asarray(z, dtype=object if not isinstance(z, np.ndarray) else z.dtype)
        if z.ndim != 2 or z.size == 0:
            return []
        n_rows, n_cols = z.shape
        rows_lab = _values(trace.y) or list(range(n_rows))
        cols_lab = _values(trace.x) or list(range(n_cols))
        return [
            {"row": rows_lab[i], "column": cols_lab[j], "value": z[i, j]}
            for i in range(n_rows)
            for j in range(n_cols)
        ]
    if kind == "table":
        header = _values(trace.header.values) or []
        cells = [_values(c) or [] for c in (trace.cells.values or ())]
        return [
            {"row": i, "column": header[j] if j < len(header) else j, "value": v}
            for j, col in enumerate(cells)
            for i, v in enumerate(col)
        ]
    x, y = _values(getattr(trace, "x", None)), _values(getattr(trace, "y", None))
    if x is None and y is None:
        return []
    if x is None:
        x = list(range(len(y)))
    if y is None:
        y = list(range(len(x)))
    return [{"x": a, "y": b} for a, b in zip(x, y, strict=False) if not (_blank(a) and _blank(b))]


def figure_table(fig: go.Figure) -> pd.DataFrame:
    """The numbers drawn in ``fig`` as tidy rows, one per drawn value.

    Scatter and bar traces give ``trace, x, y``; heatmaps ``trace, row, column, value`` (row and
    column labels from the trace's ``y`` and ``x``, their indices when unset); tables ``trace, row,
    column, value``. With more than one subplot a ``subplot`` column names the panel (its title).
    Decorative traces (no data, e.g. a legend entry) and separator rows (``None`` gaps in a line)
    are left out. Columns appear in the order of :data:`TABLE_COLUMNS`, only those that hold data.

    Returns:
        A DataFrame; empty (no columns) when the figure draws no data.
    """
    subplots = _subplot_names(fig)
    many = len(set(subplots.values())) > 1
    rows: list[dict[str, Any]] = []
    for i, trace in enumerate(fig.data):
        found = _trace_rows(trace)
        if not found:
            continue
        name = trace.name if trace.name else f"trace {i}"
        extra = {"trace": name}
        if many:
            xa, ya = getattr(trace, "xaxis", None) or "x", getattr(trace, "yaxis", None) or "y"
            extra["subplot"] = subplots[(xa, ya)]
        rows.extend({**extra, **r} for r in found)
    frame = pd.DataFrame(rows)
    return frame[[c for c in TABLE_COLUMNS if c in frame.columns]]


def figure_csv(fig: go.Figure) -> str:
    """:func:`figure_table` of ``fig`` as CSV text (UTF-8, header row, no index)."""
    return figure_table(fig).to_csv(index=False)


# --- the handout ------------------------------------------------------------------------------


@dataclass(frozen=True)
class HandoutItem:
    """One thing the page showed, in page order.

    Attributes:
        kind: ``"figure"``, ``"table"`` or ``"note"``.
        key: the element's key on the page (a figure's ``key=``); used as the HTML anchor.
        figure: the Plotly figure (kind ``"figure"``).
        table: the rows of a table (kind ``"table"``): anything ``pandas.DataFrame`` accepts.
        caption: the "what to look for" sentence under it, already translated (may be empty).
        code: ``(qualified name, source)`` of the functions that computed it.
    """

    kind: str
    key: str
    figure: go.Figure | None = None
    table: Any = None
    caption: str = ""
    code: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class HandoutMeta:
    """Everything around the items: the page, when, where, and the handout's own words.

    Attributes:
        title: the page's title, translated.
        lang: the language code (``"en"``, ``"zh"``).
        date: when the handout was made, already formatted.
        url: the URL of the view (base URL and query string), or ``""`` when unknown.
        words: translated labels: ``heading``, ``made``, ``view``, ``language``, ``figure``,
            ``code``, ``empty``.
    """

    title: str
    lang: str
    date: str
    url: str
    words: dict[str, str] = field(default_factory=dict)


#: ``<html lang>`` per language code.
HTML_LANG = {"en": "en", "zh": "zh-Hans"}

#: The handout's style sheet; its colours are the figures' neutrals (``figures.common``).
_CSS = string.Template("""
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans", "PingFang SC",
       "Microsoft YaHei", sans-serif; max-width: 1100px; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: $text; }
header { border-bottom: 1px solid $rule; margin-bottom: 1.5rem; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
header dt { color: $muted; } header dd { margin: 0; overflow-wrap: anywhere; }
section { margin: 2.5rem 0; break-inside: avoid; }
h2 { font-size: 1.15rem; }
.caption { color: $muted; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid $rule; padding: .25rem .6rem; text-align: right; }
th { background: $panel; }
pre { background: $panel; padding: .8rem; overflow-x: auto; font-size: .85rem; }
""").substitute(text=DARK_GREY, rule=LIGHT_GREY, muted=MID_GREY, panel=PANEL)

_MARKDOWN = [
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"),
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
]
_ICON = re.compile(r":material/[a-z_]+:\s*")
_TAGS = re.compile(r"<[^>]+>")


def _inline(text: str) -> str:
    """Escape ``text`` and render the little Markdown the captions use (bold, italics, code)."""
    out = html.escape(_ICON.sub("", text), quote=False)
    for pattern, repl in _MARKDOWN:
        out = pattern.sub(repl, out)
    return out


def _figure_title(fig: go.Figure) -> str:
    text = fig.layout.title.text if fig.layout.title else None
    return _TAGS.sub(" ", text or "").strip()


@cache
def plotly_js() -> str:
    """The plotly.js bundle of the installed plotly package (read once per process)."""
    return get_plotlyjs()


def _table_html(rows: Any) -> str:
    if not isinstance(rows, pd.DataFrame) and hasattr(rows, "data") and hasattr(rows, "to_html"):
        rows = rows.data  # a pandas Styler: its numbers, without the screen styling
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    return frame.to_html(index=False, border=0, na_rep="", escape=True)


def build_html(
    items: Sequence[HandoutItem], meta: HandoutMeta, *, config: dict[str, Any] | None = None
) -> str:
    """One self-contained HTML page of ``items``: opens offline, figures interactive.

    plotly.js is embedded once, in the head; every figure is a ``div`` drawn by
    ``Plotly.newPlot``. Nothing is loaded from the network (no ``<script src>``).

    Args:
        items: what the page showed, in page order.
        meta: title, language, date, URL and the handout's own words (translated).
        config: the Plotly config of every figure (toolbar options).
    """
    w = meta.words
    head = [
        "<!DOCTYPE html>",
        f'<html lang="{HTML_LANG.get(meta.lang, meta.lang)}">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(meta.title)}</title>",
        f"<style>{_CSS}</style>",
        f'<script type="text/javascript">{plotly_js()}</script>',
        "</head>",
        "<body>",
        "<header>",
        f"<p>{html.escape(w.get('heading', ''))}</p>",
        f"<h1>{html.escape(meta.title)}</h1>",
        "<dl>",
        f"<dt>{html.escape(w.get('made', ''))}</dt><dd>{html.escape(meta.date)}</dd>",
        f"<dt>{html.escape(w.get('language', ''))}</dt>",
        f"<dd>{html.escape(w.get('language_name', meta.lang))}</dd>",
    ]
    if meta.url:
        url = html.escape(meta.url)
        head.append(f'<dt>{html.escape(w.get("view", ""))}</dt><dd><a href="{url}">{url}</a></dd>')
    head += ["</dl>", "</header>", "<main>"]
    body: list[str] = []
    number = 0
    for item in items:
        anchor = html.escape(re.sub(r"[^A-Za-z0-9_-]", "-", item.key))
        parts = [f'<section id="item-{anchor}" class="handout-{item.kind}">']
        if item.kind == "figure" and item.figure is not None:
            number += 1
            title = _figure_title(item.figure)
            label = w.get("figure", "{n}").format(n=number)
            parts.append(f"<h2>{html.escape(label)}{': ' + html.escape(title) if title else ''}</h2>")
            parts.append(
                pio.to_html(
                    item.figure,
                    include_plotlyjs=False,
                    full_html=False,
                    config=config,
                    default_width="100%",
                    div_id=f"fig-{anchor}",
                    validate=False,
                )
            )
        elif item.kind == "table" and item.table is not None:
            parts.append(_table_html(item.table))
        if item.caption:
            parts.append(f'<p class="caption">{_inline(item.caption)}</p>')
        for name, source in item.code:
            parts.append(
                f"<details><summary>{html.escape(w.get('code', ''))}: <code>{html.escape(name)}</code>"
                f"</summary><pre><code>{html.escape(source)}</code></pre></details>"
            )
        parts.append("</section>")
        body.append("\n".join(parts))
    if not body:
        body.append(f"<p>{html.escape(w.get('empty', ''))}</p>")
    return "\n".join([*head, *body, "</main>", "</body>", "</html>", ""])
