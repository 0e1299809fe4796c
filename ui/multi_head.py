"""Cached wrappers of the multi-head & positions page: one line around ``core`` each.

Every argument that changes the result is a parameter (nothing is read from module globals), the
caches are bounded, and results are frozen dataclasses of numpy arrays (``core.lessons.multi_head``),
so they pickle cheaply. No torch here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.lessons import multi_head as mha
from core.lessons.multi_head import (  # noqa: F401 (BROKEN_CODE, FIXED_CODE re-exported for the page)
    BROKEN_CODE,
    FIXED_CODE,
    ContiguityDemo,
    RedundancyPoint,
    points_from_json,
    redundancy_vs_heads,
)
from core.positional import POSITIONAL_KINDS  # noqa: F401 (re-exported for the page)
from figures import multi_head as figs
from ui import caching
from ui.layout import cached_figure

LayerSpec = mha.LayerSpec
heads_for = mha.heads_for
MASK_KINDS = mha.MASK_KINDS
PE_FIGURE_LENGTH = mha.PE_FIGURE_LENGTH


@caching.data(max_entries=32)
def head_view(spec: mha.LayerSpec) -> mha.HeadView:
    """:func:`core.lessons.multi_head.head_view`, cached (raises ValueError on bad sizes)."""
    return mha.head_view(spec)


@caching.data(max_entries=64)
def head_pairs(weights: np.ndarray, threshold: float) -> tuple[tuple[int, int, float], ...]:
    """:func:`core.lessons.multi_head.head_pairs`, cached."""
    return mha.head_pairs(weights, threshold)


@caching.data(max_entries=32)
def library_check(spec: mha.LayerSpec) -> tuple:
    """:func:`core.lessons.multi_head.library_check` (float64, float32), cached."""
    return mha.library_check(spec)


@caching.data(max_entries=32)
def contiguity(heads: np.ndarray) -> ContiguityDemo:
    """:func:`core.lessons.multi_head.contiguity`, cached."""
    return mha.contiguity(heads)


@caching.data(max_entries=16)
def positions_view(d_model: int, seed: int) -> mha.PositionsView:
    """:func:`core.lessons.multi_head.positions_view`, cached."""
    return mha.positions_view(d_model, seed)


@caching.data(max_entries=32)
def permutation_view(spec: mha.LayerSpec, perm_kind: str) -> mha.PermutationView:
    """:func:`core.lessons.multi_head.permutation_view`, cached."""
    return mha.permutation_view(spec, perm_kind)


@caching.data(max_entries=64)
def redundancy_point(d_model: int, n_heads: int, train_steps: int, seed: int) -> RedundancyPoint:
    """One head count of the redundancy experiment (``core.lessons.multi_head``; trains: seconds).

    One cached call per head count, so the page can move its progress bar between calls (a
    cached function must not draw into a block created outside it). Every call uses the same
    seeded weights, batches and held-out walks, so the points equal one ``redundancy_vs_heads`` run.
    """
    return redundancy_vs_heads(d_model, [n_heads], train_steps=train_steps, seed=seed).points[0]


#: The redundancy experiment's default run (d_model 64, 100 steps, seed 42), computed ahead with
#: ``python -m core.lessons.multi_head <file> 64 100 42`` and shipped, so the page shows a result on load.
SHIPPED_REDUNDANCY = (64, 100, 42)
SHIPPED_REDUNDANCY_FILE = (
    Path(__file__).resolve().parent.parent
    / "assets"
    / "precomputed"
    / "mh_redundancy_d64_steps100_seed42.json"
)


@caching.resource()
def shipped_redundancy() -> tuple[tuple[int, int, int], tuple[RedundancyPoint, ...]] | None:
    """The shipped default run as ((d_model, steps, seed), points), or None if the file is missing/bad."""
    try:
        return SHIPPED_REDUNDANCY, points_from_json(SHIPPED_REDUNDANCY_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


head_grid = cached_figure(figs.head_grid)
concat_heatmap = cached_figure(figs.concat_heatmap)
head_bars = cached_figure(figs.head_bars)
similarity_matrix = cached_figure(figs.similarity_matrix)
encoding_heatmap = cached_figure(figs.encoding_heatmap)
kernel_heatmap = cached_figure(figs.kernel_heatmap)
kernel_by_distance = cached_figure(figs.kernel_by_distance)
permutation_grid = cached_figure(figs.permutation_grid)
redundancy_curve = cached_figure(figs.redundancy_curve)
