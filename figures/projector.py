"""Projector type: a copy of a figure whose every text is large enough for the back row.

Presentation mode (``ui.classroom``) shows figures on a projector at 1280x720 or 1920x1080. Setting
the base font (``layout.font``) is not enough: Streamlit's chart theme writes explicit sizes into
the figure's template (tick labels, legend, axis and colour-bar titles, hover labels: 12-14 px),
and the house figures give some texts a size of their own (heatmap cell values, panel titles,
notes: 12-15 px). Both win over the base font. :func:`for_projector` therefore

- scales every size a figure sets itself by ``BASE_SIZE / figures.common.BASE_FONT_SIZE``
  (15 -> 20 px), never below ``MIN_SIZE`` (16 px); and
- writes an explicit size for every text Streamlit's theme would otherwise size (each axis's tick
  labels and title, each legend, each colour bar, the hover label, the title);
- grows the figure's own margins by the same factor, so the title, the legend above the plot and
  the tick labels still have their room.

Pure Plotly: a figure in, a new figure out; nothing is computed and the input is left unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import plotly.graph_objects as go

from figures.common import BASE_FONT_SIZE

#: Base size of the projector's type (px): axis titles, annotations, table cells.
BASE_SIZE = 20
#: Tick labels, legends and colour bars (px): a little smaller, they are many and close together.
SMALL_SIZE = 18
#: The figure's own title (px).
TITLE_SIZE = 22
#: No text of a projected figure is smaller than this (px).
MIN_SIZE = 16
#: How much a size the figure sets itself grows (the house base font becomes :data:`BASE_SIZE`).
SCALE = BASE_SIZE / BASE_FONT_SIZE

_AXIS = re.compile(r"^[xy]axis\d*$")
_LEGEND = re.compile(r"^legend\d*$")
_COLORAXIS = re.compile(r"^coloraxis\d*$")


def projected_size(size: Any) -> Any:
    """A size a figure set itself, on the projector: scaled by :data:`SCALE`, at least :data:`MIN_SIZE`.

    Args:
        size: a font size in px, or a per-point list of them (as Plotly accepts for text).

    Returns:
        The new size (a list for a list); anything that is not a number is returned unchanged.
    """
    if isinstance(size, bool):
        return size
    if isinstance(size, (int, float)):
        return max(MIN_SIZE, round(size * SCALE))
    if isinstance(size, (list, tuple)):
        return [projected_size(s) for s in size]
    return size


def _scale_fonts(node: Any) -> None:
    """Scale, in place, every ``size`` of every font object (``font``, ``tickfont``, ``textfont``...)
    in a plain figure dict (the template excepted: it holds only defaults)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "template":
                continue
            if key.endswith("font") and isinstance(value, dict) and "size" in value:
                value["size"] = projected_size(value["size"])
            _scale_fonts(value)
    elif isinstance(node, list):
        for item in node:
            _scale_fonts(item)


def _default(node: dict, path: Iterable[str], size: int) -> None:
    """Give the font at ``path`` in ``node`` a size, unless the figure already set one."""
    *parents, leaf = path
    for key in parents:
        child = node.get(key)
        if isinstance(child, str):  # a title given as a bare string: {"text": ...}
            child = {"text": child}
        node[key] = child = dict(child or {})
        node = child
    font = node[leaf] = dict(node.get(leaf) or {})
    font.setdefault("size", size)


def _referenced(data: list[dict]) -> set[str]:
    """Layout keys the traces point at (``xaxis="x2"`` -> ``xaxis2``; ``legend``, ``coloraxis`` as named)."""
    names = set()
    for trace in data:
        for letter in ("x", "y"):
            ref = trace.get(f"{letter}axis")
            if isinstance(ref, str) and ref.startswith(letter):
                names.add(f"{letter}axis{ref[1:]}")
        for attribute in ("legend", "coloraxis"):
            if isinstance(trace.get(attribute), str):
                names.add(trace[attribute])
    return names


def _projector_layout(layout: dict, data: list[dict]) -> None:
    """Explicit sizes for the layout's texts that Streamlit's theme would size (see module doc)."""
    layout["font"] = {**(layout.get("font") or {}), "size": BASE_SIZE}
    margin = layout.get("margin")
    if isinstance(margin, dict):  # the house margins hold the house type: they grow with it
        for side in ("l", "r", "t", "b"):
            if isinstance(margin.get(side), (int, float)):
                margin[side] = round(margin[side] * SCALE)
    _default(layout, ("hoverlabel", "font"), SMALL_SIZE)
    if layout.get("title"):
        _default(layout, ("title", "font"), TITLE_SIZE)
    named = set(layout) | _referenced(data) | {"xaxis", "yaxis", "legend"}
    for axis in sorted(k for k in named if _AXIS.match(k)):
        _default(layout, (axis, "tickfont"), SMALL_SIZE)
        _default(layout, (axis, "title", "font"), BASE_SIZE)
    for legend in sorted(k for k in named if _LEGEND.match(k)):
        _default(layout, (legend, "font"), SMALL_SIZE)
        _default(layout, (legend, "title", "font"), SMALL_SIZE)
    for coloraxis in sorted(k for k in named if _COLORAXIS.match(k)):
        _default(layout, (coloraxis, "colorbar", "tickfont"), SMALL_SIZE)
        _default(layout, (coloraxis, "colorbar", "title", "font"), SMALL_SIZE)
    for annotation in layout.get("annotations") or ():
        annotation.setdefault("font", {}).setdefault("size", BASE_SIZE)


def _projector_trace(trace: dict) -> None:
    """Explicit sizes for a trace's own texts: its colour bar and, for a table, its cells."""
    colorbars = [trace] if "colorbar" in trace or trace.get("type") in ("heatmap", "contour") else []
    if isinstance(trace.get("marker"), dict) and "colorbar" in trace["marker"]:
        colorbars.append(trace["marker"])
    for owner in colorbars:
        _default(owner, ("colorbar", "tickfont"), SMALL_SIZE)
        _default(owner, ("colorbar", "title", "font"), SMALL_SIZE)
    if trace.get("type") == "table":
        for part in ("header", "cells"):
            _default(trace, (part, "font"), BASE_SIZE)
            cells = trace[part]
            if isinstance(cells.get("height"), (int, float)):  # rows tall enough for the larger type
                cells["height"] = round(cells["height"] * SCALE)


def for_projector(fig: go.Figure) -> go.Figure:
    """A new figure like ``fig`` with projector type (see the module docstring); ``fig`` is unchanged.

    Every text of the result is at least :data:`MIN_SIZE` px: tick labels, legends, axis and
    colour-bar titles, annotations (panel titles included), cell text, table cells, hover labels.
    Costs one copy and one validation of the figure (a few ms to tens of ms for a large heatmap):
    callers showing the same figure again should keep the copy.
    """
    spec = fig.to_dict()  # a deep copy (arrays as typed arrays): the shared, cached figure is untouched
    data, layout = spec.get("data", []), spec.get("layout", {})
    _scale_fonts(data)
    _scale_fonts(layout)
    _projector_layout(layout, data)
    for trace in data:
        _projector_trace(trace)
    return go.Figure(spec)


def projected_annotation(annotation: dict) -> dict:
    """An annotation dict (e.g. a mark drawn over a cached figure) with projector type; a new dict."""
    out = {**annotation, "font": dict(annotation.get("font") or {})}
    out["font"]["size"] = projected_size(out["font"].get("size", BASE_FONT_SIZE))
    return out
