"""figures.in_context: the builders draw what they are given (traces, axes, ellipse geometry)."""

from __future__ import annotations

import numpy as np
import pytest

from figures import in_context as figs
from figures.common import Labels

NAMES = {k: k for k in ("attention", "oracle", "loo", "floor", "mean", "function", "context", "query")}
LABELS = Labels.of(title="t", x="x", y="y", z="w", **NAMES)


def test_bandwidth_curve_empty_then_growing():
    empty = figs.reference_curve(
        (), (), {"oracle": 0.16, "loo": 0.2}, max_steps=500, labels=LABELS, bandwidth=True
    )
    by_name = {tr.name: tr for tr in empty.data}
    assert len(by_name["attention"].x) == 0  # axes and references before any training
    assert list(by_name["oracle"].y) == [0.16, 0.16]
    assert empty.layout.yaxis.type == "log"
    low, high = empty.layout.yaxis.range
    assert 10**low < 0.16
    assert 10**high > 1.0
    grown = figs.reference_curve(
        (0, 1, 2), (1.0, 0.8, 0.5), {"oracle": 0.16}, max_steps=500, labels=LABELS, bandwidth=True
    )
    assert list(next(t for t in grown.data if t.name == "attention").y) == [1.0, 0.8, 0.5]


def test_error_curve_has_every_reference():
    refs = {"oracle": 0.15, "loo": 0.16, "mean": 0.5, "floor": 0.0625}
    fig = figs.reference_curve((0, 10), (0.5, 0.2), refs, max_steps=100, labels=LABELS, bandwidth=False)
    assert {t.name for t in fig.data} == {*refs, "attention"}
    assert [t.y[0] for t in fig.data if t.name in refs] == list(refs.values())


def test_task_figure_two_panels_and_weights():
    s = np.linspace(-3, 3, 50)
    ctx = np.array([-1.0, 0.0, 1.0])
    w_a, w_o = np.array([0.2, 0.5, 0.3]), np.array([0.1, 0.8, 0.1])
    fig = figs.task_figure(
        s, np.sin(s), ctx, np.array([0.1, 0.2, 0.3]), 0.1,
        {"attention": 0.25, "oracle": 0.2}, {"attention": w_a, "oracle": w_o},
        labels=LABELS,
    )  # fmt: skip
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 2
    np.testing.assert_allclose(bars[0].y, w_a)
    np.testing.assert_allclose(bars[1].y, w_o)
    assert all(b.yaxis == "y2" for b in bars)
    assert fig.layout.yaxis2.domain[1] < fig.layout.yaxis.domain[0]  # weights below the function
    diamonds = [t for t in fig.data if t.name in ("attention", "oracle") and t.type == "scatter"]
    assert [d.y[0] for d in diamonds] == [0.25, 0.2]


def test_ellipse_semi_axes_are_the_bandwidths():
    m = np.array([[[1.0, 0.0], [0.0, 1.0]], [[25.0, 0.0], [0.0, 1.0 / 4]]])  # h: (1, 1) then (0.2, 2)
    fig = figs.ellipse_figure(
        m, (0, 100), np.array([1.0, 0.0]), cap=2.0,
        labels=Labels.of(title="t", x="x", y="y", window="step {step}", b="b"),
    )  # fmt: skip
    first, last = fig.data[0], fig.data[1]
    assert max(np.abs(first.x)) == pytest.approx(1.0)
    assert max(np.abs(last.x)) == pytest.approx(0.2)
    assert max(np.abs(last.y)) == pytest.approx(2.0)
    assert last.name == "step 100"
    assert fig.layout.yaxis.scaleanchor == "x"  # circles look round
    # a non-positive eigenvalue is drawn at the cap
    flat = figs.ellipse_figure(
        np.array([[[4.0, 0.0], [0.0, -1.0]]]), (5,), np.array([0.0, 1.0]), cap=2.0,
        labels=Labels.of(title="t", x="x", y="y", window="{step}", b="b"),
    )  # fmt: skip
    assert max(np.abs(flat.data[0].y)) == pytest.approx(2.0)


def test_sweep_figure_and_bars():
    lip, noise, n = np.array([1.0, 2.0]), np.array([0.1, 0.5]), np.array([8, 16, 32])
    fig = figs.sweep_figure(
        lip, noise, np.array([[0.3, 0.2], [0.5, 0.4]]), np.array([[0.3, 0.2], [0.5, 0.4]]),
        n, np.array([0.3, 0.2, 0.1]), np.array([0.3, 0.2, 0.1]),
        labels=Labels.of(y="h", learned="l {noise}", oracle="o {noise}", learned_n="ln", oracle_n="on"),
        titles=("a", "b"), x_titles=("L", "N"),
    )  # fmt: skip
    assert [t.name for t in fig.data] == ["l 0.1", "o 0.1", "l 0.5", "o 0.5", "ln", "on"]
    bars = figs.error_bars(
        ["a", "b"], [0.1, 0.5], ["attention", "linear"], labels=Labels.of(title="t", y="y")
    )
    assert list(bars.data[0].y) == [0.1, 0.5]
    assert list(bars.data[0].marker.color) == [figs.COLORS["attention"], figs.COLORS["linear"]]
