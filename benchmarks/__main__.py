"""``make bench``: run every ``benchmarks/bench_*.py`` module's ``main()`` in turn.

``python -m benchmarks [name ...]`` runs only the named ones (e.g. ``kernel_regression``).
``python -m benchmarks name --option ...`` passes the options to that one benchmark's ``main``
(e.g. ``python -m benchmarks load --users 30 --seconds 60``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    here = Path(__file__).resolve().parent
    names = sorted(p.stem.removeprefix("bench_") for p in here.glob("bench_*.py"))
    options = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    chosen, options = argv[:options] or names, argv[options:]
    if options and len(chosen) != 1:
        raise SystemExit(f"options {options} need exactly one benchmark name before them")
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; known: {names}")
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        module = importlib.import_module(f"benchmarks.bench_{name}")
        if options:
            module.main(options)
        else:
            module.main()


if __name__ == "__main__":
    main(sys.argv[1:])
