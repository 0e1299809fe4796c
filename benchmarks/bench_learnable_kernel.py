"""The learnable kernels (``core.kernel_attention.fit_bandwidth`` / ``fit_metric``) against torch.

``python -m benchmarks learnable_kernel`` (or ``make bench``). Kernels → attention's learnable-kernel
section trains both objectives (with and without leave-one-out) at the page's cap N = 200 for 300
steps. Measured in the same run: the core functions (closed-form gradient, Adam written out) and
the same training with torch autograd and ``torch.optim.Adam`` (one thread), the way they were
written before. Printed: best-of-3 seconds per fit, the ratio, and the largest relative difference
of the learned h / length scales.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from benchmarks.timing import best_time
from core import kernel_attention as ka
from core.data import make_data
from core.threads import one_thread

N, STEPS, LR, H0 = 200, 300, 0.05, 1.0


def _torch_loss(scores: torch.Tensor, y: torch.Tensor, loo: bool) -> torch.Tensor:
    if loo:
        scores = scores.masked_fill(torch.eye(y.shape[0], dtype=torch.bool), -math.inf)
    return ((torch.softmax(scores, dim=1) @ y - y) ** 2).mean()


def torch_bandwidth(x: np.ndarray, y: np.ndarray, loo: bool) -> float:
    """The learned h by autograd + ``torch.optim.Adam``."""
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    d2 = (xt[:, None] - xt[None, :]) ** 2
    log_h = torch.tensor(math.log(H0), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([log_h], lr=LR, betas=ka.ADAM_BETAS)
    for _ in range(STEPS):
        opt.zero_grad()
        _torch_loss(-d2 / (2 * torch.exp(2 * log_h)), yt, loo).backward()
        opt.step()
    return math.exp(log_h.item())


def torch_metric(x: np.ndarray, y: np.ndarray, loo: bool) -> np.ndarray:
    """The learned length scales (2,) by autograd + ``torch.optim.Adam``."""
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    diff = xt[:, None, :] - xt[None, :, :]
    p = torch.tensor([-math.log(H0), -math.log(H0), 0.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([p], lr=LR, betas=ka.ADAM_BETAS)

    def metric() -> torch.Tensor:
        a = torch.stack([torch.stack([p[0].exp(), p[0] * 0]), torch.stack([p[2], p[1].exp()])])
        return a @ a.T

    for _ in range(STEPS):
        opt.zero_grad()
        _torch_loss(-torch.einsum("ijd,de,ije->ij", diff, metric(), diff) / 2, yt, loo).backward()
        opt.step()
    return (1 / torch.sqrt(torch.diagonal(metric()))).detach().numpy()


def main() -> None:
    d = make_data(n=N, seed=0)
    x2, y2 = ka.data_2d(N, 0.1, 0)
    print(f"learnable kernels, N = {N}, {STEPS} Adam steps (lr {LR}); best of 3; torch on one thread")
    print(f"  {'fit':<22} {'core':>9} {'torch':>9} {'speed-up':>9} {'max rel diff':>13}")
    with one_thread():
        for loo in (True, False):
            mine = ka.fit_bandwidth(d.x, d.y, leave_one_out=loo, steps=STEPS, lr=LR, init_bandwidth=H0)
            ref = torch_bandwidth(d.x, d.y, loo)
            t_core = best_time(
                lambda loo=loo: ka.fit_bandwidth(d.x, d.y, leave_one_out=loo, steps=STEPS), repeat=3
            )
            t_torch = best_time(lambda loo=loo: torch_bandwidth(d.x, d.y, loo), repeat=3)
            diff = abs(mine.bandwidth - ref) / ref
            name = f"bandwidth, LOO={loo}"
            print(f"  {name:<22} {t_core:8.3f}s {t_torch:8.3f}s {t_torch / t_core:8.1f}× {diff:13.1e}")
        for loo in (True, False):
            mine2 = ka.fit_metric(x2, y2, leave_one_out=loo, steps=STEPS, lr=LR, init_bandwidth=H0)
            ref2 = torch_metric(x2, y2, loo)
            t_core = best_time(
                lambda loo=loo: ka.fit_metric(x2, y2, leave_one_out=loo, steps=STEPS), repeat=3
            )
            t_torch = best_time(lambda loo=loo: torch_metric(x2, y2, loo), repeat=3)
            diff = float(np.max(np.abs(mine2.length_scales - ref2) / ref2))
            name = f"metric, LOO={loo}"
            print(f"  {name:<22} {t_core:8.3f}s {t_torch:8.3f}s {t_torch / t_core:8.1f}× {diff:13.1e}")


if __name__ == "__main__":
    main()
