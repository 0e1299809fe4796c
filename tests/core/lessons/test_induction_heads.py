"""core.lessons.induction_heads, on the default config: the induction head forming (2 layers) where
the 1-layer control cannot, its ablation, its kernel view, the model copying typed text, and the
shipped default run being what the code trains."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core import induction as ind
from core import induction_training as tr
from core.lessons import induction_heads as lesson

# --------------------------------------------------------------------------------------------
# The default run: formation, control, ablation, kernel view, text, the shipped file
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default() -> lesson.DefaultRuns:
    """The default config and its 1-layer control, 600 steps each (~12-15 CPU s together)."""
    return lesson.default_runs()


@pytest.mark.slow
def test_the_two_layer_model_forms_an_induction_head_and_the_control_does_not(default):
    final = default.history[-1]
    head = ind.induction_head_of(final.prefix_matching)
    assert head is not None
    assert head[0] == 1
    assert final.prefix_matching[head] >= 0.5
    assert final.accuracy >= 0.9
    assert default.history[0].accuracy < 0.1  # it started at chance
    step = tr.formation_step(default.history)
    assert step is not None
    assert step <= default.config.steps
    # a previous-token head in layer 0 (uniform causal attention would score ~0.13 here)
    assert final.previous_token[0].max() >= 0.3
    control = default.control_history[-1]
    assert control.accuracy <= 0.6
    assert np.nanmax(control.prefix_matching) < 0.5
    assert tr.formation_step(default.control_history) is None


@pytest.mark.slow
def test_ablating_the_induction_heads_removes_at_least_half_of_the_gain(default):
    a = lesson.ablation(default.model)
    gain = a.full.accuracy - default.history[0].accuracy
    assert a.full.accuracy == default.history[-1].accuracy  # measured on the same held-out set
    assert a.induction_head in a.induction_heads
    assert a.induction_group is not None
    assert a.induction_group.drop >= 0.5 * gain
    # the previous-token head feeds them: without it the lookup fails too
    assert a.of(*a.previous_token_head).drop >= 0.5 * gain
    # and some head does not matter at all
    assert min(x.drop for x in a.single) < 0.05
    assert len(a.single) == 4
    with pytest.raises(ValueError, match="not ablated"):
        lesson.ablation(default.model, heads=[(0, 0)]).of(1, 1)


@pytest.mark.slow
def test_kernel_view_scores_split_by_previous_token_and_scale_moves_accuracy(default):
    kv = lesson.kernel_view(default.model)
    a = lesson.ablation(default.model, heads=[])
    assert kv.head == a.induction_head
    assert kv.gap > 2.0  # a matching key weighs e² ≈ 7 times more than a typical other one, at least
    # the split, by brute force on a few sequences
    layer, h = kv.head
    batch = ind.eval_batch(default.config)
    n = lesson.KERNEL_SEQUENCES
    scores = lesson.head_scores(default.model, batch.tokens[:n], layer)[:, h]
    match, other = [], []
    for b in range(n):
        for t in range(default.config.seq_len - 1):
            if not batch.copy_mask[b, t]:
                continue
            for s in range(t + 1):
                same = s >= 1 and batch.tokens[b, s - 1] == batch.tokens[b, t]
                (match if same else other).append(scores[b, t, s])
    np.testing.assert_allclose(np.sort(kv.match_scores), np.sort(match))
    np.testing.assert_allclose(np.sort(kv.other_scores), np.sort(other))
    # the scores are what the model's softmax reads
    out = default.model(torch.from_numpy(batch.tokens[:n]))
    T = default.config.seq_len
    masked = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    ref = np.exp(masked - masked.max(-1, keepdims=True))
    np.testing.assert_allclose(
        out.weights[:, layer, h].detach().numpy(), ref / ref.sum(-1, keepdims=True), atol=1e-5
    )
    # scale 1 is the trained model; a blur loses the copy; the kernel narrows as the scale grows
    one = int(np.flatnonzero(kv.scales == 1.0)[0])
    assert kv.accuracy[one] == a.full.accuracy
    assert kv.accuracy[0] < kv.accuracy[one] - 0.3
    # softmax entropy never grows with the inverse temperature (d entropy / d scale = -scale Var <= 0)
    assert np.all(np.diff(kv.effective_keys) <= 1e-9)
    assert kv.effective_keys[0] > 5 * kv.effective_keys[-1]
    assert kv.prefix_matching[-1] > kv.prefix_matching[0] + 0.5


@pytest.mark.slow
def test_sequence_view_shows_the_offset_diagonal_of_the_induction_head(default):
    view = lesson.sequence_view(default.model, index=3)
    batch = ind.eval_batch(default.config)
    np.testing.assert_array_equal(view.tokens, batch.tokens[3])
    out = default.model(torch.from_numpy(batch.tokens[3:4]))
    np.testing.assert_array_equal(view.weights, out.weights[0].detach().numpy())
    np.testing.assert_array_equal(view.predicted, out.logits[0].argmax(-1).numpy())
    # in the repeated part the induction head looks p - 1 back: at the token after the earlier occurrence
    layer, h = ind.induction_head_of(default.history[-1].prefix_matching)
    rows = np.flatnonzero(view.copy_mask)
    looked_at = view.weights[layer, h, rows].argmax(-1)
    assert np.mean(looked_at == rows - view.period + 1) >= 0.8
    with pytest.raises(ValueError, match="index"):
        lesson.sequence_view(default.model, index=default.config.eval_size)


def test_kernel_view_and_ablation_of_a_one_layer_model():
    model = ind.InductionTransformer(ind.InductionConfig(n_layers=1, eval_size=16))
    with pytest.raises(ValueError, match="2 layers"):
        lesson.kernel_view(model)
    a = lesson.ablation(model)
    assert a.induction_head is None
    assert a.induction_heads == ()
    assert a.induction_group is None
    with pytest.raises(ValueError, match="InductionTransformer"):
        lesson.ablation("model")
    with pytest.raises(ValueError, match="scales"):
        lesson.kernel_view(ind.InductionTransformer(ind.InductionConfig(eval_size=16)), scales=[0.0])


def test_scale_accuracy_is_the_kernel_views_accuracy_at_those_scales():
    torch.manual_seed(0)
    model = ind.InductionTransformer(ind.InductionConfig(eval_size=16))
    batch = ind.eval_batch(model.config)
    layer, _ = ind.induction_head_of(tr.evaluate(model, batch).prefix_matching)
    scales = (0.2, 1.0, 4.0)
    acc = lesson.scale_accuracy(model, scales)
    # by hand: the held-out accuracy with that layer's scores multiplied
    expected = [tr.evaluate(model, batch, qk_scale={layer: m}).accuracy for m in scales]
    np.testing.assert_array_equal(acc, expected)
    np.testing.assert_array_equal(acc, lesson.kernel_view(model, scales=scales).accuracy)
    with pytest.raises(ValueError, match="2 layers"):
        lesson.scale_accuracy(ind.InductionTransformer(ind.InductionConfig(n_layers=1, eval_size=16)), [1.0])
    with pytest.raises(ValueError, match="scales"):
        lesson.scale_accuracy(model, [])


def test_encode_text_maps_characters_to_distinct_tokens_deterministically():
    config = ind.InductionConfig()
    e = lesson.encode_text("ab ca\tb", config)
    assert e.symbols == ("a", "b", "c", "a", "b")
    assert e.tokens[0] == e.tokens[3]
    assert e.tokens[1] == e.tokens[4]
    assert len({int(t) for t in e.tokens}) == 3
    np.testing.assert_array_equal(e.tokens, lesson.encode_text("abcab", config).tokens)
    zh = lesson.encode_text("小猫坐垫子小猫", config)
    assert zh.tokens[0] == zh.tokens[5]
    assert zh.symbol_of(int(zh.tokens[1])) == "猫"
    assert zh.symbol_of(next(t for t in range(config.vocab) if t not in zh.tokens)) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("  \n", "empty"),
        ("ab" * 17, "at most 32"),
        ("abcdefghijklmnopqrstuvwxyzABCDEFG", "different characters"),
        (None, "string"),
    ],
)
def test_encode_text_refuses_bad_text(text, message):
    config = ind.InductionConfig(seq_len=40) if message == "different characters" else ind.InductionConfig()
    with pytest.raises(ValueError, match=message):
        lesson.encode_text(text, config)


def test_induction_targets_follow_the_latest_earlier_occurrence():
    tokens = np.array([1, 2, 3, 1, 4, 1, 2])
    # t=3: 1 seen at 0 -> 2; t=5: 1 latest at 3 -> 4; others never seen before
    np.testing.assert_array_equal(lesson.induction_targets(tokens), [-1, -1, -1, 2, -1, 4])


@pytest.mark.slow
@pytest.mark.parametrize("text", ["xyzabcdefgabcdefg", "一二三春夏秋冬花鸟鱼春夏秋冬花鸟鱼"])
def test_the_trained_model_copies_typed_text_on_its_second_occurrence(default, text):
    p = lesson.predict_text(default.model, lesson.encode_text(text, default.config))
    assert p.weights.shape == (2, 2, len(p.text.symbols), len(p.text.symbols))
    assert p.copy_accuracy >= 0.8
    np.testing.assert_array_equal(p.copied, p.correct & (p.copy_target >= 0))  # these texts repeat exactly
    assert "".join(s or "?" for s in p.predicted_symbols[-4:-1]) == text[-3:]


@pytest.mark.slow
def test_the_shipped_default_run_is_what_the_code_trains(default):
    shipped = lesson.load_default_runs()
    assert shipped.config == default.config == ind.InductionConfig()
    for ours, theirs in (
        (default.history, shipped.history),
        (default.control_history, shipped.control_history),
    ):
        assert [p.step for p in ours] == [p.step for p in theirs]
        # float32 training: bit-identical on one machine; other CPUs may round differently
        np.testing.assert_allclose([p.accuracy for p in ours], [p.accuracy for p in theirs], atol=0.05)
        np.testing.assert_allclose([p.loss for p in ours], [p.loss for p in theirs], atol=0.05)
    assert tr.formation_step(shipped.history) == pytest.approx(tr.formation_step(default.history), abs=20)
    tokens = torch.from_numpy(ind.eval_batch(shipped.config).tokens)
    with torch.no_grad():
        same = shipped.model(tokens).logits.argmax(-1) == default.model(tokens).logits.argmax(-1)
    assert float(same.double().mean()) >= 0.97
    # the shipped model is what its history says (to a position or two: another CPU may round a near-tie)
    measured = tr.evaluate(shipped.model, ind.eval_batch(shipped.config)).accuracy
    assert measured == pytest.approx(shipped.history[-1].accuracy, abs=1e-3)


def test_a_damaged_shipped_file_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a shipped induction run"):
        lesson.load_default_runs(bad)
    with pytest.raises(ValueError, match="not a shipped induction run"):
        lesson.load_default_runs(tmp_path / "missing.npz")
    np.savez(tmp_path / "partial.npz", config=np.array('{"vocab": 32}'))
    with pytest.raises(ValueError, match="not a shipped induction run"):
        lesson.load_default_runs(tmp_path / "partial.npz")
