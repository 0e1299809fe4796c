"""The server layer: everything that changes this process's behaviour for speed, in one place.

``app.main()`` calls :func:`install` once per script run, as its first line; the first call in a
process does the work (the others wait for it, then return at once). Nothing here acts on import,
and no other module of the app imports this package (``tests/test_layers.py``): the app is correct
without it (``tests/server/test_install.py`` runs a page with every part off), only slower.

Each part is switched off by its environment variable set to ``0`` (``false``, ``off``, ``no``),
e.g. ``ATTN_FAST_PLOTLY=0 streamlit run app.py``. Gains measured on the shared 2-core machine by
``python -m benchmarks server`` and ``python -m benchmarks caching`` (on and off in the same run;
2026-12-03, load average 4-7, so read them as orders of magnitude):

============  ===================  ===================================================================
switch        part                 what it does; measured gain
============  ===================  ===================================================================
ATTN_WARMUP   :mod:`server.warmup`  imports every module the pages use under a lock before the first
                                   page: sessions opening a fresh server at once never see a
                                   half-imported module (8 threads: 0 errors with it; see the README).
ATTN_FAST_    :mod:`server.        each figure object validated and serialised once (Plotly's private
PLOTLY        plotly_spec`         fields read, ``plotly.io.to_json`` replaced): GAIN_PLOTLY
ATTN_TCP_     :mod:`server.tcp`    TCP_NODELAY on every connection (asyncio's private hook replaced):
NODELAY                            GAIN_TCP
ATTN_GC_      :mod:`server.        ``gc.freeze`` after the warm-up: GAIN_GC
FREEZE        gc_freeze`
ATTN_FAST_    ``ui.caching``       the app's cached calls keyed by one digest of their arguments'
CACHE                              pickle instead of Streamlit's hashing: GAIN_CACHE
============  ===================  ===================================================================
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

#: The environment variable of each part (a field of :class:`Parts`).
SWITCHES: dict[str, str] = {
    "warmup": "ATTN_WARMUP",
    "fast_plotly": "ATTN_FAST_PLOTLY",
    "tcp_nodelay": "ATTN_TCP_NODELAY",
    "gc_freeze": "ATTN_GC_FREEZE",
    "fast_cache": "ATTN_FAST_CACHE",
}
_OFF = frozenset({"0", "false", "off", "no"})


@dataclass(frozen=True)
class Parts:
    """Which parts of the server layer are on (all by default)."""

    warmup: bool = True  # import every page's modules before the first page (server.warmup)
    fast_plotly: bool = True  # each figure serialised once (server.plotly_spec)
    tcp_nodelay: bool = True  # no Nagle delay on the server's sockets (server.tcp)
    gc_freeze: bool = True  # the imported objects out of the collector's reach (server.gc_freeze)
    fast_cache: bool = True  # ui.caching's own LRU rather than Streamlit's caches

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Parts:
        """The parts the environment leaves on: a part is off when its variable is 0/false/off/no."""
        env = os.environ if environ is None else environ
        return cls(**{part: env.get(var, "1").strip().lower() not in _OFF for part, var in SWITCHES.items()})


_lock = threading.Lock()
_installed: Parts | None = None


def install(parts: Parts | None = None) -> Parts:
    """Install the parts on (default: :meth:`Parts.from_environ`), once per process; what was installed.

    Idempotent and thread-safe: every session's script run calls it; the first does the work while
    the others wait on the lock (so no page runs before the imports are done), later calls return
    at once. ``parts`` is read on the first call only.
    """
    global _installed
    if _installed is not None:
        return _installed
    with _lock:
        if _installed is None:
            _installed = _install(parts or Parts.from_environ())
    return _installed


def _install(parts: Parts) -> Parts:
    # Imported here, not at the top: importing this package changes nothing and loads nothing.
    from server import gc_freeze, plotly_spec, tcp, warmup
    from ui import caching

    if parts.warmup:
        warmup.import_everything()
    caching.use_lru(parts.fast_cache)
    if parts.fast_plotly:
        plotly_spec.install()
    if parts.tcp_nodelay:
        tcp.send_without_delay()
    if parts.gc_freeze:
        gc_freeze.freeze_imported()  # last: freezes what the parts above imported
    return parts


def installed() -> Parts | None:
    """The parts :func:`install` put in place in this process, or None before its first call."""
    return _installed
