"""Colour is never the only cue (WCAG 1.4.1, issue 24): the kernel-regression figures that encoded a
value by colour alone carry a second cue. Expected values come from plain loops over the inputs."""

from __future__ import annotations

import numpy as np

from figures.common import Labels
from figures.kernel_regression import (
    WEIGHT_SIZE_RANGE,
    attention_row_figure,
    kernel_shapes_figure,
    weight_matrix_figure,
)


def test_sample_weights_are_sizes_too_and_in_the_hover():
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-2, 2, 30))
    row = rng.random(30)
    row[4] = 0.0
    row /= row.sum()
    labels = Labels.of(x="x", y="y", data="samples", estimate="f", weights="w", weight_axis="w")
    fig = attention_row_figure(x, np.sin(x), row, x_query=0.0, y_hat=0.1, labels=labels)
    samples = fig.data[0]
    sizes = np.asarray(samples.marker.size, dtype=float)
    for i in range(30):
        for j in range(30):
            if row[i] < row[j]:
                assert sizes[i] < sizes[j]
    assert sizes[4] == WEIGHT_SIZE_RANGE[0]  # no weight: the smallest marker
    assert sizes[int(np.argmax(row))] == WEIGHT_SIZE_RANGE[1]
    np.testing.assert_allclose(samples.customdata, row)
    assert "%{customdata" in samples.hovertemplate


def test_each_row_of_the_weight_matrix_marks_its_largest_weight():
    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(-3, 3, 12))
    xq = np.linspace(-3, 3, 5)
    w = rng.random((5, 12))
    w[2] = np.nan  # an undefined query: no marker
    w[3, 7] = np.nan
    fig = weight_matrix_figure(w, x, xq, labels=Labels.of(x="key", y="query", z="weight", peak="largest"))
    heat, peaks = fig.data
    assert heat.colorbar.title.text == "weight"
    expected = []
    for i in range(5):
        best = None
        for j in range(12):
            if np.isfinite(w[i, j]) and (best is None or w[i, j] > w[i, best]):
                best = j
        if best is not None:
            expected.append((heat.y[i], heat.x[best], w[i, best]))
    assert list(zip(peaks.y, peaks.x, peaks.customdata, strict=True)) == expected
    assert peaks.name == "largest"
    # without a name for it the map is as before: one trace
    assert len(weight_matrix_figure(w, x, xq, labels=Labels()).data) == 1


def test_kernels_side_by_side_differ_by_dash_as_well_as_colour():
    u = np.linspace(-2, 2, 50)
    shapes = {f"k{i}": np.maximum(0.0, 1 - np.abs(u) / (i + 1)) for i in range(8)}
    fig = kernel_shapes_figure(
        u, shapes, selected="k0", labels=Labels.of(x="u", y="K", **{k: k for k in shapes})
    )
    dashes = [trace.line.dash for trace in fig.data]
    assert len(dashes) == 8
    assert len(set(dashes)) == 8
