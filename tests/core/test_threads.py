"""core.threads: the one place that sets torch's thread count (process-wide, or around a call)."""

from __future__ import annotations

import pytest
import torch

from core import threads


@pytest.fixture
def two_threads():
    """torch on 2 threads for the test, the process's own count restored after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_use_one_thread_is_process_wide(two_threads):
    threads.use_one_thread()
    assert torch.get_num_threads() == 1
    threads.use_one_thread()  # idempotent
    assert torch.get_num_threads() == 1


def test_one_thread_and_on_one_thread_restore_the_count(two_threads):
    with threads.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2

    @threads.on_one_thread
    def inside(x: int) -> tuple[int, int]:
        """Doc kept."""
        return x, torch.get_num_threads()

    assert inside(7) == (7, 1)
    assert inside.__doc__ == "Doc kept."
    assert torch.get_num_threads() == 2
    with pytest.raises(ZeroDivisionError), threads.one_thread():
        raise ZeroDivisionError
    assert torch.get_num_threads() == 2
