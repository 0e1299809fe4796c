"""The post's training experiments as named configs (the presets of the training page).

Each preset changes as little as possible from :class:`core.transformer.TransformerConfig`'s
defaults (the post's model), so that one difference explains what you see:

- ``post``: the post's model (4 heads, d_model 64, sinusoidal positions, one encoder layer).
- ``no_scale``: scores not divided by √d_k (post: "the loss oscillated violently").
- ``heads32``: 32 heads of width 2 (post: "training time soared, heads learned the same pattern").
- ``no_mask``: no causal mask: position t sees t + 1, its own target; trained 40 epochs so the
  cheat has time to take over the training loss (post 5.2: "the model cheats").
- ``learned_dropout``: learned positional embedding and attention dropout 0.1 (post 4.3: "the
  attention spread to related positions").
- ``no_positions``: no positional encoding at all: the reference for the shuffled-input test.
- ``heads32_diverse``: 32 heads with the head-diversity regulariser (post 5.3's second remedy).
"""

from __future__ import annotations

from types import MappingProxyType

from core.transformer import TransformerConfig

#: Preset id -> the config fields it changes from the defaults (read-only).
PRESETS = MappingProxyType(
    {
        "post": MappingProxyType({}),
        "no_scale": MappingProxyType({"scale": "one"}),
        "heads32": MappingProxyType({"n_heads": 32}),
        "no_mask": MappingProxyType({"causal": False, "epochs": 40}),
        "learned_dropout": MappingProxyType({"positional": "learned", "attn_dropout": 0.1}),
        "no_positions": MappingProxyType({"positional": "none"}),
        "heads32_diverse": MappingProxyType({"n_heads": 32, "diversity_weight": 1.0}),
    }
)


def preset_config(name: str) -> TransformerConfig:
    """The :class:`TransformerConfig` of preset ``name``.

    Raises:
        ValueError: if ``name`` is not a preset (the message lists the known ones).
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    return TransformerConfig(**PRESETS[name])
