"""A student, as a Locust ``User``: opens one page of the lesson, then moves a control every 3 s.

Each student holds one Streamlit websocket session (``client.StreamlitSession``) on a random page
of ``client.LOAD_PAGES``. Every ``MOVE_EVERY_S`` seconds (Locust's ``constant_pacing``: when a rerun
takes longer, the next move follows at once) it moves a random slider or select-slider to a fresh
value, or opens one of the page's folded sections (``ui.sections``) still closed, as a click on its
title: a student starts on the default view and, move by move, opens the deeper sections, whose
sliders then join the moves. Each script run is reported to Locust's ``request`` event:
request_type ``open`` (the page's first run) or ``rerun`` (a move), name = the page,
response_time = send -> ``script_finished`` in ms, and an exception when the run failed (an
exception element, no ``script_finished``, a dropped connection). ``context["rerun"]`` carries the
whole ``client.Rerun``. A student keeps one cookie jar for all the sessions it opens, as a browser
does (behind ``make serve``: it stays on its replica).

``python -m benchmarks load`` drives it headless (``run.py``); the Locust command line works too:
``locust -f benchmarks/load/locustfile.py --headless -u 30 -r 5 -t 60s --host http://127.0.0.1:8501``.
Only http://127.0.0.1:PORT hosts are accepted.
"""

from __future__ import annotations

import random

from locust import User, constant_pacing, task
from locust.exception import StopUser

from benchmarks.load.client import LOAD_PAGES, RERUN_TIMEOUT_S, Rerun, StreamlitSession, loopback_port

MOVE_EVERY_S = 3.0


class RerunFailed(Exception):
    """A script run that ended in an error (its message says which)."""


class Student(User):
    wait_time = constant_pacing(MOVE_EVERY_S)
    #: Seconds one rerun may take before it counts as an error.
    rerun_timeout = RERUN_TIMEOUT_S

    def on_start(self) -> None:
        loopback_port(self.host or "")  # refuse anything but http://127.0.0.1:PORT
        seed = getattr(self.environment, "load_seed", None)
        self.rng = random.Random(None if seed is None else f"{seed}-{id(self)}")
        self.page = self.rng.choice(LOAD_PAGES)
        self.session: StreamlitSession | None = None
        self.cookies: dict[str, str] = {}  # this student's browser: kept across reloads
        self._open()

    def _open(self) -> None:
        if self.session is not None:
            self.session.close()
        self.session = StreamlitSession(
            self.host or "", self.page, timeout=self.rerun_timeout, cookies=self.cookies
        )
        sessions = getattr(self.environment, "load_sessions", None)
        if sessions is not None:
            sessions.append(self.session)
        try:
            self.session.connect()
        except Exception as exc:
            self.session.broken = True
            self._report("open", Rerun(self.page, "", 0.0, False, f"connect: {exc}", 0, 0, 0, False))
            return
        opened = self.session.open()
        if opened.error:
            self.session.broken = True  # a page that failed to draw: the student reloads it
        self._report("open", opened)

    @task
    def move_a_control(self) -> None:
        if getattr(self.environment, "load_stopping", False):
            raise StopUser  # the run is ending (run.py): no new move; the last one has finished
        if self.session is None or self.session.broken:
            self._open()  # a new tab, as a student reloading the page
            return
        self._report("rerun", self.session.move(self.rng))

    def on_stop(self) -> None:
        if self.session is not None:
            self.session.close()

    def _report(self, request_type: str, run: Rerun) -> None:
        self.environment.events.request.fire(
            request_type=request_type,
            name=self.page,
            response_time=run.seconds * 1000.0,
            response_length=run.nbytes,
            exception=RerunFailed(run.error) if run.error else None,
            context={"rerun": run, "request_type": request_type},
        )
