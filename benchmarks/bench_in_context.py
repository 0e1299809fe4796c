"""In-context regression speed: the default training to a stable bandwidth, the live page's
callbacks against headless training, and the sweep.

``python -m benchmarks in_context``. For the default config (500 Adam steps of 32 tasks, N = 32, d = 2):

- headless: ``core.in_context.train_icl`` alone; CPU seconds (``time.process_time``) as well as
  wall, since a shared machine's wall clock moves with the load; the step from which the
  bandwidth stays within 10 % of its final value (``stable_step``) and the CPU time to reach it
  (target: <= 10 s);
- page: the same run with an ``on_step`` doing the live page's work (``pages/in-context.py``
  ``LiveView.draw``): when ``ui.live_run.RedrawClock`` allows (every 0.7 s, and at most about
  a ninth of the time) build the bandwidth, error and task figures with
  ``figures.in_context`` (plus the context view from ``core``) and serialise them to JSON, as
  ``st.plotly_chart`` does. Target: <= 15 % over headless (ratio of CPU times, and the time
  spent inside the callbacks as a share of training time, the least noisy measure);
- the sweep behind the page's "Run the sweep" button (13 trainings; target: <= 60 s).

Each is the best of ``REPEAT`` interleaved runs.
"""

from __future__ import annotations

import time

import numpy as np
import plotly.io as pio

from core import in_context as ic
from core.lessons import in_context as lesson
from figures import in_context as figs
from figures.common import Labels
from ui.live_run import RedrawClock

REPEAT = 3
THROTTLE_S = 0.7
NAMES = {k: k for k in ("attention", "oracle", "loo", "floor", "mean", "function", "context", "query")}


def stable_step(bandwidth: list[float] | np.ndarray, rtol: float = 0.05, window: int = 50) -> int | None:
    """The first step from which the bandwidth stays within ``rtol`` of its final value
    (for at least ``window`` steps); None when it has not settled yet."""
    h = np.asarray(bandwidth, dtype=float)
    if h.size < window + 1:
        return None
    final = np.mean(h[-10:])
    outside = np.nonzero(np.abs(h - final) > rtol * final)[0]
    first = 0 if outside.size == 0 else int(outside[-1]) + 1
    return first if h.size - first >= window else None


def page_work(run: ic.ICLRun, refs: ic.References) -> None:
    """What the live page draws after a step when its chart interval has passed."""
    config = run.config
    bandwidth = figs.reference_curve(
        tuple(range(len(run.bandwidth))), tuple(run.bandwidth),
        {"oracle": refs.oracle_h, "loo": refs.loo_h_median},
        max_steps=config.steps, labels=Labels.of(title="h", x="step", y="h", **NAMES), bandwidth=True,
    )  # fmt: skip
    error = figs.reference_curve(
        tuple(run.eval_steps), tuple(run.test_error),
        {"oracle": refs.oracle_error, "loo": refs.loo_error,
         "mean": refs.mean_error, "floor": refs.noise_floor},
        max_steps=config.steps, labels=Labels.of(title="error", x="step", y="mse", **NAMES), bandwidth=False,
    )  # fmt: skip
    view = lesson.context_view(config, run.m, refs.oracle_h)
    task = figs.task_figure(
        view.grid_s, view.grid_f, view.ctx_s, view.ctx_y, view.query_s,
        {"attention": view.pred_attention, "oracle": view.pred_oracle},
        {"attention": view.w_attention, "oracle": view.w_oracle},
        labels=Labels.of(title="task", x="s", y="y", z="w", **NAMES),
    )  # fmt: skip
    for fig in (bandwidth, error, task):
        pio.to_json(fig, validate=False)


def headless(config: ic.ICLConfig) -> tuple[float, float, ic.ICLRun]:
    wall, cpu = time.perf_counter(), time.process_time()
    run = ic.train_icl(config)
    return time.perf_counter() - wall, time.process_time() - cpu, run


#: Smallest share of training time spent inside the page callbacks over the repeats.
CALLBACK_SHARE = [float("inf")]


def with_page(config: ic.ICLConfig, refs: ic.References) -> tuple[float, float]:
    spent = [0.0]
    clock = RedrawClock(THROTTLE_S)

    def on_step(run: ic.ICLRun) -> None:
        if clock.due():
            began = time.perf_counter()
            page_work(run, refs)
            clock.done(began)
            spent[0] += time.perf_counter() - began

    wall, cpu = time.perf_counter(), time.process_time()
    run = ic.train_icl(config, on_step=on_step)
    CALLBACK_SHARE[0] = min(CALLBACK_SHARE[0], spent[0] / run.seconds)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    config = ic.ICLConfig()
    ic.train_icl(config.replace(steps=5))  # warm-up: torch.optim's one-off import, allocator
    refs = ic.references(config)
    best = {"headless": (np.inf, np.inf), "page": (np.inf, np.inf)}
    run = None
    for _ in range(REPEAT):  # interleaved, so a busy moment on a shared machine hits both alike
        wall, cpu, run = headless(config)
        best["headless"] = (min(best["headless"][0], wall), min(best["headless"][1], cpu))
        wall, cpu = with_page(config, refs)
        best["page"] = (min(best["page"][0], wall), min(best["page"][1], cpu))
    stable = stable_step(run.bandwidth, rtol=0.10)
    h_cpu = best["headless"][1]
    print(
        f"default config: {config.steps} steps x {config.batch_tasks} tasks, "
        f"N = {config.n_context}, d = {config.dim}"
    )
    print(f"{'':40s} {'wall s':>8s} {'CPU s':>8s} {'CPU vs headless':>16s}")
    for name, (wall, cpu) in best.items():
        print(f"{name:40s} {wall:8.2f} {cpu:8.2f} {cpu / h_cpu:15.2f}x")
    print(
        f"time inside the page callbacks (redraw every {THROTTLE_S} s): "
        f"+{CALLBACK_SHARE[0]:.1%} of training time (target <= 15 %)"
    )
    if stable is None:
        print("bandwidth did not settle within 10 % in the default run")
    else:
        to_stable = h_cpu * stable / config.steps
        print(
            f"bandwidth stable (within 10 % of its final {np.mean(run.bandwidth[-10:]):.3f}; "
            f"oracle {refs.oracle_h:.3f}) "
            f"from step {stable}: {to_stable:.2f} CPU s (target <= 10 s)"
        )
    per_redraw = _time_page_work(run, refs)
    print(f"page work per redraw (three figures + JSON): {per_redraw * 1000:.1f} ms")
    cpu = time.process_time()
    result = lesson.sweep(config)
    cpu = time.process_time() - cpu
    print(f"sweep (13 trainings + oracles): {result.seconds:.1f} s wall, {cpu:.1f} CPU s (target <= 60 s)")
    for trend in result.trends:
        print(
            f"  {trend.name:10s} {trend.verdict:15s} pairs {trend.pairs_ok}/{trend.pairs}, "
            f"learned x{trend.learned_fold:.2f}, oracle x{trend.oracle_fold:.2f}"
        )


def _time_page_work(run: ic.ICLRun, refs: ic.References) -> float:
    start = time.perf_counter()
    for _ in range(5):
        page_work(run, refs)
    return (time.perf_counter() - start) / 5


if __name__ == "__main__":
    main()
