"""How a class answered (``store.tally``) and the per-session answer rate (``store.limits``)."""

from __future__ import annotations

import pytest

from store.limits import ANSWER_BURST, ANSWERS_PER_S, TokenBucket
from store.tally import choice_counts, number_bins, right_count
from tests.store.conftest import FakeClock


def test_choice_counts_in_the_order_of_the_choices():
    answers = {"a": "falls", "b": "rises", "c": "falls", "d": "gone"}  # "gone": not a choice (any more)
    assert choice_counts(answers, ("rises", "falls", "undefined")) == (1, 2, 0)
    assert choice_counts({}, ("x", "y")) == (0, 0)


def test_integer_answers_get_one_bar_each():
    bins = number_bins([3.0, 5.0, 5.0, 7.0])
    assert bins.labels == ("3", "4", "5", "6", "7")
    assert bins.counts == (1, 0, 2, 0, 1)
    assert bins.edges == (2.5, 3.5, 4.5, 5.5, 6.5, 7.5)


def test_spread_numbers_get_equal_bins_covering_every_answer():
    values = [0.0, 0.05, 0.1, 0.5, 0.99, 1.0]
    bins = number_bins(values, max_bins=4)
    assert bins.edges == pytest.approx((0.0, 0.25, 0.5, 0.75, 1.0))
    # brute force: which quarter each value falls in, the last edge included in the last bar
    expected = [sum(1 for v in values if lo <= v < hi or (k == 3 and v == hi))
                for k, (lo, hi) in enumerate(zip(bins.edges, bins.edges[1:], strict=False))]  # fmt: skip
    assert list(bins.counts) == expected == [3, 0, 1, 2]
    assert sum(bins.counts) == len(values)
    assert bins.labels[0] == "0–0.25"
    assert number_bins(values, fmt="%.2f", max_bins=4).labels[-1] == "0.75–1.00"


def test_wide_integers_get_bars_of_whole_integers():
    bins = number_bins([40, 77, 80, 80], max_bins=12)  # 41 integers: bars of 4
    assert bins.labels[0] == "40–43"
    assert bins.labels[-1] == "80–83"
    assert len(bins.counts) == 11
    # brute force: which bar holds each answer
    expected = [sum(1 for v in (40, 77, 80, 80) if k <= v <= k + 3) for k in range(40, 84, 4)]
    assert list(bins.counts) == expected
    assert bins.counts[9] == 1
    assert bins.counts[10] == 2
    assert bins.edges[0] == 39.5
    assert bins.edges[-1] == 83.5


def test_each_bar_counts_its_right_answers():
    # within 20% of 77: 61.6 .. 92.4
    bins = number_bins([40, 60, 62, 77, 80, 95], is_right=lambda x: abs(x - 77) <= 0.2 * 77)
    assert sum(bins.counts) == 6
    assert sum(bins.right_counts) == 3  # 62, 77, 80
    for k, (count, right) in enumerate(zip(bins.counts, bins.right_counts, strict=True)):
        inside = [v for v in (40, 60, 62, 77, 80, 95) if bins.edges[k] <= v < bins.edges[k + 1]]
        assert count == len(inside)
        assert right == sum(1 for v in inside if abs(v - 77) <= 15.4)
    assert number_bins([1.0, 2.0]).right_counts is None


def test_wide_integers_and_one_value():
    assert sum(number_bins([1, 100, 1000]).counts) == 3
    one = number_bins([0.3, 0.3])
    assert (one.counts, one.labels) == ((2,), ("0.3",))
    assert number_bins([]).counts == ()


def test_right_count():
    answers = {"a": "1.0", "b": "2.0", "c": "2.5"}
    assert right_count(answers, lambda s: abs(float(s) - 2.2) <= 0.3) == 2


def test_token_bucket_allows_a_burst_then_the_rate():
    clock = FakeClock()
    bucket = TokenBucket(clock=clock)
    assert [bucket.take() for _ in range(ANSWER_BURST + 1)] == [True] * ANSWER_BURST + [False]
    clock.advance(1 / ANSWERS_PER_S)
    assert bucket.take()
    assert not bucket.take()
    clock.advance(60)  # a long pause refills up to the burst, not beyond
    assert [bucket.take() for _ in range(ANSWER_BURST + 1)] == [True] * ANSWER_BURST + [False]
    # Over 10 s of trying as fast as possible: about the rate, plus the burst.
    taken = 0
    for _ in range(1000):
        clock.advance(0.01)
        taken += bucket.take()
    assert taken == pytest.approx(10 * ANSWERS_PER_S, abs=1)


def test_token_bucket_refuses_nonsense():
    with pytest.raises(ValueError, match="rate"):
        TokenBucket(rate=0)
