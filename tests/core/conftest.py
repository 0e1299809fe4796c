"""Trained runs shared by the core tests of training, its evaluation and its findings.

Each takes a few seconds to train, so each is trained once per test session.
"""

from __future__ import annotations

import pytest

from core import training as tr
from core.lessons.training import preset_config
from core.transformer import TransformerConfig


@pytest.fixture(scope="session")
def post_run() -> tr.TrainResult:
    """The post's model, default config (20 epochs, ~8 s)."""
    return tr.train(TransformerConfig())


@pytest.fixture(scope="session")
def no_positions_run() -> tr.TrainResult:
    """The ``no_positions`` preset: attention without positional encoding."""
    return tr.train(preset_config("no_positions"))


@pytest.fixture(scope="session")
def no_mask_run() -> tr.TrainResult:
    """The default config without the causal mask."""
    return tr.train(TransformerConfig(causal=False))
