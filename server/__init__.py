"""The server layer: everything that changes this process's behaviour for speed, in one place.

``app.main()`` calls :func:`install` once per script run, as its first line; the first call in a
process does the work (the others wait for it, then return at once). Nothing here acts on import,
and no other module of the app imports this package (``tests/test_layers.py``): the app is correct
without it (``tests/server/test_install.py`` runs a page with every part off), only slower.

Each part is switched off by its environment variable set to ``0`` (or ``false``, ``off``, ``no``),
e.g. ``ATTN_FAST_PLOTLY=0 streamlit run app.py``. Measured gains, on and off in the same run
(``python -m benchmarks server``, ``python -m benchmarks caching``), on the shared 2-core machine on
the morning of 2026-12-03 with a load average of 11-14 (so CPU times, which the load inflates
least, and ratios; the README has the table):

- ``ATTN_WARMUP`` (:mod:`server.warmup`): every module the pages use imported under a lock before
  the first page. Correctness: 8 sessions importing the pages' modules at once in a fresh process
  failed in 5 of 5 processes without it (20 errors: "partially initialized module 'pandas'",
  "cannot import name 'base_layout'"), in 0 of 5 with it; the imports take as long either way.
- ``ATTN_FAST_PLOTLY`` (:mod:`server.plotly_spec`, replaces ``plotly.io.to_json`` and
  ``plotly.tools.return_figure_from_figure_or_data``, reads Plotly's private fields): each figure
  object validated and serialised once. An unchanged rerun's CPU time: scaled dot-product 41 vs
  75 ms (every section open: 60 vs 101), kernel regression 38 vs 45 (59 vs 88), kernels to
  attention 44 vs 63, multi-head 36 vs 41 (68 vs 93), kernel approximation 40 vs 41 (35 vs 55).
- ``ATTN_TCP_NODELAY`` (:mod:`server.tcp`, replaces asyncio's private ``_set_nodelay``): no Nagle
  delay. A bandwidth step, message sent to ``script_finished``: median 48 vs 74 ms and 56 vs 84 ms
  (two runs; the 40 ms delayed ACK, part of the time).
- ``ATTN_GC_FREEZE`` (:mod:`server.gc_freeze`): ``gc.freeze()`` after the warm-up. A full
  collection (GIL held) skips the ~272,000 imported objects: ~0 vs 170 ms of CPU each time.
- ``ATTN_FAST_CACHE`` (``ui.caching.use_lru``): the app's cached calls keyed by one digest of their
  arguments' pickle instead of ``st.cache_data`` / ``st.cache_resource`` with the same
  ``hash_funcs``. Per call (CPU): a hit 19-65 µs vs 230-590 µs, a miss 25-110 µs vs 320-600 µs; an
  unchanged rerun with every section open: scaled dot-product 58 vs 72 ms, kernel regression 46
  vs 58 ms of CPU (1.25x). The cache is a ``ui`` helper (pages' wrappers use it); this layer only
  picks its policy.
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
