"""``benchmarks/bench_serve.py``'s sampler counts a replica that restarts during the run (issue 22, item 9).

Without the benchmark: two small processes stand for one replica, the second one started after the
first died (what ``serve.py`` does). Each burns a known amount of CPU time, measured by itself
(``time.process_time``), while the sampler reads ``/proc`` through psutil: an independent reference.
Between the samples the processes block on their stdin, so nothing else adds to their CPU time.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from benchmarks.bench_serve import Sampler

#: CPU seconds each stand-in burns; far above /proc's 10 ms ticks, small enough for a quick test.
BURN_S = 0.3
#: psutil reads clock ticks (10 ms) for user and system time each; the child reads its own clock.
TOLERANCE_S = 0.05
#: Prints its CPU time, waits for a line, burns BURN_S more, prints its CPU time, waits for EOF.
CHILD = f"""
import sys, time
start = time.process_time()
print(start, flush=True)
sys.stdin.readline()
while time.process_time() < start + {BURN_S}:
    pass
print(time.process_time(), flush=True)
sys.stdin.read()
"""


class StandIn:
    """A replica's process that burns CPU on demand."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.started_cpu = float(self.proc.stdout.readline())  # it is ready and idle

    @property
    def pid(self) -> int:
        return self.proc.pid

    def burn(self) -> float:
        """Burn BURN_S of CPU; the process's own CPU time afterwards (it is idle again)."""
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)  # reaped, as serve.py reaps a replica that exited


@pytest.fixture
def stand_ins() -> Iterator[list[StandIn]]:
    started: list[StandIn] = []
    yield started
    for s in started:
        if s.proc.poll() is None:
            s.kill()


def test_a_restarted_replica_is_counted(stand_ins):
    first = StandIn()
    stand_ins.append(first)
    now = {"app1": first.pid}
    sampler = Sampler(lambda: dict(now), proxy=None)
    sampler.record()  # the run starts: the first process has spent first.started_cpu already
    first_total = first.burn()
    sampler.record()
    first.kill()
    sampler.record()  # died, not yet restarted: serve.py still names the dead pid
    assert sampler.replicas_cpu_s == pytest.approx(first_total - first.started_cpu, abs=TOLERANCE_S)

    second = StandIn()  # restarted: a new pid, started during the run
    stand_ins.append(second)
    now["app1"] = second.pid
    second_total = second.burn()
    sampler.record()

    assert sampler.replica_pids == {first.pid, second.pid}
    assert second_total >= BURN_S
    expected = (first_total - first.started_cpu) + second_total
    # Only the first pid (the sampler before the fix) would give first_total - started_cpu.
    assert sampler.replicas_cpu_s == pytest.approx(expected, abs=2 * TOLERANCE_S)
    assert sampler.peak_each["app1"] > 0
