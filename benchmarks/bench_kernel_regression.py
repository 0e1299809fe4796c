"""Nadaraya-Watson: our bandwidth selection and prediction against statsmodels ``KernelReg``.

``python -m benchmarks kernel_regression`` (or ``make bench``). For the post's data (N = 200) and
sinc data sets of N = 1,000 and 5,000 it prints, measured in the same run:

* the time of ``select_bandwidth`` and of ``KernelReg(reg_type="lc", bw="cv_ls")`` (Nelder-Mead on
  the leave-one-out CV, a Python loop over the samples per evaluation), their ratio, the h each
  picks and the LOO-CV error at both h (computed with ``loo_cv_errors``, which
  ``tests/core/test_nadaraya_watson.py`` checks against statsmodels' own ``cv_loo`` to 1e-10);
* the time of ``nw_predict`` and of ``KernelReg(bw=[h]).fit`` on the post's 500-point grid.

statsmodels' ``cv_ls`` at N = 5,000 would take many minutes, so above ``SM_FULL_MAX`` its time is
extrapolated: one CV evaluation is timed and multiplied by the number of evaluations its optimiser
needed at N = 1,000 (the output says so). Target: 100x faster at N = 1,000, h within 1%.
Finally, ``nw_predict`` with N = Q = 100,000 shows the memory bound (peak Python memory).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

from benchmarks.timing import best_time, peak_python_memory
from core.data import make_data, post_data
from core.nadaraya_watson import loo_cv_errors, nw_predict, select_bandwidth

SIZES = (200, 1000, 5000)
#: Largest N for which statsmodels' full cv_ls optimisation is run (above: extrapolated).
SM_FULL_MAX = 1000


class _CountingKernelReg(KernelReg):
    """KernelReg that counts how often its CV objective is evaluated."""

    evaluations = 0

    def cv_loo(self, bw, func):
        type(self).evaluations += 1
        return super().cv_loo(bw, func)


def _data(n: int):
    d = post_data() if n == 200 else make_data(n=n, noise=0.1, seed=n, target="sinc")
    return d.x, d.y


def _statsmodels_cv_ls(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """(seconds, |h|, objective evaluations) of a full cv_ls fit."""
    _CountingKernelReg.evaluations = 0
    start = time.perf_counter()
    kr = _CountingKernelReg(y, x, var_type="c", reg_type="lc", bw="cv_ls", rng=0)
    seconds = time.perf_counter() - start
    return seconds, abs(float(kr.bw[0])), _CountingKernelReg.evaluations


def _statsmodels_one_evaluation(x: np.ndarray, y: np.ndarray, h: float) -> float:
    """Seconds for one evaluation of statsmodels' LOO-CV objective at h."""
    kr = KernelReg(y, x, var_type="c", reg_type="lc", bw=[h], rng=0)
    start = time.perf_counter()
    kr.cv_loo(np.array([h]), kr.est["lc"])
    return time.perf_counter() - start


def main() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)  # statsmodels' marginal effects at 0/0
    grid = np.linspace(-3, 3, 500)
    print("bandwidth selection: select_bandwidth vs statsmodels KernelReg(reg_type='lc', bw='cv_ls')")
    header = (
        f"{'N':>6} {'ours s':>9} {'statsmodels s':>15} {'ratio':>8} {'h ours':>9} {'h sm':>9} "
        f"{'dh %':>7} {'CV(h ours)':>11} {'CV(h sm)':>11}"
    )
    print(header)
    evaluations_at_1000 = None
    for n in SIZES:
        x, y = _data(n)
        ours = best_time(lambda x=x, y=y: select_bandwidth(x, y), repeat=5 if n <= 1000 else 1)
        h = select_bandwidth(x, y)
        if n <= SM_FULL_MAX:
            sm_s, h_sm, evals = _statsmodels_cv_ls(x, y)
            if n == 1000:
                evaluations_at_1000 = evals
            note = f"(full cv_ls, {evals} objective evaluations)"
        else:
            evals = evaluations_at_1000 or 30
            one = _statsmodels_one_evaluation(x, y, h)
            sm_s = one * evals
            h_sm = float("nan")
            note = (
                f"(EXTRAPOLATED: one CV evaluation {one:.2f} s x {evals} evaluations as at N=1000; h not run)"
            )
        cv_ours, cv_sm = (
            loo_cv_errors(x, y, "gaussian", [h, h_sm])
            if np.isfinite(h_sm)
            else (loo_cv_errors(x, y, "gaussian", [h])[0], np.nan)
        )
        dh = 100 * (h / h_sm - 1) if np.isfinite(h_sm) else float("nan")
        print(
            f"{n:>6} {ours:>9.4f} {sm_s:>15.3f} {sm_s / ours:>7.0f}x {h:>9.5f} {h_sm:>9.5f} "
            f"{dh:>+7.3f} {cv_ours:>11.6f} {cv_sm:>11.6f}  {note}",
            flush=True,
        )

    print("\nprediction on the post's 500-point grid at h*: nw_predict vs KernelReg(bw=[h]).fit")
    print(f"{'N':>6} {'ours s':>9} {'statsmodels s':>15} {'ratio':>8} {'max |diff|':>11}")
    for n in SIZES:
        x, y = _data(n)
        h = select_bandwidth(x, y)
        kr = KernelReg(y, x, var_type="c", reg_type="lc", bw=[h], rng=0)
        ours = best_time(lambda x=x, y=y, h=h: nw_predict(x, y, grid, "gaussian", h), repeat=5)
        sm = best_time(lambda kr=kr: kr.fit(grid), repeat=1 if n > 1000 else 3)
        diff = float(np.max(np.abs(nw_predict(x, y, grid, "gaussian", h) - kr.fit(grid)[0])))
        print(f"{n:>6} {ours:>9.4f} {sm:>15.4f} {sm / ours:>7.0f}x {diff:>11.1e}", flush=True)

    n = 100_000
    d = make_data(n=n, noise=0.1, seed=1, target="sinc")
    q = np.linspace(-3, 3, n)
    start = time.perf_counter()
    peak = peak_python_memory(lambda: nw_predict(d.x, d.y, q, "gaussian", 0.05))
    seconds = time.perf_counter() - start
    dense = 8 * n * n
    print(
        f"\nmemory bound: nw_predict with N = Q = {n:,}, Gaussian h = 0.05: {seconds:.1f} s, "
        f"peak Python memory {peak / 2**20:.0f} MiB (a dense Q x N matrix would be {dense / 2**30:.0f} GiB)"
    )


if __name__ == "__main__":
    main()
