"""The server side of a load run: ``streamlit run app.py`` on a free loopback port, and its memory.

``serve_streamlit()`` starts the app as ``make run`` does (plus headless, no usage stats, bound to
127.0.0.1), waits for ``/_stcore/health`` and stops it afterwards. ``server_pid(port)`` finds the
process listening on a loopback port when the server was started by someone else, and
``TreeSampler`` samples the resident memory (summed over the process and its children) and CPU time
of that process tree while the load runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from deploy.serve import free_ports

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Server:
    url: str
    pid: int
    log: Path


@contextmanager
def serve_streamlit(
    app: Path = ROOT / "app.py", extra_args: tuple[str, ...] = (), env: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """A plain ``streamlit run <app>`` on a free 127.0.0.1 port, stopped on exit.

    ``extra_args`` are more ``streamlit run`` flags; the repository root is on the script's path
    (a script outside the root, such as the benchmarks' reference page, imports ``figures``).
    ``env`` adds to the server's environment (e.g. ``{"ATTN_TCP_NODELAY": "0"}``: a part of the
    server layer off, see ``server/__init__.py``).
    """
    port = free_ports()  # below the ephemeral range: no outgoing connection can take it first
    with tempfile.TemporaryDirectory(prefix="load-streamlit-") as tmp:
        log = Path(tmp) / "server.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [
                    sys.executable, "-m", "streamlit", "run", str(app),
                    "--server.port", str(port), "--server.address", "127.0.0.1",
                    "--server.headless", "true", "--browser.gatherUsageStats", "false", *extra_args,
                ],
                cwd=ROOT,
                env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)},
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, log)
            yield Server(url=url, pid=proc.pid, log=log)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not start on {url}; its log:\n{log.read_text()}")
        time.sleep(0.3)


def server_pid(port: int) -> int | None:
    """The pid of the process listening on 127.0.0.1:``port`` (None when it cannot be seen)."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return None
    for c in conns:
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
            return c.pid
    return None


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


class TreeSampler:
    """Samples the RSS (sum over the tree) and CPU time of a process tree in a background thread.

    Under Locust the thread is a greenlet (gevent's monkey-patching), which is all it needs.
    """

    def __init__(self, pid: int | None, interval: float = 0.25) -> None:
        self.pid = pid
        self.interval = interval
        self.start_rss: int | None = None
        self.peak_rss: int | None = None
        self._cpu0: float | None = None
        self._cpu1: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> tuple[int, float] | None:
        if self.pid is None:
            return None
        rss = 0
        cpu = 0.0
        try:
            for p in _tree(self.pid):
                try:
                    rss += p.memory_info().rss
                    t = p.cpu_times()
                    cpu += t.user + t.system
                except psutil.NoSuchProcess:
                    continue
        except psutil.NoSuchProcess:
            return None
        return rss, cpu

    def _record(self) -> None:
        s = self._sample()
        if s is None:
            return
        rss, cpu = s
        if self.start_rss is None:
            self.start_rss, self._cpu0 = rss, cpu
        self.peak_rss = max(self.peak_rss or 0, rss)
        self._cpu1 = cpu

    def restart_cpu(self) -> None:
        """Count CPU time from now on (RSS keeps its start and peak)."""
        s = self._sample()
        if s is not None:
            self._cpu0 = self._cpu1 = s[1]

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._record()

    def __enter__(self) -> TreeSampler:
        self._record()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._record()

    @property
    def cpu_seconds(self) -> float | None:
        if self._cpu0 is None or self._cpu1 is None:
            return None
        return self._cpu1 - self._cpu0
