"""Serialise each Plotly figure once, not on every rerun.

``st.plotly_chart`` re-validates a figure on every call (``plotly.tools.
return_figure_from_figure_or_data(fig, validate_figure=True)`` rebuilds a ``go.Figure`` from
``fig.to_dict()``) and then re-serialises it with ``plotly.io.to_json``: 5-25 ms a figure, on
every rerun, even when the figure object is the very one shown last time (figure builders are
cached by ``ui.layout.cached_figure`` and shared). The app's figures are validated when they are
built and never mutated after they are shown, so the JSON of a figure object is computed once and
kept with the object (a weak reference: it goes when the figure goes).

:func:`install` wraps the two plotly functions Streamlit calls; anything that is not a
``go.Figure`` (dicts, matplotlib figures) takes Plotly's own path unchanged.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import plotly.graph_objects as go
import plotly.io
import plotly.tools

#: id(figure) -> (a weak reference to it, its spec). Figures are unhashable (they define __eq__),
#: so they are keyed by identity; the entry is dropped when the figure is collected.
_specs: dict[int, tuple[weakref.ref, _Spec]] = {}
_lock = threading.Lock()
_installed = False


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
    found = _Spec(fig.to_dict())
    found.json = _to_json(found, validate=False)
    with _lock:
        _specs[key] = (weakref.ref(fig, lambda _, key=key: _forget(key)), found)
    return found


def _forget(key: int) -> None:
    with _lock:
        _specs.pop(key, None)


_return_figure = plotly.tools.return_figure_from_figure_or_data
_to_json = plotly.io.to_json


def _fast_return_figure(figure_or_data: Any, validate_figure: bool) -> Any:
    if isinstance(figure_or_data, go.Figure):
        return spec(figure_or_data)  # validated when it was built
    return _return_figure(figure_or_data, validate_figure)


def _fast_to_json(fig: Any, *args: Any, **kwargs: Any) -> str:
    if isinstance(fig, _Spec):
        return fig.json
    return _to_json(fig, *args, **kwargs)


def install() -> None:
    """Route Streamlit's figure validation and serialisation through :func:`spec` (idempotent)."""
    global _installed
    if _installed:
        return
    plotly.tools.return_figure_from_figure_or_data = _fast_return_figure
    plotly.io.to_json = _fast_to_json
    _installed = True
