"""core.lessons.training, the troubleshooting table: the post's troubleshooting table on a run.

Each symptom is produced on purpose (a NaN bias, a zeroed output layer, a loss that rises) and
must be flagged; the redundancy of heads is compared between runs.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from core import training as tr
from core.lessons import training as lesson
from core.transformer import TransformerConfig

TINY = TransformerConfig(seq_len=12, n_train=96, n_val=32, epochs=3, batch_size=16, attn_dropout=0.2)


def test_loss_oscillation():
    assert lesson.loss_oscillation([1.0, 0.5, 0.25]) == 0.0
    assert lesson.loss_oscillation([1.0, 0.5, 1.0, 0.5]) == pytest.approx(math.log(2))
    assert lesson.loss_oscillation([2.0, 3.0, 1.0, 4.0]) == pytest.approx(math.log(3 / 2) + math.log(4))
    assert math.isnan(lesson.loss_oscillation([1.0, float("nan")]))


def test_every_symptom_is_measured_once_in_the_posts_order():
    run = tr.start_run(TINY)
    rows = lesson.diagnose(run)
    assert [d.id for d in rows] == list(lesson.DIAGNOSTICS)
    for d in rows:
        expected = "red" if d.value >= d.red else "amber" if d.value >= d.amber else "green"
        assert d.level == expected, d
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows[0].level = "green"


def test_divergence_is_caught_and_diagnosed():
    run = tr.start_run(TINY)
    with torch.no_grad():
        run.model.head.bias.fill_(float("nan"))
    tr.train(TINY, resume=run)
    assert run.diverged
    assert run.finished
    levels = {d.id: d.level for d in lesson.diagnose(run)}
    assert levels["nan"] == "red"


def test_constant_outputs_are_flagged():
    run = tr.start_run(TINY)
    with torch.no_grad():
        run.model.head.weight.zero_()  # every prediction = the bias
    levels = {d.id: (d.level, d.value) for d in lesson.diagnose(run)}
    assert levels["constant_output"][0] == "red"
    assert levels["constant_output"][1] == pytest.approx(1.0)


def test_the_leak_row_is_the_honest_error_over_the_teacher_forced_loss():
    """Issue 22.7: without the mask the table had no row for the cheat; with the mask the ratio is 1."""
    masked = tr.start_run(TINY)
    (leak,) = [d for d in lesson.diagnose(masked) if d.id == "leak"]
    assert (leak.value, leak.level) == (1.0, "green")
    assert leak.red == lesson.LEAK_RATIO
    open_run = tr.start_run(TINY.replace(causal=False))
    windows = open_run.data.val[:64]
    honest = lesson.prefix_one_step_error(open_run.model, windows)
    (leak,) = [d for d in lesson.diagnose(open_run) if d.id == "leak"]
    assert leak.value == pytest.approx(honest / tr.validation_loss(open_run.model, windows), rel=1e-9)
    (given,) = [d for d in lesson.diagnose(open_run, leak=2.0) if d.id == "leak"]
    assert (given.value, given.level) == (2.0, "red")


@pytest.mark.slow
def test_a_model_that_cheats_is_flagged_red(no_mask_run, post_run):
    """The no-mask model reads its own target: the leak row is red, the masked model's green."""
    levels = {
        run.config.causal: {d.id: d.level for d in lesson.diagnose(run)} for run in (no_mask_run, post_run)
    }
    assert levels[False]["leak"] == "red"
    assert levels[True]["leak"] == "green"


@pytest.mark.slow
def test_32_heads_are_more_redundant_than_4():
    small = {"seq_len": 16, "n_train": 256, "epochs": 5}
    scores = {}
    for heads in (4, 32):
        run = tr.train(TransformerConfig(n_heads=heads, **small))
        scores[heads] = next(d.value for d in lesson.diagnose(run) if d.id == "redundancy")
    assert scores[32] > scores[4]
