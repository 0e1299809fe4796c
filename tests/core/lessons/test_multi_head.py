"""core.lessons.multi_head: the multi-head page's measurements, typed and checked against torch."""

from __future__ import annotations

import numpy as np
import pytest

from core.lessons import multi_head as mha
from core.positional import POSITIONAL_KINDS

SPEC = mha.LayerSpec(16, 4, None, None, 0, "sentence", 10, "en", "none", "none")


def test_head_view_shapes_and_rows():
    v = mha.head_view(SPEC)
    T = len(v.words)
    assert v.weights.shape == (4, T, T)
    assert np.allclose(v.weights.sum(-1), 1.0)
    assert v.concat.shape == (T, 16)
    assert v.heads.shape == (1, 4, T, 4)
    assert v.labels[1] == "1:cat"
    assert v.similarity.shape == (4, 4)
    assert np.allclose(np.diag(v.similarity), 1.0)
    # the two "cat"s (1 and 8) have the same embedding and no positions: identical columns
    assert np.allclose(v.weights[:, :, 1], v.weights[:, :, 8])


def test_library_check_agrees_with_torch():
    f64, f32 = mha.library_check(SPEC)
    assert f64.reference == "torch.nn.MultiheadAttention"
    assert f64.output_max_diff < 1e-12
    assert f64.weights_max_diff < 1e-12
    assert 0 <= f32.output_max_diff < 1e-5


def test_positions_view_kernel_depends_on_distance_only():
    pos = mha.positions_view(16, 0, length=24)
    k = pos.kernel_sinusoidal
    assert np.allclose(np.diag(k, 3), np.diag(k, 3)[0])
    d, values = pos.formula
    row = pos.rows_sinusoidal[0]
    assert np.allclose(row.values, values[np.searchsorted(d, row.distances)], atol=1e-5)


def test_permutation_view_symmetry_only_without_positions_and_mask():
    res = mha.permutation_view(SPEC, "reverse")
    assert sorted(res.perm.tolist()) == list(range(11))
    assert set(res.map_diff) == {(pe, mk) for pe in POSITIONAL_KINDS for mk in mha.MASK_KINDS}
    assert res.map_diff[("none", "none")] < 1e-12
    assert res.map_diff[("sinusoidal", "none")] > 1e-3
    assert res.map_diff[("none", "causal")] > 1e-3
    shuffled, predicted, diff = res.maps["none"]
    assert np.allclose(np.abs(shuffled - predicted), diff)


def test_head_pairs_and_errors():
    v = mha.head_view(SPEC)
    pairs = mha.head_pairs(v.weights, 0.0)
    assert len(pairs) == 6
    assert all(a < b for a, b, _ in pairs)
    with pytest.raises(ValueError, match="divide"):
        mha.head_view(mha.LayerSpec(16, 3, None, None, 0, "random", 5, "en", "none", "none"))
    with pytest.raises(ValueError, match="mask"):
        mha.head_view(mha.LayerSpec(16, 4, None, None, 0, "random", 5, "en", "none", "future"))
