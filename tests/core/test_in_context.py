"""core.in_context: the attention unit is Nadaraya-Watson on the sphere, and training finds the
bandwidth the oracle would pick, in the direction the paper says (small configs, seconds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core import in_context as ic
from core.nadaraya_watson import nw_predict

#: Small configs: 300 steps of 16 tasks train in well under a second.
FAST = {"steps": 300, "batch_tasks": 16, "test_tasks": 128}


def tail_bandwidth(run: ic.ICLRun, k: int = 50) -> float:
    return float(np.exp(np.mean(np.log(run.bandwidth[-k:]))))


@pytest.fixture(scope="module")
def default_pair():
    config = ic.ICLConfig(**FAST)
    return config, ic.train_icl(config), ic.references(config)


def test_tasks_on_sphere_and_lipschitz():
    config = ic.ICLConfig(dim=3, lipschitz=5.0, noise=0.0)
    tasks = ic.sample_tasks(config, 20, np.random.default_rng(0))
    assert tasks.x.shape == (20, 32, 3)
    assert tasks.xq.shape == (20, 8, 3)
    assert tasks.y.shape == (20, 32)
    np.testing.assert_allclose(np.linalg.norm(tasks.x, axis=-1), 1.0)
    np.testing.assert_allclose(tasks.yq, tasks.fq)  # noise 0
    # |f(a) - f(b)| <= L |a - b| on every pair of one task (brute force)
    d = np.linalg.norm(tasks.x[:, :, None] - tasks.x[:, None], axis=-1)
    df = np.abs(tasks.y[:, :, None] - tasks.y[:, None])
    assert np.all(df <= 5.0 * d + 1e-12)
    # ... and the slope gets close to L somewhere (the bound is tight)
    ratio = np.where(d > 1e-3, df / np.maximum(d, 1e-12), 0)
    assert ratio.max() > 0.8 * 5.0


def test_low_rank_tasks_share_b():
    config = ic.ICLConfig(family="low_rank", dim=4)
    tasks = ic.sample_tasks(config, 5, np.random.default_rng(1))
    b = ic.hidden_direction(config)
    np.testing.assert_allclose(tasks.u, np.broadcast_to(b, (5, 4)))
    assert math.isclose(np.linalg.norm(b), 1.0)


def test_softmax_attention_is_nw_on_the_sphere():
    """M = I / h² on the unit sphere gives exactly Gaussian NW weights (manual path, and the
    kernel regression page's 1-D nw_predict on the chord distances of a circle)."""
    config = ic.ICLConfig(dim=3)
    t = ic.sample_tasks(config, 4, np.random.default_rng(2))
    h = 0.3
    pred, w = ic.attention_predict(np.eye(3) / h**2, t.x, t.y, t.xq)
    pred_nw, w_nw = ic.nw_sphere(t.x, t.y, t.xq, h)
    np.testing.assert_allclose(w, w_nw, atol=1e-12)
    np.testing.assert_allclose(pred, pred_nw, atol=1e-12)
    assert w.shape == (4, 8, 32)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    # against core.nadaraya_watson for one query: NW depends on distances only, so put the sample
    # at its distance from the query on a line (1-D x = distance, query at 0)
    d = np.linalg.norm(t.x[0] - t.xq[0, 0], axis=-1)
    ref = nw_predict(d, t.y[0], np.array([0.0]), "gaussian", h)
    np.testing.assert_allclose(pred[0, 0], ref[0], atol=1e-12)


def test_linear_attention_and_torch_path_agree():
    config = ic.ICLConfig(dim=2)
    t = ic.sample_tasks(config, 3, np.random.default_rng(3))
    m = np.array([[2.0, 0.5], [0.5, 1.0]])
    for attention in ic.ATTENTIONS:
        pred, _w = ic.attention_predict(m, t.x, t.y, t.xq, attention)
        torch_pred = ic._torch_predict(
            torch.from_numpy(m), *(torch.from_numpy(a) for a in (t.x, t.y, t.xq)), attention
        )
        np.testing.assert_allclose(pred, torch_pred.numpy(), atol=1e-12)
    # linear: a plain loop
    loop = np.array(
        [
            [sum(t.xq[b, q] @ m @ t.x[b, i] * t.y[b, i] for i in range(32)) / 32 for q in range(8)]
            for b in range(3)
        ]
    )
    np.testing.assert_allclose(pred, loop, atol=1e-12)
    with pytest.raises(ValueError, match="attention"):
        ic.attention_predict(m, t.x, t.y, t.xq, "relu")


def test_loo_bandwidths_against_brute_force():
    config = ic.ICLConfig(n_context=10, dim=2)
    t = ic.sample_tasks(config, 3, np.random.default_rng(4))
    grid = np.geomspace(0.05, 3, 12)
    got = ic.loo_bandwidths(t.x, t.y, grid)
    for b in range(3):
        cv = []
        for h in grid:
            errs = []
            for i in range(10):
                keep = np.arange(10) != i
                p, _ = ic.nw_sphere(t.x[b : b + 1, keep], t.y[b : b + 1, keep], t.x[b : b + 1, i : i + 1], h)
                errs.append((p[0, 0] - t.y[b, i]) ** 2)
            cv.append(np.mean(errs))
        cv = np.array(cv)
        assert got[b] == grid[np.flatnonzero(np.isclose(cv, cv.min(), rtol=1e-12))[-1]]


def test_references_without_loo_are_the_same_oracle_and_skip_only_loo():
    config = ic.ICLConfig(n_context=16, seed=3)
    full, quick = ic.references(config), ic.references(config, loo=False)
    assert quick.loo_error is None
    assert quick.loo_h_median is None
    assert full.loo_error > 0
    assert full.loo_h_median in ic.BANDWIDTH_GRID
    for name in ("noise_floor", "oracle_h", "oracle_error", "mean_error"):
        assert getattr(quick, name) == getattr(full, name)
    np.testing.assert_array_equal(quick.grid_errors, full.grid_errors)


def test_trained_softmax_matches_oracle_and_beats_linear(default_pair):
    config, run, refs = default_pair
    linear = ic.train_icl(config.replace(attention="linear"))
    err = run.test_error[-1]
    assert refs.noise_floor < refs.oracle_error
    assert err <= 1.15 * refs.oracle_error  # within a small factor of the NW oracle
    assert linear.test_error[-1] >= 2.5 * err  # linear attention cannot localise
    # the effective bandwidth: within 25 % of the oracle's (the grid is 10 % per step)
    assert abs(tail_bandwidth(run) / refs.oracle_h - 1) < 0.25


def test_bandwidth_moves_with_L_and_noise():
    base = ic.ICLConfig(**FAST)
    h = {
        "L2": tail_bandwidth(ic.train_icl(base.replace(lipschitz=2.0))),
        "L8": tail_bandwidth(ic.train_icl(base.replace(lipschitz=8.0))),
        "quiet": tail_bandwidth(ic.train_icl(base.replace(noise=0.1))),
        "noisy": tail_bandwidth(ic.train_icl(base.replace(noise=1.0))),
    }
    assert h["L8"] < 0.8 * h["L2"]  # larger L: narrower window
    assert h["noisy"] > 1.25 * h["quiet"]  # more noise: wider window


def test_deterministic_and_resume_equals_one_run():
    config = ic.ICLConfig(steps=60, batch_tasks=8, test_tasks=32, eval_every=7)
    one = ic.train_icl(config)
    again = ic.train_icl(config)
    np.testing.assert_array_equal(one.m, again.m)
    assert one.loss == again.loss
    calls = {"n": 0}

    def stop_at_25() -> bool:
        calls["n"] += 1
        return calls["n"] > 25

    part = ic.train_icl(config, should_stop=stop_at_25)
    assert part.stopped
    assert part.steps_done == 25
    part = ic.train_icl(config, resume=part, until_step=40)
    assert part.steps_done == 40
    part = ic.train_icl(config, resume=part)
    np.testing.assert_array_equal(part.m, one.m)
    assert part.loss == one.loss
    assert part.bandwidth == one.bandwidth
    assert part.eval_steps == one.eval_steps
    assert part.test_error == one.test_error
    other_seed = ic.train_icl(config.replace(seed=1))
    assert not np.array_equal(other_seed.m, one.m)
    with pytest.raises(ValueError, match="resume"):
        ic.train_icl(config.replace(noise=0.5), resume=one)
    seen = []
    ic.train_icl(config.replace(steps=5), on_step=lambda r: seen.append(r.steps_done))
    assert seen == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "changes",
    [
        {"lipschitz": 0.0},
        {"lipschitz": float("nan")},
        {"noise": -0.1},
        {"n_context": 1},
        {"n_context": 2.5},
        {"dim": 1},
        {"family": "sparse"},
        {"attention": "relu"},
        {"steps": 0},
        {"lr": 0.0},
        {"lr": float("inf")},
        {"seed": -1},
        {"batch_tasks": True},
        {"n_context": 1024, "batch_tasks": 4096},
    ],
)
def test_bad_configs_raise(changes):
    with pytest.raises(ValueError, match="must be"):
        ic.ICLConfig(**changes)


def test_a_negative_curvature_favours_keys_on_the_opposite_side():
    """What the page says of λ < 0 ("the score grows with distance"), on the attention itself."""
    v = np.array([0.0, 0.0, 1.0])
    m = np.diag([10.0, 10.0, -5.0])
    xq = v[None, None, :]  # the query at +v
    keys = np.array([[[0.0, 0.6, 0.8], [0.0, 0.6, -0.8]]])  # same distance across, +v side and -v side
    _, w = ic.attention_predict(m, keys, np.zeros((1, 2)), xq)
    assert w[0, 0, 1] > w[0, 0, 0]  # the key on the far side wins
    _, w_pos = ic.attention_predict(np.diag([10.0, 10.0, 5.0]), keys, np.zeros((1, 2)), xq)
    assert w_pos[0, 0, 0] > w_pos[0, 0, 1]  # a positive curvature: the near side, a window
