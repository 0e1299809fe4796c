"""ui.caching: the app's bounded caches keyed by one digest of the arguments' pickle.

Its policy (its own LRUs, or Streamlit's caches with ``ATTN_FAST_CACHE=0``) is set by the server
layer, so its tests live with the server's; ``benchmarks/bench_caching.py`` measures it.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import plotly.graph_objects as go
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


def test_functions_differing_only_in_their_defaults_do_not_share_a_cache():
    """``def f(v, factor=2)`` and ``factor=3`` have the same bytecode and constants (defaults live
    on the function, not its code): the registry once gave both one cache, so the second returned
    the first's results."""
    made = []
    for default in (2, 3):
        scope = {"__name__": "tests.fake_page"}
        exec(f"def scaled(v, factor={default}):\n    return v * factor\n", scope)
        made.append(caching.data(max_entries=4)(scope["scaled"]))
    assert made[0](5) == 10
    assert made[1](5) == 15
    kw = []
    for default in (2, 3):  # keyword-only defaults too
        scope = {"__name__": "tests.fake_page"}
        exec(f"def scaled_kw(v, *, factor={default}):\n    return v * factor\n", scope)
        kw.append(caching.resource(max_entries=4)(scope["scaled_kw"]))
    assert (kw[0](5), kw[1](5)) == (10, 15)


def test_functions_calling_other_globals_do_not_share_a_cache():
    """Same bytecode and constants, other global names (``co_names``): other functions."""
    made = []
    for name in ("abs", "round"):
        scope = {"__name__": "tests.fake_page"}
        exec(f"def apply(v):\n    return {name}(v)\n", scope)
        made.append(caching.data(max_entries=4)(scope["apply"]))
    assert (made[0](-2.6), made[1](-2.6)) == (2.6, -3)


def test_the_policy_switch_sends_every_call_to_streamlits_cache_and_back():
    """``use_lru(False)`` (``ATTN_FAST_CACHE=0``) serves the same functions from Streamlit's cache,
    already decorated ones included; the LRU keeps its results for when it is switched back."""
    calls: list = []
    area = caching.data(max_entries=8)(_counted(calls))
    a = np.arange(4.0)
    area(a, 2.0)
    assert (len(calls), area.misses) == (1, 1)
    try:
        caching.use_lru(False)
        np.testing.assert_array_equal(area(a, 2.0), a * 2.0)  # Streamlit's own store: a miss there
        np.testing.assert_array_equal(area(a.copy(), 2.0), a * 2.0)  # and a hit
        assert len(calls) == 2
        assert (area.hits, area.misses) == (0, 1)  # the LRU was not asked
    finally:
        caching.use_lru(True)
    area(a, 2.0)
    assert len(calls) == 2
    assert area.hits == 1


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


def test_cached_figure_keys_list_arguments_by_their_content():
    """Figure builders are cached on their arguments; a list is hashed by its pickle (fast): equal
    contents hit the cache, any changed element or type misses it, never the other way round."""
    from ui.layout import cached_figure

    built: list[tuple] = []

    def build(xs: list, name: str) -> go.Figure:
        built.append((list(xs), name))
        return go.Figure(go.Scatter(x=list(range(len(xs))), y=[float(len(xs))], name=name))

    cached = cached_figure(build)
    first = cached([0.5, 1.0, 2.0], "a")
    assert cached([0.5, 1.0, 2.0], "a") is first  # a new list, same content: the same figure
    assert cached([0.5, 1.0, 2.5], "a") is not first  # one element changed
    assert cached([0.5, 1.0, 2.0], "b") is not first
    nested = cached([np.arange(3), ("p", 1)], "a")
    assert cached([np.arange(3), ("p", 1)], "a") is nested
    assert cached([np.arange(3) * 2, ("p", 1)], "a") is not nested
    assert cached([1, 2, 3], "a") is not cached([1.0, 2.0, 3.0], "a")  # ints and floats: other keys
    assert len(built) == 7


def test_cached_gives_one_cached_twin_per_builder():
    """``ui.layout.cached(builder)`` is made once per builder: every call site that names the same
    builder reaches the same cache (built once for equal inputs); another builder has its own."""
    from ui.layout import cached

    built: list[str] = []

    def draw_one(name: str) -> go.Figure:
        built.append(f"one:{name}")
        return go.Figure(go.Scatter(x=[0], y=[1], name=name))

    def draw_two(name: str) -> go.Figure:
        built.append(f"two:{name}")
        return go.Figure(go.Scatter(x=[0], y=[2], name=name))

    assert cached(draw_one) is cached(draw_one)
    first = cached(draw_one)("a")
    assert cached(draw_one)("a") is first  # a second call site: same cache, not rebuilt
    assert cached(draw_two)("a") is not first
    assert cached(draw_one)("b") is not first
    assert built == ["one:a", "two:a", "one:b"]


def test_cached_calls_key_core_dataclasses_by_their_content():
    """``ui.caching`` hashes ``core``'s dataclasses by their pickle instead of Streamlit's deep
    copy (``dataclasses.asdict``): an equal copy hits the cache, a change in any field (an array
    element, a tuple of tokens) misses it."""
    from core.lessons import scaled_dot_product as aa
    from ui import caching

    assert aa.AttentionInputs in caching.fast_hash_funcs()  # a core type imported by the ui
    calls: list[int] = []

    @caching.data(max_entries=8)
    def total(inp: aa.AttentionInputs) -> float:
        calls.append(1)
        return float(inp.q.sum())

    inp = aa.make_inputs("random", 4, 8, 0, 0)
    same = aa.make_inputs("random", 4, 8, 0, 0)
    assert same is not inp
    assert total(inp) == total(same)
    assert len(calls) == 1
    q = inp.q.copy()
    q[-1, -1] += 1e-9
    total(dataclasses.replace(inp, q=q))
    assert len(calls) == 2  # one array element changed
    total(dataclasses.replace(inp, labels=tuple(reversed(inp.labels))))
    assert len(calls) == 3  # a tuple of strings changed
    total(same)
    assert len(calls) == 3


def test_pickled_falls_back_to_the_fields_of_a_dataclass_pickle_refuses():
    """A dataclass holding something unpicklable is keyed by its type name and fields (shallow)."""
    import threading

    from ui import caching

    @dataclasses.dataclass(frozen=True)
    class Holder:
        lock: object
        x: int

    lock = threading.Lock()
    key = caching.pickled(Holder(lock, 3))
    assert key == (Holder.__qualname__, lock, 3)
    assert caching.pickled([1, 2]) != caching.pickled([1, 2.0])


def test_fast_hash_funcs_survive_modules_imported_by_other_sessions_meanwhile():
    """Cached builders are made lazily, in any session's script thread, while other threads may
    import modules: collecting the core dataclasses must not fail on a changing ``sys.modules``
    (it did under the classroom load: "dictionary changed size during iteration")."""
    import sys
    import threading
    import types

    from ui import caching

    stop = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:  # a core module being imported elsewhere: its names appear one by one
        module = types.ModuleType("core._churn")
        sys.modules["core._churn"] = module
        i = 0
        while not stop.is_set():
            setattr(module, f"name_{i}", i)
            if i % 500 == 499:
                module.__dict__.clear()
            i += 1
        sys.modules.pop("core._churn", None)

    def collect() -> None:
        try:
            for _ in range(200):
                assert list in caching.fast_hash_funcs()
        except BaseException as exc:  # any failure is the finding
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: the race shows within a few hundred tries
    churner = threading.Thread(target=churn)
    churner.start()
    workers = [threading.Thread(target=collect) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    churner.join()
    sys.setswitchinterval(interval)
    assert errors == []
