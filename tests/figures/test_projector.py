"""figures.projector: every text of a projected figure is at least 16 px, set where Streamlit's
chart theme would otherwise size it, and the (shared, cached) input figure is left unchanged."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from figures import projector
from figures.common import grid_layout


def _fonts(node, path=()):
    """Every font object of a plain figure dict (template excepted), with where it is."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "template":
                continue
            if key.endswith("font") and isinstance(value, dict):
                yield (*path, key), value
            yield from _fonts(value, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _fonts(item, (*path, i))


def _figures() -> dict[str, go.Figure]:
    """One figure of each kind the app draws, sized as the house builders size them."""
    layout, axes = grid_layout(1, 2, titles=("1. raw", "2. scaled"))
    heatmaps = go.Figure(
        [
            go.Heatmap(z=np.eye(3), text=[["1"] * 3] * 3, texttemplate="%{text}", textfont={"size": 12},
                       colorbar={"x": 0.45}, xaxis="x" + axes[0], yaxis="y" + axes[0]),
            go.Heatmap(z=np.eye(3), coloraxis="coloraxis", xaxis="x" + axes[1], yaxis="y" + axes[1]),
        ],
        layout={**layout, "coloraxis": {"colorbar": {"title": {"text": "weight"}}}, "title": "six maps"},
    )  # fmt: skip
    lines = go.Figure(
        [
            go.Scatter(x=[0, 1], y=[1, 0], name="fit"),
            go.Scatter(x=[0, 1], y=[0, 1], name="b", legend="legend2"),
        ],
        layout={
            "xaxis": {"title": {"text": "x"}},
            "yaxis": {"title": {"text": "y"}, "tickfont": {"size": 12}},
            "legend2": {"y": 0.5},
            "annotations": [{"text": "note", "x": 0, "y": 0, "showarrow": False, "font": {"size": 13}}],
        },
    )
    table = go.Figure(
        go.Table(
            header={"values": ["a", "b"], "font": {"size": 15}, "height": 30},
            cells={"values": [["1"], ["2"]], "font": {"size": 14}},
        )
    )
    bars = go.Figure(go.Bar(x=["a", "b"], y=[1, 2], text=["1", "2"], textposition="outside"))
    return {"heatmaps": heatmaps, "lines": lines, "table": table, "bars": bars}


@pytest.mark.parametrize("kind", ["heatmaps", "lines", "table", "bars"])
def test_every_text_is_at_least_16_px_and_the_input_is_unchanged(kind):
    fig = _figures()[kind]
    before = fig.to_dict()
    big = projector.for_projector(fig)
    assert fig.to_dict() == before  # the cached figure is shared: never touched
    assert big is not fig
    found = dict(_fonts(big.to_dict()))
    assert found  # something was sized
    sizes = {path: font.get("size") for path, font in found.items()}
    assert all(size is not None and size >= 16 for size in sizes.values()), sizes
    # Streamlit's theme sizes these in the template (12-14 px): the figure must say them itself
    layout = big.to_dict()["layout"]
    assert layout["font"]["size"] == 20
    assert layout["hoverlabel"]["font"]["size"] >= 16
    axes = [k for k in layout if k.startswith(("xaxis", "yaxis"))]
    assert {"xaxis", "yaxis"} <= set(axes)
    for axis in axes:
        assert layout[axis]["tickfont"]["size"] >= 16
        assert layout[axis]["title"]["font"]["size"] >= 16
    for legend in [k for k in layout if k.startswith("legend")]:
        assert layout[legend]["font"]["size"] >= 16


def test_sizes_the_figure_sets_itself_grow_by_four_thirds_never_below_16():
    big = projector.for_projector(_figures()["heatmaps"]).to_dict()
    assert big["data"][0]["textfont"]["size"] == 16  # 12 * 4/3
    assert [a["font"]["size"] for a in big["layout"]["annotations"]] == [20, 20]  # panel titles: 15 -> 20
    assert big["layout"]["title"]["font"]["size"] == 22
    assert big["data"][0]["colorbar"]["tickfont"]["size"] == 18  # a trace's own colour bar
    assert big["data"][0]["colorbar"]["x"] == 0.45  # ... keeps its place
    assert big["layout"]["coloraxis"]["colorbar"]["tickfont"]["size"] == 18
    assert big["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "weight"
    assert big["layout"]["xaxis2"]["tickfont"]["size"] == 18  # every panel's axes
    margins = go.Figure(layout={"margin": {"l": 85, "r": 20, "t": 60, "b": 75}})
    assert projector.for_projector(margins).layout.margin.to_plotly_json() == {
        "l": 113,
        "r": 27,
        "t": 80,
        "b": 100,
    }
    lines = projector.for_projector(_figures()["lines"]).to_dict()
    assert lines["layout"]["yaxis"]["tickfont"]["size"] == 16  # 12 * 4/3
    assert lines["layout"]["annotations"][0]["font"]["size"] == 17  # 13 * 4/3 = 17.3
    assert lines["layout"]["legend2"]["font"]["size"] == 18
    table = projector.for_projector(_figures()["table"]).to_dict()["data"][0]
    assert (table["header"]["font"]["size"], table["cells"]["font"]["size"]) == (20, 19)
    assert table["header"]["height"] == 40  # rows grow with the type: 30 * 4/3


def test_projected_size_and_marks():
    assert projector.projected_size(12) == 16
    assert projector.projected_size(9) == 16  # never below
    assert projector.projected_size(30) == 40
    assert projector.projected_size([12, 15]) == [16, 20]
    assert projector.projected_size(None) is None
    mark = {"text": "d_k = 64", "x": 1, "font": {"size": 14, "color": "#555"}}
    big = projector.projected_annotation(mark)
    assert big == {"text": "d_k = 64", "x": 1, "font": {"size": 19, "color": "#555"}}
    assert mark["font"]["size"] == 14  # a new dict
    assert projector.projected_annotation({"text": "t"})["font"]["size"] == 20  # the house base, grown
