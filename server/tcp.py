"""Send each message of a rerun at once: TCP_NODELAY on the server's connections.

Streamlit 1.67's server binds its listening socket as ``socket.socket(family=...)``, whose
``proto`` is 0, and asyncio only disables Nagle's algorithm on sockets whose ``proto`` is
``IPPROTO_TCP`` (``asyncio.base_events._set_nodelay``). So every websocket of ``streamlit run``
keeps Nagle on: after the first ForwardMsg of a rerun, each small message waits for the
browser's delayed ACK, 40 ms on Linux. Measured on the one-chart reference page: a slider step
took 47 ms from the client's message to ``script_finished`` against 15 ms of script; with
TCP_NODELAY it takes ~20 ms (``benchmarks/load``'s client, one session, nothing else running;
measured again by ``python -m benchmarks server``: see the table in ``server/__init__.py``).

:func:`send_without_delay` fixes it from inside the app, so every way of starting it
(``make run``, ``make serve``, Docker, Kubernetes, a plain ``streamlit run app.py``) gets it:
new connections through asyncio's hook (a private function of ``asyncio.base_events``, replaced
process-wide), the connections already open (the first tab, which started this process's first
script run) and the listening socket (Linux: accepted sockets inherit the option) through the
process's open descriptors. It is one part of :func:`server.install` (``ATTN_TCP_NODELAY=0``:
left out).
"""

from __future__ import annotations

import asyncio.base_events
import contextlib
import os
import socket
import stat
from pathlib import Path

_FD_DIR = Path("/proc/self/fd")
#: asyncio's own hook, as it was when this module was imported (it sets TCP_NODELAY only on sockets
#: made with ``proto=IPPROTO_TCP``); kept to tell whether :func:`send_without_delay` replaced it.
ASYNCIO_SET_NODELAY = asyncio.base_events._set_nodelay


def _is_tcp(sock: socket.socket) -> bool:
    return sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM


def _set_nodelay(sock: socket.socket) -> None:
    """asyncio's hook for each new transport, without its ``proto == IPPROTO_TCP`` condition."""
    if _is_tcp(sock):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def open_tcp_descriptors() -> list[int]:
    """File descriptors of this process that are TCP sockets (IPv4 or IPv6); [] where /proc is absent."""
    found = []
    with contextlib.suppress(OSError):
        for entry in _FD_DIR.iterdir():
            with contextlib.suppress(OSError, ValueError):
                fd = int(entry.name)
                if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    continue
                with socket.socket(fileno=os.dup(fd)) as sock:  # a duplicate: closing it leaves fd open
                    if _is_tcp(sock):
                        found.append(fd)
    return found


def nodelay(fd: int) -> bool:
    """Whether TCP_NODELAY is set on the TCP socket ``fd``."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


def installed() -> bool:
    """Whether asyncio's per-connection hook is this module's (new connections get TCP_NODELAY)."""
    return asyncio.base_events._set_nodelay is _set_nodelay


def send_without_delay() -> None:
    """Disable Nagle's algorithm on every TCP socket this process has and will accept.

    Idempotent and cheap (one pass over the open descriptors); :func:`server.install` calls it
    once per process.
    """
    asyncio.base_events._set_nodelay = _set_nodelay  # selector transports look it up per connection
    for fd in open_tcp_descriptors():
        with contextlib.suppress(OSError), socket.socket(fileno=os.dup(fd)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
