"""Keep Python's full garbage collections off the objects that live as long as the process.

After the warm-up imports (``server.warmup``) the process holds ~270k objects of torch, plotly,
pandas and Streamlit that are never freed, yet each full collection walked all of them with the GIL
held (~170 ms of CPU, ``python -m benchmarks server --parts gc``), stalling every session of the
server.
``gc.freeze`` is Python's tool for this "import, then serve" pattern: it moves every object alive
now into a permanent generation the collector skips. Objects made later (sessions, caches,
figures) are collected as usual (``tests/server/test_gc_freeze.py``).

It is one part of :func:`server.install` (``ATTN_GC_FREEZE=0``: left out). Streamlit's own full
collection after every script run is off in ``.streamlit/config.toml`` (``runner.postScriptGC``).
"""

from __future__ import annotations

import gc


def freeze_imported() -> None:
    """Collect once, then move every object alive now out of the collector's reach (``gc.freeze``)."""
    gc.collect()
    gc.freeze()


def frozen() -> int:
    """How many objects are in the permanent generation (0 when nothing was frozen)."""
    return gc.get_freeze_count()
