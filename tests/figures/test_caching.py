"""ui.caching: the app's bounded caches keyed by one digest of the arguments' pickle."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from ui import caching


def _counted(calls: list):
    def area(a: np.ndarray, scale: float, *, label: str = "") -> np.ndarray:
        calls.append((a.tobytes(), scale, label))
        return a * scale

    return area


def test_data_computes_once_per_distinct_arguments_and_hands_out_copies():
    calls: list = []
    area = caching.data(max_entries=8)(_counted(calls))
    a = np.arange(6.0)
    first = area(a, 2.0, label="x")
    again = area(a.copy(), 2.0, label="x")  # equal contents, another object
    assert len(calls) == 1
    np.testing.assert_array_equal(first, again)
    assert first is not again  # st.cache_data's contract: a copy per call
    first[0] = 99.0  # a caller mutating its copy changes nothing cached
    assert area(a, 2.0, label="x")[0] == 0.0
    b = a.copy()
    b[-1] += 1e-12  # one element, barely
    area(b, 2.0, label="x")
    area(a, 2.0, label="y")  # a keyword
    area(a, 2, label="x")  # an int is not a float (a miss, never a wrong hit)
    assert len(calls) == 4


def test_resource_hands_out_the_one_shared_object():
    calls: list = []
    area = caching.resource(max_entries=4)(_counted(calls))
    a = np.ones(3)
    assert area(a, 3.0) is area(a.copy(), 3.0)
    assert len(calls) == 1


def test_the_least_recently_used_result_goes_first():
    calls: list = []
    area = caching.data(max_entries=2)(_counted(calls))
    x, y, z = np.zeros(1), np.ones(1), np.full(1, 2.0)
    area(x, 1.0)
    area(y, 1.0)
    area(x, 1.0)  # x is now the most recent
    area(z, 1.0)  # evicts y
    assert len(calls) == 3
    area(x, 1.0)
    assert len(calls) == 3
    area(y, 1.0)
    assert len(calls) == 4
    assert len(area) == 2


def test_arguments_pickle_refuses_go_to_streamlits_cache():
    import math

    calls: list = []

    @caching.data(max_entries=4)
    def root(module, v: float) -> float:
        calls.append(v)
        return module.sqrt(v)

    assert caching.digest((math, 4.0), {}) is None  # pickle cannot take a module
    assert root(math, 4.0) == 2.0
    assert root(math, 4.0) == 2.0  # Streamlit's cache (it hashes a module by its name)
    assert root(np, 9.0) == 3.0
    assert calls == [4.0, 9.0]


def test_errors_are_not_cached():
    calls: list = []

    @caching.data(max_entries=4)
    def check(v: float) -> float:
        calls.append(v)
        if v < 0:
            raise ValueError("negative")
        return v

    for _ in range(2):
        with pytest.raises(ValueError, match="negative"):
            check(-1.0)
    assert calls == [-1.0, -1.0]


def test_sessions_asking_for_one_key_at_once_share_one_computation():
    calls: list = []

    @caching.resource(max_entries=4)
    def slow(v: int) -> list:
        calls.append(v)
        time.sleep(0.2)
        return [v]

    results: list = []
    threads = [threading.Thread(target=lambda: results.append(slow(7))) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == [7]
    assert len(results) == 8
    assert all(r is results[0] for r in results)


def test_a_function_defined_again_keeps_its_cache():
    """A module run again (e.g. a page script) defines its cached functions again: same cache."""
    calls: list = []
    source = "def double(v):\n    calls.append(v)\n    return 2 * v\n"
    made = []
    for _ in range(2):
        scope = {"calls": calls, "__name__": "tests.fake_page"}
        exec(source, scope)  # the same code, defined twice
        made.append(caching.data(max_entries=4)(scope["double"]))
    assert made[0](3) == made[1](3) == 6
    assert calls == [3]


def test_a_cached_function_may_call_itself():
    """Computing a key holds a lock: a nested call of the same function (on any key) must not wait
    for itself."""

    @caching.data(max_entries=64)
    def fib(n: int) -> int:
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    result: list[int] = []
    th = threading.Thread(target=lambda: result.append(fib(70)), daemon=True)
    th.start()
    th.join(timeout=10)
    assert result == [190392490709135]
