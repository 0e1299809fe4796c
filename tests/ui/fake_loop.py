"""A tiny core loop of the app's convention (``ui.live_run.Loop``), for testing the live run apart
from the real pages: each step appends one deterministic number, so a run's values say exactly
which steps it took and in what order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from ui.live_run import Labels, LiveRun, Loop


@dataclass(frozen=True)
class FakeConfig:
    """A run's config: ``steps`` planned, the ``seed`` that fixes its values."""

    steps: int = 6
    seed: int = 0

    def replace(self, **changes: object) -> FakeConfig:
        return dataclasses.replace(self, **changes)

    def same_run_as(self, other: FakeConfig) -> bool:
        return self.replace(steps=0) == other.replace(steps=0)


@dataclass
class FakeRun:
    """A run trained in place: ``values`` holds one number per step taken."""

    config: FakeConfig
    steps_done: int = 0
    values: list[int] = field(default_factory=list)
    stop_checks: int = 0

    @property
    def finished(self) -> bool:
        return self.steps_done >= self.config.steps


def value(seed: int, step: int) -> int:
    """The number step ``step`` of a run with ``seed`` appends."""
    return 1000 * seed + step * step


def start_fake(config: FakeConfig) -> FakeRun:
    return FakeRun(config)


def train_fake(
    config: FakeConfig,
    on_step: Callable[[FakeRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: FakeRun | None = None,
    *,
    until_step: int | None = None,
) -> FakeRun:
    """Train ``resume`` (or a new run) in place until ``config.steps`` (or ``until_step``) steps."""
    if resume is not None and not resume.config.same_run_as(config):
        raise ValueError("resume must come from a run with the same config (only steps may change)")
    run = start_fake(config) if resume is None else resume
    run.config = config
    target = config.steps if until_step is None else min(config.steps, until_step)
    while run.steps_done < target:
        if should_stop is not None:
            run.stop_checks += 1
            if should_stop():
                break
        run.values.append(value(config.seed, run.steps_done))
        run.steps_done += 1
        if on_step is not None:
            on_step(run)
    return run


#: Units one press of Step trains on the fake page.
STEP = 2
#: The fake page's live run (the in-context page's labels: real, translated texts).
FAKE: LiveRun[FakeConfig, FakeRun] = LiveRun(
    "fk", Loop(start=start_fake, train=train_fake, unit="step", step=STEP), labels=Labels.of("ic")
)
