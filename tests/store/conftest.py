"""Fixtures for the class store: a real redis-server for the module, and each back end fresh per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from store.memory import MemoryStore
from store.model import ClassStore
from store.redis_store import RedisStore
from tests.redis_server import RedisServer


class FakeClock:
    """A monotonic clock the test moves by hand (seconds)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="module")
def redis_server(redis_exe: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server on a free port for this module; stopped at its end."""
    server = RedisServer(redis_exe, tmp_path_factory.mktemp("redis")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_store(redis_server: RedisServer) -> RedisStore:
    """A RedisStore on an empty Redis (restarted first if a test stopped it)."""
    if not redis_server.running:
        redis_server.start()
    store = RedisStore(redis_server.url)
    store._r.flushall()
    return store


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> ClassStore:
    """Each test runs against both back ends: the one interface, two implementations."""
    if request.param == "memory":
        return MemoryStore()
    return request.getfixturevalue("redis_store")
