"""One place that decides how many CPU threads torch uses for the app's tiny models.

The models and kernel problems here are small (matrices of a few hundred rows): torch's intra-op
thread pool then costs more in hand-offs than it gains, and on a busy machine the same loop ran up
to ~100x slower with 2 threads than with 1. On a shared classroom server, concurrent users should
get one core each. ``benchmarks/bench_training.py`` measures both settings.

This is the only module of the app that sets torch's thread count: :func:`use_one_thread` for the
whole server (``app.main`` calls it at start-up), :func:`one_thread` / :func:`on_one_thread` around
one computation (a test or a benchmark that runs outside the app gets the same setting).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

import torch

P = ParamSpec("P")
R = TypeVar("R")


def use_one_thread() -> None:
    """Run torch on one intra-op thread from now on, process-wide (the app's server, at start-up)."""
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one intra-op thread inside the block, then restore the previous count.

    The setting is process-wide in torch; the app sets 1 for the whole server at start-up
    (:func:`use_one_thread` from ``app.main``), so restoring never hands threads back to a
    concurrent session there.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def on_one_thread(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside :func:`one_thread` (a decorator: the evaluations are as small as training)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with one_thread():
            return fn(*args, **kwargs)

    return wrapper
