"""core.timing: best-of-n wall time, peak tensor memory, the crossover of two cost curves."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch

from core import timing


def test_best_of_returns_the_smallest_time_and_the_last_result(monkeypatch):
    # a fake clock: the three calls take 3, 1 and 2 s
    ticks = iter([0.0, 3.0, 10.0, 11.0, 20.0, 22.0])
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    calls = []

    def fn() -> int:
        calls.append(None)
        return len(calls)

    assert timing.best_of(fn, 3) == (1.0, 3)  # the least disturbed call, the last result
    assert len(calls) == 3
    with pytest.raises(ValueError, match="repeat"):
        timing.best_of(fn, 0)


def test_peak_memory_sees_the_tensors_alive_together():
    peak = timing.peak_torch_memory(lambda: torch.ones(1024, 256, dtype=torch.float32) * 2)
    assert peak >= 2 * 1024 * 256 * 4  # the ones and the product are alive together
    assert timing.peak_torch_memory(lambda: None) == 0


def test_crossover_length():
    L = np.array([100.0, 200.0, 400.0, 800.0])
    exact = np.array([1.0, 4.0, 16.0, 64.0])
    approx = np.array([8.0, 8.0, 8.0, 8.0])
    # log ratio 3 ln2, ln2, -ln2 at 100, 200, 400: crosses zero halfway between 200 and 400 in log L
    assert timing.crossover_length(L, exact, approx) == pytest.approx(200 * math.sqrt(2))
    assert timing.crossover_length(L, exact, exact * 2) is None
    assert timing.crossover_length(L, exact, exact / 2) == 100.0
    assert timing.crossover_length(L, exact, np.full(4, np.nan)) is None
