"""A figure in words: the accessible name and short description a screen reader announces for it.

WCAG 2.1 1.1.1 asks for a text alternative for every chart. A chart's name is its title (the
subplot titles, or "y against x", when it has none); its description says what each trace plots
and the values that matter now, read back out of the figure's data, so it can never disagree with
what is drawn: a line's ranges, a colour map's size, range and largest cell, a bar chart's range and
tallest bar, a table's size. ``ui.a11y`` puts both on the chart in the page (``aria-label``,
``aria-describedby``) and shows the description above the chart's numbers.

No Streamlit here, and no translation: the caller passes the words (:class:`Words`, already in the
page's language), as for every builder in ``figures``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

#: Words of a description, one template per kind of trace (``str.format`` placeholders named).
WORD_KEYS = (
    "chart",  # a chart with no title and no axis titles
    "axes",  # {y} against {x}
    "series",  # {i}: a trace without a name
    "line",  # {name} {n} {x} {x0} {x1} {y} {y0} {y1}
    "point",  # {name} {x} {x0} {y} {y0}: a trace of one point
    "heatmap",  # {name} {rows} {cols} {lo} {hi} {row_title} {row} {col_title} {col}
    "bar",  # {name} {n} {lo} {hi} {at}
    "table",  # {name} {rows} {cols}
    "more",  # {n}: traces left out
)

#: Traces described one by one; the others are counted ("and 3 more").
MAX_TRACES = 6

_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Words:
    """Translated templates, one per entry of :data:`WORD_KEYS` (see ``a11y.desc_*`` in the catalogues)."""

    templates: Mapping[str, str]

    def __call__(self, key: str, **kwargs: object) -> str:
        return self.templates[key].format(**kwargs)


@dataclass(frozen=True)
class ChartText:
    """What a screen reader announces for a chart.

    Attributes:
        name: its accessible name (short: the title).
        description: one or a few sentences from its data.
    """

    name: str
    description: str


def plain(text: object) -> str:
    """Figure text (titles may hold ``<br>``, ``<sub>``, ``<b>``) as one line of plain text."""
    return _SPACE.sub(" ", _TAGS.sub(" ", str(text or ""))).strip()


def number(value: object) -> str:
    """A value as a reader hears it: 3 significant digits for numbers, text as it is."""
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, int | float | np.integer | np.floating):
        v = float(value)
        if not np.isfinite(v):
            return str(v)
        return f"{v:.3g}".replace("e-0", "e-").replace("e+0", "e")
    return plain(value)


def _axis_title(layout: Mapping[str, Any], axis_id: str | None, letter: str) -> str:
    axis = layout.get(f"{letter}axis{(axis_id or letter)[1:]}") or {}
    return plain(_text(axis.get("title"))) or letter


def _text(title: Any) -> Any:
    """A title's text: Plotly stores ``{"text": ...}`` (a bare string in a hand-written dict)."""
    return title.get("text") if isinstance(title, Mapping) else title


def _floats(values: Any) -> np.ndarray | None:
    """A data array as floats (None, NaN kept as NaN), or None when it holds text."""
    try:
        return np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


class _Column:
    """One coordinate of a trace: as floats when it holds numbers, else as labels."""

    def __init__(self, values: Any) -> None:
        self.nums = _floats(values)
        self.labels = None if self.nums is not None else np.asarray(values, dtype=object).ravel()

    def __len__(self) -> int:
        return len(self.nums if self.nums is not None else self.labels)

    def drawn(self, n: int) -> np.ndarray:
        """(n,) whether each of the first n entries is set (None / NaN: a gap between segments)."""
        if self.nums is not None:
            return np.isfinite(self.nums[:n])
        return np.array([v is not None for v in self.labels[:n]], dtype=bool)

    def span(self, keep: np.ndarray) -> tuple[str, str]:
        """(low, high) of the kept entries: min and max for numbers, first and last for labels."""
        if self.nums is not None:
            kept = self.nums[: keep.size][keep]
            return (number(kept.min()), number(kept.max())) if kept.size else ("", "")
        kept = self.labels[: keep.size][keep]
        return (plain(kept[0]), plain(kept[-1])) if kept.size else ("", "")


def _scatter(layout: Mapping[str, Any], trace: Mapping[str, Any], name: str, words: Words) -> str | None:
    x, y = trace.get("x"), trace.get("y")
    if x is None and y is None:
        return None
    cx = _Column(x) if x is not None else None
    cy = _Column(y) if y is not None else None
    cx = cx if cx is not None else _Column(np.arange(len(cy)))
    cy = cy if cy is not None else _Column(np.arange(len(cx)))
    n = min(len(cx), len(cy))
    keep = cx.drawn(n) & cy.drawn(n)  # a point is drawn where both coordinates are set
    if not keep.any():
        return None
    (x0, x1), (y0, y1) = cx.span(keep), cy.span(keep)
    x_title = _axis_title(layout, trace.get("xaxis"), "x")
    y_title = _axis_title(layout, trace.get("yaxis"), "y")
    if keep.sum() == 1:
        return words("point", name=name, x=x_title, x0=x0, y=y_title, y0=y0)
    return words("line", name=name, n=int(keep.sum()), x=x_title, x0=x0, x1=x1, y=y_title, y0=y0, y1=y1)


def _heatmap(layout: Mapping[str, Any], trace: Mapping[str, Any], name: str, words: Words) -> str | None:
    if trace.get("z") is None:
        return None
    z = np.asarray(trace["z"], dtype=float)
    if z.ndim != 2 or z.size == 0 or not np.isfinite(z).any():
        return None
    rows, cols = z.shape
    i, j = np.unravel_index(np.nanargmax(z), z.shape)
    row_labels = trace.get("y") if trace.get("y") is not None else range(rows)
    col_labels = trace.get("x") if trace.get("x") is not None else range(cols)
    return words(
        "heatmap",
        name=name,
        rows=rows,
        cols=cols,
        lo=number(np.nanmin(z)),
        hi=number(np.nanmax(z)),
        row_title=_axis_title(layout, trace.get("yaxis"), "y"),
        row=number(row_labels[i]) if i < len(row_labels) else i,
        col_title=_axis_title(layout, trace.get("xaxis"), "x"),
        col=number(col_labels[j]) if j < len(col_labels) else j,
    )


def _bar(trace: Mapping[str, Any], name: str, words: Words) -> str | None:
    horizontal = trace.get("orientation") == "h"
    values, labels = (trace.get("x"), trace.get("y")) if horizontal else (trace.get("y"), trace.get("x"))
    nums = np.asarray(values if values is not None else [], dtype=float).ravel()
    if nums.size == 0 or not np.isfinite(nums).any():
        return None
    labels = labels if labels is not None else range(nums.size)
    top = int(np.nanargmax(nums))
    return words(
        "bar",
        name=name,
        n=nums.size,
        lo=number(np.nanmin(nums)),
        hi=number(np.nanmax(nums)),
        at=number(labels[top]) if top < len(labels) else top,
    )


def _table(trace: Mapping[str, Any], name: str, words: Words) -> str | None:
    cells = (trace.get("cells") or {}).get("values")
    if cells is None or len(cells) == 0:
        return None
    return words("table", name=name, rows=max(len(c) for c in cells), cols=len(cells))


def _trace_text(layout: Mapping[str, Any], trace: Mapping[str, Any], name: str, words: Words) -> str | None:
    kind = trace.get("type", "scatter")
    if kind == "heatmap":
        return _heatmap(layout, trace, name, words)
    if kind == "bar":
        return _bar(trace, name, words)
    if kind == "table":
        return _table(trace, name, words)
    if kind == "scatter":
        return _scatter(layout, trace, name, words)
    return None


def _panel_titles(layout: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The annotations placed on the paper (subplot titles; an annotation's ``xref`` defaults to it)."""
    return [
        a
        for a in layout.get("annotations") or ()
        if a.get("xref", "paper") == "paper" and a.get("yref", "paper") == "paper" and plain(a.get("text"))
    ]


def _panel(layout: Mapping[str, Any], trace: Mapping[str, Any]) -> str:
    """The title of the subplot ``trace`` sits on: the annotation at the middle of its x domain and
    the top of its y domain (as ``make_subplots`` and ``figures.common.grid_layout`` place them)."""
    x_axis = layout.get(f"xaxis{(trace.get('xaxis') or 'x')[1:]}") or {}
    y_axis = layout.get(f"yaxis{(trace.get('yaxis') or 'y')[1:]}") or {}
    x_mid = sum(x_axis.get("domain", (0.0, 1.0))) / 2
    y_top = y_axis.get("domain", (0.0, 1.0))[1]
    for a in _panel_titles(layout):
        if abs(a.get("x", 0.5) - x_mid) < 1e-6 and abs(a.get("y", 0.5) - y_top) < 1e-6:
            return plain(a.get("text"))
    return ""


def chart_name(fig: go.Figure, words: Words) -> str:
    """The chart's title; else its subplot titles; else "y against x"; else the word for a chart."""
    layout = _spec(fig)[1]
    title = plain(_text(layout.get("title")))
    if title:
        return title
    panels = [plain(a.get("text")) for a in _panel_titles(layout)]
    if panels:
        return " · ".join(panels)
    x, y = _axis_title(layout, "x", "x"), _axis_title(layout, "y", "y")
    if (x, y) != ("x", "y"):
        return words("axes", x=x, y=y)
    return words("chart")


def _spec(fig: go.Figure) -> tuple[Sequence[Mapping[str, Any]], Mapping[str, Any]]:
    """The figure's traces and layout as Plotly stores them (plain dicts and arrays; read only).

    Plotly's property access validates and wraps every value it returns (~4 ms for one 60 x 2000
    map); its own stored dicts are read in microseconds, as ``server.plotly_spec`` does.
    """
    return fig._data, fig._layout


def describe(fig: go.Figure, words: Words, *, summary: str | None = None) -> ChartText:
    """The accessible name and description of ``fig``, from its title and its data.

    Args:
        fig: any figure the app draws (scatter, bar, heatmap and table traces are described;
            other trace types are left out).
        words: the templates of :data:`WORD_KEYS`, translated.
        summary: a sentence the caller knows better (what the chart shows now); it leads the
            description.

    Returns:
        ``ChartText(name, description)``; the name is never empty.
    """
    data, layout = _spec(fig)
    panels = [_panel(layout, trace) for trace in data]
    many = len(set(panels)) > 1
    title = chart_name(fig, words)
    parts: list[str] = []
    described = 0
    for i, trace in enumerate(data):
        # an unnamed trace goes by its colour bar's title, else by its number (the chart's name
        # when it is the only one)
        name = plain(trace.get("name")) or plain(_text((trace.get("colorbar") or {}).get("title")))
        name = name or (words("series", i=i + 1) if len(data) > 1 else title)
        panel = panels[i] if many else ""
        if panel and panel not in (name, _axis_title(layout, trace.get("yaxis"), "y")):
            name = f"{panel} · {name}"
        text = _trace_text(layout, trace, name, words)
        if text is None:
            continue
        described += 1
        if described <= MAX_TRACES:
            parts.append(text)
    if described > MAX_TRACES:
        parts.append(words("more", n=described - MAX_TRACES))
    if summary:
        parts.insert(0, plain(summary))
    return ChartText(name=title, description=" ".join(parts))


def word_templates(keys: Sequence[str] = WORD_KEYS, *, lookup: Any) -> Words:
    """:class:`Words` from a translator (``lookup("a11y.desc_" + key)`` for each key)."""
    return Words({k: lookup(f"a11y.desc_{k}") for k in keys})
