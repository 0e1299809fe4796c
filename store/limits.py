"""A token bucket: at most ``rate`` events a second on average, ``burst`` at once (one per session).

A student's page submits an answer through :meth:`TokenBucket.take`; a page that tries faster than
:data:`ANSWERS_PER_S` is told to slow down and its latest answer waits (it is sent by the next
check-in, never lost). Not thread-safe on purpose: one bucket belongs to one session, whose script
runs one at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Answers a session may submit per second, on average ...
ANSWERS_PER_S = 2.0
#: ... and in one burst (a student clicking through the choices).
ANSWER_BURST = 4


@dataclass
class TokenBucket:
    """``burst`` tokens, refilled at ``rate`` a second; :meth:`take` spends one if there is one."""

    rate: float = ANSWERS_PER_S
    burst: int = ANSWER_BURST
    clock: Callable[[], float] = time.monotonic
    _tokens: float = field(init=False)
    _at: float = field(init=False)

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError("a token bucket needs rate > 0 and burst >= 1")
        self._tokens = float(self.burst)
        self._at = self.clock()

    def take(self) -> bool:
        """Spend one token: True if there was one (go ahead), False if the rate is exceeded."""
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False
