"""Import every module the pages use once, under a lock, before the first page runs.

Streamlit runs each session's script in its own thread. When a class opens a freshly started
server at the same moment, several threads import the same modules at once, and a thread can
see a module that another is still initialising ("partially initialized module 'pandas' has no
attribute 'Series'", "cannot import name 'attention' from 'figures'"): an error box for some
students (found by the classroom load benchmark, ``python -m benchmarks load --cold``).

It is one part of :func:`server.install` (``ATTN_WARMUP=0``: left out, and each module is then
imported by the first page that needs it). Its gain is correctness under a cold start, at the
cost of importing every page's modules before the first page (see ``server/__init__.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

#: Third-party modules the pages import lazily (through plotly, pandas, torch).
THIRD_PARTY = ("numpy", "pandas", "plotly.graph_objects", "plotly.io", "torch")
#: The app's own packages, imported module by module, subpackages (``core.lessons``) included.
PACKAGES = ("core", "figures", "ui")

_lock = threading.Lock()
_done = threading.Event()


def import_everything() -> None:
    """Import :data:`THIRD_PARTY` and every module of :data:`PACKAGES`, once per process.

    Every session calls this (through :func:`server.install`) at the top of ``app.main``; the
    first holds the lock while the others wait for it, so no page runs against a half-imported
    module.
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
            for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):  # core.lessons too
                importlib.import_module(info.name)
        _done.set()
