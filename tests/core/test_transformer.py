"""core.transformer: the config contract, and the model against torch's own encoder layer."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from torch import nn

from core.transformer import (
    MAX_HEADS,
    EncoderBlock,
    GeneratorDropout,
    ToyTransformer,
    TransformerConfig,
)

SMALL = {"seq_len": 8, "n_train": 64, "n_val": 16, "epochs": 2}


def test_defaults_follow_the_post():
    c = TransformerConfig()
    assert (c.d_model, c.n_heads, c.n_layers, c.positional) == (64, 4, 1, "sinusoidal")
    assert c.scale == "sqrt_dk"
    assert c.score_scale == pytest.approx(1 / math.sqrt(16))
    assert c.causal
    assert c.epochs == 20
    model = ToyTransformer(c)
    assert isinstance(model.head, nn.Linear)
    assert model.head.out_features == 1
    assert model.embed.in_features == 1
    assert model.embed.out_features == 64


def test_config_is_frozen_and_hashable():
    c = TransformerConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.d_model = 32  # type: ignore[misc]
    assert hash(c) == hash(TransformerConfig())


@pytest.mark.parametrize(
    "changes",
    [
        {"d_model": 0},
        {"d_model": 256},
        {"n_heads": 0},
        {"n_heads": MAX_HEADS + 1},
        {"n_heads": 3},  # does not divide 64
        {"n_layers": 4},
        {"positional": "rotary"},
        {"scale": "two"},
        {"custom_divisor": 0.0},
        {"custom_divisor": float("nan")},
        {"attn_dropout": -0.1},
        {"attn_dropout": 0.95},
        {"causal": "yes"},
        {"diversity_weight": -1.0},
        {"learning_rate": 0.0},
        {"learning_rate": 1.0},
        {"batch_size": 0},
        {"epochs": 0},
        {"epochs": 1000},
        {"seed": -1},
        {"seq_len": 1000},
        {"n_train": 10**6},
        {"momentum": 1.0},
        {"step_std": 0.0},
        {"d_model": 2.5},
        {"epochs": True},
    ],
)
def test_invalid_configs_raise_value_error(changes):
    with pytest.raises(ValueError, match=next(iter(changes))):
        TransformerConfig(**changes)


def test_classroom_cap_on_total_work():
    big = {"d_model": 128, "n_heads": 32, "n_layers": 3, "epochs": 60, "n_train": 4096, "seq_len": 64}
    with pytest.raises(ValueError, match="too big"):
        TransformerConfig(**big)
    TransformerConfig(n_heads=32)  # the 32-head preset itself is allowed


def test_replace_and_same_run_as():
    c = TransformerConfig()
    assert c.replace(epochs=40).same_run_as(c)
    assert not c.replace(seed=1).same_run_as(c)
    with pytest.raises(ValueError, match="unknown"):
        c.replace(width=3)


def test_scale_options():
    assert TransformerConfig(scale="one").score_scale == 1.0
    assert TransformerConfig(scale="custom", custom_divisor=8.0).score_scale == 0.125
    assert TransformerConfig(n_heads=1).score_scale == pytest.approx(1 / 8)


@pytest.mark.parametrize("n_layers", [1, 3])
@pytest.mark.parametrize("causal", [True, False])
def test_shapes_rows_and_mask(n_layers, causal):
    c = TransformerConfig(n_layers=n_layers, causal=causal, **SMALL)
    model = ToyTransformer(c).eval()
    x = torch.randn(5, 8)
    with torch.no_grad():
        predictions, weights = model(x)
    assert predictions.shape == (5, 8)
    assert weights.shape == (n_layers, 5, 4, 8, 8)
    torch.testing.assert_close(weights.sum(-1), torch.ones(n_layers, 5, 4, 8))
    future = torch.triu(torch.ones(8, 8, dtype=torch.bool), diagonal=1)
    if causal:
        assert float(weights[..., future].abs().max()) == 0.0
    else:
        assert float(weights[..., future].min()) > 0.0


def test_shorter_inputs_and_bad_inputs():
    model = ToyTransformer(TransformerConfig(**SMALL))
    assert model(torch.randn(2, 3))[0].shape == (2, 3)
    with pytest.raises(ValueError, match="length"):
        model(torch.randn(2, 9))
    with pytest.raises(ValueError, match="batch, length"):
        model(torch.randn(2, 3, 1))
    with pytest.raises(ValueError, match="TransformerConfig"):
        ToyTransformer({"d_model": 64})  # type: ignore[arg-type]


def _torch_layer_from(block: EncoderBlock, c: TransformerConfig, query_factor: float = 1.0) -> nn.Module:
    """torch.nn.TransformerEncoderLayer with the block's weights (query projection times a factor)."""
    layer = nn.TransformerEncoderLayer(
        c.d_model, c.n_heads, dim_feedforward=c.d_ff, dropout=0.0, activation="gelu",
        batch_first=True, norm_first=c.norm_first,
    )  # fmt: skip
    a = block.attention
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(
            torch.cat([a.w_query.weight * query_factor, a.w_key.weight, a.w_value.weight])
        )
        layer.self_attn.in_proj_bias.copy_(
            torch.cat([a.w_query.bias * query_factor, a.w_key.bias, a.w_value.bias])
        )
        layer.self_attn.out_proj.weight.copy_(a.w_out.weight)
        layer.self_attn.out_proj.bias.copy_(a.w_out.bias)
        layer.linear1.load_state_dict(block.feed_forward[0].state_dict())
        layer.linear2.load_state_dict(block.feed_forward[2].state_dict())
        layer.norm1.load_state_dict(block.norm_attention.state_dict())
        layer.norm2.load_state_dict(block.norm_feed_forward.state_dict())
    return layer.eval()


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("causal", [True, False])
def test_encoder_block_matches_torch_transformer_encoder_layer(norm_first, causal):
    c = TransformerConfig(norm_first=norm_first, causal=causal, **SMALL)
    block = ToyTransformer(c).blocks[0].eval()
    reference = _torch_layer_from(block, c)
    x = torch.randn(3, 8, c.d_model)
    allowed = torch.ones(8, 8, dtype=torch.bool).tril()
    ours, _ = block(x, allowed if causal else None)
    theirs = reference(x, src_mask=~allowed if causal else None)  # torch: True = may NOT attend
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_no_scale_equals_torch_layer_with_queries_times_sqrt_dk():
    c = TransformerConfig(scale="one", **SMALL)
    block = ToyTransformer(c).blocks[0].eval()
    reference = _torch_layer_from(block, c, query_factor=math.sqrt(c.d_k))  # torch divides by √d_k
    x = torch.randn(3, 8, c.d_model)
    allowed = torch.ones(8, 8, dtype=torch.bool).tril()
    torch.testing.assert_close(block(x, allowed)[0], reference(x, src_mask=~allowed), rtol=1e-5, atol=1e-5)


def test_init_depends_on_config_seed_only():
    c = TransformerConfig(positional="learned", **SMALL)
    torch.manual_seed(1)
    a = ToyTransformer(c).state_dict()
    torch.manual_seed(2)  # the global RNG must not matter
    b = ToyTransformer(c).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    other = ToyTransformer(c.replace(seed=1)).state_dict()
    assert not torch.equal(a["head.weight"], other["head.weight"])


def test_causal_prediction_ignores_the_future():
    model = ToyTransformer(TransformerConfig(n_layers=2, **SMALL)).eval()
    x = torch.randn(4, 8)
    y = x.clone()
    y[:, 5:] = torch.randn(4, 3)
    with torch.no_grad():
        torch.testing.assert_close(model(x)[0][:, :5], model(y)[0][:, :5])


def test_without_positions_and_mask_the_model_is_permutation_equivariant():
    model = ToyTransformer(TransformerConfig(positional="none", causal=False, n_layers=2, **SMALL)).eval()
    x = torch.randn(4, 8)
    order = torch.randperm(8)
    with torch.no_grad():
        torch.testing.assert_close(model(x[:, order])[0], model(x)[0][:, order], rtol=1e-5, atol=1e-6)
        positioned = ToyTransformer(TransformerConfig(causal=False, **SMALL)).eval()
        assert not torch.allclose(positioned(x[:, order])[0], positioned(x)[0][:, order], atol=1e-4)


def test_generator_dropout_is_reproducible_and_scaled():
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    x = torch.ones(20000)
    a, b = GeneratorDropout(0.25, g1).train()(x), GeneratorDropout(0.25, g2).train()(x)
    assert torch.equal(a, b)
    assert float((a == 0).float().mean()) == pytest.approx(0.25, abs=0.02)
    kept = a[a != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / 0.75))  # survivors scaled by 1/(1-p)
    assert torch.equal(GeneratorDropout(0.25, g1).eval()(x), x)
    with pytest.raises(ValueError, match="dropout"):
        GeneratorDropout(1.0, g1)


def test_attention_dropout_uses_the_private_generator():
    c = TransformerConfig(attn_dropout=0.3, **SMALL)
    x = torch.randn(2, 8)
    outs = []
    for global_seed in (0, 1):
        torch.manual_seed(global_seed)
        outs.append(ToyTransformer(c).train()(x)[0])
    torch.testing.assert_close(outs[0], outs[1])
