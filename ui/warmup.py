"""Import every module the pages use once, under a lock, before the first page runs.

Streamlit runs each session's script in its own thread. When a class opens a freshly started
server at the same moment, several threads import the same modules at once, and a thread can
see a module that another is still initialising ("partially initialized module 'pandas' has no
attribute 'Series'", "cannot import name 'attention' from 'figures'"): an error box for some
students (found by the classroom load benchmark, ``python -m benchmarks load --cold``).

The same first run turns off Nagle's algorithm on the server's sockets (:mod:`ui.tcp`). Once
imported, the modules' objects are frozen (:func:`freeze_imported`), so Python's full garbage
collections do not walk them again on every pass.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import threading

from ui import tcp

#: Third-party modules the pages import lazily (through plotly, pandas, torch).
THIRD_PARTY = ("numpy", "pandas", "plotly.graph_objects", "plotly.io", "torch")
#: The app's own packages, imported module by module.
PACKAGES = ("core", "figures", "ui")

_lock = threading.Lock()
_done = threading.Event()


def import_everything() -> None:
    """Import :data:`THIRD_PARTY` and every module of :data:`PACKAGES`, once per process.

    Every session calls this at the top of ``app.main``; the first holds the lock while the
    others wait for it, so no page runs against a half-imported module.
    """
    if _done.is_set():
        return
    with _lock:
        if _done.is_set():
            return
        for name in THIRD_PARTY:
            importlib.import_module(name)
        for package in PACKAGES:
            module = importlib.import_module(package)
            for info in pkgutil.iter_modules(module.__path__, prefix=f"{package}."):
                importlib.import_module(info.name)
        tcp.send_without_delay()
        freeze_imported()
        _done.set()


def freeze_imported() -> None:
    """Move every object alive now (the imported modules: ~380k objects) out of the GC's reach.

    They live as long as the process, yet each full collection walked all of them: ~0.25 s with
    the GIL held, stalling every session of the server (``gc.freeze`` is Python's tool for this
    "import, then serve" pattern). Objects made later (sessions, caches, figures) are collected
    as usual.
    """
    gc.collect()
    gc.freeze()
