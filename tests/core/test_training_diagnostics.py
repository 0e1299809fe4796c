"""core.training_diagnostics: the post's troubleshooting table on a run.

Each symptom is produced on purpose (a NaN bias, a zeroed output layer, a loss that rises) and
must be flagged; the redundancy of heads is compared between runs.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from core import training as tr
from core import training_diagnostics as diag
from core.transformer import TransformerConfig

TINY = TransformerConfig(seq_len=12, n_train=96, n_val=32, epochs=3, batch_size=16, attn_dropout=0.2)


def test_loss_oscillation():
    assert diag.loss_oscillation([1.0, 0.5, 0.25]) == 0.0
    assert diag.loss_oscillation([1.0, 0.5, 1.0, 0.5]) == pytest.approx(math.log(2))
    assert diag.loss_oscillation([2.0, 3.0, 1.0, 4.0]) == pytest.approx(math.log(3 / 2) + math.log(4))
    assert math.isnan(diag.loss_oscillation([1.0, float("nan")]))


def test_every_symptom_is_measured_once_in_the_posts_order():
    run = tr.start_run(TINY)
    rows = diag.diagnose(run)
    assert [d.id for d in rows] == list(diag.DIAGNOSTICS)
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
    levels = {d.id: d.level for d in diag.diagnose(run)}
    assert levels["nan"] == "red"


def test_constant_outputs_are_flagged():
    run = tr.start_run(TINY)
    with torch.no_grad():
        run.model.head.weight.zero_()  # every prediction = the bias
    levels = {d.id: (d.level, d.value) for d in diag.diagnose(run)}
    assert levels["constant_output"][0] == "red"
    assert levels["constant_output"][1] == pytest.approx(1.0)


@pytest.mark.slow
def test_32_heads_are_more_redundant_than_4():
    small = {"seq_len": 16, "n_train": 256, "epochs": 5}
    scores = {}
    for heads in (4, 32):
        run = tr.train(TransformerConfig(n_heads=heads, **small))
        scores[heads] = next(d.value for d in diag.diagnose(run) if d.id == "redundancy")
    assert scores[32] > scores[4]
