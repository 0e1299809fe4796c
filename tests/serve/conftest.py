"""Fixtures for serving tests: HAProxy, headless Chromium and a running ``deploy/serve.py``.

HAProxy is found like ``deploy/serve.py`` finds it (``$HAPROXY_PATH``, ``$PATH``, ``/usr/sbin``);
Chromium like the e2e tests find it. Locally a missing one skips the tests that need it with a loud
reason; under ``CI=true`` it is a failure, so CI can never pass without running them.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from deploy.serve import find_haproxy, free_ports
from tests.conftest import ROOT

#: Seconds the replicas get to start (two Streamlit processes importing torch on a busy 2-core box).
START_TIMEOUT_S = 180


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(scope="session")
def haproxy() -> str:
    """The HAProxy executable. Skips loudly locally, fails under CI, when absent."""
    path = find_haproxy()
    if path is None:
        reason = (
            "NO HAPROXY FOUND: the serving tests did not run. Install it with "
            "`apt-get install -y haproxy` or set HAPROXY_PATH."
        )
        if _in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def free_base_port(count: int) -> int:
    """A base B such that B+1..B+count are free on 127.0.0.1 (below the ephemeral range)."""
    return free_ports(count) - 1


@dataclass
class Served:
    """A running ``deploy/serve.py``: its process, the proxy's URL and what it printed."""

    proc: subprocess.Popen
    url: str
    port: int
    out: Path
    log_dir: Path

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def replica_pids(self) -> dict[str, list[int]]:
        """Every pid each replica has had (a restarted replica gets a new one), in order."""
        pids: dict[str, list[int]] = {}
        for name, pid in re.findall(r"^\[serve\] (app\d+): \S+ pid (\d+)", self.output(), re.M):
            pids.setdefault(name, []).append(int(pid))
        return pids

    def haproxy_pid(self) -> int:
        return int(re.search(r"^\[serve\] haproxy: pid (\d+)", self.output(), re.M).group(1))

    def redis_pids(self) -> list[int]:
        """Every pid the class store's redis-server has had (it is restarted when it exits)."""
        return [int(p) for p in re.findall(r"^\[serve\] redis: \S+ pid (\d+)", self.output(), re.M)]

    def redis_port(self) -> int | None:
        found = re.search(r"^\[serve\] redis: redis://127\.0\.0\.1:(\d+)/", self.output(), re.M)
        return int(found.group(1)) if found else None

    def all_pids(self) -> set[int]:
        replicas = (p for ps in self.replica_pids().values() for p in ps)
        return {self.proc.pid, self.haproxy_pid(), *replicas, *self.redis_pids()}

    def stop(self, sig: int = signal.SIGINT, timeout: float = 40) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is dead: it only waits for its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def process_groups() -> dict[int, int]:
    """pid -> process group of every live process on the machine."""
    groups = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                groups[int(entry.name)] = int(fields[2])
    return groups


def assert_stops_everything(served: Served, sig: int) -> None:
    """Send ``sig`` to ``deploy/serve.py``: it stops cleanly and nothing it started is left.

    Checked by pid: serve.py exits 0 through its own handler (it names the signal), HAProxy, the
    class store's redis-server and every replica it ever started are gone, nothing is left in
    their process groups (a child a replica might have started), and the proxy's and the store's
    ports refuse connections.
    """
    pids = served.all_pids()
    children = pids - {served.proc.pid}
    assert served.redis_pids(), served.output()  # the class answers' store runs beside the proxy
    assert len(children) >= 4, served.output()  # haproxy, redis and at least two replicas
    # Each child leads its own process group; the replicas and haproxy answer now.
    assert all(process_groups().get(pid) == pid for pid in children if alive(pid))
    assert served.stop(sig, timeout=40) == 0
    assert f"[serve] {signal.Signals(sig).name}: stopping" in served.output()
    assert "[serve] stopped" in served.output()
    # serve.py waited for its children; a grandchild re-parented to init may need a moment to go.
    deadline = time.monotonic() + 5
    while [pid for pid in pids if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in pids if alive(pid)] == []
    left = {pid: group for pid, group in process_groups().items() if group in children}
    assert left == {}
    with pytest.raises(urllib.error.URLError, match="refused"):
        urllib.request.urlopen(f"{served.url}/_stcore/health", timeout=5)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", served.redis_port()), timeout=5).close()


def start_serve(tmp: Path, replicas: int, *extra: str) -> Served:
    port = free_ports(replicas + 1)  # the proxy's port, then the replicas' (BASE+1..BASE+K)
    base = port
    out = tmp / "serve.out"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [
                sys.executable, str(ROOT / "deploy" / "serve.py"), "--replicas", str(replicas),
                "--port", str(port), "--host", "127.0.0.1", "--base-port", str(base),
                "--log-dir", str(tmp / "logs"), "--start-timeout", str(START_TIMEOUT_S), *extra,
            ],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    served = Served(proc, f"http://127.0.0.1:{port}", port, out, tmp / "logs")
    deadline = time.monotonic() + START_TIMEOUT_S + 30
    while "[serve] Serving the app on" not in served.output():
        if proc.poll() is not None or time.monotonic() > deadline:
            served.stop(signal.SIGTERM)
            logs = "\n".join(
                f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(served.log_dir.glob("*.log"))
            )
            pytest.fail(f"deploy/serve.py did not start; it printed:\n{served.output()}\n{logs}")
        time.sleep(0.3)
    return served


@pytest.fixture(scope="module")
def served(haproxy: str, redis_exe: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``deploy/serve.py`` with 2 replicas on free loopback ports (a dead replica restarts after 8 s),
    and its redis-server for the class answers."""
    s = start_serve(tmp_path_factory.mktemp("serve"), 2, "--restart-delay", "8")
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.stop(signal.SIGTERM)
