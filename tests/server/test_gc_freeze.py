"""server.gc_freeze, and Streamlit's own collection after every run turned off."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import ROOT


def test_streamlit_does_not_collect_garbage_after_every_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


PROBE = """
import gc, weakref
from server import gc_freeze, warmup
warmup.import_everything()
before = gc_freeze.frozen()
gc_freeze.freeze_imported()
frozen = gc_freeze.frozen()
class Node: pass
a, b = Node(), Node()
a.other, b.other = b, a  # a reference cycle made after the freeze
ref = weakref.ref(a)
del a, b
gc.collect()
print(before, frozen, ref() is None)
"""


def test_the_warmed_up_imports_are_frozen_and_later_cycles_are_still_collected():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, frozen, collected = out.stdout.split()
    assert int(before) == 0  # importing the app's modules freezes nothing
    assert int(frozen) > 100_000  # torch, plotly, pandas, streamlit: several hundred thousand objects
    assert collected == "True"
