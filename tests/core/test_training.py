"""core.training and core.random_walks: data, baselines, resumable training, the preview.

References are independent of the code under test: brute-force loops, numpy's correlation,
exact properties, and runs compared with other runs. The trained runs (``post_run``, ...) come
from tests/core/conftest.py; what the training lesson measures on them is tested in
tests/core/lessons/test_training_*.py.
"""

from __future__ import annotations

import dataclasses
import math
import threading

import numpy as np
import pytest
import torch

from core import random_walks
from core import training as tr
from core.transformer import TransformerConfig

#: A few seconds per run: for the mechanics of training (determinism, pause, resume).
TINY = TransformerConfig(seq_len=12, n_train=96, n_val=32, epochs=3, batch_size=16, attn_dropout=0.2)


# --- data ------------------------------------------------------------------------------------


def test_dataset_shapes_split_and_seed():
    data = tr.random_walk_dataset(50, 20, 10, seed=3)
    assert data.train.shape == (50, 11)
    assert data.val.shape == (20, 11)
    assert data.seq_len == 10
    assert torch.all(data.train[:, 0] == 0) and torch.all(data.val[:, 0] == 0)  # noqa: PT018
    again = tr.random_walk_dataset(50, 20, 10, seed=3)
    assert torch.equal(data.train, again.train)
    assert not torch.equal(data.train, tr.random_walk_dataset(50, 20, 10, seed=4).train)
    assert not torch.equal(data.train[:20], data.val)  # two different walks


def test_windows_overlap_by_the_stride():
    data = tr.random_walk_dataset(5, 5, 10, seed=0)
    a, b = data.train[0], data.train[1]  # b starts STRIDE steps after a
    steps_a, steps_b = torch.diff(a), torch.diff(b)
    torch.testing.assert_close(steps_a[tr.STRIDE :], steps_b[: 10 - tr.STRIDE])


@pytest.mark.parametrize("momentum", [0.0, 0.5, 0.8])
def test_steps_have_the_requested_std_and_correlation(momentum):
    data = tr.random_walk_dataset(4000, 8, 4, step_std=0.2, momentum=momentum, seed=1)
    steps = torch.diff(data.train[:, : tr.STRIDE + 1], dim=1).reshape(-1).numpy()  # the walk's steps
    lag1 = np.corrcoef(steps[:-1], steps[1:])[0, 1]
    assert lag1 == pytest.approx(momentum, abs=0.04)
    stationary_std = 0.2 / math.sqrt(1 - momentum**2)
    assert steps.std() == pytest.approx(stationary_std, rel=0.05)


def test_steps_equal_the_recursion_written_out():
    """The AR(1) steps, brute force from the same seeded noise (the page's preview relies on it)."""
    length, m, s = 300, 0.7, 0.05
    noise = torch.randn(length + 1, generator=torch.Generator().manual_seed(4), dtype=torch.float64) * s
    d = [noise[0].item() / math.sqrt(1 - m * m)]
    for t in range(length):
        d.append(m * d[-1] + noise[t + 1].item())
    got = random_walks._steps(length, s, m, torch.Generator().manual_seed(4))
    assert got.dtype == torch.float64
    assert got.tolist() == d[1:]


@pytest.mark.parametrize(
    "kwargs", [{"n_train": 0}, {"seq_len": -1}, {"step_std": 0.0}, {"momentum": 1.0}, {"momentum": -0.1}]
)
def test_dataset_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        tr.random_walk_dataset(**kwargs)


def test_baselines_against_a_loop():
    windows = tr.random_walk_dataset(7, 3, 6, momentum=0.6, seed=2).train.double()
    got = tr.baseline_losses(windows, momentum=0.6)
    sq = {"last_value": [], "mean": [], "optimum": []}
    for w in windows.tolist():
        for t in range(6):
            target = w[t + 1]
            sq["last_value"].append((w[t] - target) ** 2)
            sq["mean"].append((sum(w[: t + 1]) / (t + 1) - target) ** 2)
            trend = w[t] - w[t - 1] if t > 0 else 0.0
            sq["optimum"].append((w[t] + 0.6 * trend - target) ** 2)
    assert isinstance(got, random_walks.Baselines)
    assert {f.name for f in dataclasses.fields(got)} == set(sq)
    for key, values in sq.items():
        assert getattr(got, key) == pytest.approx(np.mean(values), rel=1e-9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.mean = 0.0


def test_optimum_baseline_is_the_step_noise():
    base = tr.baseline_losses(
        tr.random_walk_dataset(4000, 8, 8, step_std=0.1, momentum=0.8, seed=0).train, 0.8
    )
    # t = 0 cannot know the previous step; from t = 1 on the error is the noise variance 0.01.
    assert base.optimum == pytest.approx((0.01 / (1 - 0.64) + 7 * 0.01) / 8, rel=0.08)
    assert base.last_value == pytest.approx(0.01 / (1 - 0.64), rel=0.08)


# --- training mechanics --------------------------------------------------------------------


def test_same_seed_same_losses_even_in_parallel_threads():
    first = tr.train(TINY)
    results: list[tr.TrainingRun] = []
    threads = [threading.Thread(target=lambda: results.append(tr.train(TINY))) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for other in results:
        assert other.train_loss == first.train_loss
        assert other.val_loss == first.val_loss
        assert other.batch_loss == first.batch_loss
    assert tr.train(TINY.replace(seed=1)).train_loss != first.train_loss


def test_pause_and_resume_equals_one_uninterrupted_run():
    config = TINY.replace(diversity_weight=0.5)
    straight = tr.train(config)
    calls = 0

    def pause_every_seventh_batch() -> bool:
        nonlocal calls
        calls += 1
        return calls % 7 == 0

    run = tr.train(config, should_stop=pause_every_seventh_batch)
    pauses = 1
    while not run.finished:
        assert run.stopped
        run = tr.train(config, should_stop=pause_every_seventh_batch, resume=run)
        pauses += 1
    assert pauses > 2  # it really was interrupted, mid-epoch included
    assert run.batch_loss == straight.batch_loss
    assert run.train_loss == straight.train_loss
    assert run.val_loss == straight.val_loss
    for key, value in straight.model.state_dict().items():
        assert torch.equal(run.model.state_dict()[key], value), key


def test_should_stop_ends_within_one_batch():
    calls = 0

    def stop_at_fifth_call() -> bool:
        nonlocal calls
        calls += 1
        return calls == 5

    run = tr.train(TINY, should_stop=stop_at_fifth_call)
    assert run.stopped
    assert run.batches_done == 4  # checked before every batch: the fifth never ran
    assert calls == 5


class Interrupt(Exception):
    """Stands for Streamlit's rerun signal raised inside should_stop."""


def test_an_exception_in_should_stop_leaves_a_resumable_run():
    straight = tr.train(TINY)
    run = tr.start_run(TINY)
    calls = 0

    def interrupt_at_tenth_call() -> bool:
        nonlocal calls
        calls += 1
        if calls == 10:
            raise Interrupt
        return False

    with pytest.raises(Interrupt):
        tr.train(TINY, should_stop=interrupt_at_tenth_call, resume=run)
    assert run.batches_done == 9
    tr.train(TINY, resume=run)
    assert run.batch_loss == straight.batch_loss
    assert run.val_loss == straight.val_loss


def test_step_one_epoch_extend_and_on_epoch():
    seen = []
    run = tr.train(TINY, on_epoch=lambda r: seen.append(r.epochs_done), until_epoch=1)
    assert run.epochs_done == 1
    assert seen == [1]
    tr.train(TINY, on_epoch=lambda r: seen.append(r.epochs_done), resume=run)
    assert seen == [1, 2, 3]
    assert run.finished
    longer = TINY.replace(epochs=4)
    tr.train(longer, resume=run)
    assert run.epochs_done == 4
    assert len(run.val_loss) == len(run.snapshots) == 5  # epoch 0 included
    assert run.snapshots[0].shape == (1, 4, 12, 12)
    assert run.snapshot_epochs == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="same config"):
        tr.train(TINY.replace(seed=9), resume=run)


def test_snapshots_stay_within_the_budget(monkeypatch):
    monkeypatch.setattr(tr, "SNAPSHOT_BUDGET_BYTES", 3 * 2 * 4 * 12 * 12)  # room for 3 snapshots
    config = TINY.replace(epochs=7, n_train=32)
    run = tr.train(config, until_epoch=5)
    assert run.snapshot_every == 3  # 8 snapshots (epochs 0..7) in a budget of 3
    assert run.snapshot_epochs == [0, 3, 5]  # the stride, plus the newest
    tr.train(config, resume=run)
    assert run.snapshot_epochs == [0, 3, 6, 7]
    full = tr.train(config)  # thinning does not change the training itself
    assert full.val_loss == run.val_loss


def test_training_restores_the_thread_count():
    before = torch.get_num_threads()
    tr.train(TINY.replace(epochs=1))
    assert torch.get_num_threads() == before


# --- preview (the page before training) ----------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        TransformerConfig(),
        TransformerConfig(seed=7, momentum=0.0, causal=False),
        TransformerConfig(n_layers=2, n_heads=8, attn_dropout=0.3, positional="learned", seq_len=16),
        TINY,
    ],
    ids=["post", "plain_walk_no_mask", "two_layers_dropout", "tiny"],
)
def test_preview_is_what_start_run_starts_from(config):
    """Walks, epoch-0 attention and baselines equal those of a run started with the same config."""
    shown = tr.preview(config)
    run = tr.start_run(config)
    T = config.seq_len
    assert shown.walks.shape == (tr.PREVIEW_WALKS, T + 1)
    np.testing.assert_array_equal(shown.walks, run.data.train[torch.as_tensor(shown.walk_index)].numpy())
    assert shown.walk_index[0] == 0 and shown.walk_index[-1] == config.n_train - 1  # noqa: PT018
    np.testing.assert_array_equal(shown.example, tr.fixed_example(run.data).numpy())
    assert shown.attention.dtype == np.float16
    assert shown.attention.shape == (config.n_layers, config.n_heads, T, T)
    np.testing.assert_array_equal(shown.attention, run.snapshots[0])
    assert shown.baselines == run.baselines
    assert shown.config == config


def test_preview_changes_with_the_seed_and_rejects_other_objects():
    a, b = tr.preview(TINY), tr.preview(TINY.replace(seed=1))
    assert not np.array_equal(a.walks, b.walks)
    assert not np.array_equal(a.attention, b.attention)
    # the number of epochs is not part of what a run starts from
    np.testing.assert_array_equal(a.walks, tr.preview(TINY.replace(epochs=9)).walks)
    with pytest.raises(ValueError, match="TransformerConfig"):
        tr.preview({"seed": 0})


# --- the post's model learns ---------------------------------------------------------------


@pytest.mark.slow
def test_default_config_beats_the_mean_clearly_and_reaches_the_last_value(post_run):
    base = post_run.baselines
    final = post_run.val_loss[-1]
    assert final < 0.05 * base.mean  # the mean baseline is beaten by far
    assert final < 1.1 * base.last_value  # near (here: below) the last-value baseline
    assert final > 0.95 * base.optimum  # and, honestly, not below what is possible
    assert post_run.train_loss[-1] < post_run.train_loss[0] / 10
