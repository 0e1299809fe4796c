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

from figures.common import PALETTE

#: A choice's label is wrapped at this many characters, and cut after MAX_LINES lines.
WRAP_AT = 34
MAX_LINES = 3
BLUE, GREEN, GREY = PALETTE[0], PALETTE[2], "#B0B0B0"


def _wrapped(label: str) -> str:
    lines = textwrap.wrap(label, WRAP_AT) or [""]
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], lines[MAX_LINES - 1][: WRAP_AT - 1] + "…"]
    return "<br>".join(lines)


def _colours(count: int, right: Sequence[bool] | None) -> list[str]:
    if right is None:
        return [BLUE] * count
    return [GREEN if r else GREY for r in right]


def answer_bars(
    labels: Sequence[str],
    counts: Sequence[int],
    *,
    right: Sequence[bool] | None = None,
    numeric: bool = False,
    count_title: str = "",
    value_title: str = "",
    height: int | None = None,
    font_size: int | None = None,
) -> go.Figure:
    """Bars of how many answered what.

    Args:
        labels: one per bar: a choice's text, or a bin of numbers (``"3"``, ``"0.2–0.4"``).
        counts: answers per bar, same length.
        right: per bar, whether it is (holds) the revealed answer; None before the reveal.
        numeric: vertical bars of a histogram (numbers) instead of horizontal ones (choices).
        count_title, value_title: axis titles (translated).
        height: pixels; default grows with the number of choices.
        font_size: the figure's type size (a projector wants it larger); default: the house size.

    Raises:
        ValueError: if the lengths differ.
    """
    if len(labels) != len(counts) or (right is not None and len(right) != len(counts)):
        raise ValueError("labels, counts and right must have one entry per bar")
    colours = _colours(len(counts), right)
    text = [str(c) if c else "" for c in counts]
    dtick = 1 if max(counts, default=0) < 8 else None  # whole students: no 0.5 ticks
    if numeric:
        bar = go.Bar(x=list(labels), y=list(counts), marker_color=colours, text=text, textposition="outside",
                     cliponaxis=False, hovertemplate="%{x}: %{y}<extra></extra>")  # fmt: skip
        layout = {
            "xaxis": {"title": {"text": value_title}, "type": "category"},
            "yaxis": {"title": {"text": count_title}, "rangemode": "tozero", "dtick": dtick},
            "height": height or 300,
        }  # fmt: skip
    else:
        wrapped = [_wrapped(label) for label in labels]
        bar = go.Bar(y=wrapped, x=list(counts), orientation="h", marker_color=colours, text=text,
                     textposition="outside", cliponaxis=False,
                     hovertemplate="%{x}<extra></extra>")  # fmt: skip
        layout = {
            "yaxis": {"autorange": "reversed", "type": "category", "automargin": True},
            "xaxis": {"title": {"text": count_title}, "rangemode": "tozero", "dtick": dtick},
            "height": height or 90 + 60 * len(labels),
        }  # fmt: skip
    fig = go.Figure(bar)
    fig.update_layout(showlegend=False, margin={"t": 20, "r": 40, "b": 60}, **layout)
    if font_size is not None:
        fig.update_layout(font={"size": font_size})
    return fig
