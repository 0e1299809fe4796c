"""core.induction and core.induction_training: the scores against brute-force loops, the model
against torch's attention, the task's structure, deterministic and resumable training. The default
run and its reading (formation, ablation, kernel view, typed text, the shipped file) are tested in
tests/core/lessons/test_induction_heads.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core import induction as ind
from core import induction_training as tr

# --------------------------------------------------------------------------------------------
# Brute-force references, written from the definitions in the issue
# --------------------------------------------------------------------------------------------


def loop_previous_token(weights: np.ndarray) -> np.ndarray:
    H, T, _ = weights.shape
    out = np.zeros(H)
    for h in range(H):
        total = 0.0
        for t in range(1, T):
            total += weights[h, t, t - 1]
        out[h] = total / (T - 1)
    return out


def loop_prefix_matching(weights: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    H, T, _ = weights.shape
    out = np.full(H, np.nan)
    for h in range(H):
        values = []
        for t in range(T):
            if not any(tokens[r] == tokens[t] for r in range(t)):
                continue
            values.append(sum(weights[h, t, s] for s in range(1, t + 1) if tokens[s - 1] == tokens[t]))
        if values:
            out[h] = sum(values) / len(values)
    return out


def random_maps(rng: np.random.Generator, B: int, H: int, T: int, causal: bool = True) -> np.ndarray:
    """Row-stochastic maps (B, H, T, T), causal or not (weight above the diagonal too: a score must
    still count only the keys s <= t)."""
    w = rng.random((B, H, T, T)) * (np.tril(np.ones((T, T))) if causal else 1.0)
    return w / w.sum(-1, keepdims=True)


# --------------------------------------------------------------------------------------------
# The scores
# --------------------------------------------------------------------------------------------


def test_previous_token_score_matches_the_loop():
    rng = np.random.default_rng(0)
    for T in (2, 5, 17):
        w = random_maps(rng, 1, 3, T)[0]
        np.testing.assert_allclose(ind.previous_token_score(w), loop_previous_token(w), rtol=1e-12)
    # a head that always looks one back scores 1, one that looks at itself 0
    T = 6
    back = np.eye(T, k=-1)
    back[0, 0] = 1.0
    w = np.stack([back, np.eye(T)])
    np.testing.assert_allclose(ind.previous_token_score(w), [1.0, 0.0])
    # torch tensors are accepted as well
    np.testing.assert_allclose(ind.previous_token_score(torch.from_numpy(w)), [1.0, 0.0])


def test_prefix_matching_score_matches_the_loop():
    rng = np.random.default_rng(1)
    for T in (3, 8, 20):
        for _ in range(5):
            tokens = rng.integers(0, 4, size=T)  # small vocabulary: many repeats, several matches per row
            w = random_maps(rng, 1, 2, T, causal=False)[0]
            np.testing.assert_allclose(
                ind.prefix_matching_score(w, tokens), loop_prefix_matching(w, tokens), rtol=1e-12
            )


def test_prefix_matching_of_a_perfect_induction_head_is_one():
    tokens = np.array([5, 1, 2, 3, 1, 2, 3, 1])
    T = len(tokens)
    w = np.zeros((2, T, T))
    w[1] = np.eye(T)  # head 1 looks at itself: never at a matching key
    for t in range(T):
        earlier = [r for r in range(t) if tokens[r] == tokens[t]]
        if earlier:
            w[0, t, earlier[-1] + 1] = 1.0  # the token after the latest earlier occurrence
        else:
            w[0, t, t] = 1.0
    np.testing.assert_allclose(ind.prefix_matching_score(w, tokens), [1.0, 0.0])


def test_prefix_matching_is_nan_without_repeats():
    w = random_maps(np.random.default_rng(2), 1, 2, 5)[0]
    assert np.isnan(ind.prefix_matching_score(w, np.arange(5))).all()


def test_batch_scores_are_the_mean_of_the_sequence_scores():
    rng = np.random.default_rng(3)
    B, H, T = 6, 3, 9
    w = random_maps(rng, B, H, T, causal=False)
    tokens = rng.integers(0, 5, size=(B, T))
    tokens[2] = np.arange(T)  # one sequence without repeats: left out of the prefix-matching mean
    np.testing.assert_allclose(
        ind.batch_previous_token_score(w), np.mean([loop_previous_token(x) for x in w], axis=0), rtol=1e-12
    )
    per_sequence = [loop_prefix_matching(w[b], tokens[b]) for b in range(B) if b != 2]
    np.testing.assert_allclose(
        ind.batch_prefix_matching_score(w, tokens), np.mean(per_sequence, axis=0), rtol=1e-12
    )
    assert np.isnan(ind.batch_prefix_matching_score(w[2:3], tokens[2:3])).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ind.previous_token_score(np.ones((4, 4)) / 4), "heads, T, T"),
        (lambda: ind.previous_token_score(np.ones((2, 4, 3)) / 3), "square"),
        (lambda: ind.previous_token_score(np.ones((2, 1, 1))), "T >= 2"),
        (lambda: ind.prefix_matching_score(np.ones((2, 4, 4)) / 4, np.arange(5)), "tokens must have shape"),
        (lambda: ind.prefix_matching_score(np.ones((2, 4, 4)) / 4, np.zeros(4)), "integers"),
        (lambda: ind.prefix_matching_score(np.ones((1, 2, 4, 4)) / 4, np.arange(4)), "heads, T, T"),
        (lambda: ind.batch_previous_token_score(np.ones((2, 4, 4)) / 4), "B, heads, T, T"),
        (lambda: ind.batch_prefix_matching_score(np.ones((2, 1, 4, 4)) / 4, np.arange(4)), "tokens"),
    ],
)
def test_scores_refuse_shapes_that_do_not_fit(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------------------------


def test_batches_repeat_a_segment_of_distinct_tokens_after_a_random_prefix():
    config = ind.InductionConfig()
    b = ind.induction_batch(config, np.random.default_rng(4), 200)
    T = config.seq_len
    assert b.tokens.shape == (200, T)
    assert b.copy_mask.shape == (200, T - 1)
    assert b.tokens.dtype == np.int64
    assert b.tokens.min() >= 0
    assert b.tokens.max() < config.vocab
    assert set(np.unique(b.period)) == set(range(config.min_period, config.max_period + 1))
    for i in range(200):
        p, a = int(b.period[i]), int(b.start[i])
        assert 0 <= a <= T - 2 * p
        segment = b.tokens[i, a : a + p]
        assert len(set(segment.tolist())) == p  # distinct
        for t in range(a + p, T):
            assert b.tokens[i, t] == b.tokens[i, t - p]
        for t in range(T - 1):
            assert b.copy_mask[i, t] == (t >= a + p)
    assert (b.start == 0).any()
    assert (b.start > 0).any()


def test_batches_are_fixed_by_seed_and_step():
    config = ind.InductionConfig(seed=7)
    np.testing.assert_array_equal(ind.training_batch(config, 3).tokens, ind.training_batch(config, 3).tokens)
    assert not np.array_equal(ind.training_batch(config, 3).tokens, ind.training_batch(config, 4).tokens)
    assert not np.array_equal(
        ind.training_batch(config, 3).tokens, ind.training_batch(config.replace(seed=8), 3).tokens
    )
    np.testing.assert_array_equal(
        ind.eval_batch(config).tokens, ind.eval_batch(config.replace(steps=9)).tokens
    )
    assert ind.eval_batch(config).tokens.shape == (config.eval_size, config.seq_len)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"vocab": 1}, "vocab"),
        ({"seq_len": 20}, "seq_len must be >= 2 \\* max_period"),
        ({"min_period": 9, "max_period": 8}, "min_period"),
        ({"vocab": 10}, "distinct tokens"),
        ({"n_heads": 3}, "divide d_model"),
        ({"lr": 0.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"steps": 1.5}, "steps"),
        ({"layer_norm": 1}, "layer_norm"),
        ({"seed": -1}, "seed"),
        ({"steps": 5000, "batch_size": 64}, "default's work"),
    ],
)
def test_config_refuses_bad_values(changes, message):
    with pytest.raises(ValueError, match=message):
        ind.InductionConfig(**changes)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def test_model_attention_is_torchs_scaled_dot_product_attention():
    """Every layer against F.scaled_dot_product_attention (causal), with a head ablated and a layer's
    QK scale multiplied; the weights against a softmax of -inf-masked scores; the embeddings and
    the unembedding written out."""
    config = ind.InductionConfig(n_layers=2, n_heads=4, d_model=32, seed=3)
    model = ind.InductionTransformer(config).double().eval()
    tokens = torch.from_numpy(ind.eval_batch(config).tokens[:5])
    ablate, scale = {(1, 2)}, 0.6
    out = model(tokens, ablate=ablate, qk_scale={1: scale})
    B, T = tokens.shape
    H, dk = config.n_heads, config.d_model // config.n_heads
    torch.testing.assert_close(out.streams[:, 0], model.embed.weight[tokens] + model.positions[:T])
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for layer in range(config.n_layers):
        attn = model.attention[layer]
        x = out.streams[:, layer]
        q, k, v = (
            lin(x).view(B, T, H, dk).transpose(1, 2) for lin in (attn.w_query, attn.w_key, attn.w_value)
        )
        factor = (scale if layer == 1 else 1.0) / math.sqrt(dk)
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=factor)  # (B, H, T, dk)
        for h in range(H):
            if (layer, h) in ablate:
                heads[:, h] = 0.0
        ref = attn.w_out(heads.transpose(1, 2).reshape(B, T, H * dk))
        torch.testing.assert_close(out.streams[:, layer + 1], x + ref)
        scores = (q @ k.transpose(-2, -1) * factor).masked_fill(~causal, float("-inf"))
        torch.testing.assert_close(out.weights[:, layer], torch.softmax(scores, dim=-1))
    torch.testing.assert_close(out.logits, out.streams[:, -1] @ model.unembed.weight.T)
    assert out.weights.shape == (B, config.n_layers, H, T, T)


def test_same_seed_same_model_and_layer_norm_option():
    config = ind.InductionConfig(seed=5)
    a, b = ind.InductionTransformer(config), ind.InductionTransformer(config)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0, msg=name)
    other = ind.InductionTransformer(config.replace(seed=6))
    assert not torch.equal(a.embed.weight, other.embed.weight)
    normed = ind.InductionTransformer(config.replace(layer_norm=True))
    assert sum(isinstance(m, torch.nn.LayerNorm) for m in normed.modules()) == config.n_layers + 1
    assert not any(isinstance(m, torch.nn.LayerNorm) for m in a.modules())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tokens": torch.zeros(2, 33, dtype=torch.long)}, "sequence length"),
        ({"tokens": torch.full((2, 5), 32)}, "token ids"),
        ({"tokens": torch.zeros(2, 5)}, "integer tensor"),
        ({"tokens": torch.zeros(5, dtype=torch.long)}, "integer tensor"),
        ({"ablate": {(2, 0)}}, "no head"),
        ({"ablate": {(0, 5)}}, "no head"),
        ({"ablate": {0}}, "pairs"),
        ({"qk_scale": {0: 0.0}}, "finite and positive"),
        ({"qk_scale": {0: float("inf")}}, "finite and positive"),
        ({"qk_scale": {3: 1.0}}, "layer"),
    ],
)
def test_forward_refuses_bad_inputs(kwargs, message):
    model = ind.InductionTransformer(ind.InductionConfig())
    kwargs = {"tokens": torch.zeros(2, 5, dtype=torch.long)} | kwargs
    with pytest.raises(ValueError, match=message):
        model(kwargs.pop("tokens"), **kwargs)


# --------------------------------------------------------------------------------------------
# Training: deterministic, resumable
# --------------------------------------------------------------------------------------------

SHORT = ind.InductionConfig(steps=50, eval_every=20, eval_size=32, d_model=32, seed=11)


def assert_same_run(a: tr.InductionRun, b: tr.InductionRun) -> None:
    assert a.steps_done == b.steps_done
    assert a.train_loss == b.train_loss
    assert [p.step for p in a.history] == [p.step for p in b.history]
    for p, q in zip(a.history, b.history, strict=True):
        assert (p.loss, p.copy_loss, p.accuracy) == (q.loss, q.copy_loss, q.accuracy)
        np.testing.assert_array_equal(p.prefix_matching, q.prefix_matching)
        np.testing.assert_array_equal(p.previous_token, q.previous_token)
    for (name, x), (_, y) in zip(a.model.state_dict().items(), b.model.state_dict().items(), strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0, msg=name)


def test_training_is_deterministic_and_measured_on_schedule():
    a, b = tr.train_induction(SHORT), tr.train_induction(SHORT)
    assert_same_run(a, b)
    assert a.finished
    assert len(a.train_loss) == 50
    assert [p.step for p in a.history] == [0, 20, 40, 50]
    assert a.history[0].previous_token.shape == (2, 2)
    assert a.train_loss[-1] < a.train_loss[0]


def test_a_paused_and_resumed_run_equals_one_run():
    whole = tr.train_induction(SHORT)
    calls = []

    def stop_at_23() -> bool:
        calls.append(1)
        return len(calls) > 23  # polled before every step: 23 steps run, then stop

    part = tr.train_induction(SHORT, should_stop=stop_at_23)
    assert part.stopped
    assert part.steps_done == 23
    part = tr.train_induction(SHORT, resume=part, until_step=24)  # the page's "Step" button
    assert part.steps_done == 24
    assert not part.stopped
    seen = []
    part = tr.train_induction(SHORT, resume=part, on_step=lambda run: seen.append(run.steps_done))
    assert seen == list(range(25, 51))
    assert_same_run(part, whole)
    # a run can be extended: same config except steps
    longer = tr.train_induction(SHORT.replace(steps=60), resume=part)
    assert longer.steps_done == 60
    assert longer.history[-1].step == 60


def test_resume_refuses_another_config():
    run = tr.train_induction(SHORT.replace(steps=2))
    with pytest.raises(ValueError, match="same config"):
        tr.train_induction(SHORT.replace(seed=12), resume=run)
    with pytest.raises(ValueError, match="InductionConfig"):
        tr.start_induction({"steps": 2})


def point(step: int, accuracy: float, prefix_matching: float = 0.8) -> tr.EvalPoint:
    z = np.zeros((2, 2))
    pm = np.array([[0.1, 0.1], [0.2, prefix_matching]])  # (layer, head) = (1, 1) is the induction head
    return tr.EvalPoint(
        step=step, loss=1.0, copy_loss=1.0, accuracy=accuracy, previous_token=z, prefix_matching=pm
    )


def test_formation_is_the_midpoint_crossing_and_the_largest_jump():
    accs = [0.03, 0.1, 0.2, 0.22, 0.25, 0.45, 0.9, 0.95, 0.97, 0.97]
    history = [point(20 * i, a) for i, a in enumerate(accs)]
    f = tr.formation(history)
    # midpoint (0.03 + 0.97) / 2 = 0.5: first reached at index 6 (0.9), step 120
    assert f.step == 120 == tr.formation_step(history)
    assert (f.jump_from, f.jump_to) == (100, 120)
    assert math.isclose(f.jump, 0.45)
    assert (f.plateau, f.final) == (0.03, 0.97)
    assert f.head == (1, 1)
    flat = [point(20 * i, a) for i, a in enumerate([0.03, 0.15, 0.2, 0.22, 0.23])]
    assert tr.formation_step(flat) is None  # rose by 0.2 < MIN_GAIN: no cliff
    # a climb without an induction head at the end (LayerNorm runs do that) is no formation either
    other_route = [*history[:-1], point(history[-1].step, 0.97, prefix_matching=0.3)]
    assert tr.formation(other_route).step is None
    assert tr.formation(other_route).head is None
    with pytest.raises(ValueError, match="two"):
        tr.formation(history[:1])
