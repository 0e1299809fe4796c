"""Streamlit caches whose keys are quick to compute for the app's own argument types.

Every cached call hashes its arguments on every rerun, hit or miss. Streamlit hashes a dataclass
through ``dataclasses.asdict``, which deep-copies it (arrays included) and then hashes every
field element by element in Python; a list, element by element too. On an unchanged scaled
dot-product rerun that was ~15% of the server time (36 cached calls, most given the page's
frozen input dataclasses). Here such arguments are hashed by their pickle: one C call.

``data(max_entries=N)`` replaces ``st.cache_data(max_entries=N, show_spinner=False)`` and
``resource(...)`` ``st.cache_resource``; both pass :func:`fast_hash_funcs`.
"""

from __future__ import annotations

import dataclasses
import pickle
import sys
from collections.abc import Callable
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


def data(*, max_entries: int) -> Callable[[F], F]:
    """``st.cache_data`` (bounded, no spinner) with quick keys (:func:`fast_hash_funcs`)."""
    return st.cache_data(max_entries=max_entries, show_spinner=False, hash_funcs=fast_hash_funcs())


def resource(*, max_entries: int | None = None) -> Callable[[F], F]:
    """``st.cache_resource`` (no spinner) with quick keys (:func:`fast_hash_funcs`)."""
    return st.cache_resource(max_entries=max_entries, show_spinner=False, hash_funcs=fast_hash_funcs())
