"""What each part of the server layer (``server/``) gains, on and off in the same run.

``python -m benchmarks server [--parts plotly tcp gc warmup] [--repeat N]`` (the cache, the fifth
part, has its own: ``python -m benchmarks caching``). Each part is measured where it acts:

- ``plotly`` (``ATTN_FAST_PLOTLY``): unchanged reruns of every load page (``benchmarks.load.client.
  LOAD_PAGES``; default view, and with every section open) in ``AppTest``, with
  ``server.plotly_spec`` installed and uninstalled in turn, interleaved in one process; median wall
  ms and process CPU ms, as ``bench_pages`` times them.
- ``tcp`` (``ATTN_TCP_NODELAY``): two ``streamlit run app.py`` servers, one with
  ``ATTN_TCP_NODELAY=0``; one websocket session on each (``benchmarks.load.client``, no browser),
  moving kernel regression's bandwidth slider in turn; median ms from the message sent to
  ``script_finished``.
- ``gc`` (``ATTN_GC_FREEZE``): in a fresh process after the warm-up imports, the CPU time of a
  full ``gc.collect()`` (what Python's own collector runs every so often, holding the GIL), with
  and without ``server.gc_freeze``.
- ``warmup`` (``ATTN_WARMUP``): fresh processes in which 8 threads (8 sessions of a freshly started
  server) import the modules the pages import, each in its own order, at once: errors without and
  with ``server.warmup`` first; and the warm-up's own time (paid once, by the first session).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("plotly", "tcp", "gc", "warmup")
REPEAT = 5


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# --- plotly -------------------------------------------------------------------------------------


def plotly_reruns(repeat: int, rounds: int = 3) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """{page view: {"fast"|"plotly": [(wall ms, CPU ms) of each unchanged rerun]}}."""
    import server
    from benchmarks.bench_pages import _timed_run, open_page
    from benchmarks.load.client import LOAD_PAGES
    from server import plotly_spec

    server.install()  # as app.main does (every part, as the environment says)
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    try:
        for page in LOAD_PAGES:
            for open_all in (False, True):
                at = open_page(page, open_all=open_all)
                times: dict[str, list[tuple[float, float]]] = {"fast": [], "plotly": []}
                for _ in range(rounds):
                    for mode in times:
                        (plotly_spec.install if mode == "fast" else plotly_spec.uninstall)()
                        _timed_run(at)
                        times[mode] += [_timed_run(at) for _ in range(repeat)]
                out[f"{page}{' (all open)' if open_all else ''}"] = times
    finally:
        plotly_spec.install()
    return out


def report_plotly(repeat: int) -> None:
    print("\nplotly fast path: unchanged rerun, median wall ms [CPU ms], fast path vs Plotly's own")
    for view, times in plotly_reruns(repeat).items():
        fast, slow = ([_median([t[i] for t in times[m]]) for i in (0, 1)] for m in ("fast", "plotly"))
        print(
            f"  {view:>36}: {fast[0]:6.1f} [{fast[1]:6.1f}] vs {slow[0]:6.1f} [{slow[1]:6.1f}]"
            f"  saves {slow[0] - fast[0]:5.1f} ms ({slow[0] / fast[0]:.2f}x)"
        )


# --- tcp ----------------------------------------------------------------------------------------


def tcp_steps(repeat: int) -> dict[str, list[float]]:
    """{"nodelay"|"nagle": [ms of each bandwidth step]}: two servers, steps alternating between them."""
    from contextlib import ExitStack

    from benchmarks.load.client import StreamlitSession
    from benchmarks.load.server import serve_streamlit

    rng = random.Random(0)
    with ExitStack() as stack:
        sessions = {}
        for mode, value in (("nodelay", "1"), ("nagle", "0")):
            srv = stack.enter_context(serve_streamlit(env={"ATTN_TCP_NODELAY": value}))
            session = StreamlitSession(srv.url, "kernel-regression")
            stack.callback(session.close)
            session.connect()
            if not session.open().ok:
                raise SystemExit(f"kernel-regression did not open on the {mode} server")
            sessions[mode] = session
        key = next(c.key for c in sessions["nodelay"].movable(folds=False) if c.key == "kr_h")
        times: dict[str, list[float]] = {mode: [] for mode in sessions}
        for i in range(3 + 4 * repeat):
            for mode, session in sessions.items():
                step = session.move(rng, key)
                if not step.ok:
                    raise SystemExit(f"{mode}: {step.error}")
                if i >= 3:  # the first steps fill the caches
                    times[mode].append(1e3 * step.seconds)
    return times


def report_tcp(repeat: int) -> None:
    times = tcp_steps(repeat)
    on, off = _median(times["nodelay"]), _median(times["nagle"])
    print("\nTCP_NODELAY: kernel regression's bandwidth step, message sent -> script_finished, median ms")
    print(f"  with TCP_NODELAY {on:6.1f}, without (ATTN_TCP_NODELAY=0) {off:6.1f}: saves {off - on:5.1f} ms")
    p90 = {mode: _p90(values) for mode, values in times.items()}
    print(f"  ({len(times['nodelay'])} steps each; p90 {p90['nodelay']:.1f} vs {p90['nagle']:.1f})")


def _p90(values: Sequence[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


# --- gc -----------------------------------------------------------------------------------------

GC_PROBE = """
import gc, json, sys, time
from server import gc_freeze, warmup
warmup.import_everything()
if sys.argv[1] == "1":
    gc_freeze.freeze_imported()
else:
    gc.collect()
tracked = len(gc.get_objects())  # what a full collection walks (frozen objects are not listed)
times = []
for _ in range(int(sys.argv[2])):
    start = time.thread_time()
    gc.collect()
    times.append(1e3 * (time.thread_time() - start))
print(json.dumps({"ms": times, "tracked": tracked, "frozen": gc.get_freeze_count()}))
"""


def _probe(code: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=900,
        check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def report_gc(repeat: int) -> None:
    print("\ngc.freeze: a full gc.collect() after the warm-up imports, median CPU ms (fresh process each)")
    runs = {mode: [] for mode in ("frozen", "not frozen")}
    found = {}
    for _ in range(2):  # interleaved processes
        for mode in runs:
            found[mode] = _probe(GC_PROBE, "1" if mode == "frozen" else "0", str(2 * repeat))
            runs[mode] += found[mode]["ms"]
    on, off = _median(runs["frozen"]), _median(runs["not frozen"])
    print(
        f"  frozen {on:6.1f} ({found['frozen']['frozen']:,} objects frozen, "
        f"{found['frozen']['tracked']:,} walked), not frozen {off:6.1f} "
        f"({found['not frozen']['tracked']:,} walked): saves {off - on:5.1f} ms per full collection"
    )


# --- warmup -------------------------------------------------------------------------------------

WARMUP_PROBE = """
import ast, json, random, sys, threading, time
warm = sys.argv[1] == "1"
modules = json.loads(sys.argv[2])
errors = []
barrier = threading.Barrier(8)
def session(seed):
    order = list(modules)
    random.Random(seed).shuffle(order)
    barrier.wait()  # every session starts at once, as a class opening a fresh server
    try:
        if warm:
            from server import warmup
            warmup.import_everything()
        for name in order:
            __import__(name)
    except Exception as err:
        errors.append(f"{type(err).__name__}: {err}"[:160])
start = time.perf_counter()
threads = [threading.Thread(target=session, args=(i,)) for i in range(8)]
for th in threads: th.start()
for th in threads: th.join()
print(json.dumps({"errors": errors, "seconds": time.perf_counter() - start}))
"""


def _page_modules() -> list[str]:
    """The app's own modules the pages and ``ui`` import (``core``, ``figures``, ``ui``)."""
    from tests.server.test_warmup import _imported_by_pages

    return sorted(n for n in _imported_by_pages() if n.split(".")[0] in ("core", "figures", "ui"))


def report_warmup(repeat: int) -> None:
    modules = json.dumps(_page_modules())
    results: dict[str, list[dict]] = {"without": [], "with": []}
    for _ in range(repeat):
        for mode in results:
            results[mode].append(_probe(WARMUP_PROBE, "1" if mode == "with" else "0", modules))
    print(f"\nwarm-up: 8 sessions importing the pages' modules at once, {repeat} fresh processes each")
    for mode, runs in results.items():
        failed = sum(1 for r in runs if r["errors"])
        errors = sum(len(r["errors"]) for r in runs)
        seconds = _median([r["seconds"] for r in runs])
        print(f"  {mode:>7} server.warmup: {failed}/{len(runs)} processes with errors ({errors} errors), "
              f"all imported in {seconds:.1f} s (median)")  # fmt: skip
        for r in runs:
            for e in r["errors"][:2]:
                print(f"          {e}")


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks server", description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--repeat", type=int, default=REPEAT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    reports = {"plotly": report_plotly, "tcp": report_tcp, "gc": report_gc, "warmup": report_warmup}
    for part in args.parts:
        reports[part](args.repeat)
    print(f"\n{time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
