"""``ui.caching`` against Streamlit's own caches on the pinned Streamlit, per call and per rerun.

``python -m benchmarks caching [--calls N] [--rounds R] [--pages NAME ...] [--repeat N]``.

Per call, inside one Streamlit script run (``AppTest``: a real ``ScriptRunContext``, as a page
calls them), for the arguments the pages pass (numpy arrays of 200 and 2,000 floats with a string
and a float, a frozen ``core`` dataclass with a mask and a float, arrays with a tuple of 60
floats), each cache in turn, interleaved round by round, best round's mean µs per call, in the
calling thread's CPU time (``time.thread_time``: the other load of a shared machine does not
inflate it):

- hit: the call a rerun makes when nothing changed (equal arguments, fresh objects, as the cached
  calls above it return copies);
- miss: a new argument (a fresh float each call), the function itself doing nothing but returning
  a 200-float array or a small dataclass: what the cache adds to a computation.

Caches: ``ui.caching.data`` / ``ui.caching.resource`` (one BLAKE2b of the arguments' pickle),
``st.cache_data`` / ``st.cache_resource`` with ``hash_funcs=ui.caching.fast_hash_funcs()`` (lists
and ``core`` dataclasses by their pickle), and plain ``st.cache_data`` / ``st.cache_resource``
(Streamlit hashes a dataclass through ``dataclasses.asdict``).

Per rerun, with ``--pages`` (default: scaled-dot-product and kernel-regression; ``--pages`` with no
name skips it): unchanged reruns of each page with every section open, timed as ``bench_pages``
times them, with ``ui.caching``'s LRUs and with Streamlit's caches (``ui.caching.use_lru(False)``,
what ``ATTN_FAST_CACHE=0`` sets: the same functions, ``st.cache_data`` / ``st.cache_resource``
with the same ``hash_funcs``), interleaved in one process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

CALLS = 200
ROUNDS = 5
PAGES = ("scaled-dot-product", "kernel-regression")
RERUNS = 15


def _cases() -> dict[str, tuple[Callable[[int], tuple], str]]:
    """name -> (the arguments of call ``i``: fresh objects, equal for equal ``i``; the function's source).

    The functions return at once (a 200-float array or a (16, 1) array): what is timed is the cache.
    """
    import numpy as np

    from core.lessons import scaled_dot_product as aa

    rng = np.random.default_rng(0)
    x200, y200, x2000, y2000 = (rng.normal(size=n) for n in (200, 200, 2000, 2000))
    grid = np.linspace(-3, 3, 200)
    mask = np.tril(np.ones((16, 16), dtype=bool))
    hs = tuple(float(h) for h in np.geomspace(0.01, 3, 60))

    def arrays(x: Any, y: Any) -> Callable[[int], tuple]:
        return lambda i: (x.copy(), y.copy(), grid.copy(), "gaussian", 0.3 + i * 1e-6)

    fit = "def NAME(x, y, grid, kernel, h):\n    return grid * h\n"
    return {
        "arrays of 200 + str + float": (arrays(x200, y200), fit),
        "arrays of 2,000 + str + float": (arrays(x2000, y2000), fit),
        "core dataclass + mask + float": (
            lambda i: (aa.make_inputs("random", 16, 64, 0, 0), mask.copy(), 0.125 + i * 1e-6),
            "def NAME(inp, mask, scale):\n    return inp.q[:, :1] * scale\n",
        ),
        "arrays + tuple of 60 floats": (
            lambda i: (x200.copy(), y200.copy(), "gaussian", (*hs[:-1], hs[-1] + i * 1e-6)),
            "def NAME(x, y, kernel, hs):\n    return grid * hs[-1]\n",
        ),
    }


def _implementations() -> dict[str, Callable[[Callable], Callable]]:
    import streamlit as st

    from ui import caching

    def st_data(fast: bool) -> Callable[[Callable], Callable]:
        funcs = caching.fast_hash_funcs() if fast else None
        return st.cache_data(max_entries=64, show_spinner=False, hash_funcs=funcs)

    def st_resource(fast: bool) -> Callable[[Callable], Callable]:
        funcs = caching.fast_hash_funcs() if fast else None
        return st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=funcs)

    return {
        "ui.caching.data": caching.data(max_entries=64),
        "st.cache_data + hash_funcs": st_data(True),
        "st.cache_data": st_data(False),
        "ui.caching.resource": caching.resource(max_entries=64),
        "st.cache_resource + hash_funcs": st_resource(True),
        "st.cache_resource": st_resource(False),
    }


def _function(case: int, impl: int, source: str) -> Callable:
    """A function of its own (module and name) per case and cache, so no two share a store."""
    import numpy as np

    name = f"f_{case}_{impl}"
    scope: dict[str, Any] = {"__name__": f"benchmarks._cached_{name}", "grid": np.linspace(-3, 3, 200)}
    exec(source.replace("NAME", name), scope)
    return scope[name]


def run_in_script(calls: int, rounds: int) -> dict[str, dict[str, tuple[float, float]]]:
    """{case: {cache: (hit µs, miss µs)}}: best round's mean per call. Call inside a script run."""
    cases, impls = _cases(), _implementations()
    results: dict[str, dict[str, tuple[float, float]]] = {}
    for c, (case, (make, source)) in enumerate(cases.items()):
        fns = {name: wrap(_function(c, i, source)) for i, (name, wrap) in enumerate(impls.items())}
        hit_args = [make(0) for _ in range(calls)]
        best = {name: [float("inf"), float("inf")] for name in fns}
        for r in range(rounds):
            miss_args = [make(1 + r * calls + i) for i in range(calls)]
            for name, fn in fns.items():
                fn(*hit_args[0])  # stored: every later hit call finds it
                start = time.thread_time()
                for args in hit_args:
                    fn(*args)
                hit = (time.thread_time() - start) / calls
                start = time.thread_time()
                for args in miss_args:
                    fn(*args)
                miss = (time.thread_time() - start) / calls
                best[name] = [min(best[name][0], hit), min(best[name][1], miss)]
        results[case] = {name: (1e6 * hit, 1e6 * miss) for name, (hit, miss) in best.items()}
    return results


def _script() -> None:
    import streamlit as st

    from benchmarks.bench_caching import CALLS, ROUNDS, run_in_script

    options = st.session_state.get("options", {})
    st.session_state["bench"] = run_in_script(options.get("calls", CALLS), options.get("rounds", ROUNDS))


def per_call(calls: int, rounds: int) -> dict[str, dict[str, tuple[float, float]]]:
    """:func:`run_in_script` inside an ``AppTest`` script run."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_script, default_timeout=600)
    at.session_state["options"] = {"calls": calls, "rounds": rounds}
    at.run()
    if at.exception:
        raise SystemExit(at.exception[0].value)
    return at.session_state["bench"]


def per_rerun(
    pages: Sequence[str], reruns: int, rounds: int = 3
) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """{page: {"lru"|"streamlit": [(wall ms, process CPU ms) of each unchanged rerun]}}, all open.

    One ``AppTest`` per page (``bench_pages.open_page``); between rounds ``ui.caching.use_lru``
    switches every cached call between ``ui.caching``'s LRUs and Streamlit's caches (each warmed
    up by two reruns first), so both are measured in the same process, interleaved.
    """
    from benchmarks.bench_pages import _timed_run, open_page
    from ui import caching

    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    try:
        for page in pages:
            at = open_page(page, open_all=True)
            times: dict[str, list[tuple[float, float]]] = {"lru": [], "streamlit": []}
            for _ in range(rounds):
                for mode in times:
                    caching.use_lru(mode == "lru")
                    for _ in range(2):
                        _timed_run(at)
                    times[mode] += [_timed_run(at) for _ in range(reruns)]
            out[page] = times
    finally:
        caching.use_lru(True)
    return out


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks caching", description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--pages", nargs="*", default=list(PAGES))
    parser.add_argument("--repeat", type=int, default=RERUNS, help="unchanged reruns timed per page")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    results = per_call(args.calls, args.rounds)
    spent = time.perf_counter() - started
    print(f"per call, µs (best of {args.rounds} rounds of {args.calls} calls; {spent:.0f} s)")
    for case, row in results.items():
        print(f"\n{case}:")
        ours = {"data": row["ui.caching.data"], "resource": row["ui.caching.resource"]}
        for name, (hit, miss) in row.items():
            ref = ours["data" if "data" in name else "resource"]
            ratio = f"   hit {hit / ref[0]:5.1f}x ours, miss {miss / ref[1]:5.1f}x"
            ratio = "" if name.startswith("ui.") else ratio
            print(f"  {name:>32}: hit {hit:8.1f}   miss {miss:8.1f}{ratio}")
    if args.pages:
        rounds = 3
        print(f"\nunchanged rerun, every section open, median of {rounds} x {args.repeat}: wall ms [CPU ms]")
        for page, times in per_rerun(args.pages, args.repeat, rounds).items():
            (lru, lru_cpu), (st_, st_cpu) = (
                [statistics.median(t[i] for t in times[m]) for i in (0, 1)] for m in ("lru", "streamlit")
            )
            print(
                f"  {page}: ui.caching {lru:6.1f} [{lru_cpu:6.1f}], st.cache_* + hash_funcs "
                f"{st_:6.1f} [{st_cpu:6.1f}]: {st_ / lru:.2f}x wall, {st_cpu / lru_cpu:.2f}x CPU"
            )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
