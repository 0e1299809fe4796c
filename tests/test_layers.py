"""The layer rule of STYLE.md, enforced: core never imports the UI, figures never import Streamlit,
figures never compute (no core), pages hold no math (no torch or numpy: they call core through ui),
and the server layer (speed machinery) is installed by app.py alone."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

FORBIDDEN = {
    "core": {"streamlit", "plotly", "pandas.io.formats.style"},
    "figures": {"streamlit", "torch", "core"},  # figures draw what they are given
    "pages": {"torch", "numpy"},  # pages hold no math: arrays come from ui's cached wrappers
    "ui": {"torch"},
    "store": {"streamlit", "plotly", "torch", "ui", "figures", "core"},  # tested alone (tests/store)
}


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports(layer):
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in FORBIDDEN[layer] or name in FORBIDDEN[layer]:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert bad == []


#: Where ``server`` (the speed machinery) may be imported: the router installs it with one visible
#: call, tests and benchmarks measure it; the package itself. Nothing else may depend on it.
SERVER_IMPORTERS = ("app.py", "server", "tests", "benchmarks")


def test_only_the_router_imports_the_server_layer():
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in (*SERVER_IMPORTERS, ".venv") or relative.parts[0].startswith("."):
            continue
        bad += [f"{relative} imports {name}" for name in _imports(path) if name.split(".")[0] == "server"]
    assert bad == []
