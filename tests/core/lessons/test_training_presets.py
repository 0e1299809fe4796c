"""core.lessons.training, the presets: each changes exactly the config fields it names."""

from __future__ import annotations

import pytest

from core.lessons.training import PRESETS, preset_config
from core.transformer import TransformerConfig


def test_presets_are_valid_and_change_what_they_say():
    default = TransformerConfig()
    for name, changes in PRESETS.items():
        config = preset_config(name)
        changed = {f for f in changes if getattr(config, f) != getattr(default, f)}
        assert changed == set(changes), name
    with pytest.raises(ValueError, match="unknown preset"):
        preset_config("gpt4")
