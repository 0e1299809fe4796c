"""Tiny timing helpers shared by the benchmarks (best-of-n wall time, peak memory)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any


def best_time(fn: Callable[[], Any], *, repeat: int = 5, number: int = 1) -> float:
    """Best (smallest) mean seconds per call over ``repeat`` rounds of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def peak_python_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated through Python's allocators (numpy included) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
