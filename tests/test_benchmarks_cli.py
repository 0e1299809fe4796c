"""``python -m benchmarks NAME`` must run each benchmark with its defaults.

``benchmarks/__main__.py`` calls ``main()`` with no options when none follow the name; a
benchmark whose ``main`` then reads ``sys.argv`` itself sees the benchmark's name (``drag``) as
an unknown argument and stops (this broke ``make bench-drag``). So ``sys.argv`` may be read only
under ``if __name__ == "__main__":`` (or inside a probe script's source text).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _argv_reads_outside_main_guard(tree: ast.Module) -> list[int]:
    """Lines that read ``sys.argv`` outside the module's ``if __name__ == "__main__":`` blocks."""
    guarded: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            guarded.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "argv"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
        and node.lineno not in guarded
    ]


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("bench_*.py")), ids=lambda p: p.stem)
def test_a_benchmark_reads_its_options_from_its_argument(path: Path) -> None:
    assert _argv_reads_outside_main_guard(ast.parse(path.read_text())) == [], (
        f"{path.name} reads sys.argv outside `if __name__ == '__main__'`: `python -m benchmarks "
        f"{path.stem.removeprefix('bench_')}` would hand it the benchmark's own name"
    )


def test_the_check_sees_a_read_in_main() -> None:
    planted = (
        "import sys\ndef main(argv=None):\n    return sys.argv[1:]\n"
        "if __name__ == '__main__':\n    main(sys.argv)\n"
    )
    assert _argv_reads_outside_main_guard(ast.parse(planted)) == [3]


def test_the_live_pages_benchmarks_build_their_figures_with_todays_builders() -> None:
    """``bench_in_context`` and ``bench_training`` call the figure builders themselves (what the
    live page draws per redraw); a builder's new signature must reach them, or ``make bench``
    stops there. One short run each, its figures built and serialised."""
    from benchmarks import bench_in_context, bench_training
    from core import in_context as ic
    from core.training import train
    from core.transformer import TransformerConfig

    config = ic.ICLConfig(steps=20, test_tasks=16, eval_every=10)
    bench_in_context.page_work(ic.train_icl(config), ic.references(config))
    bench_training.page_work(train(TransformerConfig().replace(epochs=1, n_train=64)))
