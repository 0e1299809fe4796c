"""Cached wrappers of the kernels-to-attention page: the post's three figures, a query's weights,
dot product vs Gaussian kernel, and the learnable kernel's training runs.

The page never touches torch: these wrappers call ``core.lessons.kernels_to_attention`` and hand
back numpy arrays in frozen dataclasses. Every cached function takes only its arguments (no module
globals) and keeps a bounded number of entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from core import kernel_attention
from core.lessons import kernels_to_attention as k2a
from figures import attention_shared
from figures import kernels_to_attention as fk2a
from ui import caching
from ui.layout import cached_figure

T = TypeVar("T")

# The page's figure builders, each cached on its inputs (``ui.layout.cached_figure``: typed as the builder).
weight_distribution = cached_figure(fk2a.weight_distribution)
nw_matrix = cached_figure(fk2a.nw_matrix)
fit_figure = cached_figure(fk2a.fit_figure)
side_by_side = cached_figure(fk2a.side_by_side)
heatmap_row = cached_figure(attention_shared.heatmap_row)
bar_figure = cached_figure(fk2a.bar_figure)
line_figure = cached_figure(fk2a.line_figure)


@caching.data(max_entries=32)
def k2a_nw_vs_attention(n: int, seed: int, bandwidth: float) -> k2a.NwVsAttention:
    """:func:`core.lessons.kernels_to_attention.nw_vs_attention` (the post's three figures), cached."""
    return k2a.nw_vs_attention(n, seed, bandwidth)


@caching.data(max_entries=32)
def k2a_query_weights(n: int, seed: int, bandwidth: float, x0: float) -> k2a.QueryWeights:
    """:func:`core.lessons.kernels_to_attention.query_weights`, cached."""
    return k2a.query_weights(n, seed, bandwidth, x0)


@caching.data(max_entries=32)
def k2a_dot_vs_gaussian(
    n_vectors: int, dim: int, temperature: float, spread: float, seed: int
) -> kernel_attention.DotVsGaussian:
    """:func:`core.lessons.kernels_to_attention.random_dot_vs_gaussian` (keys' norms spread by
    ``spread``), cached."""
    return k2a.random_dot_vs_gaussian(n_vectors, dim, temperature, spread, seed)


@dataclass(frozen=True)
class LearnRun:
    """The controls of one learnable-kernel run (what the shown result was trained with).

    Defined here, not in the page: the page script runs anew on every rerun, and a class defined
    there would be a new class each time, so a run kept in session state would never equal the
    controls' run of a later rerun (dataclass equality needs the same class).
    """

    dims: str  # "1d": a bandwidth; "2d": a Mahalanobis metric
    n: int
    seed: int
    steps: int
    lr: float
    h0: float  # the bandwidth at step 0


@caching.data(max_entries=32)
def _learned_bandwidth(
    n: int, seed: int, steps: int, lr: float, h0: float, loo: bool
) -> k2a.LearnedBandwidth:
    """:func:`core.lessons.kernels_to_attention.learned_bandwidth`, cached."""
    return k2a.learned_bandwidth(n, seed, leave_one_out=loo, steps=steps, lr=lr, init_bandwidth=h0)


@caching.data(max_entries=32)
def _bandwidth_learning(loo: k2a.LearnedBandwidth, no_loo: k2a.LearnedBandwidth) -> k2a.BandwidthLearning:
    """:func:`core.lessons.kernels_to_attention.bandwidth_learning` (the data, the truth, the LOO-CV
    h), cached."""
    return k2a.bandwidth_learning(loo, no_loo)


@caching.data(max_entries=32)
def _learned_metric(n: int, seed: int, steps: int, lr: float, h0: float, loo: bool) -> k2a.LearnedMetric:
    """:func:`core.lessons.kernels_to_attention.learned_metric`, cached."""
    return k2a.learned_metric(n, seed, leave_one_out=loo, steps=steps, lr=lr, init_bandwidth=h0)


def _both_fits(learn: Callable[..., T], run: LearnRun, on_fit: Callable[[int], None] | None) -> tuple[T, T]:
    """``learn`` with leave-one-out, then without; ``on_fit(k)`` after the k-th (a progress bar)."""
    fits = []
    for k, loo in enumerate((True, False), start=1):
        fits.append(learn(run.n, run.seed, run.steps, run.lr, run.h0, loo))
        if on_fit is not None:
            on_fit(k)
    return fits[0], fits[1]


def k2a_learn(
    run: LearnRun, on_fit: Callable[[int], None] | None = None
) -> k2a.BandwidthLearning | k2a.MetricLearning:
    """Train ``run`` with and without leave-one-out: a bandwidth (1-D) or a metric (2-D).

    Each of the two fits is cached on its own; ``on_fit(k)`` is called after the k-th.
    """
    if run.dims == "1d":
        return _bandwidth_learning(*_both_fits(_learned_bandwidth, run, on_fit))
    return k2a.MetricLearning(*_both_fits(_learned_metric, run, on_fit))
