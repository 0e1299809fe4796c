"""``deploy.serve.free_ports``: the ports servers are started on, out of the kernel's ephemeral range.

A port from ``bind(0)`` is ephemeral: before its server binds it, an outgoing connection elsewhere
on the machine may be given it as its local port (CI lost a run to exactly that: "Port N is not
available"). These tests read the range from the kernel themselves.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import deploy.serve as serve
from deploy.serve import free_ports

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_low() -> int:
    if RANGE_FILE.exists():
        return int(RANGE_FILE.read_text().split()[0])
    return 32768


@pytest.mark.parametrize("count", [1, 3])
def test_a_run_of_free_ports_below_the_ephemeral_range(count: int) -> None:
    low = _ephemeral_low()
    for _ in range(20):
        first = free_ports(count)
        assert first >= 1024
        assert first + count - 1 < low
    socks = []
    try:
        for port in range(first, first + count):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", port))  # each one binds: free, and consecutive
            s.listen()
    finally:
        for s in socks:
            s.close()


def test_a_port_in_use_is_not_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", free_ports()))
        held.listen()
        taken = held.getsockname()[1]
        assert serve.port_free(taken) is False
        # Every draw lands on the held port or next to it: only the check can keep it out.
        draws = iter([taken, taken - 1, taken + 1] * 20)

        class Drawn:
            def randrange(self, *_: int) -> int:
                return next(draws)

        monkeypatch.setattr(serve, "_PORT_DRAWS", Drawn())
        first = free_ports(2)
        assert first == taken + 1  # taken and taken-1..taken were refused
        assert not (first <= taken <= first + 1)


def test_bad_count_and_no_free_ports_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="count must be at least 1"):
        free_ports(0)
    monkeypatch.setattr(serve, "port_free", lambda port, host="127.0.0.1": False)
    with pytest.raises(RuntimeError, match="no run of 2 free port"):
        free_ports(2)


@pytest.mark.parametrize(
    ("ephemeral", "lowest", "highest"),
    [((32768, 60999), 20000, 32767), ((10000, 40000), 40001, 65535), ((1024, 65000), 1024, 65535)],
)
def test_the_ports_drawn_keep_out_of_the_range_where_they_can(
    monkeypatch: pytest.MonkeyPatch, ephemeral: tuple[int, int], lowest: int, highest: int
) -> None:
    monkeypatch.setattr(serve, "ephemeral_range", lambda: ephemeral)
    monkeypatch.setattr(serve, "port_free", lambda port, host="127.0.0.1": True)
    for count in (1, 3):
        firsts = [free_ports(count) for _ in range(300)]
        assert min(firsts) >= lowest
        assert max(firsts) + count - 1 <= highest
