"""Classroom load, headless: N students (Locust users) against one Streamlit server for a bounded time.

``python -m benchmarks load [--users 30] [--seconds 60] [--spawn-rate 5] [--host http://127.0.0.1:PORT]
[--cold] [--json PATH]``. Without ``--host`` it starts its own ``streamlit run app.py`` on a free
loopback port and stops it afterwards; it never targets anything but 127.0.0.1. First every page is
opened once, one after the other (the teacher trying the lesson before sharing the link; ``--cold``
skips this, and then the students also measure the server's first imports and computations). The
run stops by itself after ``--seconds``: students then finish the rerun they are waiting for (up to
the rerun timeout) and close their sessions.

Reported: p50 / p95 / max rerun latency (a move: send -> ``script_finished``), reruns/s (moves that
finished, over the wall time from the first student to the last one stopping), errors, whether
every script run sent got its ``script_finished``, how many moves changed what the page shows, the
server's peak RSS (sampled every 0.25 s, summed over its process tree) and the CPU time of the
server and of this load generator. Target (issue 8): 30 students, p95 <= 1 s, 0 errors.

Importing this module imports Locust, which monkey-patches the standard library with gevent: call
``run_load`` from a process of its own (``python -m benchmarks.load`` is one).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path

import gevent
import locust  # noqa: F401  (gevent monkey-patches the standard library on import)
import numpy as np
import psutil
from locust.env import Environment
from locust.runners import LocalRunner

from benchmarks.load.client import LOAD_PAGES, RERUN_TIMEOUT_S, Rerun, StreamlitSession, loopback_port
from benchmarks.load.locustfile import MOVE_EVERY_S, Student
from benchmarks.load.server import TreeSampler, serve_streamlit, server_pid

#: Issue 8's target for 30 students.
TARGET_P95_S = 1.0
#: How many distinct error messages a result keeps.
MAX_ERROR_MESSAGES = 10


@dataclass(frozen=True)
class PageStats:
    page: str
    students: int  # sessions opened on the page (a student reloading after an error counts again)
    errors: int
    open_p50_s: float | None
    reruns: int
    p50_s: float | None
    p95_s: float | None


@dataclass(frozen=True)
class LoadResult:
    host: str
    users: int
    seconds: float  # the load window asked for
    spawn_rate: float
    wall_s: float  # first student started -> last one stopped
    reruns: int  # moves that got their script_finished
    fragment_reruns: int  # of which ran only a fragment
    opens: int  # pages opened (first runs)
    sent: int  # script runs requested (opens + moves)
    finished: int  # script runs that got their script_finished
    errors: int  # failed opens + failed moves + exceptions in the harness
    error_messages: tuple[str, ...]
    changed: int  # moves after which at least one element differs from what it showed before
    p50_s: float | None
    p95_s: float | None
    max_s: float | None
    open_p50_s: float | None
    reruns_per_s: float
    mb_per_rerun: float | None  # ForwardMsg bytes received per move
    peak_rss_bytes: int | None  # server process tree
    start_rss_bytes: int | None
    server_cpu_s: float | None  # during the students' window (after the warm-up)
    client_cpu_s: float
    pages: tuple[PageStats, ...]
    warmed_up: bool  # each page was opened once before the students came
    warm_up_errors: tuple[str, ...]
    # Behind a proxy that adds X-Replica (make serve): students' sessions per replica that took the
    # websocket (empty without one), and sessions whose websocket reached another replica than the
    # page load that set their cookie (0 when the proxy's affinity holds).
    replicas: dict[str, int]
    affinity_misses: int

    @property
    def all_finished(self) -> bool:
        return self.sent == self.finished

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def _pct(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def run_load(
    host: str | None = None,
    users: int = 30,
    seconds: float = 60.0,
    spawn_rate: float = 5.0,
    *,
    seed: int | None = None,
    rerun_timeout: float = RERUN_TIMEOUT_S,
    warm_up: bool = True,
) -> LoadResult:
    """Run ``users`` students for ``seconds`` against ``host`` (or a fresh ``streamlit run``).

    ``warm_up``: before the students come, open each page once, one after the other (the teacher
    trying the lesson before sharing the link), so the window measures reruns rather than the
    server's first imports and first computations. ``warm_up=False`` measures a cold classroom.
    """
    with ExitStack() as stack:
        if host is None:
            server = stack.enter_context(serve_streamlit())
            host, pid = server.url, server.pid
        else:
            pid = server_pid(loopback_port(host))
        loopback_port(host)
        return _run(host, pid, users, seconds, spawn_rate, seed, rerun_timeout, warm_up)


def _warm_up(host: str, timeout: float) -> tuple[str, ...]:
    """Open every page once, one after the other; the errors seen."""
    errors = []
    for page in LOAD_PAGES:
        session = StreamlitSession(host, page, timeout=timeout)
        try:
            session.connect()
            opened = session.open()
            if opened.error:
                errors.append(f"{page}: {opened.error}")
        finally:
            session.close()
    return tuple(errors)


def _stop(runner: LocalRunner, sessions: list[StreamlitSession], timeout: float) -> None:
    """End the run: no student starts a new move, every rerun in flight finishes (up to ``timeout``),
    then the runner quits.

    Locust's own stop killed students mid-rerun (their state reads "waiting" while a task runs
    under ``constant_pacing``): those reruns were sent and never counted as finished (about one per
    student in short runs). ``locustfile.Student`` checks ``environment.load_stopping`` before a move.
    """
    runner.environment.load_stopping = True  # type: ignore[attr-defined]
    deadline = time.perf_counter() + timeout
    while any(s.in_flight for s in sessions) and time.perf_counter() < deadline:
        gevent.sleep(0.05)
    runner.quit()


def _run(
    host: str,
    pid: int | None,
    users: int,
    seconds: float,
    spawn_rate: float,
    seed: int | None,
    rerun_timeout: float,
    warm_up: bool,
) -> LoadResult:
    Student.rerun_timeout = rerun_timeout
    env = Environment(user_classes=[Student], host=host, stop_timeout=rerun_timeout + 10)
    runs: list[tuple[str, Rerun]] = []
    sessions: list[StreamlitSession] = []
    env.load_sessions = sessions  # type: ignore[attr-defined]
    env.load_seed = seed  # type: ignore[attr-defined]

    def on_request(context: dict, **_: object) -> None:
        runs.append((context["request_type"], context["rerun"]))

    env.events.request.add_listener(on_request)
    me = psutil.Process()
    with TreeSampler(pid) as sampler:
        warm_up_errors = _warm_up(host, rerun_timeout) if warm_up else ()
        sampler.restart_cpu()  # CPU time of the students' window only, server and load generator
        cpu0 = sum(me.cpu_times()[:2])
        runner = env.create_local_runner()
        start = time.perf_counter()
        runner.start(users, spawn_rate=spawn_rate)
        gevent.spawn_later(seconds, _stop, runner, sessions, rerun_timeout)
        runner.greenlet.join()
        wall = time.perf_counter() - start
    client_cpu = sum(me.cpu_times()[:2]) - cpu0
    for s in sessions:
        s.close()

    moves = [r for kind, r in runs if kind == "rerun"]
    opens = [r for kind, r in runs if kind == "open"]
    done = [r for r in moves if r.finished]
    latencies = [r.seconds for r in done]
    failed = [r for _, r in runs if r.error]
    harness = [f"{row['msg']}" for row in runner.exceptions.values()]
    messages = list(dict.fromkeys([r.error for r in failed if r.error] + harness))
    pages = []
    for page in LOAD_PAGES:
        lat = [r.seconds for r in done if r.page == page]
        opened = sum(r.page == page for r in opens)
        errs = sum(r.page == page for r in failed)
        first = [r.seconds for r in opens if r.page == page and r.finished]
        pages.append(PageStats(page, opened, errs, _pct(first, 50), len(lat), _pct(lat, 50), _pct(lat, 95)))
    return LoadResult(
        host=host,
        users=users,
        seconds=seconds,
        spawn_rate=spawn_rate,
        wall_s=wall,
        reruns=len(done),
        fragment_reruns=sum(r.fragment for r in done),
        opens=len(opens),
        sent=sum(s.sent for s in sessions),
        finished=sum(s.finished for s in sessions),
        errors=len(failed) + sum(row["count"] for row in runner.exceptions.values()),
        error_messages=tuple(messages[:MAX_ERROR_MESSAGES]),
        changed=sum(r.changed > 0 for r in done),
        p50_s=_pct(latencies, 50),
        p95_s=_pct(latencies, 95),
        max_s=max(latencies, default=None),
        open_p50_s=_pct([r.seconds for r in opens if r.finished], 50),
        reruns_per_s=len(done) / wall if wall > 0 else 0.0,
        mb_per_rerun=(sum(r.nbytes for r in done) / len(done) / 1e6) if done else None,
        peak_rss_bytes=sampler.peak_rss,
        start_rss_bytes=sampler.start_rss,
        server_cpu_s=sampler.cpu_seconds,
        client_cpu_s=client_cpu,
        pages=tuple(pages),
        warmed_up=warm_up,
        warm_up_errors=warm_up_errors,
        replicas=dict(sorted(Counter(s.replica for s in sessions if s.replica).items())),
        affinity_misses=sum(s.replica is not None and s.replica != s.page_replica for s in sessions),
    )


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f} s"


def _mib(v: int | None) -> str:
    return "unknown (server process not visible)" if v is None else f"{v / 2**20:.0f} MiB"


def report(r: LoadResult) -> str:
    met = r.p95_s is not None and r.p95_s <= TARGET_P95_S and r.errors == 0
    lines = [
        f"classroom load: {r.users} students for {r.seconds:g} s against {r.host} "
        f"(spawn {r.spawn_rate:g}/s, a move every {MOVE_EVERY_S:g} s; wall {r.wall_s:.1f} s; "
        f"{'pages warmed up first' if r.warmed_up else 'cold server'})",
        f"  reruns (moves)    {r.reruns} ({r.fragment_reruns} fragment-only), {r.reruns_per_s:.2f}/s; "
        f"pages opened {r.opens} (first run p50 {_s(r.open_p50_s)})",
        f"  rerun latency     p50 {_s(r.p50_s)}  p95 {_s(r.p95_s)}  max {_s(r.max_s)}",
        f"  errors            {r.errors}" + "".join(f"\n    - {m}" for m in r.error_messages),
        *(f"  warm-up error     {m}" for m in r.warm_up_errors),
        f"  finished          {r.finished} of {r.sent} script runs sent got their script_finished",
        f"  moves that changed the page  {r.changed} of {r.reruns}",
        f"  server RSS        peak {_mib(r.peak_rss_bytes)} (at start {_mib(r.start_rss_bytes)})",
        f"  CPU               server {_s(r.server_cpu_s)}, load generator {_s(r.client_cpu_s)}; "
        f"{'-' if r.mb_per_rerun is None else f'{r.mb_per_rerun:.2f}'} MB received per move",
        "  per page          opens errors  first run p50 | reruns  p50  p95"
        + "".join(
            f"\n    {p.page:22s} {p.students:3d} {p.errors:3d}  {_s(p.open_p50_s):>9s} | "
            f"{p.reruns:4d}  {_s(p.p50_s)}  {_s(p.p95_s)}"
            for p in r.pages
        ),
        *(
            [f"  replicas          sessions {r.replicas}; websocket on another replica than the page: "
             f"{r.affinity_misses}"]
            if r.replicas else []
        ),
        f"  target (issue 8: p95 <= {TARGET_P95_S:g} s, 0 errors): {'met' if met else 'NOT met'}",
    ]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks load", description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--spawn-rate", type=float, default=5.0, help="students starting per second")
    parser.add_argument("--host", default=None, help="http://127.0.0.1:PORT (default: start a server)")
    parser.add_argument("--rerun-timeout", type=float, default=RERUN_TIMEOUT_S)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--cold", action="store_true", help="no warm-up: the students are the server's first visitors"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args(argv)
    if args.host is not None:
        try:
            loopback_port(args.host)
        except ValueError as exc:
            parser.error(str(exc))
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    result = run_load(
        args.host,
        args.users,
        args.seconds,
        args.spawn_rate,
        seed=args.seed,
        rerun_timeout=args.rerun_timeout,
        warm_up=not args.cold,
    )
    print(report(result), flush=True)
    if args.json is not None:
        args.json.write_text(result.to_json())


__all__ = ["LoadResult", "PageStats", "main", "run_load"]
