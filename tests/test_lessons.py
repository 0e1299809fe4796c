"""The lesson registry (``lessons.py``) and the rule it names: one slug per page in every layer.

For every registered page: its script ``pages/<url-path>.py``; for every lesson its
``ui/<slug>.py``, ``figures/<slug>.py`` and ``core/lessons/<slug>.py``; its catalogue
``<slug>.json`` in both languages, holding its nav title and its questions, keys under its prefix
and no other page's; its controls' URL keys under its prefix; and the one alias rule for the
page's imports of its own modules (:data:`ALIASES`). A page added without its registry entry, or
an entry without its files, fails here.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from lessons import HOME, LESSONS, PAGES, Lesson, by_url_path
from tests.conftest import ROOT
from ui.i18n import CATALOGUE_DIR, LANGUAGES

#: How a page imports its own lesson's modules: ``from <package> import <slug> as <alias>``.
#: Names may also be imported from them (``from core.lessons.<slug> import Sweep``).
ALIASES = {"ui": "lesson_ui", "figures": "lesson_figures", "core.lessons": "lesson"}

SLUGS = {lesson.slug for lesson in LESSONS}


def _ids(pages) -> list[str]:
    return [p.slug for p in pages]


def test_every_page_script_is_registered_and_every_entry_has_its_script():
    """The hook for a new page: ``pages/<name>.py`` without its ``Lesson`` line fails here."""
    scripts = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))
    assert scripts == sorted(p.script for p in PAGES)


def test_slugs_and_prefixes_are_unique_and_well_formed():
    assert len({p.slug for p in PAGES}) == len(PAGES)
    assert len({p.prefix for p in PAGES}) == len(PAGES)
    for p in PAGES:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", p.slug), p.slug
        assert re.fullmatch(r"[a-z][a-z0-9]*", p.prefix), p.prefix  # "_" ends the prefix in URL keys
        assert re.fullmatch(r":material/[a-z_]+:", p.icon), p.icon


def test_the_names_are_derived_from_the_slug():
    mh = Lesson("multi_head", ":material/view_module:", "mh")
    assert (mh.url_path, mh.script, mh.title_key) == ("multi-head", "pages/multi-head.py", "nav.multi_head")
    assert (mh.ui_module, mh.figures_module, mh.core_module) == ("ui.multi_head", "figures.multi_head",
                                                                 "core.lessons.multi_head")  # fmt: skip
    assert mh.catalogue == "multi_head.json"
    assert by_url_path("multi-head").slug == "multi_head"
    with pytest.raises(ValueError, match="no page at 'nowhere'"):
        by_url_path("nowhere")


@pytest.mark.parametrize("lesson", LESSONS, ids=_ids(LESSONS))
def test_every_lesson_has_its_module_in_every_layer(lesson):
    for module in (lesson.ui_module, lesson.figures_module, lesson.core_module):
        path = ROOT / (module.replace(".", "/") + ".py")
        assert path.is_file(), f"{lesson.slug}: {path.relative_to(ROOT)} is missing"


def _catalogue(lang: str, name: str) -> dict[str, str]:
    return json.loads((CATALOGUE_DIR / lang / name).read_text(encoding="utf-8"))


def own_key(page: Lesson, key: str) -> bool:
    """Whether i18n ``key`` belongs to ``page``: ``<prefix>.*``, ``q.<prefix>_*`` or its nav title."""
    return key.startswith((f"{page.prefix}.", f"q.{page.prefix}_")) or key == page.title_key


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_page_has_its_catalogue_with_its_title_and_questions(page, lang):
    path = CATALOGUE_DIR / lang / page.catalogue
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    keys = set(_catalogue(lang, page.catalogue))
    assert page.title_key in keys
    assert [k for k in keys if not own_key(page, k)] == []
    strays = [
        f"{other.name}: {k}"
        for other in sorted((CATALOGUE_DIR / lang).glob("*.json"))
        if other.name != page.catalogue
        for k in _catalogue(lang, other.name)
        if own_key(page, k)
    ]
    assert strays == [], "keys of this page in another page's or a shared catalogue"


def test_every_lesson_has_a_blurb_on_the_home_map():
    home = set(_catalogue("en", HOME.catalogue))
    assert [lesson.blurb_key for lesson in LESSONS if lesson.blurb_key not in home] == []


def _tree(page: Lesson) -> ast.Module:
    return ast.parse((ROOT / page.script).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_control_key_of_a_page_has_its_prefix(page):
    keys = [
        kw.value.value
        for node in ast.walk(_tree(page))
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "key" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
    ]
    assert [k for k in keys if not k.startswith(f"{page.prefix}_")] == []


def _lesson_module(name: str) -> tuple[str, str] | None:
    """``(package, slug)`` when ``name`` is a lesson's module (``ui.multi_head``), else None."""
    package, _, slug = name.rpartition(".")
    return (package, slug) if package in ALIASES and slug in SLUGS else None


def alias_problems(source: str, slug: str | None) -> list[str]:
    """Where a page's imports (``source``) break the rule for lesson ``slug`` (None: not a lesson).

    The rule: its own modules as ``from ui import <slug> as lesson_ui``, ``from figures import
    <slug> as lesson_figures``, ``from core.lessons import <slug> as lesson``, or names from them;
    never another lesson's module; the three aliases name nothing else.
    """
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _lesson_module(a.name):  # `import ui.x as y` / `import figures.x`: not the rule
                    problems.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if found := _lesson_module(node.module):  # names from a lesson's module
                if found[1] != slug:
                    problems.append(f"line {node.lineno}: from {node.module} (another lesson)")
                continue
            for a in node.names:
                alias = a.asname or a.name
                if node.module in ALIASES and a.name in SLUGS:
                    if a.name != slug:
                        problems.append(f"line {node.lineno}: {node.module}.{a.name} (another lesson)")
                    elif alias != ALIASES[node.module]:
                        want = ALIASES[node.module]
                        problems.append(f"line {node.lineno}: {node.module}.{a.name} as {alias}, not {want}")
                elif alias in ALIASES.values():
                    problems.append(f"line {node.lineno}: {alias} names {node.module}.{a.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_page_imports_its_modules_by_the_alias_rule(page):
    source = (ROOT / page.script).read_text(encoding="utf-8")
    assert alias_problems(source, None if page == HOME else page.slug) == []


def test_the_alias_rule_catches_what_it_should():
    good = (
        "from ui import multi_head as lesson_ui\n"
        "from figures import multi_head as lesson_figures\n"
        "from core.lessons import multi_head as lesson\n"
        "from core.lessons.multi_head import redundancy_vs_heads\n"
        "from core import multihead\n"
        "from ui import controls as uc\n"
    )
    assert alias_problems(good, "multi_head") == []
    bad = {
        "from ui import multi_head as mh\n": "as mh",
        "import ui.multi_head as mh\n": "import ui.multi_head",
        "import figures.multi_head\n": "import figures.multi_head",
        "from ui import training as lesson_ui\n": "another lesson",
        "from figures.training import loss_figure\n": "another lesson",
        "from ui import controls as lesson_ui\n": "lesson_ui names ui.controls",
    }
    for source, why in bad.items():
        found = alias_problems(source, "multi_head")
        assert len(found) == 1, (source, found)
        assert why in found[0], (source, found)


@pytest.mark.parametrize("lesson", LESSONS, ids=_ids(LESSONS))
def test_a_lessons_ui_and_figures_never_import_another_lessons(lesson):
    """Shared code lives in shared modules (``figures/attention_shared.py``), not in a lesson's."""
    problems = []
    for module in (lesson.ui_module, lesson.figures_module):
        tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                found = _lesson_module(name)
                if found and found[1] != lesson.slug and found[0] in ("ui", "figures"):
                    problems.append(f"{module} imports {name}")
    assert problems == []
