"""The embedded store: classes in this process's memory (``make run``: one process, nothing to install).

Every session of the process shares one :class:`MemoryStore` (``store.open_store``). One lock makes
each primitive atomic; expired classes are dropped when they are next touched and, at most once a
minute, all at once. With several processes (``make serve``) each would have its own classes:
use Redis there (``REDIS_URL``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from store.model import CLASS_TTL_S, PRESENT_WINDOW_S, ClassStore, Pulse, RawQuestion

#: Seconds between two sweeps of every expired class.
SWEEP_EVERY_S = 60.0


@dataclass
class _Question:
    round: int = 0
    answers: dict[str, str] = field(default_factory=dict)
    reveal: str | None = None


@dataclass
class _Class:
    digest: str
    generation: str
    expires_at: float
    revision: int = 0
    seen: dict[str, float] = field(default_factory=dict)  # browser id -> last check-in
    questions: dict[str, _Question] = field(default_factory=dict)


class MemoryStore(ClassStore):
    """Classes in a dict, under one lock. ``clock`` (seconds, monotonic) is for tests of expiry."""

    def __init__(self, *, ttl_s: float = CLASS_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, _Class] = {}
        self._lookups: tuple[int, int] = (0, 0)  # (second, unknown codes looked up in it)
        self._swept = clock()

    def _live(self, code: str) -> _Class | None:
        """The class, if it has not expired (call with the lock held)."""
        now = self._clock()
        if now - self._swept > SWEEP_EVERY_S:
            self._classes = {c: k for c, k in self._classes.items() if k.expires_at > now}
            self._swept = now
        found = self._classes.get(code)
        if found is not None and found.expires_at <= now:
            del self._classes[code]
            return None
        return found

    def _create(self, code: str, digest: str, generation: str) -> bool:
        with self._lock:
            if self._live(code) is not None:
                return False
            self._classes[code] = _Class(digest, generation, self._clock() + self.ttl_s)
            return True

    def _digest(self, code: str) -> str | None:
        with self._lock:
            found = self._live(code)
            return None if found is None else found.digest

    def _touch(self, code: str, voter: str | None) -> Pulse | None:
        with self._lock:
            found = self._live(code)
            if found is None:
                return None
            now = self._clock()
            if voter is not None:
                found.seen[voter] = now
            found.seen = {v: at for v, at in found.seen.items() if at >= now - PRESENT_WINDOW_S}
            return Pulse(found.revision, found.generation, len(found.seen))

    def _submit(self, code: str, qid: str, round_: int, voter: str, encoded: str) -> str:
        with self._lock:
            found = self._live(code)
            if found is None:
                return "gone"
            question = found.questions.setdefault(qid, _Question())
            if question.round != round_:
                return "stale"
            if question.reveal is not None:
                return "closed"
            question.answers[voter] = encoded
            return "ok"

    def _read(self, code: str, qid: str) -> RawQuestion | None:
        with self._lock:
            found = self._live(code)
            if found is None:
                return None
            question = found.questions.get(qid, _Question())
            since = self._clock() - PRESENT_WINDOW_S
            present = frozenset(v for v, at in found.seen.items() if at >= since)
            return RawQuestion(
                question.round, dict(question.answers), question.reveal, present, found.generation
            )

    def _reveal(self, code: str, qid: str, round_: int, reveal: str) -> bool:
        with self._lock:
            found = self._live(code)
            if found is None:
                return False
            question = found.questions.setdefault(qid, _Question())
            if question.round != round_:
                return False
            question.reveal = reveal
            found.revision += 1
            return True

    def _reset(self, code: str, qid: str) -> int:
        with self._lock:
            found = self._live(code)
            if found is None:
                return 0
            old = found.questions.get(qid, _Question())
            found.questions[qid] = _Question(round=old.round + 1)
            found.revision += 1
            return old.round + 1

    def _failed_lookups(self) -> int:
        with self._lock:
            second, count = self._lookups
            return count if second == int(self._clock()) else 0

    def _count_failed_lookup(self) -> None:
        with self._lock:
            second, count = self._lookups
            now = int(self._clock())
            self._lookups = (now, count + 1 if second == now else 1)
