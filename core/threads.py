"""One place that decides how many CPU threads torch uses for the app's tiny models.

The models and kernel problems here are small (matrices of a few hundred rows): torch's intra-op
thread pool then costs more in hand-offs than it gains, and on a busy machine the same loop ran up
to ~100x slower with 2 threads than with 1. On a shared classroom server, concurrent users should
get one core each. ``benchmarks/bench_training.py`` measures both settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one intra-op thread inside the block, then restore the previous count.

    The setting is process-wide in torch; the app sets 1 for the whole server at start-up
    (``app.main``), so restoring never hands threads back to a concurrent session there.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
