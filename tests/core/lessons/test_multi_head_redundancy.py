"""core.lessons.multi_head, the redundancy of heads against their number, on a tiny, fast configuration."""

from __future__ import annotations

import pytest

from core.lessons.multi_head import points_from_json, points_to_json, redundancy_vs_heads


def test_structure_and_invariants():
    seen = []
    curve = redundancy_vs_heads(
        4, seq_len=6, train_steps=30, seed=0, progress=lambda d, n: seen.append((d, n))
    )
    assert [p.n_heads for p in curve.points] == [1, 2, 4]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    one = curve.points[0]
    assert one.redundancy_init == one.redundancy_trained == 0.0
    for p in curve.points:
        for value in (p.redundancy_init, p.redundancy_trained, p.similar_pairs_init, p.similar_pairs_trained):
            assert 0.0 <= value <= 1.0
        assert 1.0 <= p.support_trained <= 6.0
        assert p.loss_trained < p.loss_init  # 30 Adam steps do learn something about the walks


def test_zero_steps_reports_the_initial_model_twice_and_is_reproducible():
    a = redundancy_vs_heads(8, [1, 4], seq_len=5, train_steps=0, seed=3)
    b = redundancy_vs_heads(8, [1, 4], seq_len=5, train_steps=0, seed=3)
    assert a == b
    p = a.points[1]
    assert p.redundancy_init == p.redundancy_trained
    assert p.loss_init == p.loss_trained


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 0}, "d_model"),
        ({"d_model": 8, "heads": [3]}, "divisors"),
        ({"d_model": 8, "seq_len": 1}, "seq_len"),
        ({"d_model": 8, "train_steps": 10_000}, "train_steps"),
        ({"d_model": 8, "threshold": 0.0}, "threshold"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        redundancy_vs_heads(**kwargs)


def test_points_json_round_trip_and_bad_text():
    curve = redundancy_vs_heads(8, [1, 2], seq_len=5, train_steps=3, seed=1)
    assert points_from_json(points_to_json(curve.points)) == curve.points
    with pytest.raises(ValueError, match="redundancy points"):
        points_from_json('[{"n_heads": 1}]')
    with pytest.raises(ValueError, match="redundancy points"):
        points_from_json("not json")
