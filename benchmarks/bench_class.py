"""The class answers together under a class's load (issue 26): 30 students answer through ``make serve``.

``python -m benchmarks class [--students 30] [--spread 10] [--json PATH]`` (part of ``make bench``;
``make bench-class`` alone). Two runs, each on a fresh ``deploy/serve.py``:

* **redis**: 2 replicas behind HAProxy and the redis-server ``serve.py`` starts (the shared store);
* **memory**: 1 replica with ``--no-redis`` (the in-process store of ``make run``), same proxy.

In each, a teacher (a websocket tab, ``benchmarks.load.client``) opens kernel regression, presses
**Start a class** and reads the code from the page; ``--students`` students open the student link
through HAProxy (each its own cookies, so HAProxy spreads them), and each answers the page's first
question at a random moment within ``--spread`` seconds. Every tab does what its browser would:
students' check-ins every 2 s and the teacher's panel every 1 s are the fragments' auto-reruns
(``auto_rerun`` messages), sent on time. Measured:

* a submission: answer sent -> the student's page shows "Your answer is in" (the answer is in the
  store by then); p50 / p95 / max, and the whole rerun's time;
* lost answers: students whose answer the teacher's panel never counted (and, with Redis, whose
  stored answer differs from what they sent: read from Redis with the teacher key);
* the teacher's count complete: the teacher's panel shows "30 of 30 answered" how long after the
  last answer was sent;
* students per replica (``X-Replica`` of their websocket).

Targets: 0 lost answers, the count complete within 2 s of the last answer, p95 of a submission
<= 300 ms. Skipped (with a message) without HAProxy or redis-server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.bench_serve import Serving, load_average, start_serving, stop_serving
from benchmarks.load.client import StreamlitSession, control_key
from deploy.serve import find_haproxy, find_redis_server

PAGE, QID = "kernel-regression", "kr_active"
ANSWER_KEY = f"q_{QID}"
TARGET_P95_S = 0.3
TARGET_COMPLETE_S = 2.0
#: Seconds to wait for the teacher's count after the last answer before calling answers lost.
GIVE_UP_S = 30.0
_ANSWERED = re.compile(r"\*\*(\d+) of (\d+) answered\*\*")


@dataclass
class Tab(StreamlitSession):
    """A websocket tab that also notes what the class parts of the page say, and when."""

    number_ids: dict[str, str] = field(default_factory=dict)  # key -> widget id of number inputs
    button_ids: dict[str, str] = field(default_factory=dict)
    fragments: dict[str, float] = field(default_factory=dict)  # fragment id -> auto-rerun interval
    codes: list[str] = field(default_factory=list)  # st.code texts (the student link)
    confirmed_at: float | None = None  # "Your answer is in" first seen after the answer was sent
    counts: list[tuple[float, int, int]] = field(default_factory=list)  # (when, answered, of)

    def _note_delta(self, fwd: ForwardMsg, seen: dict, drawn: dict) -> None:
        super()._note_delta(fwd, seen, drawn)
        delta = fwd.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "number_input":
            self.number_ids[control_key(element.number_input.id)] = element.number_input.id
        elif kind == "button":
            self.button_ids[control_key(element.button.id)] = element.button.id
        elif kind == "code":
            self.codes.append(element.code.code_text)
        elif kind == "markdown":
            body = element.markdown.body
            if "Your answer is in" in body and self.confirmed_at is None:
                self.confirmed_at = time.perf_counter()
            if m := _ANSWERED.search(body):
                self.counts.append((time.perf_counter(), int(m.group(1)), int(m.group(2))))

    def _run(self, control: Any) -> Any:
        # auto_rerun messages (a fragment's run_every) are not deltas: watch the raw stream for them.
        ws = self._ws
        if ws is not None and not getattr(ws, "_class_wrapped", False):
            recv = ws.recv

            def watched() -> Any:
                raw = recv()
                fwd = ForwardMsg()
                fwd.ParseFromString(raw)
                if fwd.WhichOneof("type") == "auto_rerun":
                    self.fragments[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
                return raw

            ws.recv = watched
            ws._class_wrapped = True
        return super()._run(control)

    def press(self, key: str) -> Any:
        """Click the button ``key``: a trigger value for one run."""
        state = WidgetState(id=self.button_ids[key], trigger_value=True)
        self._states[state.id] = state
        try:
            return self._run(None)
        finally:
            self._states.pop(state.id, None)

    def answer(self, value: int) -> Any:
        """Type ``value`` into the question's number input (Enter): one rerun."""
        state = WidgetState(id=self.number_ids[ANSWER_KEY], int_value=value)
        self._states[state.id] = state
        self.confirmed_at = None
        return self._run(None)

    def poll(self) -> list[Any]:
        """Run every fragment that asked to be rerun (its ``run_every``), as the browser does."""
        return [self._run(SimpleNamespace(key="poll", fragment_id=fid)) for fid in list(self.fragments)]


@dataclass
class ClassRun:
    store: str
    replicas: int
    students: int
    joined: int
    answered: int
    lost: int
    submit_p50_s: float | None
    submit_p95_s: float | None
    submit_max_s: float | None
    rerun_p95_s: float | None
    complete_after_s: float | None  # the teacher's count complete, after the last answer was sent
    wrong_values: int  # Redis only: stored answers that differ from what was sent
    checkins: int  # students' check-ins (their pages' 2-s fragment reruns) during the run
    errors: list[str]
    per_replica: dict[str, int]
    load_before: str
    load_after: str

    @property
    def passed(self) -> bool:
        return (
            self.lost == 0
            and self.wrong_values == 0
            and not self.errors
            and self.complete_after_s is not None
            and self.complete_after_s <= TARGET_COMPLETE_S
            and self.submit_p95_s is not None
            and self.submit_p95_s <= TARGET_P95_S
        )


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _start_class(url: str) -> tuple[Tab, str]:
    teacher = Tab(url, PAGE, link={"lang": "en"})
    teacher.connect()
    teacher.open()
    teacher.press("class_start")
    found = [m.group(1) for c in teacher.codes if (m := re.search(r"[?&]class=([0-9A-Z]{8})", c))]
    if not found:
        raise RuntimeError(f"no student link on the teacher's page: {teacher.codes}")
    return teacher, found[-1]


def _teacher_key(teacher: Tab, code: str) -> str | None:
    """The teacher key from the private teacher link on the teacher's page."""
    for text in teacher.codes:
        if m := re.search(rf"class={code}&teacher=([A-Za-z0-9_-]+)", text):
            return m.group(1)
    return None


def run_class(serving: Serving, store: str, students: int, spread_s: float, seed: int) -> ClassRun:
    before = load_average()
    rng = random.Random(seed)
    errors: list[str] = []
    teacher, code = _start_class(serving.url)
    key = _teacher_key(teacher, code)
    tabs = [Tab(serving.url, PAGE, link={"lang": "en", "class": code}) for _ in range(students)]
    for tab in tabs:  # students open the link one after another, as a class does within a minute
        tab.connect()
        opened = tab.open()
        if opened.error or ANSWER_KEY not in tab.number_ids:
            errors.append(f"open: {opened.error or 'no question'}")
    values = {id(tab): rng.randint(1, 200) for tab in tabs}
    delays = {id(tab): rng.uniform(0.0, spread_s) for tab in tabs}
    sent_at: dict[int, float] = {}
    rerun_s: list[float] = []
    checkins: list[int] = []
    stop = threading.Event()
    start = time.perf_counter()

    def student(tab: Tab) -> None:
        answered = False
        next_poll = start + 2.0
        while not stop.is_set():
            now = time.perf_counter()
            if not answered and now >= start + delays[id(tab)]:
                sent_at[id(tab)] = time.perf_counter()
                r = tab.answer(values[id(tab)])
                rerun_s.append(r.seconds)
                if r.error:
                    errors.append(f"answer: {r.error}")
                answered = True
            elif now >= next_poll:
                checkins.append(1)
                for r in tab.poll():
                    if r.error:
                        errors.append(f"check-in: {r.error}")
                next_poll += 2.0
            time.sleep(0.02)

    threads = [threading.Thread(target=student, args=(tab,), daemon=True) for tab in tabs]
    for t in threads:
        t.start()
    complete_at = None
    deadline = start + spread_s + GIVE_UP_S
    next_poll = start
    while time.perf_counter() < deadline:  # the teacher's panel, every second
        if time.perf_counter() >= next_poll:
            for r in teacher.poll():
                if r.error:
                    errors.append(f"teacher: {r.error}")
            next_poll += 1.0
            done = [c for c in teacher.counts if c[1] >= students]
            if done and len(sent_at) == students:
                complete_at = done[0][0]
                break
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    submit = [tab.confirmed_at - sent_at[id(tab)] for tab in tabs if tab.confirmed_at and id(tab) in sent_at]
    last_sent = max(sent_at.values()) if sent_at else None
    counted = max((c[1] for c in teacher.counts), default=0)
    wrong = 0
    if store == "redis" and key:
        from store import open_store  # read back with the teacher key: what Redis holds

        redis_url = next(iter(re.findall(r"redis: (redis://\S+) pid", serving.output())), None)
        if redis_url:
            with contextlib.suppress(Exception):
                held = open_store({"REDIS_URL": redis_url}).question(code, QID, key).answers or {}
                wrong = sorted(map(float, held.values())) != sorted(float(v) for v in values.values())
    per_replica: dict[str, int] = {}
    for tab in tabs:
        per_replica[tab.replica or "-"] = per_replica.get(tab.replica or "-", 0) + 1
    for tab in [teacher, *tabs]:
        tab.close()
    return ClassRun(
        store=store,
        replicas=len(serving.replicas),
        students=students,
        joined=sum(1 for tab in tabs if ANSWER_KEY in tab.number_ids),
        answered=len(sent_at),
        lost=students - counted,
        submit_p50_s=statistics.median(submit) if submit else None,
        submit_p95_s=_pct(submit, 0.95),
        submit_max_s=max(submit) if submit else None,
        rerun_p95_s=_pct(rerun_s, 0.95),
        complete_after_s=(complete_at - last_sent) if complete_at and last_sent else None,
        wrong_values=int(wrong),
        checkins=len(checkins),
        errors=errors[:10],
        per_replica=per_replica,
        load_before=before,
        load_after=load_average(),
    )


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:.0f}"


def table(runs: Sequence[ClassRun]) -> str:
    rows = [
        f"{'store':<7} {'replicas':>8} {'students':>8} {'lost':>4} {'submit p50/p95/max ms':>22} "
        f"{'rerun p95 ms':>12} {'count complete ms':>17} {'check-ins':>9}  {'per replica':<16} load avg"
    ]
    for r in runs:
        submit = f"{_s(r.submit_p50_s)}/{_s(r.submit_p95_s)}/{_s(r.submit_max_s)}"
        spread = ",".join(f"{k}:{v}" for k, v in sorted(r.per_replica.items()))
        rows.append(
            f"{r.store:<7} {r.replicas:>8} {r.students:>8} {r.lost:>4} {submit:>22} {_s(r.rerun_p95_s):>12} "
            f"{_s(r.complete_after_s):>17} {r.checkins:>9}  {spread:<16} {r.load_before} -> {r.load_after}"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks class", description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--spread", type=float, default=10.0, help="students answer within this many seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(list(argv))
    if find_haproxy() is None or find_redis_server() is None:
        print("skipped: needs HAProxy and redis-server (apt-get install haproxy redis-server)", flush=True)
        return
    runs = []
    for store, replicas, extra in (("redis", 2, ()), ("memory", 1, ("--no-redis",))):
        with tempfile.TemporaryDirectory(prefix=f"bench-class-{store}-") as tmp:
            serving = start_serving(replicas, Path(tmp), extra=extra)
            try:
                for port in serving.replicas.values():  # each replica opens the page once first
                    warm = Tab(f"http://127.0.0.1:{port}", PAGE)
                    warm.connect()
                    warm.open()
                    warm.close()
                run = run_class(serving, store, args.students, args.spread, args.seed)
            finally:
                redis_pids = [
                    int(p) for p in re.findall(r"^\[serve\] redis: \S+ pid (\d+)", serving.output(), re.M)
                ]
                left = stop_serving(serving) + [p for p in redis_pids if psutil.pid_exists(p)]
            if left:
                print(f"  NOT STOPPED by Ctrl+C: pids {left}", flush=True)
        runs.append(run)
        print(table([run]).split("\n", 1)[1], *(f"  - {e}" for e in run.errors), sep="\n", flush=True)
    print(f"\nclass benchmark: {args.students} students answer within {args.spread:g} s, through HAProxy")
    print(table(runs))
    print(
        "  submit: answer sent -> 'Your answer is in' on the student's page; rerun: the whole page's "
        "rerun; count complete: the teacher's panel shows every answer, after the last one was sent"
    )
    for r in runs:
        print(
            f"{r.store} ({r.replicas} replica(s)): {r.lost} lost (target 0), count complete after "
            f"{_s(r.complete_after_s)} ms (target <= {TARGET_COMPLETE_S * 1000:.0f}), submit p95 "
            f"{_s(r.submit_p95_s)} ms (target <= {TARGET_P95_S * 1000:.0f}): {'PASS' if r.passed else 'FAIL'}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
