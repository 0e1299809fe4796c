"""What leaves the app: a figure's numbers as a tidy table (CSV), a page as an HTML worksheet.

Both are built only when a user clicks a download button (issue 10.4), never on a rerun path.
``figure_table`` reads the arrays back out of a Plotly figure, so the CSV is exactly what is drawn;
``build_html`` writes one self-contained, offline HTML file (issue 22.5): the page's text,
formulas, control values, figures and questions, the answers last on a page of their own.
plotly.js is embedded once in the head (from the plotly package, no CDN), each figure after it
stays interactive.

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
class HandoutQuestion:
    """A predict-then-see question as the handout prints it (all text already translated).

    Attributes:
        prompt: the question.
        choices: the labels of a multiple choice; empty for a number to type.
        answer: the right answer on the view's controls, as shown to the learner ("" when unknown).
        explanation: why, quoting the view's numbers.
    """

    prompt: str
    choices: tuple[str, ...] = ()
    answer: str = ""
    explanation: str = ""


@dataclass(frozen=True)
class HandoutItem:
    """One thing the page showed, in page order.

    Attributes:
        kind: ``"figure"``, ``"table"``, ``"note"`` (a "what to look for" line), ``"heading"``,
            ``"text"`` (a paragraph, Markdown), ``"caption"``, ``"alert"``, ``"formula"`` (TeX),
            ``"metric"`` (``caption`` the label, ``value`` the number), ``"code"`` or ``"question"``.
        key: the element's key on the page (a figure's ``key=``, a question's id); the HTML anchor.
        figure: the Plotly figure (kind ``"figure"``).
        table: the rows of a table (kind ``"table"``): anything ``pandas.DataFrame`` accepts, or a
            ``pyarrow.Table``.
        caption: the text of the item (a figure's note, a paragraph, a heading, a formula's TeX).
        code: ``(qualified name, source)`` of the functions that computed it.
        level: a heading's level (2 or 3).
        value: a metric's value.
        question: the question (kind ``"question"``).
        answer_of: the key of the question this item answers: it goes to the answers section, after
            the question's answer ("" for the worksheet itself).
    """

    kind: str
    key: str
    figure: go.Figure | None = None
    table: Any = None
    caption: str = ""
    code: tuple[tuple[str, str], ...] = ()
    level: int = 2
    value: str = ""
    question: HandoutQuestion | None = None
    answer_of: str = ""


@dataclass(frozen=True)
class HandoutMeta:
    """Everything around the items: the page, when, where, and the handout's own words.

    Attributes:
        title: the page's title, translated.
        lang: the language code (``"en"``, ``"zh"``).
        date: when the handout was made, already formatted.
        url: the URL of the view (base URL and query string), or ``""`` when unknown.
        words: translated labels: ``heading``, ``made``, ``view``, ``language``, ``figure``,
            ``code``, ``empty``, ``settings``, ``control``, ``value``, ``question``,
            ``your_answer``, ``answers``, ``answers_note``, ``answer``.
        settings: ``(label, value)`` of every control of the view, in page order.
    """

    title: str
    lang: str
    date: str
    url: str
    words: dict[str, str] = field(default_factory=dict)
    settings: tuple[tuple[str, str], ...] = ()


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
section { margin: 1.2rem 0; }
section.handout-figure, section.handout-question { margin: 2rem 0; break-inside: avoid; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; } h3 { font-size: 1.1rem; }
.caption, .note { color: $muted; font-size: .95rem; }
.alert { border-left: 4px solid $muted; padding: .3rem .8rem; background: $panel; }
.metric .label { color: $muted; } .metric .value { font-weight: 600; font-size: 1.1rem; }
.formula { background: $panel; border: 1px solid $rule; padding: .6rem .8rem; overflow-x: auto;
           font-size: .9rem; white-space: pre-wrap; }
.handout-question { border: 1px solid $rule; border-radius: 6px; padding: .2rem 1rem .8rem; }
.choices { list-style: none; padding-left: .5rem; } .choices li::before { content: "\\2610\\00a0\\00a0"; }
.blank { border-bottom: 1px solid $muted; display: inline-block; min-width: 12rem; }
.answers { border-top: 3px double $muted; margin-top: 3rem; padding-top: 1rem; break-before: page; }
.answers .answer { font-weight: 600; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid $rule; padding: .25rem .6rem; text-align: right; }
th { background: $panel; }
.settings td, .settings th { text-align: left; }
pre { background: $panel; padding: .8rem; overflow-x: auto; font-size: .85rem; }
@media print { details { display: none; } }
""").substitute(text=DARK_GREY, rule=LIGHT_GREY, muted=MID_GREY, panel=PANEL)

_MARKDOWN = [
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"),
]
_ICON = re.compile(r":material/[a-z_]+:\s*")
_TAGS = re.compile(r"<[^>]+>")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")


def _inline(text: str) -> str:
    """Escape ``text`` and render the little Markdown the app's texts use: bold, italics, code,
    backslash escapes (``h\\*``), hard line breaks; Material icons are left out."""
    spans: list[str] = []

    def keep(match: re.Match) -> str:  # code spans and escaped characters are not Markdown
        code = match.re is _CODE_SPAN
        spans.append(f"<code>{html.escape(match.group(1))}</code>" if code else match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    text = _ESCAPED.sub(keep, _CODE_SPAN.sub(keep, _ICON.sub("", text)))
    out = html.escape(text, quote=False)
    for pattern, repl in _MARKDOWN:
        out = pattern.sub(repl, out)
    out = re.sub(r"\x00(\d+)\x00", lambda m: _unescape(spans[int(m.group(1))]), out)
    return out.replace("  \n", "<br>").replace("\n", " ")


def _unescape(span: str) -> str:
    """A kept span: a code span already in HTML, or an escaped character written as itself."""
    return html.escape(span[1:], quote=False) if span.startswith("\\") else span


def _markdown(text: str) -> str:
    """Paragraphs and bullet lists of a Markdown text as HTML (inline Markdown by :func:`_inline`)."""
    blocks = []
    for block in re.split(r"\n\s*\n", _ICON.sub("", text).strip()):
        lines = block.split("\n")
        if lines and all(_LIST_ITEM.match(line) for line in lines):
            items = "".join(f"<li>{_inline(_LIST_ITEM.sub('', line))}</li>" for line in lines)
            blocks.append(f"<ul>{items}</ul>")
        elif block.strip():
            blocks.append(f"<p>{_inline(block)}</p>")
    return "\n".join(blocks)


def _figure_title(fig: go.Figure) -> str:
    text = fig.layout.title.text if fig.layout.title else None
    return _TAGS.sub(" ", text or "").strip()


def _untitled(fig: go.Figure) -> dict[str, Any]:
    """``fig`` as a dict without its title: the handout names the figure in its own heading once."""
    spec = fig.to_dict()
    title = spec.get("layout", {}).pop("title", None)
    if title:
        margin = spec["layout"].setdefault("margin", {})
        margin["t"] = min(margin.get("t", 60), 40)  # the space the title took
    return spec


@cache
def plotly_js() -> str:
    """The plotly.js bundle of the installed plotly package (read once per process)."""
    return get_plotlyjs()


def _table_html(rows: Any) -> str:
    if not isinstance(rows, pd.DataFrame) and hasattr(rows, "data") and hasattr(rows, "to_html"):
        rows = rows.data  # a pandas Styler: its numbers, without the screen styling
    if not isinstance(rows, pd.DataFrame) and hasattr(rows, "to_pandas"):
        rows = rows.to_pandas()  # a pyarrow.Table
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    return frame.to_html(index=False, border=0, na_rep="", escape=True)


def _question_html(number: int, q: HandoutQuestion, w: dict[str, str], anchor: str) -> str:
    """A question of the worksheet: its prompt and empty boxes (or a line) for the answer."""
    label = w.get("question", "{n}").format(n=number)
    parts = [f'<section id="q-{anchor}" class="handout-question">', f"<h3>{html.escape(label)}</h3>"]
    parts.append(_markdown(q.prompt))
    if q.choices:
        parts.append('<ul class="choices">' + "".join(f"<li>{_inline(c)}</li>" for c in q.choices) + "</ul>")
    else:
        parts.append(f'<p>{html.escape(w.get("your_answer", ""))}: <span class="blank"></span></p>')
    parts.append("</section>")
    return "\n".join(parts)


def _answer_html(number: int, q: HandoutQuestion, w: dict[str, str], shown: list[str]) -> str:
    """A question's answer: the answer, its explanation, then what the page revealed with it."""
    label = w.get("question", "{n}").format(n=number)
    parts = ["<section>", f"<h3>{html.escape(label)}</h3>", _markdown(q.prompt)]
    if q.answer:
        parts.append(f'<p class="answer">{html.escape(w.get("answer", ""))}: {_inline(q.answer)}</p>')
    if q.explanation:
        parts.append(_markdown(q.explanation))
    parts.extend(shown)
    parts.append("</section>")
    return "\n".join(parts)


class _Writer:
    """Turns items into HTML, numbering figures in the order they are written."""

    def __init__(self, words: dict[str, str], config: dict[str, Any] | None) -> None:
        self.words, self.config, self.figures = words, config, 0

    def item(self, item: HandoutItem) -> str:
        w = self.words
        anchor = html.escape(re.sub(r"[^A-Za-z0-9_-]", "-", item.key))
        kind = item.kind
        if kind == "heading":
            level = 3 if item.level >= 3 else 2
            return f"<h{level}>{_inline(item.caption)}</h{level}>"
        if kind == "text":
            return _markdown(item.caption)
        if kind in ("caption", "note"):
            return f'<div class="{kind}">{_markdown(item.caption)}</div>'
        if kind == "alert":
            return f'<div class="alert">{_markdown(item.caption)}</div>'
        if kind == "formula":
            return f'<pre class="formula" role="math"><code>{html.escape(item.caption)}</code></pre>'
        if kind == "metric":
            return (
                f'<p class="metric"><span class="label">{_inline(item.caption)}</span>: '
                f'<span class="value">{html.escape(item.value)}</span></p>'
            )
        if kind == "code":
            return f"<pre><code>{html.escape(item.caption)}</code></pre>"
        parts = [f'<section id="item-{anchor}" class="handout-{kind}">']
        if kind == "figure" and item.figure is not None:
            self.figures += 1
            title = _figure_title(item.figure)
            label = w.get("figure", "{n}").format(n=self.figures)
            parts.append(f"<h3>{html.escape(label)}{': ' + html.escape(title) if title else ''}</h3>")
            parts.append(
                pio.to_html(
                    _untitled(item.figure),
                    include_plotlyjs=False,
                    full_html=False,
                    config=self.config,
                    default_width="100%",
                    div_id=f"fig-{anchor}",
                    validate=False,
                )
            )
        elif kind == "table" and item.table is not None:
            parts.append(_table_html(item.table))
        if item.caption:
            parts.append(f'<p class="caption">{_inline(item.caption)}</p>')
        for name, source in item.code:
            parts.append(
                f"<details><summary>{html.escape(w.get('code', ''))}: <code>{html.escape(name)}</code>"
                f"</summary><pre><code>{html.escape(source)}</code></pre></details>"
            )
        parts.append("</section>")
        return "\n".join(parts)


def _settings_html(settings: Sequence[tuple[str, str]], w: dict[str, str]) -> list[str]:
    if not settings:
        return []
    rows = "".join(
        f"<tr><td>{_inline(label)}</td><td>{html.escape(value)}</td></tr>" for label, value in settings
    )
    return [
        '<section class="settings">',
        f"<h2>{html.escape(w.get('settings', ''))}</h2>",
        f"<table><thead><tr><th>{html.escape(w.get('control', ''))}</th>"
        f"<th>{html.escape(w.get('value', ''))}</th></tr></thead><tbody>{rows}</tbody></table>",
        "</section>",
    ]


def build_html(
    items: Sequence[HandoutItem], meta: HandoutMeta, *, config: dict[str, Any] | None = None
) -> str:
    """One self-contained HTML worksheet of ``items``: opens offline, figures interactive.

    In order: the header (title, date, language, link to the view), the settings of the view's
    controls, then the page: its text, formulas (as TeX), figures, and each question without its
    answer. Last, on a new printed page, the answers: each question's answer, its explanation and
    the items the page revealed once it was answered (``answer_of``), so a teacher can print the
    worksheet without them. plotly.js is embedded once, in the head; every figure is a ``div``
    drawn by ``Plotly.newPlot``, titled once (in the handout's heading, not again in the plot).
    Nothing is loaded from the network (no ``<script src>``).

    Args:
        items: what the page showed, in page order.
        meta: title, language, date, URL, settings and the handout's own words (translated).
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
    head += ["</dl>", "</header>", *_settings_html(meta.settings, w), "<main>"]
    writer = _Writer(w, config)
    numbers = {item.key: n for n, item in enumerate((i for i in items if i.kind == "question"), start=1)}
    body: list[str] = []
    revealed: dict[str, list[HandoutItem]] = {}
    for item in items:
        if item.answer_of in numbers:
            revealed.setdefault(item.answer_of, []).append(item)
        elif item.kind == "question" and item.question is not None:
            anchor = html.escape(re.sub(r"[^A-Za-z0-9_-]", "-", item.key))
            body.append(_question_html(numbers[item.key], item.question, w, anchor))
        else:
            body.append(writer.item(item))
    if not any(i.kind in ("figure", "text", "question") for i in items):
        body.append(f"<p>{html.escape(w.get('empty', ''))}</p>")
    answers: list[str] = []
    if numbers:
        answers = [
            '<section class="answers">',
            f"<h2>{html.escape(w.get('answers', ''))}</h2>",
            f'<p class="note">{html.escape(w.get("answers_note", ""))}</p>',
        ]
        for item in items:
            if item.kind == "question" and item.question is not None:
                shown = [writer.item(i) for i in revealed.get(item.key, ())]
                answers.append(_answer_html(numbers[item.key], item.question, w, shown))
        answers.append("</section>")
    return "\n".join([*head, *body, *answers, "</main>", "</body>", "</html>", ""])
