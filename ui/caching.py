"""Bounded caches for the app's cached calls, keyed by one hash of the arguments' pickle.

Every cached call computes its key on every rerun, hit or miss. Streamlit's ``st.cache_data`` /
``st.cache_resource`` hash each argument separately: a signature lookup, two hasher passes per
argument, and a dataclass through ``dataclasses.asdict`` (a deep copy), a list element by element.
Here the key is one BLAKE2b digest of ``pickle.dumps((args, kwargs))`` (one C call each): equal
contents give equal pickles within a process, so equal arguments hit; any change (an array
element, a label) misses. Arguments pickle cannot take (a lambda, a lock) go to the same function
cached by Streamlit (:func:`fast_hash_funcs`), as before.

Measured again on the pinned Streamlit 1.67 (``python -m benchmarks caching``, 2026-12-03, CPU
time, inside a script run) against ``st.cache_data`` / ``st.cache_resource`` given the same
``hash_funcs``, on the pages' typical arguments (arrays of 200 and 2,000 floats, a frozen ``core``
dataclass, a tuple of 60 floats): a hit costs 19-65 µs here against 230-590 µs (4.5-27x), a miss
25-110 µs against 320-600 µs; an unchanged rerun with every section open costs 58 against 72 ms of
CPU on scaled dot-product and 46 against 58 ms on kernel regression. So this module stays. Which
of the two serves the calls is the server layer's choice (:func:`use_lru`, ``ATTN_FAST_CACHE=0``
in ``server.install``); the app is correct with either.

``data(max_entries=N)`` keeps ``st.cache_data``'s contract: a hit returns a fresh copy (the value is
stored pickled, as Streamlit stores it), so a caller may mutate what it gets. ``resource(...)``
keeps ``st.cache_resource``'s: every hit returns the same object (figures: never mutate them).
Both are bounded LRUs shared by all sessions of the process; while one session computes a key,
another asking for the same key waits for that result instead of computing it again (30 students
opening the same view at once cost one computation).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import pickle
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar

import streamlit as st

F = TypeVar("F", bound=Callable[..., Any])


def pickled(value: Any) -> bytes | tuple:
    """``value``'s pickle (what the cache key hashes); a tuple of its parts when it has none.

    Equal contents give equal pickles within a process (the caches live in one process). A value
    pickle cannot take (a lock, a lambda inside) falls back to Streamlit's own hashing of its
    parts: a list's elements, a dataclass's fields (shallow: no deep copy), with its type name.
    """
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        if dataclasses.is_dataclass(value):
            return (type(value).__qualname__, *(getattr(value, f.name) for f in dataclasses.fields(value)))
        return tuple(value)


def _core_dataclasses() -> list[type]:
    """The dataclass types of the ``core`` modules imported so far (cache keys match exact types)."""
    found = []
    # copies: another session's script thread may import a module meanwhile (dict.copy is atomic)
    for name, module in sys.modules.copy().items():
        if name == "core" or name.startswith("core."):
            for obj in vars(module).copy().values():
                if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == name:
                    found.append(obj)
    return found


def fast_hash_funcs() -> dict[Any, Callable[[Any], Any]]:
    """``hash_funcs`` for a cache: lists and every ``core`` dataclass imported so far, by pickle.

    Called when a cached function is defined, so a ``ui`` module gets the types of the ``core``
    modules it imported above it.
    """
    funcs: dict[Any, Callable[[Any], Any]] = {list: pickled}
    funcs.update(dict.fromkeys(_core_dataclasses(), pickled))
    return funcs


#: Locks that serialise computing one key (keys share a lock by their hash: a fixed pool, so
#: nothing grows with the number of keys; two keys rarely meet on one lock).
_STRIPES = 64


def digest(args: tuple, kwargs: dict[str, Any]) -> bytes | None:
    """The cache key of a call: BLAKE2b of the pickled arguments; None if pickle refuses them."""
    try:
        blob = pickle.dumps((args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return hashlib.blake2b(blob, digest_size=20).digest()


class LruCache:
    """``fn`` cached on its arguments' :func:`digest`, at most ``max_entries`` results, LRU.

    Args:
        fn: the function to cache (pure: its result depends only on its arguments).
        max_entries: bound on stored results (the least recently used goes first).
        copy: store results pickled and return a fresh copy on every call (``st.cache_data``)
            instead of the one shared object (``st.cache_resource``).
        fallback: called instead when the arguments cannot be pickled (Streamlit's cache of ``fn``).
    """

    _MISS = object()

    def __init__(
        self, fn: Callable[..., Any], max_entries: int, copy: bool, fallback: Callable[..., Any]
    ) -> None:
        self._fn, self._max, self._copy, self._fallback = fn, max_entries, copy, fallback
        self._entries: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._stripes = [threading.RLock() for _ in range(_STRIPES)]  # re-entrant: a call may nest
        self.hits = self.misses = 0
        functools.update_wrapper(self, fn)

    def _get(self, key: bytes) -> Any:
        with self._lock:
            stored = self._entries.get(key, self._MISS)
            if stored is not self._MISS:
                self._entries.move_to_end(key)
                self.hits += 1
        if stored is self._MISS or not self._copy:
            return stored
        return pickle.loads(stored)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _lru:
            return self._fallback(*args, **kwargs)
        key = digest(args, kwargs)
        if key is None:
            return self._fallback(*args, **kwargs)
        found = self._get(key)
        if found is not self._MISS:
            return found
        with self._stripes[int.from_bytes(key[:4], "little") % _STRIPES]:
            found = self._get(key)  # computed by another session while this one waited
            if found is not self._MISS:
                return found
            value = self._fn(*args, **kwargs)
            stored = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if self._copy else value
            with self._lock:
                self.misses += 1
                self._entries[key] = stored
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
        return pickle.loads(stored) if self._copy else value

    def clear(self) -> None:
        """Forget every stored result."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


#: (module, qualified name, code object, pickled defaults, copy, bound) -> its cache: a function
#: defined again (a page script run again) keeps its cache, as Streamlit's caches do; changed code,
#: other defaults (``def f(x, k=2)`` vs ``k=3``: the same bytecode) or another bound get a new one.
#: Closures (whose captured cells may differ between definitions) and functions whose defaults
#: pickle refuses always get their own.
_REGISTRY: dict[tuple[str, str, CodeType, bytes, bool, int], LruCache] = {}
_registry_lock = threading.Lock()


def _registry_key(fn: Callable[..., Any], max_entries: int, copy: bool) -> tuple | None:
    """What makes two definitions of ``fn`` the same cached function; None: give it its own cache.

    A code object compares equal to another only with the same bytecode, constants, names and
    source lines; the defaults live on the function, not its code, so they are part of the key.
    """
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__closure__", None):
        return None
    try:
        defaults = pickle.dumps((fn.__defaults__, fn.__kwdefaults__), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return (fn.__module__, fn.__qualname__, code, defaults, copy, max_entries)


def _cache(
    fn: Callable[..., Any], max_entries: int, copy: bool, fallback: Callable[[], Callable]
) -> LruCache:
    key = _registry_key(fn, max_entries, copy)
    if key is None:
        return LruCache(fn, max_entries, copy=copy, fallback=fallback())
    with _registry_lock:
        if key not in _REGISTRY:
            _REGISTRY[key] = LruCache(fn, max_entries, copy=copy, fallback=fallback())
        return _REGISTRY[key]


#: True: cached calls use :class:`LruCache`; False: Streamlit's cache of the same function (each
#: cache's ``fallback``). Set by ``server.install`` (``ATTN_FAST_CACHE=0``: False).
_lru = True


def use_lru(on: bool) -> None:
    """Serve every cached call from this module's LRUs (True) or from Streamlit's caches (False).

    Read on every call, so it applies to functions already cached; the two keep separate stores.
    """
    global _lru
    _lru = bool(on)


def data(*, max_entries: int) -> Callable[[F], F]:
    """Like ``st.cache_data`` (bounded, no spinner; each call gets a copy), keyed by :func:`digest`."""

    def wrap(fn: F) -> F:
        def fallback() -> Callable:
            return st.cache_data(max_entries=max_entries, show_spinner=False, hash_funcs=fast_hash_funcs())(
                fn
            )

        return _cache(fn, max_entries, True, fallback)  # type: ignore[return-value]

    return wrap


def resource(*, max_entries: int | None = None) -> Callable[[F], F]:
    """Like ``st.cache_resource`` (one shared object per key), keyed by :func:`digest`.

    Unbounded (``max_entries=None``) means at most 1,024 entries here: every cache is bounded.
    """

    def wrap(fn: F) -> F:
        def fallback() -> Callable:
            return st.cache_resource(
                max_entries=max_entries, show_spinner=False, hash_funcs=fast_hash_funcs()
            )(fn)

        return _cache(fn, max_entries or 1024, False, fallback)  # type: ignore[return-value]

    return wrap
