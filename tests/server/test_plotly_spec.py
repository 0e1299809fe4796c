"""server.plotly_spec: Streamlit's per-rerun validation and JSON of a figure, done once per figure;
ui.plotly_spec.Marked: marks over a cached figure, the same JSON with or without that fast path."""

from __future__ import annotations

import gc
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import plotly.tools
import pytest

import server
from figures.common import HOUSE_TEMPLATE
from lessons import LESSONS
from server import plotly_spec
from ui.plotly_spec import Marked, Marks

ORIGINAL_TO_JSON = plotly_spec._to_json
ORIGINAL_RETURN_FIGURE = plotly_spec._return_figure


@pytest.fixture(autouse=True)
def installed():
    """The fast path on for each test; afterwards as the server layer of this process has it."""
    plotly_spec.install()
    yield
    parts = server.installed()
    if parts is None or not parts.fast_plotly:
        plotly_spec.uninstall()


def test_install_and_uninstall_swap_exactly_plotlys_two_functions():
    assert plotly_spec.installed()
    assert plotly.io.to_json is not ORIGINAL_TO_JSON
    plotly_spec.uninstall()
    assert not plotly_spec.installed()
    assert plotly.io.to_json is ORIGINAL_TO_JSON
    assert plotly.tools.return_figure_from_figure_or_data is ORIGINAL_RETURN_FIGURE
    plotly_spec.install()
    plotly_spec.install()  # idempotent: still the fast path, never wrapped twice
    assert plotly_spec.installed()
    assert plotly_spec._to_json is ORIGINAL_TO_JSON


def _figure() -> go.Figure:
    return go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="s"), layout={"title": {"text": "t"}})


def test_a_figure_is_serialised_once_and_exactly_as_plotly_does():
    fig = _figure()
    first = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    assert first == fig.to_dict()  # what Streamlit inspects (width, height)
    assert json.loads(plotly.io.to_json(first, validate=False)) == json.loads(
        plotly_spec._to_json(fig.to_dict(), validate=False)
    )
    again = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    assert again is first  # the same object: nothing recomputed on the next rerun


def test_other_inputs_take_plotlys_own_path():
    data = {"data": [{"type": "scatter", "x": [1], "y": [2]}]}
    out = plotly.tools.return_figure_from_figure_or_data(data, validate_figure=True)
    assert not isinstance(out, plotly_spec._Spec)
    with pytest.raises(ValueError, match="nope"):  # validation still happens for dicts
        plotly.tools.return_figure_from_figure_or_data({"data": [{"type": "nope"}]}, validate_figure=True)
    assert json.loads(plotly.io.to_json(_figure()))["data"][0]["name"] == "s"


def test_the_spec_goes_with_its_figure():
    fig = _figure()
    plotly_spec.spec(fig)
    key = id(fig)
    assert key in plotly_spec._specs
    del fig
    gc.collect()
    assert key not in plotly_spec._specs


def _plotly_json(fig: go.Figure) -> object:
    """Plotly's own answer: the JSON of ``fig.to_dict()`` (a deep copy with typed arrays)."""
    return json.loads(plotly_spec._to_json(fig.to_dict(), validate=False))


def _ours(fig: go.Figure) -> object:
    return json.loads(plotly_spec._to_json(plotly_spec.plain(fig), validate=False))


def _every_kind_of_value() -> go.Figure:
    rng = np.random.default_rng(0)
    fig = go.Figure(
        [
            go.Scatter(x=np.arange(5), y=rng.normal(size=5), text=["a", "b", "c", "d", "e"], name="ints"),
            go.Scatter(x=np.arange(3, dtype=np.int64) * 10**10, y=[1.0, float("nan"), 3.0], mode="lines"),
            go.Scatter(x=pd.Series([0.5, 1.5]), y=np.array([True, False]), customdata=np.ones((2, 3))),
            go.Heatmap(z=np.where(np.eye(3) > 0, np.nan, rng.random((3, 3))), x=("p", "q", "r"), zmin=0),
            go.Heatmap(z=[[1, 2], [3, 4]], colorscale=[[0, "white"], [1, "red"]], showscale=False),
            go.Bar(
                x=np.array(["u", "v"]),
                y=np.array([1, -200], dtype=np.int16),
                marker={"color": ["red", "blue"]},
            ),
            go.Table(header={"values": ["a", "b"]}, cells={"values": [np.arange(3), ["x", "y", "z"]]}),
        ],
        layout={
            "title": {"text": "t"},
            "xaxis": {"range": np.array([0.0, 4.0]), "tickvals": np.arange(4), "ticktext": list("wxyz")},
            "shapes": [{"type": "line", "x0": 1, "x1": 1, "y0": 0, "y1": 1, "yref": "paper"}],
            "annotations": [{"x": 1, "y": 2, "text": "note", "showarrow": False}],
            "height": 300,
        },
    )
    fig.add_vline(x=2.0)
    return fig


def test_plain_gives_plotlys_json_for_every_kind_of_value():
    fig = _every_kind_of_value()
    before = _plotly_json(fig)
    assert _ours(fig) == before
    assert _plotly_json(fig) == before  # the figure itself is left as it was


def test_plain_turns_arrays_into_typed_arrays_like_plotly():
    fig = go.Figure(go.Scatter(x=np.arange(4.0), y=[1, 2, 3, 4]))
    data = plotly_spec.plain(fig)["data"][0]
    assert set(data["x"]) >= {"dtype", "bdata"}  # compact, as Plotly sends it
    assert data["y"] == [1, 2, 3, 4]
    assert isinstance(fig.data[0].x, np.ndarray)  # the figure keeps its array


@pytest.mark.parametrize("page", [lesson.url_path for lesson in LESSONS])
def test_every_figure_the_pages_show_has_plotlys_json(page, monkeypatch):
    """Every figure a page draws with ``st.plotly_chart`` (``?live=0``: the charts of
    ``ui.house_chart`` serialise their own), ours against Plotly's ``to_dict``."""
    from tests.app.conftest import assert_clean, open_page

    shown: list[go.Figure] = []
    real = plotly_spec.plain
    monkeypatch.setattr(plotly_spec, "plain", lambda fig: shown.append(fig) or real(fig))
    plotly_spec._specs.clear()  # figures cached by earlier tests are serialised again
    at = open_page(page, params={"live": "0"})
    assert_clean(at)
    monkeypatch.undo()
    assert len(shown) >= 3
    styled = set(plotly.io.templates[HOUSE_TEMPLATE].data.to_plotly_json())
    for fig in shown:
        assert _ours(fig) == _plotly_json(fig)
        assert {trace.type for trace in fig.data} <= styled, (
            "add the trace type to figures.common.TRACE_TYPES"
        )


def _dk_like(vline: float | None = None) -> go.Figure:
    from figures.common import Labels
    from figures.kernels_to_attention import line_figure

    d_k = np.array([1, 4, 16, 64, 256])
    return line_figure(
        d_k, {"a": d_k**0.5, "b": np.log(d_k + 1)}, labels=Labels.of(title="t", x="d_k", y="y", vline="now"),
        log_x=True, hlines={"level": 2.0}, vline=vline,
    )  # fmt: skip


def test_marks_over_a_cached_figure_are_the_figure_plotly_would_draw_with_them():
    from figures.attention_shared import vline_marks

    base = _dk_like()
    marks = Marks(*(tuple(part) for part in vline_marks(64, "now", log_x=True)))
    shown = plotly_spec.marked_spec(base, marks)
    assert json.loads(shown.json) == _plotly_json(marks.figure(base))  # what validation makes of them
    assert json.loads(shown.json) == _plotly_json(_dk_like(vline=64))  # = the figure built with it
    assert plotly.tools.return_figure_from_figure_or_data(shown, validate_figure=True) is shown
    assert len(base.layout.shapes) == 1  # the cached figure is left as it was (its hline only)
    assert plotly_spec.spec(base) is plotly_spec.spec(base)  # its own dict is still computed once


def _as_streamlit_sends(chart: object) -> object:
    """What ``st.plotly_chart`` sends for ``chart``: its two Plotly calls, as installed now."""
    figure = plotly.tools.return_figure_from_figure_or_data(chart, validate_figure=True)
    return json.loads(plotly.io.to_json(figure, validate=False))


def test_marks_over_a_figure_send_the_same_json_with_and_without_the_fast_path():
    """``Marks.over`` (what ``ui.layout.show_figure`` passes) is a dict Plotly's own validation
    takes: the app draws the marker without the server layer, and the fast path changes nothing
    the browser gets."""
    from figures.attention_shared import vline_marks

    base = _dk_like()
    marks = Marks(*(tuple(part) for part in vline_marks(64, "now", log_x=True)))
    chart = marks.over(base)
    assert isinstance(chart, Marked)
    fast = _as_streamlit_sends(chart)
    assert plotly.tools.return_figure_from_figure_or_data(chart, validate_figure=True).json  # a spec
    plotly_spec.uninstall()
    slow = _as_streamlit_sends(chart)
    assert slow == fast == _plotly_json(_dk_like(vline=64))
    assert len(base.layout.shapes) == 1  # the shared figure is left as it was
    plain_figure = _as_streamlit_sends(base)
    plotly_spec.install()
    assert _as_streamlit_sends(base) == plain_figure == _plotly_json(base)


def test_figures_are_serialised_by_orjson_with_the_same_json():
    """orjson (a pinned requirement) is Plotly's engine; its JSON equals the json module's."""
    assert plotly.io.json.config.default_engine == "auto"
    import orjson  # noqa: F401  (requirements.txt: a missing orjson fails here)

    fig = _every_kind_of_value()
    fast = plotly_spec._to_json(plotly_spec.plain(fig), validate=False)
    assert fast == plotly_spec._to_json(plotly_spec.plain(fig), validate=False, engine="orjson")
    assert json.loads(fast) == json.loads(plotly_spec._to_json(fig.to_dict(), validate=False, engine="json"))
