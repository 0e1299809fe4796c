"""The layer rules of STYLE.md, enforced.

- Imports between layers: core never imports the UI, figures never import Streamlit, ui or core
  (figures draw what they are given), ui never imports a page, pages hold no math (no torch or
  numpy: they call core through ui), and the server layer (speed machinery) is installed by
  app.py alone.
- No package has an import cycle, function-level and ``TYPE_CHECKING`` imports included; a lesson
  (``core/lessons/<slug>.py``) may import the math of ``core``, never another lesson, and no math
  module imports a lesson.
- No numpy math in ``ui`` (see :data:`UI_NUMPY_ALLOWED`).
- No imports by name at run time (``importlib``, ``__import__``) in the app's code.
- Functions stay short enough to read: :data:`MAX_FUNCTION_LINES`; pages stay thin
  (:data:`MAX_PAGE_LINES`, :data:`MAX_PAGES_LINES`) and list their sections as
  ``partial(section, view)``, never a lambda.
- Figure builders take their words as one ``labels: Labels`` argument (``figures.common.Labels``),
  not one keyword argument per title or legend name.
- Every colour a figure or a style sheet uses comes from ``figures/common.py``.
- Only ``core/threads.py`` sets torch's thread count.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.conftest import ROOT

FORBIDDEN = {
    "core": {"streamlit", "plotly", "pandas.io.formats.style", "ui", "figures", "pages", "app"},
    "figures": {"streamlit", "torch", "core", "ui", "pages", "app"},  # figures draw what they are given
    "pages": {"torch", "numpy"},  # pages hold no math: arrays come from ui's cached wrappers
    "ui": {"torch", "pages", "app"},
    "store": {"streamlit", "plotly", "torch", "ui", "figures", "core"},  # tested alone (tests/store)
    # the lesson registry is a leaf: the router, pages, tests and benchmarks read it, it reads nothing
    "lessons.py": {
        "streamlit",
        "plotly",
        "torch",
        "numpy",
        "core",
        "ui",
        "figures",
        "pages",
        "app",
        "server",
    },
}

#: The app's own code: what the router, the pages and their layers run.
APP_CODE = ("app.py", "core", "ui", "figures", "pages")


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _files(*parts: str) -> list[Path]:
    """The Python files of ``parts`` (folders or files relative to the root), sorted."""
    out = []
    for part in parts:
        path = ROOT / part
        out += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return out


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports(layer):
    bad = []
    for path in _files(layer):
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


# ----------------------------------------------------------------------------------------------
# core: no import cycle; lessons import the math, never each other, never the reverse
# ----------------------------------------------------------------------------------------------


def import_graph(root: Path, package: str = "core") -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports, for every module under ``root/package``.

    Every import statement counts wherever it stands: at the top, inside a function (a "lazy"
    import), under ``if TYPE_CHECKING:``. ``from core import x`` is the module ``core.x`` when
    there is one, else the package ``core``; relative imports are resolved against the module.
    """
    paths = sorted((root / package).rglob("*.py"))
    names = {}
    for path in paths:
        parts = path.relative_to(root).with_suffix("").parts
        names[path] = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    modules = set(names.values())

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for path, name in names.items():
        is_package = path.name == "__init__.py"
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {resolve(a.name) for a in node.names if a.name.split(".")[0] == package}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's package, up level - 1 more
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                if base.split(".")[0] != package:
                    continue
                for alias in node.names:
                    edges.add(resolve(f"{base}.{alias.name}"))
        graph[name] = {e for e in edges if e is not None and e != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (each holds a cycle), sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_import_graph_sees_every_kind_of_import(tmp_path):
    """The graph builder itself, on a hand-made package: a lazy import, a TYPE_CHECKING import and a
    relative import each make an edge, and a loop through them is a cycle."""
    pkg = tmp_path / "core"
    (pkg / "lessons").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "def f():\n    from core import b  # lazy\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core.c import C\n",
        "c.py": "from . import a\nimport numpy\n",
        "d.py": "import core.a\nfrom core.lessons import x\n",
        "lessons/__init__.py": "",
        "lessons/x.py": "from ..d import thing\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    graph = import_graph(tmp_path)
    assert graph["core.a"] == {"core.b"}
    assert graph["core.b"] == {"core.c"}
    assert graph["core.c"] == {"core.a"}
    assert graph["core.d"] == {"core.a", "core.lessons.x"}
    assert graph["core.lessons.x"] == {"core.d"}
    assert import_cycles(graph) == [["core.a", "core.b", "core.c"], ["core.d", "core.lessons.x"]]


@pytest.mark.parametrize("package", ["core", "ui", "figures", "server"])
def test_no_import_cycle(package):
    """No two modules of a package import each other, directly or through others, even lazily
    (across packages the layer rules above already forbid a loop)."""
    graph = import_graph(ROOT, package)
    assert any(graph.values())  # the graph is read, not empty
    assert import_cycles(graph) == []
    if package == "core":
        assert "core.kernels" in graph["core.nadaraya_watson"]


def test_lessons_import_the_math_and_nothing_imports_a_lesson():
    graph = import_graph(ROOT)
    lessons = {m for m in graph if m.startswith("core.lessons.")}
    assert "core.lessons.kernel_regression" in lessons
    bad = [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets & lessons)
    ]
    assert bad == []


# ----------------------------------------------------------------------------------------------
# no numpy math in ui
# ----------------------------------------------------------------------------------------------

#: The only numpy calls ``ui`` may make. Both are conversions at the edge between a control and
#: core, not math: ``np.asarray`` turns what a widget or a cache hands over (a tuple, a list) into
#: the array a core function or a figure takes; ``np.isfinite`` checks a value a control or a URL
#: gave before it reaches core. Anything that computes (a grid, a mean, an index of the nearest
#: point, a stack of snapshots) belongs in core, where it is tested against a reference. The rule
#: reads calls through the numpy module (``np.x(...)``, ``numpy.x(...)``, ``np.random.x(...)``);
#: ``from numpy import ...`` is refused outright, so a call cannot hide behind a bare name.
#: ``np.ndarray`` in annotations and constants such as ``np.nan`` are not calls.
UI_NUMPY_ALLOWED = frozenset({"asarray", "isfinite"})


def numpy_calls(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, dotted name after the module) of every call through numpy in ``tree``, and
    (line, "from numpy import") for each ``from numpy import``."""
    aliases, out = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "numpy"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numpy":
            out.append((node.lineno, "from numpy import"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            chain, func = [], node.func
            while isinstance(func, ast.Attribute):
                chain.append(func.attr)
                func = func.value
            if isinstance(func, ast.Name) and func.id in aliases and chain:
                out.append((node.lineno, ".".join(reversed(chain))))
    return sorted(out)


def test_numpy_calls_are_found_however_they_are_written():
    tree = ast.parse(
        "import numpy as np\nimport numpy\nfrom numpy import linalg\n"
        "a = np.asarray(x)\nb = numpy.linspace(0, 1, 3)\nc = np.random.default_rng(0)\n"
        "d: np.ndarray = np.nan\ne = x.mean()\n"
    )
    assert numpy_calls(tree) == [
        (3, "from numpy import"),
        (4, "asarray"),
        (5, "linspace"),
        (6, "random.default_rng"),
    ]


def test_ui_holds_no_numpy_math():
    bad = [
        f"{path.relative_to(ROOT)}:{line} np.{name}"
        for path in _files("ui")
        for line, name in numpy_calls(ast.parse(path.read_text(encoding="utf-8")))
        if name not in UI_NUMPY_ALLOWED
    ]
    assert bad == []


# ----------------------------------------------------------------------------------------------
# no imports by name in the app's code
# ----------------------------------------------------------------------------------------------


def dynamic_imports(tree: ast.AST) -> list[int]:
    """Lines that import ``importlib`` or call ``__import__``: a module chosen by a string at run
    time, which no reader, linter or layer rule can follow."""
    lines = []
    for node in ast.walk(tree):
        modules = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
        calls = (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__"
        )
        if calls or any(m.split(".")[0] == "importlib" for m in modules):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_app_imports_modules_by_name_only():
    sample = "import importlib\nm = importlib.import_module('x')\n__import__('y')\nfrom importlib import util"
    assert dynamic_imports(ast.parse(sample)) == [1, 3, 4]
    bad = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _files(*APP_CODE)
        for line in dynamic_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert bad == []


# ----------------------------------------------------------------------------------------------
# function length
# ----------------------------------------------------------------------------------------------

#: Longest function body per layer, in lines from ``def`` to its last line, not counting its
#: docstring (documentation is never a reason to split) or decorators. A page reads as a table of
#: contents of short sections (STYLE.md: about 40 lines, a little slack here); a ``ui`` helper or
#: a figure builder does one thing (about 80). Core is not limited: a derivation written out with
#: its shapes is easier to check in one piece.
MAX_FUNCTION_LINES = {"pages": 45, "ui": 80, "figures": 80}


def function_lengths(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, line, length) of every function in ``tree``, nested ones included (see above)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            first = node.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            if docstring and isinstance(first.value.value, str):
                length -= first.end_lineno - first.lineno + 1
            out.append((node.name, node.lineno, length))
    return out


@pytest.mark.parametrize("layer", sorted(MAX_FUNCTION_LINES))
def test_functions_are_short(layer):
    tree = ast.parse('@d\ndef f():\n    """Doc\n    string."""\n    a = 1\n    return a\n')
    assert function_lengths(tree) == [("f", 2, 3)]
    bad = [
        f"{path.relative_to(ROOT)}:{line} {name}() is {length} lines"
        for path in _files(layer)
        for name, line, length in function_lengths(ast.parse(path.read_text(encoding="utf-8")))
        if length > MAX_FUNCTION_LINES[layer]
    ]
    assert bad == []


#: Longest page script and all page scripts together, in lines (issue 23: pages say what the lesson
#: says; their drawing, labels and tables live in the page's ``ui`` module).
MAX_PAGE_LINES = 300
MAX_PAGES_LINES = 2400


def test_pages_stay_thin():
    lengths = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in _files("pages")}
    assert {name: n for name, n in lengths.items() if n > MAX_PAGE_LINES} == {}
    assert sum(lengths.values()) <= MAX_PAGES_LINES, lengths


def lambda_sections(tree: ast.AST) -> list[int]:
    """Lines of ``Section(...)`` calls whose arguments hold a lambda (the house passes page-wide
    values one way: ``partial(section, view)``, see ``ui/sections.py``)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Section"
        and any(isinstance(sub, ast.Lambda) for arg in node.args for sub in ast.walk(arg))
    ]


def test_sections_take_the_page_view_through_partial():
    planted = 'Section("a", partial(f, v))\nSection("b", lambda: g(v()))\n'
    assert lambda_sections(ast.parse(planted)) == [2]
    bad = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _files("pages")
        for line in lambda_sections(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert bad == []


#: Words a builder takes one keyword argument each for, instead of its ``labels``.
WORD_PARAMETER = re.compile(r"^(title|names|.*_title|.*_name)$")
#: The layout primitives below ``Labels``: they take a title string from the builders that read it.
WORD_PRIMITIVES = {"common.base_layout", "common.heatmap", "attention_shared.panel_row_figure"}


def word_parameters(tree: ast.Module, module: str) -> list[str]:
    """``module.function(parameter)`` for each public top-level function of ``tree`` that takes a
    title or a name as its own parameter (private helpers and :data:`WORD_PRIMITIVES` aside)."""
    return [
        f"{module}.{node.name}({arg.arg})"
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and f"{module}.{node.name}" not in WORD_PRIMITIVES
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        if WORD_PARAMETER.match(arg.arg)
    ]


def test_figure_builders_take_their_words_as_labels():
    planted = "def fig(x, *, title, fit_name, labels):\n    pass\ndef _h(title):\n    pass\n"
    assert word_parameters(ast.parse(planted), "m") == ["m.fig(title)", "m.fig(fit_name)"]
    bad = [
        found
        for path in _files("figures")
        for found in word_parameters(ast.parse(path.read_text(encoding="utf-8")), path.stem)
    ]
    assert bad == []


def cached_figure_calls(tree: ast.Module) -> list[int]:
    """Lines that wrap a builder with ``cached_figure`` itself, not through ``ui.layout.cached``."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "cached_figure"
    ]


def test_figure_builders_are_cached_one_way():
    """Every builder is cached through ``ui.layout.cached`` (one bounded cache per builder, where a
    second ``cached_figure`` of the same builder would hold a second copy of its figures)."""
    planted = "a = cached(f.x)\nb = cached_figure(f.y)\nc = layout.cached_figure(f.z)\n"
    assert cached_figure_calls(ast.parse(planted)) == [2, 3]
    bad = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _files(*APP_CODE)
        if path.relative_to(ROOT).as_posix() != "ui/layout.py"
        for line in cached_figure_calls(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert bad == []


# ----------------------------------------------------------------------------------------------
# colours come from the palette
# ----------------------------------------------------------------------------------------------

#: The one module that defines colours (PALETTE, the neutral greys, the scales, the level fills).
PALETTE_MODULE = "figures/common.py"
#: A colour written out: #rgb, #rrggbb, #rrggbbaa, rgb(...), rgba(...), hsl(...), hsla(...).
COLOUR = re.compile(r"#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b|\b(?:rgba?|hsla?)\(")


def _colour_keys(tree: ast.AST) -> Iterable[tuple[int, str]]:
    """(line, text) of every string given to a Plotly colour property (a key or keyword ending in
    ``color``: ``color``, ``fillcolor``, ``marker_color``, ``paper_bgcolor``, ...)."""
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, ast.Dict):
            pairs = [
                (k.value, v)
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
            ]
        elif isinstance(node, ast.Call):
            pairs = [(k.arg, k.value) for k in node.keywords if k.arg]
        for key, value in pairs:
            literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
            if literal and isinstance(key, str) and key.endswith("color"):
                yield value.lineno, value.value


def written_colours(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every colour written in ``path`` rather than taken from the palette."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [(text.count("\n", 0, m.start()) + 1, m.group()) for m in COLOUR.finditer(text)]
    tree = ast.parse(text)
    found = set(_colour_keys(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= {(node.lineno, m.group()) for m in COLOUR.finditer(node.value)}
    return sorted(found)


def test_written_colours_are_found():
    tree = ast.parse('f(color="red", line={"color": "#333"}, fillcolor=PALETTE[0], bg=f"rgba(0,0,0,{a})")')
    assert sorted(_colour_keys(tree)) == [(1, "#333"), (1, "red")]
    assert [m.group() for m in COLOUR.finditer('"#0072B2" "#555" "rgba(0,0,0,.5)" "issue #12"')] == [
        "#0072B2",
        "#555",
        "rgba(",
    ]


#: Style sheets that restyle Streamlit's own interface rather than draw with the app's colours:
#: ``a11y.css`` matches Streamlit's theme grey to darken it and replaces its syntax colours, each
#: colour with its contrast ratio beside it, checked by axe-core (tests/e2e/test_accessibility.py).
INTERFACE_STYLES = ("a11y.css",)


def test_colours_come_from_the_palette():
    paths = [p for p in _files("figures", "ui", "pages", "app.py") if p != ROOT / PALETTE_MODULE]
    paths += sorted((ROOT / "assets").glob("*.css")) + sorted((ROOT / "assets").glob("*.js"))
    paths = [p for p in paths if p.name not in INTERFACE_STYLES]
    bad = [
        f"{path.relative_to(ROOT)}:{line} {colour}"
        for path in paths
        for line, colour in written_colours(path)
    ]
    assert bad == []


def test_one_place_sets_torchs_thread_count():
    """``core/threads.py`` decides how many threads torch uses; the app and its layers ask it."""
    bad = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in _files(*APP_CODE, "server")
        if path != ROOT / "core" / "threads.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in ("set_num_threads", "set_num_interop_threads")
    ]
    assert bad == []
