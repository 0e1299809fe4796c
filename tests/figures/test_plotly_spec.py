"""ui.plotly_spec: Streamlit's per-rerun validation and JSON of a figure, done once per figure."""

from __future__ import annotations

import dataclasses
import gc
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import plotly.tools
import pytest

from figures.common import HOUSE_TEMPLATE
from ui import plotly_spec


@pytest.fixture(autouse=True)
def installed():
    plotly_spec.install()


def _figure() -> go.Figure:
    return go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="s"), layout={"title": {"text": "t"}})


def test_a_figure_is_serialised_once_and_exactly_as_plotly_does():
    fig = _figure()
    first = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    assert first == fig.to_dict()  # what Streamlit inspects (width, height)
    assert json.loads(plotly.io.to_json(first, validate=False)) == json.loads(
        plotly_spec._to_json(fig.to_dict(), validate=False)
    )
    again = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    assert again is first  # the same object: nothing recomputed on the next rerun


def test_other_inputs_take_plotlys_own_path():
    data = {"data": [{"type": "scatter", "x": [1], "y": [2]}]}
    out = plotly.tools.return_figure_from_figure_or_data(data, validate_figure=True)
    assert not isinstance(out, plotly_spec._Spec)
    with pytest.raises(ValueError, match="nope"):  # validation still happens for dicts
        plotly.tools.return_figure_from_figure_or_data({"data": [{"type": "nope"}]}, validate_figure=True)
    assert json.loads(plotly.io.to_json(_figure()))["data"][0]["name"] == "s"


def test_the_spec_goes_with_its_figure():
    fig = _figure()
    plotly_spec.spec(fig)
    key = id(fig)
    assert key in plotly_spec._specs
    del fig
    gc.collect()
    assert key not in plotly_spec._specs


def _plotly_json(fig: go.Figure) -> object:
    """Plotly's own answer: the JSON of ``fig.to_dict()`` (a deep copy with typed arrays)."""
    return json.loads(plotly_spec._to_json(fig.to_dict(), validate=False))


def _ours(fig: go.Figure) -> object:
    return json.loads(plotly_spec._to_json(plotly_spec.plain(fig), validate=False))


def _every_kind_of_value() -> go.Figure:
    rng = np.random.default_rng(0)
    fig = go.Figure(
        [
            go.Scatter(x=np.arange(5), y=rng.normal(size=5), text=["a", "b", "c", "d", "e"], name="ints"),
            go.Scatter(x=np.arange(3, dtype=np.int64) * 10**10, y=[1.0, float("nan"), 3.0], mode="lines"),
            go.Scatter(x=pd.Series([0.5, 1.5]), y=np.array([True, False]), customdata=np.ones((2, 3))),
            go.Heatmap(z=np.where(np.eye(3) > 0, np.nan, rng.random((3, 3))), x=("p", "q", "r"), zmin=0),
            go.Heatmap(z=[[1, 2], [3, 4]], colorscale=[[0, "white"], [1, "red"]], showscale=False),
            go.Bar(
                x=np.array(["u", "v"]),
                y=np.array([1, -200], dtype=np.int16),
                marker={"color": ["red", "blue"]},
            ),
            go.Table(header={"values": ["a", "b"]}, cells={"values": [np.arange(3), ["x", "y", "z"]]}),
        ],
        layout={
            "title": {"text": "t"},
            "xaxis": {"range": np.array([0.0, 4.0]), "tickvals": np.arange(4), "ticktext": list("wxyz")},
            "shapes": [{"type": "line", "x0": 1, "x1": 1, "y0": 0, "y1": 1, "yref": "paper"}],
            "annotations": [{"x": 1, "y": 2, "text": "note", "showarrow": False}],
            "height": 300,
        },
    )
    fig.add_vline(x=2.0)
    return fig


def test_plain_gives_plotlys_json_for_every_kind_of_value():
    fig = _every_kind_of_value()
    before = _plotly_json(fig)
    assert _ours(fig) == before
    assert _plotly_json(fig) == before  # the figure itself is left as it was


def test_plain_turns_arrays_into_typed_arrays_like_plotly():
    fig = go.Figure(go.Scatter(x=np.arange(4.0), y=[1, 2, 3, 4]))
    data = plotly_spec.plain(fig)["data"][0]
    assert set(data["x"]) >= {"dtype", "bdata"}  # compact, as Plotly sends it
    assert data["y"] == [1, 2, 3, 4]
    assert isinstance(fig.data[0].x, np.ndarray)  # the figure keeps its array


PAGES = (
    "kernel-regression",
    "kernels-to-attention",
    "scaled-dot-product",
    "multi-head",
    "kernel-approximation",
)


@pytest.mark.parametrize("page", [*PAGES, "in-context", "training"])
def test_every_figure_the_pages_show_has_plotlys_json(page, monkeypatch):
    """Every figure a page draws (after one run of each page), ours against Plotly's ``to_dict``."""
    from tests.app.conftest import assert_clean, open_page

    shown: list[go.Figure] = []
    real = plotly_spec.plain
    monkeypatch.setattr(plotly_spec, "plain", lambda fig: shown.append(fig) or real(fig))
    plotly_spec._specs.clear()  # figures cached by earlier tests are serialised again
    at = open_page(page)
    assert_clean(at)
    monkeypatch.undo()
    assert len(shown) >= 3
    styled = set(plotly.io.templates[HOUSE_TEMPLATE].data.to_plotly_json())
    for fig in shown:
        assert _ours(fig) == _plotly_json(fig)
        assert {trace.type for trace in fig.data} <= styled, (
            "add the trace type to figures.common.TRACE_TYPES"
        )


def _dk_like(vline: float | None = None) -> go.Figure:
    from figures.attention import line_figure

    d_k = np.array([1, 4, 16, 64, 256])
    return line_figure(
        d_k, {"a": d_k**0.5, "b": np.log(d_k + 1)}, title="t", x_title="d_k", y_title="y", log_x=True,
        hlines={"level": 2.0}, vline=vline, vline_text="now",
    )  # fmt: skip


def test_marks_over_a_cached_figure_are_the_figure_plotly_would_draw_with_them():
    from figures.attention import vline_marks

    base = _dk_like()
    marks = plotly_spec.Marks(*(tuple(part) for part in vline_marks(64, "now", log_x=True)))
    shown = plotly_spec.marked_spec(base, marks)
    assert json.loads(shown.json) == _plotly_json(marks.figure(base))  # what validation makes of them
    assert json.loads(shown.json) == _plotly_json(_dk_like(vline=64))  # = the figure built with it
    assert plotly.tools.return_figure_from_figure_or_data(shown, validate_figure=True) is shown
    assert len(base.layout.shapes) == 1  # the cached figure is left as it was (its hline only)
    assert plotly_spec.spec(base) is plotly_spec.spec(base)  # its own dict is still computed once


def test_figures_are_serialised_by_orjson_with_the_same_json():
    """orjson (a pinned requirement) is Plotly's engine; its JSON equals the json module's."""
    assert plotly.io.json.config.default_engine == "auto"
    import orjson  # noqa: F401  (requirements.txt: a missing orjson fails here)

    fig = _every_kind_of_value()
    fast = plotly_spec._to_json(plotly_spec.plain(fig), validate=False)
    assert fast == plotly_spec._to_json(plotly_spec.plain(fig), validate=False, engine="orjson")
    assert json.loads(fast) == json.loads(plotly_spec._to_json(fig.to_dict(), validate=False, engine="json"))


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


def test_cached_calls_key_core_dataclasses_by_their_content():
    """``ui.caching`` hashes ``core``'s dataclasses by their pickle instead of Streamlit's deep
    copy (``dataclasses.asdict``): an equal copy hits the cache, a change in any field (an array
    element, a tuple of tokens) misses it."""
    from core import attention_analysis as aa
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
