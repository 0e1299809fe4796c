"""Server time of every page's reruns (``AppTest``), next to a one-chart reference page (issue 8).

``python -m benchmarks pages [--repeat N] [--pages NAME ...] [--json PATH]`` (part of ``make bench``;
``make bench-pages`` alone). For every page of ``lessons.PAGES``, opened through the router as a shared
link opens it (``?lang=en``, then ``switch_page``), on its default view (folded sections closed, as
a learner first sees it) or, with ``--open-all``, with every folded section open:

- unchanged: the median wall time of ``--repeat`` (default 5) reruns with nothing changed, after
  two warm-up reruns;
- steps: one step of every slider, select-slider, selectbox, radio, number input, toggle and
  checkbox of the page (main area and sidebar; not the router's language / presentation switches),
  each to a fresh value (next option, +1 step; -1 at the end of the range; a toggle flips), timed
  as the rerun after ``set_value``; buttons are never pressed, so nothing trains.

Next to them, ``benchmarks/reference_page.py`` (one slider, one 200-point Plotly line) measured the
same way in the same run, and the ratios. Times are wall clock of ``AppTest.run`` (the script run
plus AppTest's handling of its messages); the process CPU time is shown in brackets, since the wall
time on a shared machine grows with the load (printed). Targets: unchanged <= 50 ms, p50 of all steps
<= 100 ms, no step > 300 ms.

AppTest has no fragment reruns: ``set_value(...).run()`` runs the whole script even when the control
lives in an ``st.fragment``, so a fragment's step is over-counted here; ``bench_browser`` measures
the real fragment reruns in Chromium.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Radio, Selectbox, SelectSlider, Widget

from lessons import by_url_path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "benchmarks" / "reference_page.py"
TIMEOUT = 300  # s per AppTest run: generous, the machine is shared
WARMUP = 2
REFERENCE_STEPS = 5
#: Widget kinds stepped (AppTest's names) and the router's own controls, which are not the page's.
KINDS = ("slider", "select_slider", "selectbox", "radio", "number_input", "toggle", "checkbox")
ROUTER_KEYS = frozenset({"lang", "present", "questions"})
TARGET_UNCHANGED_MS = 50
TARGET_P50_MS = 100
TARGET_MAX_MS = 300


@dataclass
class Step:
    key: str
    kind: str
    ms: float
    cpu_ms: float
    question: bool  # an answer field of a question (``q_*``): reruns without the page changing


@dataclass
class PageResult:
    page: str
    unchanged_ms: float
    unchanged_cpu_ms: float
    steps: list[Step] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def step_ms(self) -> list[float]:
        return [s.ms for s in self.steps]


def _timed_run(at: AppTest) -> tuple[float, float]:
    """Run ``at`` once; (wall ms, process CPU ms). Raises on an exception shown on the page."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    at.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return 1e3 * wall, 1e3 * cpu


def open_page(page: str, open_all: bool = False) -> AppTest:
    """``app.py`` with ``?lang=en``, switched to ``pages/<page>.py`` (as tests/app/conftest.py).

    With ``open_all``, the link also opens every folded section (``ui.sections``) of the page.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = "en"
    if open_all and page != "home":
        from tests.app.conftest import fold_keys

        for key in fold_keys(page):
            at.query_params[key] = "true"
    at.run()
    if page != "home":
        at.switch_page(by_url_path(page).script)
        at.run()
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return at


# --- choosing a fresh value for each kind of control ----------------------------------------------
# Radio, selectbox and select-slider send the *formatted* option to the server; AppTest's set_value
# wants the option object, which is not in the element tree. These subclasses send a label directly.


def _label_state(self: Widget) -> WidgetState:
    """The widget state of a radio, selectbox or select-slider given by its labels (``_value``)."""
    ws = WidgetState()
    ws.id = self.id
    labels = self._value
    if isinstance(self, SelectSlider):
        ws.string_array_value.data[:] = labels
    else:
        ws.string_value = labels[0]
    return ws


_LABELLED = {
    cls: type(f"{cls.__name__}ByLabel", (cls,), {"_widget_state": property(_label_state)})
    for cls in (Radio, Selectbox, SelectSlider)
}


def _set_labels(widget: Widget, labels: list[str]) -> None:
    widget.set_value(labels)  # checks the widget can be used; the labels are sent as they are
    widget.__class__ = _LABELLED[type(widget)]


def _next_index(i: int, n: int) -> int:
    return i + 1 if i + 1 < n else i - 1


def _numeric_step(value: float, step: float, low: float | None, high: float | None) -> float:
    up = value + step
    new = up if high is None or up <= high + 1e-12 else value - step
    if low is not None and new < low - 1e-12:
        new = value
    return type(value)(round(new, 10))


def step_widget(widget: Widget) -> str | None:
    """Give ``widget`` a fresh value; None when done, else why it was skipped."""
    kind = widget.type
    if getattr(widget, "disabled", False):
        return "disabled"
    if kind in ("toggle", "checkbox"):
        widget.set_value(not widget.value)
    elif kind in ("radio", "selectbox"):
        options = widget.options
        if len(options) < 2:
            return "one option"
        index = widget.index
        _set_labels(widget, [options[0 if index is None else _next_index(index, len(options))]])
    elif kind == "select_slider":
        options, fmt, value = widget.options, widget.format_func, widget.value
        if len(options) < 2:
            return "one option"
        if isinstance(value, (list, tuple)):
            lo, hi = (options.index(str(fmt(v))) for v in value)
            lo, hi = (lo, hi + 1) if hi + 1 < len(options) else (lo - 1, hi)
            _set_labels(widget, [options[max(lo, 0)], options[hi]])
        else:
            _set_labels(widget, [options[_next_index(options.index(str(fmt(value))), len(options))]])
    elif kind == "slider":
        value, step = widget.value, widget.step
        if isinstance(value, (list, tuple)):
            lo, hi = value
            if isinstance(hi, (int, float)) and hi + step <= widget.max:
                widget.set_value((lo, type(hi)(round(hi + step, 10))))
            elif isinstance(lo, (int, float)):
                widget.set_value((type(lo)(round(lo - step, 10)), hi))
            else:
                return "not numeric"
        elif isinstance(value, (int, float)):
            widget.set_value(_numeric_step(value, step, widget.min, widget.max))
        else:
            return "not numeric"
    elif kind == "number_input":
        value, step = widget.value, widget.step
        if value is None:
            start = widget.min if widget.min is not None else 0
            widget.set_value(type(step)(start) if isinstance(step, int) else float(start))
        else:
            widget.set_value(_numeric_step(value, type(value)(step), widget.min, widget.max))
    else:
        return f"kind {kind}"
    return None


def _controls(at: AppTest) -> list[tuple[str, str, int]]:
    """(kind, name, index among that kind) of every control to step, in page order by kind."""
    found = []
    for kind in KINDS:
        for i, w in enumerate(getattr(at, kind)):
            if w.key in ROUTER_KEYS:
                continue
            found.append((kind, w.key or f"{kind}[{i}] {w.label!r}", i))
    return found


def _find(at: AppTest, kind: str, name: str, index: int) -> Widget | None:
    widgets = list(getattr(at, kind))
    for w in widgets:
        if w.key == name:
            return w
    if name.startswith(f"{kind}["):
        return widgets[index] if index < len(widgets) else None
    return None


def measure(at: AppTest, name: str, repeat: int, steps: bool = True) -> PageResult:
    for _ in range(WARMUP):
        _timed_run(at)
    unchanged = [_timed_run(at) for _ in range(repeat)]
    result = PageResult(
        page=name,
        unchanged_ms=statistics.median(u[0] for u in unchanged),
        unchanged_cpu_ms=statistics.median(u[1] for u in unchanged),
    )
    if not steps:
        return result
    for kind, key, index in _controls(at):
        widget = _find(at, kind, key, index)
        why = "gone after an earlier step" if widget is None else step_widget(widget)
        if why is not None:
            result.skipped.append(f"{key} ({why})")
            continue
        ms, cpu_ms = _timed_run(at)
        result.steps.append(Step(key, kind, ms, cpu_ms, question=key.startswith("q_")))
    return result


def measure_reference(repeat: int) -> PageResult:
    at = AppTest.from_file(str(REFERENCE), default_timeout=TIMEOUT)
    at.run()
    result = measure(at, "reference (one chart)", repeat, steps=False)
    for _ in range(REFERENCE_STEPS):  # the same slider, one step each time: fresh values
        step_widget(at.slider(key="ref_f"))
        ms, cpu_ms = _timed_run(at)
        result.steps.append(Step("ref_f", "slider", ms, cpu_ms, question=False))
    return result


def _mark(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def _row(r: PageResult, reference: PageResult) -> str:
    steps = r.step_ms
    nan = float("nan")
    p50 = statistics.median(steps) if steps else nan
    p50_cpu = statistics.median(s.cpu_ms for s in r.steps) if steps else nan
    slowest = ", ".join(f"{s.key} {s.ms:.0f}" for s in sorted(r.steps, key=lambda s: -s.ms)[:3])
    unchanged = (
        f"{r.unchanged_ms:7.0f} ({r.unchanged_cpu_ms:5.0f}) {r.unchanged_ms / reference.unchanged_ms:6.1f}"
    )
    step = f"{p50:7.0f} ({p50_cpu:5.0f}) {p50 / statistics.median(reference.step_ms):6.1f}"
    if not steps:
        step = f"{'-':>15} {'-':>6}"
    top = f"{max(steps):9.0f}" if steps else f"{'-':>9}"
    return f"{r.page:<22} {unchanged} {len(steps):5d} {step} {top}  {slowest}"


def report(pages: list[PageResult], reference: PageResult, load: float) -> dict[str, Any]:
    ref_step = statistics.median(reference.step_ms)
    print(f"load average before/after: {load:.2f} / {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print("ms: wall (process CPU); x ref: ratio to the reference page's unchanged rerun / step")
    print("NOTE: AppTest runs the whole script on set_value().run(), also for a control inside an")
    print("      st.fragment; fragment reruns are measured for real by `python -m benchmarks browser`.")
    head = (
        f"{'page':<22} {'unchanged':>15} {'x ref':>6} {'steps':>5} {'p50 step':>15} {'x ref':>6} {'max':>9}"
    )
    print(head + "  slowest 3 (ms)")
    print("-" * (len(head) + 40))
    for r in [reference, *pages]:
        print(_row(r, reference))
        if r.skipped:
            print(f"{'':<22} skipped: {', '.join(r.skipped)}")
    all_steps = [s for r in pages for s in r.steps]
    worst = max(pages, key=lambda r: r.unchanged_ms)
    p50_all = statistics.median(s.ms for s in all_steps)
    p50_controls = statistics.median([s.ms for s in all_steps if not s.question] or [float("nan")])
    questions = sum(s.question for s in all_steps)
    over = sorted((s for s in all_steps if s.ms > TARGET_MAX_MS), key=lambda s: -s.ms)
    over_list = ", ".join(f"{s.key} {s.ms:.0f}" for s in over[:8]) + (" ..." if len(over) > 8 else "")
    passed = {
        "unchanged_ms": worst.unchanged_ms <= TARGET_UNCHANGED_MS,
        "p50_step_ms": p50_all <= TARGET_P50_MS,
        "max_step_ms": not over,
    }
    print()
    print(
        f"unchanged rerun <= {TARGET_UNCHANGED_MS} ms on every page: {_mark(passed['unchanged_ms'])} "
        f"(slowest {worst.page} {worst.unchanged_ms:.0f} ms; reference {reference.unchanged_ms:.0f} ms)"
    )
    print(
        f"p50 of all {len(all_steps)} steps <= {TARGET_P50_MS} ms: {_mark(passed['p50_step_ms'])} "
        f"({p50_all:.0f} ms; {p50_controls:.0f} ms without the {questions} question answers; "
        f"reference {ref_step:.0f} ms)"
    )
    print(
        f"no step > {TARGET_MAX_MS} ms: {_mark(passed['max_step_ms'])} ({len(over)} over: {over_list or '-'})"
    )
    return {
        "load_average": [load, os.getloadavg()[0]],
        "cpus": os.cpu_count(),
        "reference": asdict(reference),
        "pages": [asdict(r) for r in pages],
        "p50_step_ms": p50_all,
        "targets": {
            "unchanged_ms": [TARGET_UNCHANGED_MS, passed["unchanged_ms"]],
            "p50_step_ms": [TARGET_P50_MS, passed["p50_step_ms"]],
            "max_step_ms": [TARGET_MAX_MS, passed["max_step_ms"]],
        },
    }


def main(argv: Sequence[str] = ()) -> None:
    from lessons import PAGES

    names = [p.url_path for p in PAGES]
    parser = argparse.ArgumentParser(prog="python -m benchmarks pages", description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="unchanged reruns timed per page (median)")
    parser.add_argument("--pages", nargs="+", choices=names, default=names, help="only these pages")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument(
        "--open-all", action="store_true", help="open every folded section (the whole page), not the default"
    )
    args = parser.parse_args(list(argv))
    load = os.getloadavg()[0]
    started = time.perf_counter()
    reference = measure_reference(args.repeat)
    pages = []
    for name in args.pages:
        print(f"  {name} ...", flush=True)
        pages.append(measure(open_page(name, args.open_all), name, args.repeat))
    print(f"({time.perf_counter() - started:.0f} s)\n")
    view = "every folded section open (--open-all)" if args.open_all else "the default view (folds closed)"
    print(f"view: {view}")
    result = report(pages, reference, load)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
