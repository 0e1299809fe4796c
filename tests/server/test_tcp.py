"""server.tcp: no Nagle delay on the server's connections (TCP_NODELAY)."""

from __future__ import annotations

import asyncio
import asyncio.base_events
import socket
import threading

import pytest

from server import tcp


def _listener_like_streamlits() -> socket.socket:
    """A listening socket made as streamlit.web.server.starlette.starlette_server._bind_socket makes it."""
    sock = socket.socket(family=socket.AF_INET)  # proto 0: asyncio then leaves Nagle on
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock


@pytest.fixture
def restore_asyncio_hook(monkeypatch):
    """asyncio's own hook during the test (an AppTest may have installed the server layer in this
    process); afterwards, whatever was there before."""
    monkeypatch.setattr(asyncio.base_events, "_set_nodelay", tcp.ASYNCIO_SET_NODELAY)


def test_an_open_connection_gets_nodelay(restore_asyncio_hook):
    assert not tcp.installed()
    with _listener_like_streamlits() as listener:
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        with client, accepted:
            assert not tcp.nodelay(accepted.fileno())  # the operating system's default
            assert accepted.fileno() in tcp.open_tcp_descriptors()
            tcp.send_without_delay()
            assert tcp.installed()
            assert tcp.nodelay(accepted.fileno())
            assert tcp.nodelay(listener.fileno())
            accepted.sendall(b"still open")  # the descriptor was duplicated, never closed
            assert client.recv(64) == b"still open"


def test_connections_an_asyncio_server_accepts_later_get_nodelay(restore_asyncio_hook):
    tcp.send_without_delay()
    seen: list[bool] = []

    async def main() -> None:
        listener = _listener_like_streamlits()
        listener.setblocking(False)

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.append(bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
            writer.close()

        server = await asyncio.start_server(handle, sock=listener)
        async with server:
            # Made after send_without_delay: only asyncio's hook can set it on the accepted socket.
            reader, writer = await asyncio.open_connection(*listener.getsockname())
            await reader.read()
            writer.close()

    # A thread of its own: another test of the session (Playwright) may hold this thread's loop.
    worker = threading.Thread(target=asyncio.run, args=(main(),))
    worker.start()
    worker.join(timeout=30)
    assert seen == [True]


def test_descriptors_that_are_not_tcp_are_left_alone():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix, open(__file__, "rb") as f:
        fds = tcp.open_tcp_descriptors()
        assert unix.fileno() not in fds
        assert f.fileno() not in fds
