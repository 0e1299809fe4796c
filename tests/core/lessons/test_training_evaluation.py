"""core.lessons.training, the evaluation: the post's observations measured on a toy Transformer.

References are independent of the code under test: brute-force loops over windows, steps, queries
and keys (one forward pass per window, in eval mode, written out here), and exact properties (a
causal model's honest error *equals* its teacher-forced loss; attention without positions treats
its keys as a set). The trained runs (``post_run``, ...) come from tests/core/conftest.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from core import training as tr
from core.lessons import training as lesson
from core.transformer import TransformerConfig

#: Untrained but with attention dropout: a measurement outside eval mode would be random and
#: could not match the loops below.
SMALL = TransformerConfig(seq_len=10, n_train=32, n_val=24, epochs=1, batch_size=16, attn_dropout=0.3)


@torch.no_grad()
def _next_value(model, history: list[float]) -> float:
    """The model's prediction of the value after ``history``, one window alone, in eval mode."""
    model.eval()
    predictions, _ = model(torch.tensor(history, dtype=torch.float32)[None])
    model.train()
    return float(predictions[0, -1])


def _assert_frozen(result) -> None:
    name = dataclasses.fields(result)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, name, 0.0)


def test_evaluation_restores_the_training_mode():
    run = tr.start_run(SMALL)
    assert run.model.training
    tr.validation_loss(run.model, run.data.val)
    lesson.rollout_error(run.model, run.data.val)
    lesson.evaluate_shuffled(run.model, run.data.val)
    lesson.attention_summary(run)
    assert run.model.training


@pytest.mark.parametrize("context", [1, 4, 10])
def test_rollout_error_against_a_loop(context):
    run = tr.start_run(SMALL)
    windows = run.data.val[:6]
    T = SMALL.seq_len
    got = lesson.rollout_error(run.model, windows, context)
    assert isinstance(got, lesson.RolloutError)
    _assert_frozen(got)
    sq = {"model": [], "last_value": [], "mean": []}
    for w in windows.tolist():
        sequence = w[:context]
        for t in range(context, T + 1):
            guess = _next_value(run.model, sequence[-T:])
            sequence.append(guess)  # fed back: the truth after the context is never seen
            sq["model"].append((guess - w[t]) ** 2)
            sq["last_value"].append((w[context - 1] - w[t]) ** 2)
            sq["mean"].append((sum(w[:context]) / context - w[t]) ** 2)
    assert {f.name for f in dataclasses.fields(got)} == set(sq)
    for name, values in sq.items():
        assert getattr(got, name) == pytest.approx(np.mean(values), rel=1e-5), name


def test_rollout_error_defaults_to_half_the_window_and_rejects_bad_contexts():
    run = tr.start_run(SMALL)
    windows = run.data.val[:4]
    default = lesson.rollout_error(run.model, windows)
    assert default == lesson.rollout_error(run.model, windows, SMALL.seq_len // 2)
    for context in (0, SMALL.seq_len + 1):
        with pytest.raises(ValueError, match="context"):
            lesson.rollout_error(run.model, windows, context)


def test_shuffled_evaluation_against_a_loop():
    """Each permutation drawn as documented (uniforms, then their ranks), applied by hand."""
    run = tr.start_run(SMALL)
    windows = run.data.val[:5]
    N, T = windows.shape[0], SMALL.seq_len
    got = lesson.evaluate_shuffled(run.model, windows, seed=3, repeats=2)
    assert isinstance(got, lesson.ShuffleTest)
    _assert_frozen(got)
    rows = windows.tolist()
    ordered = np.mean([(_next_value(run.model, w[:T]) - w[T]) ** 2 for w in rows])
    generator = torch.Generator().manual_seed(3)
    repeats = []
    for _ in range(2):
        uniforms = torch.rand(N, T - 1, generator=generator).tolist()
        errors = []
        for w, u in zip(rows, uniforms, strict=True):
            older = [w[j] for j in sorted(range(T - 1), key=lambda j: u[j])]  # x[0..T-2] shuffled
            errors.append((_next_value(run.model, [*older, w[T - 1]]) - w[T]) ** 2)
        repeats.append(np.mean(errors))
    assert got.ordered == pytest.approx(ordered, rel=1e-5)
    assert got.shuffled == pytest.approx(np.mean(repeats), rel=1e-5)
    assert got.ratio == pytest.approx(np.mean(repeats) / ordered, rel=1e-5)
    assert got.shuffled != got.ordered  # this model has positions: the order matters


@pytest.mark.parametrize("causal", [True, False])
def test_attention_summary_against_a_loop(causal):
    run = tr.start_run(SMALL.replace(causal=causal))
    got = lesson.attention_summary(run, n_windows=8)
    assert isinstance(got, lesson.AttentionSummary)
    _assert_frozen(got)
    run.model.eval()
    with torch.no_grad():
        _, weights = run.model(run.data.val[:8, :-1])  # (n_layers, N, H, T, T)
    run.model.train()
    w = weights.double().numpy()
    T = SMALL.seq_len
    rows = w.size // T  # every (layer, window, head, query) row holds mass 1
    mass = {"recent3": 0.0, "future": 0.0, "ahead": 0.0}
    uniform = dict.fromkeys(mass, 0.0)
    for q in range(T):
        visible = q + 1 if causal else T  # uniform attention: 1 / visible on each visible key
        for k in range(T):
            d = q - k
            for name, hit in (("recent3", 0 <= d <= 2), ("future", d < 0), ("ahead", d == -1)):
                if hit:
                    mass[name] += float(w[..., q, k].sum())
                    uniform[name] += 1.0 / visible / T if k < visible else 0.0
    support = np.mean(1.0 / (w**2).sum(-1))
    assert got.recent3 == pytest.approx(mass["recent3"] / rows, rel=1e-5)
    assert got.future == pytest.approx(mass["future"] / rows, abs=1e-7)
    assert got.ahead == pytest.approx(mass["ahead"] / rows, abs=1e-7)
    assert got.recent3_uniform == pytest.approx(uniform["recent3"], rel=1e-9)
    assert got.future_uniform == pytest.approx(uniform["future"], abs=1e-12)
    assert got.ahead_uniform == pytest.approx(uniform["ahead"], abs=1e-12)
    assert got.support == pytest.approx(support, rel=1e-5)
    if causal:
        assert got.future == 0.0 and got.ahead == 0.0  # noqa: PT018


def test_attention_by_distance_against_a_loop():
    w = torch.rand(2, 3, 5, 5, dtype=torch.float64)
    w = w / w.sum(-1, keepdim=True)
    shares = lesson.attention_by_distance(w)
    expected = np.zeros(9)
    rows = w.reshape(-1, 5, 5).mean(0).numpy()
    for q in range(5):
        for k in range(5):
            expected[q - k + 4] += rows[q, k] / 5
    np.testing.assert_allclose(shares, expected, rtol=1e-12)
    assert shares.sum() == pytest.approx(1.0)
    uniform = lesson.uniform_attention_by_distance(4)
    np.testing.assert_allclose(uniform[3:], [(1 + 1 / 2 + 1 / 3 + 1 / 4) / 4, (1 / 2 + 1 / 3 + 1 / 4) / 4,
                                             (1 / 3 + 1 / 4) / 4, 1 / 16])  # fmt: skip


# --- on trained models -----------------------------------------------------------------------


@pytest.mark.slow
def test_honest_error_equals_teacher_forced_loss_with_the_mask(post_run):
    val = post_run.data.val[:64]
    teacher = tr.validation_loss(post_run.model, val)
    assert lesson.prefix_one_step_error(post_run.model, val) == pytest.approx(teacher, rel=1e-4)
    first = lesson.rollout(post_run.model, val, 6)[:, 0]
    one_step = tr.predict(post_run.model, val[:, :-1])[:, 5]
    torch.testing.assert_close(first, one_step, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_causal_leak_shows_without_the_mask(post_run, no_mask_run):
    val = no_mask_run.data.val
    teacher = no_mask_run.val_loss[-1]
    honest = lesson.prefix_one_step_error(no_mask_run.model, val)
    assert honest > 3 * teacher  # training loss far below what it can do from the past
    assert no_mask_run.train_loss[-1] < post_run.train_loss[-1]  # and it looks better than honest
    cheat_rollout = lesson.rollout_error(no_mask_run.model, val).model
    assert cheat_rollout > 2 * lesson.rollout_error(post_run.model, val).model
    assert cheat_rollout > 10 * no_mask_run.train_loss[-1]


def test_shuffling_cannot_change_a_one_layer_model_without_positions():
    run = tr.start_run(lesson.preset_config("no_positions"))
    shuffled = lesson.evaluate_shuffled(run.model, run.data.val[:64])
    assert shuffled.ratio == pytest.approx(1.0, abs=1e-4)


@pytest.mark.slow
def test_shuffled_test_hurts_a_model_with_positions_more(post_run, no_positions_run):
    with_positions = lesson.evaluate_shuffled(post_run.model, post_run.data.val)
    without = lesson.evaluate_shuffled(no_positions_run.model, no_positions_run.data.val)
    assert with_positions.ratio > 2.0
    assert with_positions.ratio > 2 * without.ratio
    # the price of no positions: a worse fit in the true order
    assert no_positions_run.val_loss[-1] > post_run.val_loss[-1]


@pytest.mark.slow
def test_attention_mass_goes_to_recent_positions(post_run):
    summary = lesson.attention_summary(post_run)
    assert summary.future == 0.0
    assert summary.recent3 > 1.3 * summary.recent3_uniform
