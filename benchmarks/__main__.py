"""``make bench``: run every ``benchmarks/bench_*.py`` module's ``main()`` in turn.

``python -m benchmarks [name ...]`` runs only the named ones (e.g. ``kernel_regression``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    here = Path(__file__).resolve().parent
    names = sorted(p.stem.removeprefix("bench_") for p in here.glob("bench_*.py"))
    chosen = argv or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; known: {names}")
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        importlib.import_module(f"benchmarks.bench_{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
