"""core.lessons.in_context: reading a learned key-query matrix (the window's shape, along b and
across it), whether a run has settled, and the page's snapshots, against matrices built by hand
and formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core import in_context as ic
from core.lessons import in_context as lesson

#: Small configs: 300 steps of 16 tasks train in well under a second.
FAST = {"steps": 300, "batch_tasks": 16, "test_tasks": 128}


def test_low_rank_M_aligns_with_b():
    for dim in (2, 5):
        config = ic.ICLConfig(family="low_rank", dim=dim, **FAST)
        run = ic.train_icl(config)
        window = lesson.window_of(run.m, run.b)
        assert window.cosine > 0.9, dim
        assert window.angle_deg < 26
    # in 5-D the window across b is clearly wider than along it
    assert window.widths[0] < 0.8 * np.median(window.widths[1:])


def test_window_and_bandwidth_readouts():
    b = np.array([1.0, 0.0])
    m = np.array([[25.0, 0.0], [0.0, 1.0]])
    window = lesson.window_of(m, b)
    np.testing.assert_allclose(window.widths, [0.2, 1.0])
    assert window.cosine == pytest.approx(1.0)
    assert window.angle_deg == pytest.approx(0.0, abs=1e-6)
    assert ic.effective_bandwidth(m, "low_rank", b) == pytest.approx(0.2)
    assert ic.effective_bandwidth(m, "full") == pytest.approx(1 / math.sqrt(13))
    assert ic.effective_bandwidth(-m, "full") == ic.H_CAP
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert lesson.window_of(rot @ m @ rot.T, b).angle_deg == pytest.approx(90.0)
    with pytest.raises(ValueError, match="hidden direction"):
        ic.effective_bandwidth(m, "low_rank")


def _rotated(curvatures: list[float], angle: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """M = R diag(curvatures) Rᵀ with R a rotation about the third axis, and b = R e1 (3-D)."""
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return rot @ np.diag(curvatures) @ rot.T, rot[:, 0]


def test_window_reads_m_along_b_and_across_it_with_negative_curvature():
    """Issue 22.6: the learned M of the low-rank d = 3 run has eigenvalues like [16.8, 14.8, -13.4]:
    along b a window, across b one as narrow and one where the score grows with distance."""
    m, b = _rotated([16.8, 14.8, -13.4])
    window = lesson.window_of(m, b)
    assert window.along_b == pytest.approx(16.8)
    np.testing.assert_allclose(window.across_b, [-13.4, 14.8])  # smallest curvature first
    np.testing.assert_allclose(window.curvatures, [16.8, 14.8, -13.4])
    assert [lesson.curvature_kind(v) for v in window.across_b] == ["grows", "window"]
    assert lesson.curvature_kind(0.0) == "flat"
    assert not window.narrow_along_wide_across
    # the width shown for a negative curvature is only the cap: never read it as a window
    assert window.widths[-1] == ic.H_CAP
    # narrow along b and wide across it: across b at least WIDE_FACTOR times wider, or flat
    wide, b = _rotated([16.0, 16.0 / lesson.WIDE_FACTOR**2, -0.001])
    assert lesson.window_of(wide, b).narrow_along_wide_across
    assert not lesson.window_of(
        *_rotated([16.0, 16.0 / lesson.WIDE_FACTOR**2 * 1.1, 0.0])
    ).narrow_along_wide_across
    assert not lesson.window_of(
        *_rotated([16.0, 1.0, -16.0 / lesson.WIDE_FACTOR**2 * 1.1])
    ).narrow_along_wide_across


def test_the_default_low_rank_d3_run_is_not_narrow_along_and_wide_across():
    run = ic.train_icl(ic.ICLConfig(family="low_rank", dim=3))
    window = lesson.window_of(run.m, run.b)
    assert window.cosine > 0.9  # aligned with b ...
    assert "grows" in {lesson.curvature_kind(v) for v in window.across_b}  # ... but no window across b
    assert not window.narrow_along_wide_across


def test_bandwidth_drift_against_a_formula():
    rate = 0.0005  # h falls like exp(-rate t): the means of two windows w apart differ by exp(-rate w)
    h = np.exp(-rate * np.arange(501))
    drift, window = lesson.bandwidth_drift(h)
    assert window == lesson.DRIFT_WINDOW
    assert drift == pytest.approx(math.exp(-rate * lesson.DRIFT_WINDOW) - 1)
    assert lesson.bandwidth_drift(np.full(501, 0.2))[0] == pytest.approx(0.0)
    drift, window = lesson.bandwidth_drift(h[:101])  # a short run compares its halves
    assert window == 50
    assert drift == pytest.approx(math.exp(-rate * 50) - 1)
    assert lesson.bandwidth_drift(h[:15]) is None


@pytest.mark.slow
def test_n128_after_the_default_steps_is_still_moving():
    """Issue 22.6: at N = 128 the default 500 steps leave the bandwidth drifting (oracle ~0.12)."""
    run = ic.train_icl(ic.ICLConfig(n_context=128))
    drift, _ = lesson.bandwidth_drift(run.bandwidth)
    assert drift < -0.03  # still narrowing by more than a settled run's jitter
    default = ic.train_icl(ic.ICLConfig())
    assert abs(lesson.bandwidth_drift(default.bandwidth)[0]) < 0.03  # N = 32: settled


def test_untrained_matrix_is_where_a_run_starts():
    config = ic.ICLConfig(dim=3, steps=1, batch_tasks=4, test_tasks=8)
    np.testing.assert_array_equal(lesson.untrained_matrix(3), np.eye(3))
    np.testing.assert_array_equal(ic.start_icl(config).m, lesson.untrained_matrix(3))


def test_tail_bandwidth_is_the_geometric_mean_of_the_last_steps():
    h = [4.0] * 10 + [1.0, 4.0] * (lesson.SWEEP_TAIL // 2)
    assert lesson.tail_bandwidth(h) == pytest.approx(2.0)  # √(1 · 4)
    assert lesson.tail_bandwidth([0.5, 2.0]) == pytest.approx(1.0)  # fewer steps than the tail: all


def test_window_snapshots_keep_first_and_last_and_draw_in_bs_plane():
    config = ic.ICLConfig(family="low_rank", dim=3, steps=40, batch_tasks=8, test_tasks=16)
    run = ic.train_icl(config)
    shape = lesson.window_snapshots(run, 5)
    assert shape.steps == (0, 10, 20, 30, 40)
    assert shape.matrices.shape == (5, 2, 2)
    np.testing.assert_array_equal(shape.b, [1.0, 0.0])  # b along the first axis of the plane
    for k, step in enumerate(shape.steps):  # bᵀ M b survives the projection
        assert shape.matrices[k, 0, 0] == pytest.approx(float(run.b @ run.matrices[step] @ run.b))
    np.testing.assert_array_equal(shape.window.curvatures, lesson.window_of(run.m, run.b).curvatures)
    assert lesson.window_snapshots(run, 1).steps == (0,)


def test_compare_attentions_trains_each_attention_on_the_same_tasks():
    config = ic.ICLConfig(steps=30, batch_tasks=8, test_tasks=16)
    result = lesson.compare_attentions(config)
    assert set(result) == set(ic.ATTENTIONS)
    for attention, (error, h) in result.items():
        run = ic.train_icl(config.replace(attention=attention))
        assert error == run.test_error[-1]
        assert h == pytest.approx(math.exp(np.mean(np.log(run.bandwidth[-lesson.SWEEP_TAIL :]))))
