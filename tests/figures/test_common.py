"""The shared figure helpers: log axes whose every tick reads as the number it marks."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from figures.common import HOUSE_TEMPLATE, TRACE_TYPES, UNUSED_LAYOUT, Labels, base_layout, log_axis
from figures.kernel_regression import cv_figure

_SUPERSCRIPTS = dict(zip("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789", strict=True))


def _parse(text: str) -> float:
    """Read a tick label back as a number: '0.02', '300', '10⁻⁵', '2×10⁻⁵'."""
    match = re.fullmatch(r"(?:([\d.]+)×)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if match:
        exponent = int("".join(_SUPERSCRIPTS[c] for c in match.group(2)))
        return float(match.group(1) or 1) * 10.0**exponent
    return float(text)


@pytest.mark.parametrize(
    "data", [[0.013, 0.9], [1e-6, 3e2], [0.5, 0.51], [2e-5, 7e-5], [1, 10_000], [0.001, 0.002]]
)
def test_every_log_tick_is_labelled_with_its_own_value(data):
    axis = log_axis(np.array(data))
    assert axis["type"] == "log"
    labels = [_parse(text) for text in axis["ticktext"]]
    np.testing.assert_allclose(labels, axis["tickvals"], rtol=1e-9)
    inside = [v for v in axis["tickvals"] if min(data) <= v <= max(data)]
    decades = np.log10(max(data)) - np.log10(min(data))
    if decades >= 1:
        assert len(inside) >= 2  # at least two labelled ticks across the data


def test_log_axis_ignores_what_a_log_axis_cannot_show():
    axis = log_axis(np.array([np.nan, 0.0, -1.0, 0.1, 1.0]))
    assert min(axis["tickvals"]) > 0
    assert log_axis(np.array([np.nan, -1.0])) == {"type": "log"}


def test_cv_plot_has_no_bare_minor_tick_labels():
    hs = np.geomspace(0.01, 1.0, 40)
    cv = 0.05 + (np.log(hs) + 2) ** 2 / 50
    labels = Labels.of(title="t", x="h", y="CV", curve="CV", star="h*", current="h")
    fig = cv_figure(hs, cv, h_star=0.15, cv_star=float(cv.min()), h_current=0.3, labels=labels)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.type == "log"
        labels = [_parse(text) for text in axis.ticktext]
        np.testing.assert_allclose(labels, axis.tickvals, rtol=1e-9)
    assert {"0.01", "0.02", "0.05", "0.1"} <= set(fig.layout.xaxis.ticktext)


def test_the_claim_label_is_readable_where_the_current_h_line_crosses_it():
    """The post's claimed range 0.2-0.4 holds the default h = 0.3: its dotted line ran through the
    band's label, which now has a nearly opaque background of its own (drawn over the line)."""
    hs = np.geomspace(0.01, 1.0, 40)
    cv = 0.05 + (np.log(hs) + 2) ** 2 / 50
    labels = Labels.of(title="t", x="h", y="CV", curve="CV", star="h*", current="h", claim="post")
    fig = cv_figure(hs, cv, h_star=0.15, cv_star=0.05, h_current=0.3, claim=(0.2, 0.4), labels=labels)
    (note,) = [a for a in fig.layout.annotations if a.text == "post"]
    assert 10**note.x < 0.3  # the label starts left of the current h: the line crosses it
    alpha = float(note.bgcolor.rsplit(",", 1)[-1].rstrip(")")) if note.bgcolor.startswith("rgba") else 1.0
    assert note.bgcolor.replace(" ", "").startswith(("rgba(255,255,255", "white", "#fff"))
    assert alpha >= 0.8


def test_titles_sit_left_of_the_vertical_toolbar():
    fig = base_layout(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])), title="A long title")
    template = fig.layout.template.layout
    assert template.title.xanchor == "left"
    assert template.title.x == 0
    assert template.modebar.orientation == "v"


def test_house_template_keeps_plotly_whites_look_for_the_traces_the_app_draws():
    house = pio.templates[HOUSE_TEMPLATE].to_plotly_json()
    white = pio.templates["plotly_white"].to_plotly_json()
    assert set(house["data"]) == set(TRACE_TYPES)
    for trace_type in TRACE_TYPES:
        assert house["data"][trace_type] == white["data"][trace_type]
    for key, value in white["layout"].items():
        if key in ("xaxis", "yaxis"):  # plotly_white's axes, tick labels never hidden (a speed-up)
            assert house["layout"][key] == {**value, "ticklabeloverflow": "allow"}, key
        elif key not in (*UNUSED_LAYOUT, "font", "legend", "title", "modebar"):
            assert house["layout"][key] == value, key
    assert len(json.dumps(house)) < len(json.dumps(white)) / 2


def test_position_labels_are_distinct_in_order_and_as_short_as_they_can_be():
    from figures.common import position_labels

    assert position_labels([0.5, 1.25, 2.0]) == ["0.50", "1.25", "2.00"]
    assert position_labels([1.0, 1.001, 1.0004]) == ["1.0000", "1.0010", "1.0004"]  # more decimals
    assert position_labels([0.5, 0.5, 0.5, 1.0]) == ["0.500000", "0.500000 (2)", "0.500000 (3)", "1.000000"]
    assert position_labels([]) == []


def test_weight_maps_keep_one_column_per_sample():
    """Two samples closer than 0.01 used to share the label ``f"{x:.2f}"``: Plotly merged them
    into one category column, hiding one sample's weights (and drew the map cell by cell)."""
    from figures.attention_shared import weight_map
    from figures.kernel_regression import weight_matrix_figure
    from figures.kernels_to_attention import side_by_side

    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3, 3, 200))
    xq = np.linspace(-3, 3, 60)
    assert len({f"{v:.2f}" for v in x}) < x.size  # the old labels collide for these samples
    w = rng.random((xq.size, x.size))
    figs = [
        weight_map(w, x, xq, labels=Labels(), height=460),  # the kernels-to-attention page's matrix
        side_by_side(w, w, x_query=xq, x_train=x, titles=("a", "b"), labels=Labels()),
        weight_matrix_figure(w, x, xq, labels=Labels()),
    ]
    for fig in figs:
        for trace in fig.data:
            assert len(set(trace.x)) == x.size
            assert len(set(trace.y)) == xq.size
            assert [float(s) for s in trace.x] == pytest.approx(list(x), abs=5e-3)  # in x order


def test_position_ticks_name_existing_columns_at_round_values():
    from figures.common import position_labels, position_ticks

    x = np.sort(np.random.default_rng(1).uniform(-3, 3, 200))
    labels = position_labels(x)
    ticks = position_ticks(x, labels, 10)
    assert ticks["tickmode"] == "array"
    assert set(ticks["tickvals"]) <= set(labels)
    assert ticks["ticktext"] == ["-2", "-1", "0", "1", "2"]  # round values, not -2.29, -1.68, ...
    for text, label in zip(ticks["ticktext"], ticks["tickvals"], strict=True):
        assert abs(x[labels.index(label)] - float(text)) < 0.1  # on the column nearest the value
    assert position_ticks([], [], 10)["tickvals"] == []
    assert len(position_ticks([1.0, 2.0], ["1.00", "2.00"], 10)["tickvals"]) == 2
    # a short range: round values at its own scale
    short = position_ticks([0.501, 0.502, 0.503], ["a", "b", "c"], 10)
    assert short["tickvals"] == ["a", "b", "c"]
    assert short["ticktext"] == ["0.5010", "0.5020", "0.5030"]


def test_with_alpha_makes_a_palette_colour_see_through():
    from figures.common import PALETTE, WHITE, with_alpha

    assert with_alpha(PALETTE[0], 0.25) == "rgba(0,114,178,0.25)"  # #0072B2 by hand
    assert with_alpha(WHITE, 0.8) == "rgba(255,255,255,0.8)"
    for bad in (("#FFF", 0.5), ("0072B2", 0.5), (PALETTE[0], 1.5)):
        with pytest.raises(ValueError, match="rrggbb"):
            with_alpha(*bad)


def test_labels_keep_their_roles_and_name_a_missing_one() -> None:
    """``Labels``: roles given as keywords come back by name; a role never given is a KeyError."""

    labels = Labels.of(title="T", x="X", y="Y", data="Data", fit="NW fit")
    assert (labels.title, labels.x, labels.y, labels.z) == ("T", "X", "Y", "")
    assert labels.name("fit") == "NW fit"
    assert labels.has("data")
    assert not labels.has("truth")
    with pytest.raises(KeyError, match=r"'truth'.*data, fit"):
        labels.name("truth")
    assert hash(labels) == hash(Labels.of(title="T", x="X", y="Y", data="Data", fit="NW fit"))
