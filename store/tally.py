"""How a class answered: counts per choice, a histogram of numbers, the share that was right.

Pure functions of the answers a :class:`store.model.QuestionView` holds (``{browser id: answer}``),
for the class panel's bars (``figures.class_answers``). Plain Python: a class is tens of answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

#: At most this many bars in a histogram of numbers.
MAX_BINS = 12


@dataclass(frozen=True)
class Bins:
    """A histogram: bar k counts the answers in [edges[k], edges[k+1]) (the last bar includes its
    right edge); ``labels[k]`` names the bar (one integer, or the interval); ``right_counts[k]``:
    how many of them are right (None when not judged)."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]
    labels: tuple[str, ...]
    right_counts: tuple[int, ...] | None = None


def choice_counts(answers: Mapping[str, str], choices: Sequence[str]) -> tuple[int, ...]:
    """How many answered each choice, in the order of ``choices`` (unknown answers are not counted)."""
    counts = dict.fromkeys(choices, 0)
    for answer in answers.values():
        if answer in counts:
            counts[answer] += 1
    return tuple(counts.values())


def _label(value: float, fmt: str | None) -> str:
    return fmt % value if fmt else f"{value:.3g}"


def _bin_of(x: float, edges: Sequence[float]) -> int:
    """The bar holding ``x``: edges[k] <= x < edges[k+1], the last edge in the last bar."""
    for k in range(len(edges) - 2, -1, -1):
        if x >= edges[k]:
            return k
    return 0


def number_bins(
    values: Iterable[float],
    *,
    fmt: str | None = None,
    max_bins: int = MAX_BINS,
    is_right: Callable[[float], bool] | None = None,
) -> Bins:
    """A histogram of number answers for a bar chart.

    Integers get one bar each over a range of at most ``max_bins`` (``3``, ``4``, ``5``), else bars
    of a whole number of integers each (``40–43``, ``44–47``); other numbers ``max_bins`` equal bins
    from the smallest to the largest answer. No answers: no bars. With ``is_right`` (after the
    reveal) each bar also counts its right answers.
    """
    xs = sorted(float(v) for v in values if math.isfinite(float(v)))
    if not xs:
        return Bins((), (), (), () if is_right else None)
    lo, hi = xs[0], xs[-1]
    if all(x.is_integer() for x in xs):
        width = math.ceil((hi - lo + 1) / max_bins)
        firsts = range(int(lo), int(hi) + 1, width)
        edges: tuple[float, ...] = (*(k - 0.5 for k in firsts), firsts[-1] + width - 0.5)
        labels = tuple(str(k) if width == 1 else f"{k}–{k + width - 1}" for k in firsts)
    elif hi == lo:
        edges, labels = (lo, hi), (_label(lo, fmt),)
    else:
        width = (hi - lo) / max_bins
        edges = (*(lo + k * width for k in range(max_bins)), hi)
        labels = tuple(f"{_label(edges[k], fmt)}–{_label(edges[k + 1], fmt)}" for k in range(max_bins))
    counts, right = [0] * len(labels), [0] * len(labels)
    for x in xs:
        k = _bin_of(x, edges)
        counts[k] += 1
        right[k] += bool(is_right and is_right(x))
    return Bins(edges, tuple(counts), labels, tuple(right) if is_right else None)


def right_count(answers: Mapping[str, str], is_right: Callable[[str], bool]) -> int:
    """How many answers ``is_right`` accepts (it judges one stored answer)."""
    return sum(1 for answer in answers.values() if is_right(answer))
