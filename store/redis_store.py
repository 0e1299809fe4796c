"""The shared store: classes in Redis, for several app processes (``make serve``, compose, Kubernetes).

Chosen by ``REDIS_URL`` (``store.open_store``). Keys of class ``CODE`` (all expire together, at
the time the class was started plus ``ttl_s``; Redis drops them itself):

    attn:class:{CODE}            hash: digest (of the teacher key), gen, rev, exp (ms since epoch)
    attn:class:{CODE}:seen       sorted set: browser id -> last check-in (ms, Redis's clock)
    attn:class:{CODE}:q:QID      hash: round, reveal (JSON)
    attn:class:{CODE}:q:QID:a    hash: browser id -> answer
    attn:lookups:SECOND          count of unknown codes looked up in that second (expires after 2 s)

Each primitive that reads and writes is one Lua script, so it is atomic: an answer can never land
after the reveal, or in a question that was reset. Any Redis error (refused, timed out, loading,
read-only) is :class:`store.model.StoreUnavailable`; calls give up after 0.5 s and one reconnect,
so a page never hangs on a dead Redis. ``redis-py`` keeps a pool of connections shared by the
process's sessions (thread-safe).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from store.model import CLASS_TTL_S, PRESENT_WINDOW_S, ClassStore, Pulse, RawQuestion, StoreUnavailable

#: Seconds a command may take (connect or answer) before the store counts as unavailable.
TIMEOUT_S = 0.5
P = ParamSpec("P")
R = TypeVar("R")

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'gen', ARGV[2], 'rev', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[1], 'exp', redis.call('PEXPIRETIME', KEYS[1]))
return 1
"""

_TOUCH = """
local meta = redis.call('HMGET', KEYS[1], 'exp', 'rev', 'gen')
if not meta[1] then return false end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  redis.call('PEXPIREAT', KEYS[2], meta[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
return {meta[2], meta[3], redis.call('ZCARD', KEYS[2])}
"""

_SUBMIT = """
local exp = redis.call('HGET', KEYS[1], 'exp')
if not exp then return 'gone' end
local q = redis.call('HMGET', KEYS[2], 'round', 'reveal')
if tonumber(q[1] or '0') ~= tonumber(ARGV[1]) then return 'stale' end
if q[2] then return 'closed' end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('PEXPIREAT', KEYS[3], exp)
return 'ok'
"""

_READ = """
local meta = redis.call('HMGET', KEYS[1], 'exp', 'gen')
if not meta[1] then return false end
local q = redis.call('HMGET', KEYS[2], 'round', 'reveal')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seen = redis.call('ZRANGEBYSCORE', KEYS[4], now - tonumber(ARGV[1]), '+inf')
return {q[1] or '0', q[2] or '', redis.call('HGETALL', KEYS[3]), seen, meta[2]}
"""

_REVEAL = """
local exp = redis.call('HGET', KEYS[1], 'exp')
if not exp then return 0 end
if tonumber(redis.call('HGET', KEYS[2], 'round') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], 'reveal', ARGV[2])
redis.call('PEXPIREAT', KEYS[2], exp)
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1
"""

_RESET = """
local exp = redis.call('HGET', KEYS[1], 'exp')
if not exp then return 0 end
redis.call('DEL', KEYS[3])
redis.call('HDEL', KEYS[2], 'reveal')
local round = redis.call('HINCRBY', KEYS[2], 'round', 1)
redis.call('PEXPIREAT', KEYS[2], exp)
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return round
"""


def _unavailable_on_redis_errors(method: Callable[P, R]) -> Callable[P, R]:
    """Any Redis error becomes :class:`StoreUnavailable` (the caller says so and retries later)."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except redis.RedisError as error:
            raise StoreUnavailable(f"{type(error).__name__}: {error}") from error

    return wrapper


class RedisStore(ClassStore):
    """Classes in the Redis at ``url`` (``redis://host:port/db``)."""

    def __init__(self, url: str, *, ttl_s: float = CLASS_TTL_S, timeout_s: float = TIMEOUT_S) -> None:
        self.ttl_s = ttl_s
        self.url = url
        self._r = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 1),  # one reconnect: a pooled connection may predate a restart
        )
        self._scripts = {
            name: self._r.register_script(lua)
            for name, lua in {
                "create": _CREATE,
                "touch": _TOUCH,
                "submit": _SUBMIT,
                "read": _READ,
                "reveal": _REVEAL,
                "reset": _RESET,
            }.items()
        }

    @staticmethod
    def _keys(code: str, qid: str | None = None) -> list[str]:
        meta = f"attn:class:{{{code}}}"
        if qid is None:
            return [meta, f"{meta}:seen"]
        return [meta, f"{meta}:q:{qid}", f"{meta}:q:{qid}:a", f"{meta}:seen"]

    @_unavailable_on_redis_errors
    def ping(self) -> bool:
        return bool(self._r.ping())

    @_unavailable_on_redis_errors
    def _create(self, code: str, digest: str, generation: str) -> bool:
        ttl_ms = max(1, round(self.ttl_s * 1000))
        return bool(self._scripts["create"](keys=self._keys(code)[:1], args=[digest, generation, ttl_ms]))

    @_unavailable_on_redis_errors
    def _digest(self, code: str) -> str | None:
        return self._r.hget(self._keys(code)[0], "digest")

    @_unavailable_on_redis_errors
    def _touch(self, code: str, voter: str | None) -> Pulse | None:
        window_ms = round(PRESENT_WINDOW_S * 1000)
        found = self._scripts["touch"](keys=self._keys(code), args=[voter or "", window_ms])
        if not found:
            return None
        revision, generation, present = found
        return Pulse(int(revision or 0), generation or "", int(present))

    @_unavailable_on_redis_errors
    def _submit(self, code: str, qid: str, round_: int, voter: str, encoded: str) -> str:
        keys = self._keys(code, qid)[:3]
        return str(self._scripts["submit"](keys=keys, args=[round_, voter, encoded]))

    @_unavailable_on_redis_errors
    def _read(self, code: str, qid: str) -> RawQuestion | None:
        window_ms = round(PRESENT_WINDOW_S * 1000)
        found = self._scripts["read"](keys=self._keys(code, qid), args=[window_ms])
        if not found:
            return None
        round_, reveal, flat, seen, generation = found
        answers = dict(zip(flat[::2], flat[1::2], strict=True))
        return RawQuestion(int(round_), answers, reveal or None, frozenset(seen), generation or "")

    @_unavailable_on_redis_errors
    def _reveal(self, code: str, qid: str, round_: int, reveal: str) -> bool:
        keys = self._keys(code, qid)[:2]
        return bool(self._scripts["reveal"](keys=keys, args=[round_, reveal]))

    @_unavailable_on_redis_errors
    def _reset(self, code: str, qid: str) -> int:
        return int(self._scripts["reset"](keys=self._keys(code, qid)[:3]))

    @staticmethod
    def _lookup_key() -> str:
        return f"attn:lookups:{int(time.time())}"

    @_unavailable_on_redis_errors
    def _failed_lookups(self) -> int:
        return int(self._r.get(self._lookup_key()) or 0)

    @_unavailable_on_redis_errors
    def _count_failed_lookup(self) -> None:
        key = self._lookup_key()
        with self._r.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, 2)
            pipe.execute()
