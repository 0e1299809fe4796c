"""Serve the app on every core of one machine: K Streamlit replicas behind HAProxy (`make serve`).

One ``streamlit run`` is one Python process, so it uses one core for everybody. This starts K
replicas (default: the number of cores) on 127.0.0.1, ports BASE+1..BASE+K, each with the production
settings of ``deploy/streamlit-production.toml``; waits until every one answers ``/_stcore/health``;
then runs HAProxy in the foreground with ``deploy/haproxy.cfg`` (cookie affinity, websockets, health
checks) plus a generated file that lists the replicas, and prints the URL to share.

The replicas share one store for the class answers (issue 26): a ``redis-server`` on a free loopback
port, started first and named to each replica as ``REDIS_URL`` (``store.open_store``). It keeps
nothing on disk; if it exits it is started again on the same port, empty, and the app's pages put
back what they know. With ``$REDIS_URL`` already set, that Redis is used and none is started;
``--no-redis`` leaves each replica its own in-memory store (classes then do not span replicas).

A replica that exits is started again after ``--restart-delay`` seconds (HAProxy's health checks
take it out meanwhile and put it back once it answers). Ctrl+C, SIGTERM or SIGHUP stop HAProxy and
every replica (each runs in its own process group, which is signalled as a whole); if this process
is killed outright, the kernel sends SIGTERM to its children (PR_SET_PDEATHSIG, Linux).

    python deploy/serve.py [--replicas K] [--port 8080] [--host 0.0.0.0] [--base-port 8600]
                           [--redis-port N] [--no-redis]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
PRODUCTION_TOML = ROOT / "deploy" / "streamlit-production.toml"
HEALTH = "/_stcore/health"
#: Where HAProxy is looked for after $HAPROXY_PATH and $PATH (Debian puts it in /usr/sbin).
HAPROXY_PLACES = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")
#: Where redis-server is looked for after $REDIS_SERVER_PATH and $PATH (Debian: /usr/bin).
REDIS_PLACES = ("/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server")
#: Seconds a process gets to exit after SIGTERM before it is killed.
STOP_GRACE_S = 10.0


class Stop(Exception):
    """Raised by the signal handlers: leave the main loop and stop everything."""


def find_haproxy() -> str | None:
    """The HAProxy executable: $HAPROXY_PATH, then $PATH, then Debian's /usr/sbin."""
    candidate = os.environ.get("HAPROXY_PATH")
    if candidate and Path(candidate).is_file():
        return candidate
    found = shutil.which("haproxy")
    if found:
        return found
    return next((p for p in HAPROXY_PLACES if Path(p).is_file()), None)


def find_redis_server() -> str | None:
    """The redis-server executable: $REDIS_SERVER_PATH, then $PATH, then the usual places."""
    candidate = os.environ.get("REDIS_SERVER_PATH")
    if candidate and Path(candidate).is_file():
        return candidate
    found = shutil.which("redis-server")
    if found:
        return found
    return next((p for p in REDIS_PLACES if Path(p).is_file()), None)


def redis_command(executable: str, port: int, directory: Path) -> list[str]:
    """redis-server on 127.0.0.1:``port``, in the foreground, keeping nothing on disk.

    The classes' answers live in memory only (``--save ''``, no append-only file): a restarted
    Redis starts empty, and the app's pages put back what they know (the teacher's page restores
    the class, students' pages send their answers again; ``ui.class_answers``).
    """
    return [
        executable, "--port", str(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
        "--save", "", "--appendonly", "no", "--dir", str(directory), "--daemonize", "no",
        "--loglevel", "warning",
    ]  # fmt: skip


def _flag_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def production_flags(path: Path = PRODUCTION_TOML) -> list[str]:
    """``streamlit run`` flags (``--section.option=value``) for every option in the TOML file."""
    flags = []
    for section, options in tomllib.loads(path.read_text()).items():
        if not isinstance(options, dict):
            raise ValueError(f"{path}: {section!r} is not a [section]")
        for name, value in options.items():
            flags.append(f"--{section}.{name}={_flag_value(value)}")
    return flags


def servers_cfg(ports: list[int], host: str = "127.0.0.1") -> str:
    """The second HAProxy file: ``backend streamlit`` with one server per replica (settings: defaults)."""
    lines = [
        "# Written by deploy/serve.py: where the replicas listen. Every other setting of this backend",
        "# comes from the `defaults` section of deploy/haproxy.cfg, read before this file.",
        "backend streamlit",
    ]
    lines += [f"    server app{i} {host}:{port} cookie app{i}" for i, port in enumerate(ports, start=1)]
    return "\n".join(lines) + "\n"


def _die_with_parent(parent: int) -> None:
    """In the child before exec: SIGTERM when the parent dies (Linux), in a new session."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _spawn(cmd: list[str], log: IO, env: dict[str, str] | None = None) -> subprocess.Popen:
    parent = os.getpid()
    preexec = (lambda: _die_with_parent(parent)) if sys.platform.startswith("linux") else None
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: a terminal's Ctrl+C reaches only us
        preexec_fn=preexec,  # safe: this program starts no threads
    )


def stop_processes(procs: list[subprocess.Popen], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM each process group, wait up to ``grace_s``, then SIGKILL what is left."""
    alive = [p for p in procs if p.poll() is None]
    for p in alive:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for p in alive:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:
        # The leader may be gone while others of its group live on: kill the group regardless.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=5)


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url + HEALTH, timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


#: Where free ports are looked for when the kernel's ephemeral range cannot be read (Linux's default).
EPHEMERAL_DEFAULT = (32768, 60999)
#: The lowest port handed out by ``free_ports`` (below it: well-known and registered services).
FREE_PORTS_FLOOR = 20000
#: Draws the first port of a run (its own generator: a seeded ``random`` elsewhere cannot repeat it).
_PORT_DRAWS = random.Random()


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range of local ports for outgoing connections (``ip_local_port_range``)."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return EPHEMERAL_DEFAULT
    return low, high


def free_ports(count: int = 1, host: str = "127.0.0.1") -> int:
    """The first of ``count`` consecutive ports free on ``host``, all below the ephemeral range.

    A port from ``bind(0)`` is ephemeral: until a server binds it, any outgoing connection on the
    machine (a health check polling another replica, a Redis PING) may be given it as its local
    port, and the server then exits with "Port N is not available". Ports below the kernel's
    ephemeral range are never handed out that way, so only another server could take one.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    low, high = ephemeral_range()
    if low - FREE_PORTS_FLOOR > 1000 + count:
        floor, top = FREE_PORTS_FLOOR, low  # below the range (Linux's default: 20000-32767)
    elif 65535 - high > 1000 + count:
        floor, top = high + 1, 65536  # a range set low: above it
    else:
        floor, top = 1024, 65536  # a range over nearly every port: no port is safe, any will do
    for _ in range(500):
        first = _PORT_DRAWS.randrange(floor, top - count + 1)
        if all(port_free(first + i, host) for i in range(count)):
            return first
    raise RuntimeError(f"no run of {count} free port(s) between {floor} and {top - 1} on {host}")


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: TIME_WAIT is no obstacle
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def lan_address() -> str | None:
    """This machine's address on its default route (no packet is sent), for the link to share."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the outgoing interface
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def say(message: str) -> None:
    print(f"[serve] {message}", flush=True)


@dataclass
class Replica:
    name: str
    port: int
    log_path: Path
    argv: list[str]
    env: dict[str, str]
    proc: subprocess.Popen | None = None
    restart_at: float | None = None
    history: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log_path.open("a") as log:
            self.proc = _spawn(self.argv, log, self.env)
        self.history.append(self.proc)
        self.restart_at = None
        say(f"{self.name}: {self.url} pid {self.proc.pid} log {self.log_path}")


def make_replicas(
    count: int, base_port: int, log_dir: Path, script: Path = APP, extra_env: dict[str, str] | None = None
) -> list[Replica]:
    """``count`` replicas of ``script`` (the app; tests pass another) with the production flags.

    ``extra_env`` is added to their environment (``REDIS_URL``: the class answers' shared store).
    """
    flags = production_flags()
    env = {**os.environ, **(extra_env or {})}
    # One secret for all replicas, so that signed cookies stay valid on whichever replica a browser
    # lands on (passed in the environment, not on the command line where `ps` shows it).
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    replicas = []
    for i in range(1, count + 1):
        port = base_port + i
        argv = [
            sys.executable, "-m", "streamlit", "run", str(script),
            "--server.address=127.0.0.1", f"--server.port={port}", *flags,
        ]  # fmt: skip
        replicas.append(Replica(f"app{i}", port, log_dir / f"app{i}.log", argv, env))
    return replicas


def wait_healthy(replicas: list[Replica], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    waiting = list(replicas)
    while waiting:
        for r in list(waiting):
            assert r.proc is not None
            if r.proc.poll() is not None:
                tail = r.log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{r.name} exited with {r.proc.returncode} while starting:\n{tail}")
            if healthy(r.url, timeout=1.0):
                waiting.remove(r)
        if waiting and time.monotonic() > deadline:
            names = ", ".join(r.name for r in waiting)
            raise RuntimeError(f"{names} did not answer {HEALTH} within {timeout_s:.0f} s")
        time.sleep(0.3)


def redis_answers(port: int, timeout: float = 1.0) -> bool:
    """Whether a Redis on 127.0.0.1:``port`` answers PING (a bare RESP exchange: no client needed)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class RedisProcess:
    """The redis-server of ``make serve``: the replicas' shared store of class answers."""

    executable: str
    port: int
    directory: Path
    proc: subprocess.Popen | None = None
    restart_at: float | None = None
    history: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 20.0) -> None:
        with (self.directory / "redis.log").open("a") as log:
            self.proc = _spawn(redis_command(self.executable, self.port, self.directory), log)
        self.history.append(self.proc)
        self.restart_at = None
        say(f"redis: {self.url} pid {self.proc.pid} log {self.directory / 'redis.log'}")
        deadline = time.monotonic() + timeout_s
        while not redis_answers(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                tail = (self.directory / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server did not answer on port {self.port}:\n{tail}")
            time.sleep(0.1)


def wait_listening(proc: subprocess.Popen, host: str, port: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"haproxy exited with {proc.returncode} (its messages are above)")
        with socket.socket() as s:
            s.settimeout(1.0)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"haproxy did not listen on port {port} within {timeout_s:.0f} s")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=os.cpu_count() or 1, help="app processes (cores)")
    parser.add_argument("--port", type=int, default=8080, help="the port students open (8080)")
    parser.add_argument("--host", default="0.0.0.0", help="the proxy's address (0.0.0.0: every interface)")
    parser.add_argument("--base-port", type=int, default=8600, help="replicas listen on BASE+1..BASE+K")
    parser.add_argument("--log-dir", type=Path, help="replica logs and the servers file (a temp dir)")
    parser.add_argument("--start-timeout", type=float, default=180.0, help="seconds for replicas to start")
    parser.add_argument("--restart-delay", type=float, default=5.0, help="seconds before a restart")
    parser.add_argument(
        "--no-restart", action="store_true", help="leave a replica (or Redis) that exits down"
    )
    parser.add_argument("--redis-port", type=int, default=0, help="the class store's port (0: a free one)")
    parser.add_argument(
        "--no-redis", action="store_true", help="no shared store: each replica keeps its classes in memory"
    )
    args = parser.parse_args(argv)
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    haproxy = find_haproxy()
    if haproxy is None:
        say("HAProxy not found: install it (`apt-get install haproxy`) or set HAPROXY_PATH.")
        return 2
    external = os.environ.get("REDIS_URL", "").strip()
    redis_exe = None
    if not args.no_redis and not external:
        redis_exe = find_redis_server()
        if redis_exe is None:
            say(
                "redis-server not found: install it (`apt-get install redis-server`), set "
                "REDIS_SERVER_PATH or REDIS_URL, or pass --no-redis (classes then stay on one replica)."
            )
            return 2
    ports = [args.base_port + i for i in range(1, args.replicas + 1)]
    redis_port = args.redis_port or (free_ports() if redis_exe else 0)
    taken = [p for p in [*ports, args.port, *([redis_port] if redis_exe else [])] if not port_free(p)]
    if taken:
        say(f"port(s) in use: {', '.join(map(str, taken))} (choose --port / --base-port / --redis-port)")
        return 2
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="attention-serve-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    servers_file = log_dir / "haproxy.servers.cfg"
    servers_file.write_text(servers_cfg(ports))

    def on_signal(signum: int, _frame: object) -> None:
        raise Stop(signal.Signals(signum).name)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    redis = RedisProcess(redis_exe, redis_port, log_dir) if redis_exe else None
    store_env = {"REDIS_URL": redis.url} if redis else {}
    if args.no_redis:
        store_env = {"REDIS_URL": ""}
    replicas = make_replicas(args.replicas, args.base_port, log_dir, extra_env=store_env)
    proxy: subprocess.Popen | None = None
    code = 0
    try:
        if redis is not None:
            redis.start()
        elif external:
            say("class answers: the Redis of $REDIS_URL")
        elif args.replicas > 1:
            say("--no-redis: each replica keeps its own classes (a class spans one replica only)")
        say(f"starting {args.replicas} replica(s) of the app (logs in {log_dir})")
        for r in replicas:
            r.start()
        wait_healthy(replicas, args.start_timeout)
        cmd = [haproxy, "-db", "-f", str(HAPROXY_CFG), "-f", str(servers_file)]
        env = {**os.environ, "HAPROXY_PORT": str(args.port), "HAPROXY_ADDR": args.host}
        proxy = _spawn(cmd, sys.stdout, env)
        say(f"haproxy: pid {proxy.pid}")
        wait_listening(proxy, "127.0.0.1" if args.host in ("", "0.0.0.0", "::") else args.host, args.port)
        shown = args.host if args.host not in ("", "0.0.0.0", "::") else "localhost"
        say(f"Serving the app on http://{shown}:{args.port}/ (Ctrl+C to stop)")
        if args.host in ("", "0.0.0.0", "::") and (lan := lan_address()):
            say(f"Students open http://{lan}:{args.port}/")
        while True:
            if proxy.poll() is not None:
                say(f"haproxy exited with {proxy.returncode}; stopping")
                code = proxy.returncode or 1
                break
            now = time.monotonic()
            if redis is not None and redis.proc is not None and redis.proc.poll() is not None:
                if args.no_restart:
                    pass
                elif redis.restart_at is None:
                    redis.restart_at = now + args.restart_delay
                    say(f"redis exited with {redis.proc.returncode}; restarting in {args.restart_delay:g} s")
                elif now >= redis.restart_at:
                    redis.start()
            for r in replicas:
                assert r.proc is not None
                if r.proc.poll() is None:
                    continue
                if args.no_restart:
                    continue
                if r.restart_at is None:
                    r.restart_at = now + args.restart_delay
                    say(f"{r.name} exited with {r.proc.returncode}; restarting in {args.restart_delay:g} s")
                elif now >= r.restart_at:
                    r.start()
            time.sleep(0.5)
    except Stop as stop:
        say(f"{stop}: stopping")
    except RuntimeError as error:
        say(str(error))
        code = 1
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl+C must not cut the clean-up short
        if proxy is not None:
            stop_processes([proxy])
        stop_processes([p for r in replicas for p in r.history])
        if redis is not None:
            stop_processes(redis.history)  # last: the replicas may write to it until they stop
        say("stopped")
    return code


if __name__ == "__main__":
    sys.exit(main())
