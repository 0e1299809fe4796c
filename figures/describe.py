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

from figures.export import _subplot_names

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


def _axis_title(fig: go.Figure, axis_id: str | None, letter: str) -> str:
    suffix = (axis_id or letter)[1:]
    axis = fig.layout[f"{letter}axis{suffix}"]
    title = axis.title.text if axis is not None and axis.title is not None else None
    return plain(title) or letter


def _floats(values: Any) -> np.ndarray | None:
    """A data array as floats (None, NaN kept as NaN), or None when it holds text."""
    try:
        return np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def _range(values: Any, keep: np.ndarray) -> tuple[str, str]:
    """(low, high) of the kept entries: min and max for numbers, first and last for labels."""
    nums = _floats(values)
    if nums is not None:
        kept = nums[keep & np.isfinite(nums)]
        return (number(kept.min()), number(kept.max())) if kept.size else ("", "")
    labels = [v for v, k in zip(np.asarray(values, dtype=object).ravel(), keep, strict=False) if k]
    return (plain(labels[0]), plain(labels[-1])) if labels else ("", "")


def _scatter(fig: go.Figure, trace: Any, name: str, words: Words) -> str | None:
    x, y = trace.x, trace.y
    if x is None and y is None:
        return None
    n = len(x if x is not None else y)
    x = np.arange(n) if x is None else x
    y = np.arange(n) if y is None else y
    n = min(len(x), len(y))
    x, y = np.asarray(x, dtype=object).ravel()[:n], np.asarray(y, dtype=object).ravel()[:n]
    # a point is drawn where both coordinates are set (None / NaN: the gaps between segments)
    fx, fy = _floats(x), _floats(y)
    keep_x = np.isfinite(fx) if fx is not None else np.array([v is not None for v in x], dtype=bool)
    keep_y = np.isfinite(fy) if fy is not None else np.array([v is not None for v in y], dtype=bool)
    keep = keep_x & keep_y
    if not keep.any():
        return None
    (x0, x1), (y0, y1) = _range(x, keep), _range(y, keep)
    x_title, y_title = _axis_title(fig, trace.xaxis, "x"), _axis_title(fig, trace.yaxis, "y")
    if keep.sum() == 1:
        return words("point", name=name, x=x_title, x0=x0, y=y_title, y0=y0)
    return words(
        "line",
        name=name,
        n=int(keep.sum()),
        x=x_title,
        x0=x0,
        x1=x1,
        y=y_title,
        y0=y0,
        y1=y1,
    )


def _heatmap(fig: go.Figure, trace: Any, name: str, words: Words) -> str | None:
    if trace.z is None:
        return None
    z = np.asarray(trace.z, dtype=float)
    if z.ndim != 2 or z.size == 0 or not np.isfinite(z).any():
        return None
    rows, cols = z.shape
    i, j = np.unravel_index(np.nanargmax(z), z.shape)
    row_labels = list(trace.y) if trace.y is not None else list(range(rows))
    col_labels = list(trace.x) if trace.x is not None else list(range(cols))
    return words(
        "heatmap",
        name=name,
        rows=rows,
        cols=cols,
        lo=number(np.nanmin(z)),
        hi=number(np.nanmax(z)),
        row_title=_axis_title(fig, trace.yaxis, "y"),
        row=number(row_labels[i]) if i < len(row_labels) else i,
        col_title=_axis_title(fig, trace.xaxis, "x"),
        col=number(col_labels[j]) if j < len(col_labels) else j,
    )


def _bar(fig: go.Figure, trace: Any, name: str, words: Words) -> str | None:
    horizontal = trace.orientation == "h"
    values, labels = (trace.x, trace.y) if horizontal else (trace.y, trace.x)
    nums = np.asarray(values if values is not None else [], dtype=float).ravel()
    if nums.size == 0 or not np.isfinite(nums).any():
        return None
    labels = list(labels) if labels is not None else list(range(nums.size))
    top = int(np.nanargmax(nums))
    return words(
        "bar",
        name=name,
        n=nums.size,
        lo=number(np.nanmin(nums)),
        hi=number(np.nanmax(nums)),
        at=number(labels[top]) if top < len(labels) else top,
    )


def _table(trace: Any, name: str, words: Words) -> str | None:
    cells = trace.cells.values if trace.cells is not None else None
    if not cells:
        return None
    return words("table", name=name, rows=max(len(c) for c in cells), cols=len(cells))


def _trace_text(fig: go.Figure, trace: Any, name: str, words: Words) -> str | None:
    if trace.type == "heatmap":
        return _heatmap(fig, trace, name, words)
    if trace.type == "bar":
        return _bar(fig, trace, name, words)
    if trace.type == "table":
        return _table(trace, name, words)
    if trace.type == "scatter":
        return _scatter(fig, trace, name, words)
    return None


def chart_name(fig: go.Figure, words: Words) -> str:
    """The chart's title; else its subplot titles; else "y against x"; else the word for a chart."""
    title = plain(fig.layout.title.text if fig.layout.title is not None else None)
    if title:
        return title
    panels = [plain(a.text) for a in fig.layout.annotations if a.xref == "paper" and a.yref == "paper"]
    panels = [p for p in panels if p]
    if panels:
        return " · ".join(panels)
    x, y = _axis_title(fig, "x", "x"), _axis_title(fig, "y", "y")
    if (x, y) != ("x", "y"):
        return words("axes", x=x, y=y)
    return words("chart")


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
    panels = _subplot_names(fig)
    many = len(set(panels.values())) > 1
    title = chart_name(fig, words)
    parts: list[str] = []
    described = 0
    for i, trace in enumerate(fig.data):
        name = plain(trace.name) or (words("series", i=i + 1) if len(fig.data) > 1 else title)
        panel = plain(panels.get((trace.xaxis or "x", trace.yaxis or "y"), "")) if many else ""
        if panel and panel not in (name, _axis_title(fig, trace.yaxis, "y")):
            name = f"{panel} · {name}"  # the panel's title; its y axis title is said anyway
        text = _trace_text(fig, trace, name, words)
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
