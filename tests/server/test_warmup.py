"""server.warmup imports, up front, every module a page run needs (so sessions never race on imports)."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import ast, pathlib, sys, threading
from server.warmup import import_everything
errors = []
def call():
    try:
        import_everything()
    except Exception as err:  # noqa: BLE001
        errors.append(repr(err))
threads = [threading.Thread(target=call) for _ in range(8)]
for th in threads: th.start()
for th in threads: th.join()
print(repr(errors))
print(repr(sorted(sys.modules)))
"""


def _imported_by_pages() -> set[str]:
    """Every module named in an import statement of app.py, pages/, ui/, figures/ and core/."""
    names: set[str] = set()
    files = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("figures/*.py"),
             *ROOT.glob("core/**/*.py")]  # fmt: skip
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return names


def test_eight_sessions_at_once_find_every_module_imported():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    errors_line, modules_line = out.stdout.strip().splitlines()[-2:]
    assert ast.literal_eval(errors_line) == []
    loaded = set(ast.literal_eval(modules_line))
    roots = {"core", "figures", "ui", "numpy", "pandas", "plotly", "torch"}
    needed = {n for n in _imported_by_pages() if n.split(".")[0] in roots}
    missing = sorted(needed - loaded)
    assert not missing, f"imported by the app but not warmed up: {missing}"
