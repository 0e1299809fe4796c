"""FAVOR+ and linear attention against exact attention: time and peak memory against L.

``python -m benchmarks kernel_approximation`` (or ``make bench``). One sequence (B = H = 1),
D = Dv = 64, m = 256 FAVOR+ features, float32, one torch thread, L = 256 ... 16,384. Measured in the
same run: our exact attention (``core.attention.scaled_dot_product_attention``, which forms the
(L, L) matrix), torch's ``F.scaled_dot_product_attention`` (may dispatch to a fused kernel that
never stores the matrix), FAVOR+ (positive orthogonal features) and linear attention (elu + 1).
Printed: best-of-n seconds, peak tensor memory (``torch.profiler``), the ratios to our exact
attention and to torch's, and the crossover lengths where each linear method becomes cheaper.
A method whose single call exceeds ``BUDGET_S`` is not run at longer lengths (the machine is
shared), so the run stays within about a minute.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from benchmarks.timing import best_time
from core.lessons import kernel_approximation as ka
from core.timing import crossover_length, peak_torch_memory

LENGTHS = (256, 512, 1024, 2048, 4096, 8192, 16384)
D = 64
M = 256
BUDGET_S = 2.0
METHODS = ("exact", "torch", "favor", "linear")


def _call(method: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    if method == "torch":
        return lambda: F.scaled_dot_product_attention(q, k, v)
    return ka.cost_function(method, q, k, v, M)


def measure() -> dict[str, dict[int, tuple[float, int]]]:
    """method -> {L: (seconds, peak bytes)}; methods over budget stop early."""
    results: dict[str, dict[int, tuple[float, int]]] = {m: {} for m in METHODS}
    stopped: set[str] = set()
    with torch.inference_mode():
        for L in LENGTHS:
            q, k, v = ka.cost_inputs(L, D, seed=0)
            for method in METHODS:
                if method in stopped:
                    continue
                fn = _call(method, q, k, v)
                fn()  # warm-up
                seconds = best_time(fn, repeat=3 if L <= 4096 else 1)
                results[method][L] = (seconds, peak_torch_memory(fn))
                if seconds > BUDGET_S:
                    stopped.add(method)
    return results


def _crossover(results, method: str, reference: str, index: int) -> str:
    common = sorted(set(results[method]) & set(results[reference]))
    if not common:
        return "not measured"
    L = np.array(common, dtype=float)
    ref = np.array([results[reference][x][index] for x in common], dtype=float)
    val = np.array([results[method][x][index] for x in common], dtype=float)
    cross = crossover_length(L, ref, val)
    if cross is None:
        return f"never up to L = {common[-1]}"
    return f"L ≈ {cross:,.0f}" if cross > common[0] else f"already at L = {common[0]}"


def main() -> None:
    torch.set_num_threads(1)
    print(f"attention cost vs L: D = {D}, m = {M}, float32, 1 thread, torch {torch.__version__}")
    results = measure()
    print(
        f"{'L':>6} "
        + " ".join(f"{m + ' ms':>10}" for m in METHODS)
        + " "
        + " ".join(f"{m + ' MiB':>11}" for m in METHODS)
    )
    for L in LENGTHS:
        times = [results[m].get(L, (math.nan, 0))[0] * 1e3 for m in METHODS]
        mems = [results[m][L][1] / 2**20 if L in results[m] else math.nan for m in METHODS]
        print(f"{L:>6} " + " ".join(f"{x:10.2f}" for x in times) + " " + " ".join(f"{x:11.2f}" for x in mems))
    print("\nratios (method / reference) at each L: time, memory")
    for method in ("favor", "linear"):
        for ref in ("exact", "torch"):
            cells = []
            for L in LENGTHS:
                if L in results[method] and L in results[ref]:
                    (ts, ms), (tr, mr) = results[method][L], results[ref][L]
                    cells.append(f"{L}: {ts / tr:.2f}x, {ms / max(mr, 1):.2f}x")
            print(f"  {method} / {ref}: " + "; ".join(cells))
    print("\ncrossover (linear method becomes cheaper than the reference)")
    for method in ("favor", "linear"):
        for ref in ("exact", "torch"):
            print(
                f"  {method:>6} vs {ref:>5}: time {_crossover(results, method, ref, 0)}, "
                f"memory {_crossover(results, method, ref, 1)}"
            )


if __name__ == "__main__":
    main()
