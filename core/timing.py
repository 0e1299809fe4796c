"""Measuring cost: best-of-n wall time, peak tensor memory, and where one cost curve crosses another.

The pages that time something live (the kernel regression page's loop against the matrix form,
the kernel-approximation page's cost of attention against L) and ``benchmarks/`` measure with the
same three tools, so a number on screen and one in a benchmark mean the same thing:

- :func:`best_of`: the best of ``repeat`` wall times (``time.perf_counter``) of one call: the
  least disturbed run on a shared machine.
- :func:`peak_torch_memory`: the peak of the tensor memory torch allocates while a call runs
  (``torch.profiler`` with ``profile_memory=True``), beyond what was already live.
- :func:`crossover_length`: the first length where one measured cost falls below another,
  interpolated on log-log axes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def best_of(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The smallest wall time in seconds of ``repeat`` calls of ``fn``, and the last call's result.

    Raises:
        ValueError: if repeat < 1.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    best, out = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out  # type: ignore[return-value]


def peak_torch_memory(fn: Callable[[], object]) -> int:
    """Peak bytes of tensor memory torch allocates (CPU) while ``fn`` runs, beyond what was live.

    Measured with ``torch.profiler`` (``profile_memory=True``): the allocation (positive) and
    free (negative) events in time order, summed; the peak of the running sum.
    """
    from torch.profiler import ProfilerActivity, profile  # deferred: the profiler is heavy to import

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted(
        (e.time_range.start, e.self_cpu_memory_usage) for e in prof.events() if e.self_cpu_memory_usage
    )
    running = peak = 0
    for _, b in events:
        running += b
        peak = max(peak, running)
    return int(peak)


def crossover_length(lengths: np.ndarray, exact: np.ndarray, approx: np.ndarray) -> float | None:
    """First L where ``approx`` becomes cheaper than ``exact``, interpolated on log-log axes.

    Args:
        lengths: (P,) increasing lengths; exact, approx: (P,) costs (NaN = not measured).

    Returns:
        The crossover length, ``lengths[0]`` if approx is cheaper from the start, or None if it
        never becomes cheaper within the measured lengths.
    """
    lengths, exact, approx = (np.asarray(a, dtype=float) for a in (lengths, exact, approx))
    ok = np.isfinite(exact) & np.isfinite(approx) & (exact > 0) & (approx > 0)
    x, r = np.log(lengths[ok]), np.log(approx[ok]) - np.log(exact[ok])  # r < 0: approx cheaper
    if r.size == 0:
        return None
    if r[0] < 0:
        return float(lengths[ok][0])
    for i in range(1, r.size):
        if r[i] < 0 <= r[i - 1]:
            t = r[i - 1] / (r[i - 1] - r[i])
            return float(np.exp(x[i - 1] + t * (x[i] - x[i - 1])))
    return None
