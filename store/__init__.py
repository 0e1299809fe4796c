"""Where a class's answers are kept (issue 26): one interface, two back ends, chosen by configuration.

``open_store()`` gives the process's store: :class:`store.redis_store.RedisStore` when the
environment names a Redis (``REDIS_URL=redis://host:port/0``: ``make serve``, ``deploy/compose.yaml``,
``deploy/k8s``), else :class:`store.memory.MemoryStore` (``make run``: one process, nothing to
install). The rules (teacher key, validation, expiry, limits) are :class:`store.model.ClassStore`'s,
the same for both. No Streamlit here: the package is tested on its own (``tests/store``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping

from store.model import (
    ClassStore,
    InvalidAnswer,
    NotTeacher,
    Question,
    QuestionClosed,
    Reveal,
    StoreError,
    StoreUnavailable,
    TooManyLookups,
    UnknownClass,
)

#: The environment variable that names the shared store.
REDIS_URL = "REDIS_URL"

__all__ = [
    "REDIS_URL",
    "ClassStore",
    "InvalidAnswer",
    "NotTeacher",
    "Question",
    "QuestionClosed",
    "Reveal",
    "StoreError",
    "StoreUnavailable",
    "TooManyLookups",
    "UnknownClass",
    "open_store",
]


def open_store(environ: Mapping[str, str] | None = None) -> ClassStore:
    """The process's store: Redis at ``$REDIS_URL`` when it is set (and not empty), else memory.

    One store per URL per process (every session shares it: a memory store *is* the data).
    """
    url = (os.environ if environ is None else environ).get(REDIS_URL, "").strip()
    return _store_for(url)


@functools.cache
def _store_for(url: str) -> ClassStore:
    if url:
        from store.redis_store import RedisStore  # imported only where Redis is configured

        return RedisStore(url)
    from store.memory import MemoryStore

    return MemoryStore()
