"""core.training: data, resumable training, and the post's observations measured on trained models.

References are independent of the code under test: brute-force loops, numpy's correlation,
exact properties (a causal model's honest error *equals* its teacher-forced loss; attention
without positions treats its keys as a set), and runs compared with other runs.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
import torch

from core import random_walks
from core import training as tr
from core.presets import PRESETS, preset_config
from core.transformer import TransformerConfig

#: A few seconds per run: for the mechanics of training (determinism, pause, resume).
TINY = TransformerConfig(seq_len=12, n_train=96, n_val=32, epochs=3, batch_size=16, attn_dropout=0.2)


@pytest.fixture(scope="module")
def post_run() -> tr.TrainResult:
    """The post's model, default config (20 epochs, ~8 s)."""
    return tr.train(TransformerConfig())


@pytest.fixture(scope="module")
def no_positions_run() -> tr.TrainResult:
    return tr.train(preset_config("no_positions"))


@pytest.fixture(scope="module")
def no_mask_run() -> tr.TrainResult:
    return tr.train(TransformerConfig(causal=False))


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
    for key, values in sq.items():
        assert got[key] == pytest.approx(np.mean(values), rel=1e-9)


def test_optimum_baseline_is_the_step_noise():
    base = tr.baseline_losses(
        tr.random_walk_dataset(4000, 8, 8, step_std=0.1, momentum=0.8, seed=0).train, 0.8
    )
    # t = 0 cannot know the previous step; from t = 1 on the error is the noise variance 0.01.
    assert base["optimum"] == pytest.approx((0.01 / (1 - 0.64) + 7 * 0.01) / 8, rel=0.08)
    assert base["last_value"] == pytest.approx(0.01 / (1 - 0.64), rel=0.08)


def test_attention_by_distance_against_a_loop():
    w = torch.rand(2, 3, 5, 5, dtype=torch.float64)
    w = w / w.sum(-1, keepdim=True)
    shares = tr.attention_by_distance(w)
    expected = np.zeros(9)
    rows = w.reshape(-1, 5, 5).mean(0).numpy()
    for q in range(5):
        for k in range(5):
            expected[q - k + 4] += rows[q, k] / 5
    np.testing.assert_allclose(shares, expected, rtol=1e-12)
    assert shares.sum() == pytest.approx(1.0)
    uniform = tr.uniform_attention_by_distance(4)
    np.testing.assert_allclose(uniform[3:], [(1 + 1 / 2 + 1 / 3 + 1 / 4) / 4, (1 / 2 + 1 / 3 + 1 / 4) / 4,
                                             (1 / 3 + 1 / 4) / 4, 1 / 16])  # fmt: skip


def test_loss_oscillation():
    assert tr.loss_oscillation([1.0, 0.5, 0.25]) == 0.0
    assert tr.loss_oscillation([1.0, 0.5, 1.0, 0.5]) == pytest.approx(math.log(2))
    assert math.isnan(tr.loss_oscillation([1.0, float("nan")]))


# --- training mechanics --------------------------------------------------------------------


def test_same_seed_same_losses_even_in_parallel_threads():
    first = tr.train(TINY)
    results: list[tr.TrainResult] = []
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


def test_divergence_is_caught_and_diagnosed():
    run = tr.start_run(TINY)
    with torch.no_grad():
        run.model.head.bias.fill_(float("nan"))
    tr.train(TINY, resume=run)
    assert run.diverged
    assert run.finished
    levels = {d.id: d.level for d in tr.diagnose(run)}
    assert levels["nan"] == "red"


def test_constant_outputs_are_flagged():
    run = tr.start_run(TINY)
    with torch.no_grad():
        run.model.head.weight.zero_()  # every prediction = the bias
    levels = {d.id: (d.level, d.value) for d in tr.diagnose(run)}
    assert levels["constant_output"][0] == "red"
    assert levels["constant_output"][1] == pytest.approx(1.0)


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


def test_presets_are_valid_and_change_what_they_say():
    default = TransformerConfig()
    for name, changes in PRESETS.items():
        config = preset_config(name)
        changed = {f for f in changes if getattr(config, f) != getattr(default, f)}
        assert changed == set(changes), name
    with pytest.raises(ValueError, match="unknown preset"):
        preset_config("gpt4")


# --- the post's observations ---------------------------------------------------------------


@pytest.mark.slow
def test_default_config_beats_the_mean_clearly_and_reaches_the_last_value(post_run):
    base = post_run.baselines
    final = post_run.val_loss[-1]
    assert final < 0.05 * base["mean"]  # the mean baseline is beaten by far
    assert final < 1.1 * base["last_value"]  # near (here: below) the last-value baseline
    assert final > 0.95 * base["optimum"]  # and, honestly, not below what is possible
    assert post_run.train_loss[-1] < post_run.train_loss[0] / 10


@pytest.mark.slow
def test_honest_error_equals_teacher_forced_loss_with_the_mask(post_run):
    val = post_run.data.val[:64]
    teacher = tr.validation_loss(post_run.model, val)
    assert tr.prefix_one_step_error(post_run.model, val) == pytest.approx(teacher, rel=1e-4)
    first = tr.rollout(post_run.model, val, 6)[:, 0]
    one_step = tr.predict(post_run.model, val[:, :-1])[:, 5]
    torch.testing.assert_close(first, one_step, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_causal_leak_shows_without_the_mask(post_run, no_mask_run):
    val = no_mask_run.data.val
    teacher = no_mask_run.val_loss[-1]
    honest = tr.prefix_one_step_error(no_mask_run.model, val)
    assert honest > 3 * teacher  # training loss far below what it can do from the past
    assert no_mask_run.train_loss[-1] < post_run.train_loss[-1]  # and it looks better than honest
    cheat_rollout = tr.rollout_error(no_mask_run.model, val)["model"]
    assert cheat_rollout > 2 * tr.rollout_error(post_run.model, val)["model"]
    assert cheat_rollout > 10 * no_mask_run.train_loss[-1]


def test_shuffling_cannot_change_a_one_layer_model_without_positions():
    run = tr.start_run(preset_config("no_positions"))
    shuffled = tr.evaluate_shuffled(run.model, run.data.val[:64])
    assert shuffled["ratio"] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.slow
def test_shuffled_test_hurts_a_model_with_positions_more(post_run, no_positions_run):
    with_positions = tr.evaluate_shuffled(post_run.model, post_run.data.val)
    without = tr.evaluate_shuffled(no_positions_run.model, no_positions_run.data.val)
    assert with_positions["ratio"] > 2.0
    assert with_positions["ratio"] > 2 * without["ratio"]
    # the price of no positions: a worse fit in the true order
    assert no_positions_run.val_loss[-1] > post_run.val_loss[-1]


@pytest.mark.slow
def test_attention_mass_goes_to_recent_positions(post_run):
    summary = tr.attention_summary(post_run)
    assert summary["future"] == 0.0
    assert summary["recent3"] > 1.3 * summary["recent3_uniform"]


@pytest.mark.slow
def test_32_heads_are_more_redundant_than_4():
    small = {"seq_len": 16, "n_train": 256, "epochs": 5}
    scores = {}
    for heads in (4, 32):
        run = tr.train(TransformerConfig(n_heads=heads, **small))
        scores[heads] = next(d.value for d in tr.diagnose(run) if d.id == "redundancy")
    assert scores[32] > scores[4]


@pytest.mark.slow
def test_findings_bundle(post_run):
    found = tr.measure_findings(post_run, n_windows=64)
    T = post_run.config.seq_len
    assert found.distances.tolist() == list(range(T))  # causal: no future distances
    assert found.shares.sum() == pytest.approx(1.0)
    assert found.example.shape == (T + 1,)
    assert found.example_one_step.shape == (T,)
    assert found.example_rollout.shape == (T + 1 - found.context,)
    assert [d.id for d in found.diagnostics] == list(tr.DIAGNOSTICS)
    assert all(d.level in ("green", "amber", "red") for d in found.diagnostics)
    # the shortcut under the mask (prefix error = teacher-forced loss) agrees with the T passes
    val = post_run.data.val[:64]
    assert found.prefix_error == pytest.approx(tr.prefix_one_step_error(post_run.model, val), rel=1e-4)


@pytest.mark.slow
def test_findings_measure_the_honest_error_without_the_mask(no_mask_run):
    found = tr.measure_findings(no_mask_run, n_windows=64)
    val = no_mask_run.data.val[:64]
    assert found.prefix_error == pytest.approx(tr.prefix_one_step_error(no_mask_run.model, val), rel=1e-6)
    assert found.prefix_error > 3 * found.val_loss
