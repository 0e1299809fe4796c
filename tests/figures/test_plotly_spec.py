"""ui.plotly_spec: Streamlit's per-rerun validation and JSON of a figure, done once per figure."""

from __future__ import annotations

import gc
import json

import plotly.graph_objects as go
import plotly.io
import plotly.tools
import pytest

from ui import plotly_spec


@pytest.fixture(autouse=True)
def installed():
    plotly_spec.install()


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
