"""A real ``redis-server`` for tests: on a free loopback port, in a temp dir, nothing saved to disk.

Started with ``deploy.serve.redis_command`` (the flags ``make serve`` uses). ``stop()`` and
``start()`` take it down and bring it back on the same port (the fault tests), empty, as a Redis
without persistence restarts. Found like ``deploy/serve.py`` finds it; the fixture that needs it
(``tests/conftest.py:redis_exe``) skips loudly locally and fails under ``CI=true`` without it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from deploy.serve import free_ports, redis_command

#: Seconds redis-server gets to answer PING after it was started.
START_TIMEOUT_S = 20.0


def _pong(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(b"PING\r\n")
        return s.recv(64).startswith(b"+PONG")
    return False


@dataclass
class RedisServer:
    """One redis-server process on ``port`` (``url`` for ``REDIS_URL``)."""

    executable: str
    directory: Path
    port: int = field(default_factory=free_ports)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start it (again, on the same port) and wait until it answers PING."""
        log = (self.directory / "redis.log").open("a")
        self.proc = subprocess.Popen(
            redis_command(self.executable, self.port, self.directory),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _pong(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"redis-server did not start:\n{(self.directory / 'redis.log').read_text()}"
                )
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL) and wait until the port refuses connections."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
        while _pong(self.port):
            time.sleep(0.05)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None
