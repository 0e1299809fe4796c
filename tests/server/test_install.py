"""server.install(): one visible call, once per process, each part switchable; nothing on import.

Each check runs in a fresh Python process (the parts change process-wide state: this test
process may already have them from an AppTest that ran ``app.main``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import server
from tests.conftest import ROOT

#: Prints which parts are in place in this process, as JSON.
STATE = """
import gc, json, sys
from server import plotly_spec, tcp
from ui import caching
print(json.dumps({
    "warmup": "torch" in sys.modules,  # only the warm-up imports torch before a page runs
    "fast_plotly": plotly_spec.installed(),
    "tcp_nodelay": tcp.installed(),
    "gc_freeze": gc.get_freeze_count() > 0,
    "fast_cache": caching._lru,
}))
"""


def _run(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter at the repository root; the JSON of its last line."""
    clean = {k: v for k, v in os.environ.items() if k not in server.SWITCHES.values()}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


IMPORT_EVERYTHING = """
import asyncio.base_events, gc, importlib, json, pkgutil
import plotly.io, plotly.tools
before = (plotly.io.to_json, plotly.tools.return_figure_from_figure_or_data, asyncio.base_events._set_nodelay)
import app, server
for package in ("core", "figures", "ui", "server"):
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, prefix=package + "."):
        importlib.import_module(info.name)
after = (plotly.io.to_json, plotly.tools.return_figure_from_figure_or_data, asyncio.base_events._set_nodelay)
print(json.dumps({
    "same": [a is b for a, b in zip(before, after)],
    "frozen": gc.get_freeze_count(),
    "installed": server.installed() is not None,
}))
"""


def test_importing_every_module_of_the_app_patches_nothing():
    """``ui.layout`` once replaced ``plotly.io.to_json`` when it was imported; now only
    ``server.install()`` changes anything, and importing ``app``, ``server`` or any ``core``,
    ``figures`` or ``ui`` module leaves Plotly, asyncio and the garbage collector as they were."""
    found = _run(IMPORT_EVERYTHING)
    assert found == {"same": [True, True, True], "frozen": 0, "installed": False}


IDEMPOTENT = """
import json, threading
import plotly.io
import server
from server import plotly_spec
calls = []
real = server._install
server._install = lambda parts: calls.append(parts) or real(parts)
results = []
threads = [threading.Thread(target=lambda: results.append(server.install())) for _ in range(8)]
for th in threads: th.start()
for th in threads: th.join()
fast = plotly.io.to_json
again = server.install()
print(json.dumps({
    "work_done": len(calls),
    "same_result": all(r is results[0] for r in [*results, again]),
    "results": len(results),
    "to_json_unchanged": plotly.io.to_json is fast and plotly_spec._to_json is not fast,
}))
"""


def test_install_does_its_work_once_however_many_sessions_call_it_at_once():
    found = _run(IDEMPOTENT, ATTN_WARMUP="0")
    assert found == {"work_done": 1, "same_result": True, "results": 8, "to_json_unchanged": True}


ALL_ON = dict.fromkeys(server.SWITCHES, True)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, ALL_ON, id="all-on"),
        pytest.param({"ATTN_WARMUP": "0"}, {**ALL_ON, "warmup": False}, id="warmup-off"),
        *(
            pytest.param(
                {"ATTN_WARMUP": "0", var: "0"}, {**ALL_ON, "warmup": False, part: False}, id=f"{part}-off"
            )
            for part, var in server.SWITCHES.items()
            if part != "warmup"
        ),
    ],
)
def test_each_switch_turns_its_part_off(env, expected):
    found = _run("import server; server.install()\n" + STATE, **env)
    assert found == expected


def test_switches_are_read_from_the_environment():
    for off in ("0", "false", "OFF", " no "):
        assert server.Parts.from_environ({"ATTN_GC_FREEZE": off}) == server.Parts(gc_freeze=False)
    for on in ("1", "", "yes", "true"):
        assert server.Parts.from_environ({"ATTN_GC_FREEZE": on}) == server.Parts()
    every = server.Parts.from_environ(dict.fromkeys(server.SWITCHES.values(), "0"))
    assert every == server.Parts(**dict.fromkeys(server.SWITCHES, False))


PAGE_WITHOUT_SERVER_LAYER = """
import json
from tests.app.conftest import assert_clean, open_page
at = open_page("scaled-dot-product", params={"live": "0"})  # st.plotly_chart: Plotly's own path
assert_clean(at)
specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
marked = [s for s in specs if any(a.get("text") == "current d_k" for a in s["layout"].get("annotations", ()))]
import dataclasses, server
parts = dataclasses.asdict(server.installed())
""" + STATE.replace("json.dumps({", "json.dumps({'charts': len(specs),'marked': len(marked), 'parts': parts,")


def test_a_page_runs_with_every_part_off():
    """The app is correct without the server layer: scaled dot-product (every section open, its d_k
    marker drawn over a cached chart by ``Marks``) runs clean with all five switches off."""
    found = _run(PAGE_WITHOUT_SERVER_LAYER, **dict.fromkeys(server.SWITCHES.values(), "0"))
    assert found["charts"] >= 5
    assert found["marked"] == 1  # the d_k marker, through Plotly's own validation
    assert found.pop("parts") == dict.fromkeys(server.SWITCHES, False)
    del found["charts"], found["marked"], found["warmup"]  # the page itself imports torch
    assert found == dict.fromkeys(set(server.SWITCHES) - {"warmup"}, False)
