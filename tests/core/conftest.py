"""Shared by the core tests: trained runs (training, its evaluation and its findings) and seeded
attention inputs (random features, linear attention, the kernel-approximation lesson).

Each run takes a few seconds to train, so each is trained once per test session.
"""

from __future__ import annotations

import pytest
import torch

from core import training as tr
from core.lessons.training import preset_config
from core.transformer import TransformerConfig


@pytest.fixture(scope="session")
def post_run() -> tr.TrainingRun:
    """The post's model, default config (20 epochs, ~8 s)."""
    return tr.train(TransformerConfig())


@pytest.fixture(scope="session")
def no_positions_run() -> tr.TrainingRun:
    """The ``no_positions`` preset: attention without positional encoding."""
    return tr.train(preset_config("no_positions"))


@pytest.fixture(scope="session")
def no_mask_run() -> tr.TrainingRun:
    """The default config without the causal mask."""
    return tr.train(TransformerConfig(causal=False))


def qkv(L=12, S=None, d=8, dv=3, sigma=0.5, seed=0, batch=()):
    """Seeded float64 query (*batch, L, d) and key (*batch, S, d), entries N(0, σ²); value (*batch, S, dv)."""
    gen = torch.Generator().manual_seed(seed)
    S = L if S is None else S
    q = sigma * torch.randn(*batch, L, d, generator=gen, dtype=torch.float64)
    k = sigma * torch.randn(*batch, S, d, generator=gen, dtype=torch.float64)
    v = torch.randn(*batch, S, dv, generator=gen, dtype=torch.float64)
    return q, k, v
