"""core.lessons.training, the findings: what the page reports about a run, measured; verdicts
follow the run's numbers and its conditions (issue 13.2).

The trained runs (``post_run``, ...) come from tests/core/conftest.py.
"""

from __future__ import annotations

import math

import pytest

from core import training as tr
from core.lessons import training as lesson


def _attention(
    recent3=0.5, recent3_uniform=0.3, ahead=0.0, ahead_uniform=0.0, future=0.0, future_uniform=0.0
) -> lesson.AttentionSummary:
    return lesson.AttentionSummary(
        recent3=recent3,
        recent3_uniform=recent3_uniform,
        future=future,
        future_uniform=future_uniform,
        ahead=ahead,
        ahead_uniform=ahead_uniform,
        support=2.0,
    )


@pytest.mark.parametrize(
    ("share", "expected"), [(0.61, "tr.verdict_recent_yes"), (0.35, "tr.verdict_recent_no")]
)
def test_recent_attention_verdict_follows_the_shares_under_the_mask(share, expected):
    v = lesson.attention_verdict(_attention(recent3=share, recent3_uniform=0.30), causal=True)
    assert v.key == expected
    assert v.values == {"share": share, "uniform": 0.30}


def test_without_the_mask_recency_is_never_claimed():
    """The issue's case: 14% vs 9% on 'recent' positions while the bars show attention ahead."""
    attention = _attention(recent3=0.14, recent3_uniform=0.09, ahead=0.40, ahead_uniform=0.06, future=0.55)
    v = lesson.attention_verdict(attention, causal=False)
    assert v.key == "tr.verdict_ahead_yes"
    assert not v.key.startswith("tr.verdict_recent")
    assert v.values["ahead"] == 0.40
    assert v.values["future"] == 0.55
    calm = lesson.attention_verdict(_attention(ahead=0.06, ahead_uniform=0.06), causal=False)
    assert calm.key == "tr.verdict_ahead_no"


@pytest.mark.parametrize(
    ("model", "last", "expected"),
    [
        (0.133, 0.125, "tr.verdict_rollout_worse"),
        (0.10, 0.125, "tr.verdict_rollout_better"),
        (math.nan, 0.1, "tr.verdict_rollout_worse"),
        # issue 22.7: ×1.01 is a tie, not "worse"; within ±5 % both ways it is "about the same"
        (0.12625, 0.125, "tr.verdict_rollout_same"),
        (0.1310, 0.125, "tr.verdict_rollout_same"),
        (0.1190, 0.125, "tr.verdict_rollout_same"),
        (0.1185, 0.125, "tr.verdict_rollout_better"),
        (0.1315, 0.125, "tr.verdict_rollout_worse"),
    ],
)
def test_rollout_verdict_says_when_the_model_loses_to_the_last_value(model, last, expected):
    v = lesson.rollout_verdict(lesson.RolloutError(model=model, last_value=last, mean=1.0))
    assert v.key == expected
    if math.isfinite(model):
        assert v.values["ratio"] == pytest.approx(model / last)


@pytest.mark.parametrize(
    ("ratio", "positional", "expected"),
    [
        (4.5, True, "tr.verdict_shuffle_collapse_pos"),
        (4.5, False, "tr.verdict_shuffle_collapse_nopos"),
        (1.0, True, "tr.verdict_shuffle_same_pos"),
        (1.0, False, "tr.verdict_shuffle_same_nopos"),
        (1.5, True, "tr.verdict_shuffle_some"),
    ],
)
def test_shuffle_verdict(ratio, positional, expected):
    shuffle = lesson.ShuffleTest(ordered=1.0, shuffled=ratio, ratio=ratio)
    v = lesson.shuffle_verdict(shuffle, positional=positional)
    assert v.key == expected
    assert v.values == {"ratio": ratio}


def test_leak_verdict_depends_on_the_mask_and_the_ratio():
    assert lesson.leak_verdict(0.1, 0.1, 0.2, causal=True).key == "tr.verdict_leak_masked"
    assert lesson.leak_verdict(0.1, 1.9, 0.2, causal=False).key == "tr.verdict_leak_cheats"
    assert lesson.leak_verdict(0.1, 0.11, 0.2, causal=False).key == "tr.verdict_leak_not_yet"
    assert lesson.leak_verdict(0.1, 1.9, 0.2, causal=False).values["leak"] == pytest.approx(19.0)


def test_summary_of_a_maskless_run_feeds_the_ahead_verdict():
    """End to end on a real (short) run without the mask: the numbers come from the model."""
    from core.training import train
    from core.transformer import TransformerConfig

    config = TransformerConfig(causal=False, epochs=2, n_train=128, seq_len=8, seed=0)
    run = train(config)
    summary = lesson.attention_summary(run)
    weights = tr.validation_attention(run.model, run.data.val[:64])
    shares = lesson.attention_by_distance(weights)
    T = weights.shape[-1]
    assert summary.ahead == pytest.approx(shares[T - 2])
    assert summary.future == pytest.approx(shares[: T - 1].sum())
    assert summary.ahead_uniform == pytest.approx(1 / T * (T - 1) / T)
    v = lesson.attention_verdict(summary, causal=False)
    assert v.key in {"tr.verdict_ahead_yes", "tr.verdict_ahead_no"}


# --- the measured bundle -----------------------------------------------------------------------


@pytest.mark.slow
def test_findings_bundle(post_run):
    found = lesson.measure_findings(post_run, n_windows=64)
    T = post_run.config.seq_len
    val = post_run.data.val[:64]
    assert found.distances.tolist() == list(range(T))  # causal: no future distances
    assert found.shares.sum() == pytest.approx(1.0)
    assert found.example.shape == (T + 1,)
    assert found.example_one_step.shape == (T,)
    assert found.example_rollout.shape == (T + 1 - found.context,)
    assert [d.id for d in found.diagnostics] == list(lesson.DIAGNOSTICS)
    assert all(d.level in ("green", "amber", "red") for d in found.diagnostics)
    # each part is what its own function measures on the same windows
    assert found.rollout == lesson.rollout_error(post_run.model, val, found.context)
    assert found.shuffle == lesson.evaluate_shuffled(post_run.model, val, seed=post_run.config.seed)
    assert found.attention == lesson.attention_summary(post_run)
    # the shortcut under the mask (prefix error = teacher-forced loss) agrees with the T passes
    assert found.prefix_error == pytest.approx(lesson.prefix_one_step_error(post_run.model, val), rel=1e-4)


@pytest.mark.slow
def test_findings_measure_the_honest_error_without_the_mask(no_mask_run):
    found = lesson.measure_findings(no_mask_run, n_windows=64)
    val = no_mask_run.data.val[:64]
    assert found.prefix_error == pytest.approx(lesson.prefix_one_step_error(no_mask_run.model, val), rel=1e-6)
    assert found.prefix_error > 3 * found.val_loss
