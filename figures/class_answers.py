"""How the class answered one question: a bar per choice, or a histogram of numbers as bars.

Given the counts (``store.tally``) and already-translated labels; the bar of the right answer is
green once the teacher revealed it (``right``), the others grey, and before the reveal every bar
is blue. Horizontal bars for choices (their labels are sentences, wrapped), vertical ones for
numbers.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go

from figures.common import GREY, PALETTE, Labels

#: A choice's label is wrapped at this many characters, and cut after MAX_LINES lines.
WRAP_AT = 34
MAX_LINES = 3
BLUE, GREEN = PALETTE[0], PALETTE[2]


def _wrapped(label: str) -> str:
    lines = textwrap.wrap(label, WRAP_AT) or [""]
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], lines[MAX_LINES - 1][: WRAP_AT - 1] + "…"]
    return "<br>".join(lines)


def answer_bars(
    bars: Sequence[str],
    counts: Sequence[int],
    *,
    right_counts: Sequence[int] | None = None,
    numeric: bool = False,
    labels: Labels | None = None,
    height: int | None = None,
    font_size: int | None = None,
) -> go.Figure:
    """Bars of how many answered what; after the reveal each bar split into right (green) and wrong.

    Args:
        bars: one per bar: a choice's text, or a bin of numbers (``"3"``, ``"40–43"``).
        counts: answers per bar, same length.
        right_counts: per bar, how many of its answers are right (a bin of numbers may hold both);
            None before the reveal (one blue bar each).
        numeric: vertical bars of a histogram (numbers) instead of horizontal ones (choices).
        labels: the axis titles by role (translated): ``count`` (answers), ``value`` (the numbers'
            axis of a histogram); a role not given has no title.
        height: pixels; default grows with the number of choices.
        font_size: the figure's type size, ticks included (a projector wants it larger); default:
            the house size.

    Raises:
        ValueError: if the lengths differ or a bar has more right answers than answers.
    """
    if len(bars) != len(counts) or (right_counts is not None and len(right_counts) != len(counts)):
        raise ValueError("labels, counts and right_counts must have one entry per bar")
    if right_counts is not None and any(r > c or r < 0 for r, c in zip(right_counts, counts, strict=True)):
        raise ValueError("a bar cannot have more right answers than answers")
    if right_counts is None:
        parts = [(list(counts), BLUE)]
    else:
        parts = [
            (list(right_counts), GREEN),
            ([c - r for c, r in zip(counts, right_counts, strict=True)], GREY),
        ]
    dtick = 1 if max(counts, default=0) < 8 else None  # whole students: no 0.5 ticks
    names = list(bars) if numeric else [_wrapped(bar) for bar in bars]
    given = labels or Labels()
    count_title, value_title = (given.name(r) if given.has(r) else "" for r in ("count", "value"))
    traces = []
    for values, colour in parts:
        text = [str(v) if v else "" for v in values]  # no "0" written on an empty bar
        axes = {"x": names, "y": values} if numeric else {"y": names, "x": values, "orientation": "h"}
        hover = ("%{x}: %{y}" if numeric else "%{x}") + "<extra></extra>"
        traces.append(go.Bar(**axes, marker_color=colour, text=text, textposition="inside",
                             insidetextanchor="middle", hovertemplate=hover))  # fmt: skip
    category = {"type": "category", "automargin": True}
    counted = {"title": {"text": count_title}, "rangemode": "tozero", "dtick": dtick}
    if numeric:
        layout = {
            "xaxis": {**category, "title": {"text": value_title}},
            "yaxis": counted,
            "height": height or 300,
        }
    else:
        layout = {"yaxis": {**category, "autorange": "reversed"}, "xaxis": counted,
                  "height": height or 90 + 60 * len(bars)}  # fmt: skip
    fig = go.Figure(traces)
    fig.update_layout(showlegend=False, barmode="stack", margin={"t": 20, "r": 40, "b": 60}, **layout)
    if font_size is not None:
        sized = {"tickfont": {"size": font_size}, "title": {"font": {"size": font_size}}}
        fig.update_layout(font={"size": font_size}, xaxis=sized, yaxis=sized)
    return fig
