"""The kernel-approximation page's convergence, assembled from per-seed cached draws, equals the
one-call ``core`` result (so moving the seed by one reuses draws without changing a number)."""

from __future__ import annotations

import numpy as np

from core.data import post_data
from core.lessons import kernel_approximation as ka
from ui import kernel_approximation as ui_ka


def test_convergence_from_cached_draws_equals_the_core_sweep():
    d = post_data()
    xq = ka.regression_grid(ui_ka.N_QUERY_CONVERGENCE)
    for seed in (3, 4):  # 4 reuses four of 3's draws
        got = ui_ka.rff_convergence(0.5, seed)
        want = ka.rff_convergence(d.x, d.y, xq, 0.5, ui_ka.RFF_M_GRID, ui_ka.RFF_SEEDS, seed)
        for field in ("m", "kernel_rms", "fit_rms", "fit_rms_draws", "reference"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
        assert got.slope == want.slope
