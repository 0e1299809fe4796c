"""The Plotly fast path: each figure object validated and serialised once, not on every rerun.

``st.plotly_chart`` re-validates a figure on every call (``plotly.tools.
return_figure_from_figure_or_data(fig, validate_figure=True)`` rebuilds a ``go.Figure`` from
``fig.to_dict()``) and then re-serialises it with ``plotly.io.to_json``: 5-25 ms a figure, on
every rerun, even when the figure object is the very one shown last time (figure builders are
cached by ``ui.layout.cached`` and shared). The app's figures are validated when they are
built and never mutated after they are shown, so the JSON of a figure object is computed once and
kept with the object (a weak reference: it goes when the figure goes).

That dict is made by :func:`plain` from the figure's own validated properties (Plotly's private
``_data`` and ``_layout``), not by ``fig.to_dict()``: Plotly deep-copies the whole figure (its ~7 KB
template included) before turning its numpy arrays into typed arrays, which cost as much as building
the figure (~2 ms a chart). The result is the same JSON (``tests/server/test_plotly_spec.py``
compares them on every kind of value the app's figures hold, and on every figure of every page).

:func:`install` replaces the two plotly functions Streamlit calls, process-wide; anything that is
not a ``go.Figure`` or a ``ui.plotly_spec.Marked`` (dicts, matplotlib figures) takes Plotly's own
path unchanged. It is one part of :func:`server.install` (``ATTN_FAST_PLOTLY=0``: left out).
Measured gain: see the table in ``server/__init__.py``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io
import plotly.tools
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import is_skipped_key, to_typed_array_spec

from ui.plotly_spec import Marked, Marks

#: id(figure) -> (a weak reference to it, its spec). Figures are unhashable (they define __eq__),
#: so they are keyed by identity; the entry is dropped when the figure is collected.
_specs: dict[int, tuple[weakref.ref, _Spec]] = {}
_lock = threading.Lock()


class _Spec(dict):
    """A figure's plain dict (what Streamlit inspects for its size) with its JSON attached."""

    json: str


def spec(fig: go.Figure) -> _Spec:
    """The figure's dict and JSON, computed on first use and kept for the figure's lifetime."""
    key = id(fig)
    with _lock:
        entry = _specs.get(key)
    if entry is not None and entry[0]() is fig:
        return entry[1]
    found = _Spec(plain(fig))
    found.json = _to_json(found, validate=False)
    with _lock:
        _specs[key] = (weakref.ref(fig, lambda _, key=key: _forget(key)), found)
    return found


_SCALARS = (str, int, float, bool, type(None))


def _array_like(value: Any) -> bool:
    """What Plotly turns into a typed array when it is a dict value (numpy arrays, pandas series)."""
    if isinstance(value, np.ndarray):
        return True
    return not isinstance(value, (_SCALARS, dict, list, tuple)) and is_homogeneous_array(value)


#: The last template converted and its plain form: every figure holds its own copy of the same
#: house template (~7 KB, most of a small figure), and comparing two copies (~7 µs, in C) is far
#: cheaper than walking one (~0.45 ms).
_last_template: tuple[Any, Any] = (None, None)


def _plain_template(template: Any) -> Any:
    global _last_template
    source, converted = _last_template
    if source is None or template != source:
        converted = _plain_value(template)
        _last_template = (template, converted)
    return converted


def _plain_item(key: str, item: Any) -> Any:
    """A dict's value, as Plotly's ``convert_to_base64`` leaves it (without changing ``item``)."""
    if is_skipped_key(key):
        return item
    if key == "template" and isinstance(item, dict):
        return _plain_template(item)
    if _array_like(item):
        return to_typed_array_spec(item)
    return _plain_value(item)


def _plain_value(value: Any) -> Any:
    """A copy of the containers in ``value`` with its dicts' array values as typed arrays."""
    if isinstance(value, dict):
        return {key: _plain_item(key, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if any(isinstance(item, (dict, list, tuple)) for item in value):
            return [_plain_value(item) for item in value]
        return value  # scalars (or arrays, which Plotly leaves to the JSON encoder): shared, not copied
    return value


def plain(fig: go.Figure) -> dict:
    """``fig.to_dict()`` without its deep copy: the same dict for JSON, sharing the figure's leaves.

    Plotly's ``to_dict`` deep-copies ``fig``'s data and layout, then replaces every array held as
    a dict value by a typed array (``{"dtype", "bdata"}``, skipping keys such as ``range``). This
    builds new dicts and lists only where they hold something to replace, and leaves lists of
    scalars and strings shared with the figure, which is never mutated once it is shown.
    """
    if fig._frame_objs:  # animations: not in this app; Plotly's own path
        return fig.to_dict()
    return {"data": [_plain_value(trace) for trace in fig._data], "layout": _plain_value(fig._layout)}


def marked_spec(fig: go.Figure, marks: Marks) -> _Spec:
    """``fig``'s dict (:func:`spec`, computed once per figure) with ``marks`` added, and its JSON."""
    base = spec(fig)
    layout = dict(base["layout"])
    layout["shapes"] = [*layout.get("shapes", ()), *marks.shapes]
    layout["annotations"] = [*layout.get("annotations", ()), *marks.annotations]
    out = _Spec(base, layout=layout)
    out.json = _to_json(out, validate=False)
    return out


def _forget(key: int) -> None:
    with _lock:
        _specs.pop(key, None)


_return_figure = plotly.tools.return_figure_from_figure_or_data
_to_json = plotly.io.to_json


def _fast_return_figure(figure_or_data: Any, validate_figure: bool) -> Any:
    if isinstance(figure_or_data, _Spec):
        return figure_or_data  # made here from a validated figure (and marks)
    if isinstance(figure_or_data, go.Figure):
        return spec(figure_or_data)  # validated when it was built
    if isinstance(figure_or_data, Marked):
        return marked_spec(figure_or_data.figure, figure_or_data.marks)
    return _return_figure(figure_or_data, validate_figure)


def _fast_to_json(fig: Any, *args: Any, **kwargs: Any) -> str:
    if isinstance(fig, _Spec):
        return fig.json
    return _to_json(fig, *args, **kwargs)


def install() -> None:
    """Route Streamlit's figure validation and serialisation through :func:`spec` (idempotent)."""
    plotly.tools.return_figure_from_figure_or_data = _fast_return_figure
    plotly.io.to_json = _fast_to_json


def uninstall() -> None:
    """Put Plotly's own two functions back (tests and benchmarks compare both paths in one process)."""
    plotly.tools.return_figure_from_figure_or_data = _return_figure
    plotly.io.to_json = _to_json


def installed() -> bool:
    """Whether Streamlit's Plotly calls go through :func:`spec` now."""
    return plotly.io.to_json is _fast_to_json
