"""The toy task of the post (section 4.2): random walks cut into windows, and their baselines.

Predict the next value of a walk from the values so far. A walk's steps follow
d_{t+1} = m d_t + σ ε_{t+1}; windows of ``seq_len + 1`` values are cut every ``STRIDE`` values.
``baseline_losses`` gives what simple rules score on the same windows (repeat the last value, the
mean so far, and the best possible predictor, which knows m) as :class:`Baselines`. Used by
``core.training``.

Shapes: N windows, T + 1 values per window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

#: Windows start every STRIDE values of a walk (overlapping windows, like the post's sliding window).
STRIDE = 4


@dataclass(frozen=True)
class RandomWalkData:
    """Train and validation windows.

    Attributes:
        train: (N_train, T + 1) windows; inputs are ``[:, :-1]``, next-step targets ``[:, 1:]``.
        val: (N_val, T + 1) windows, cut from a different walk than ``train``.
    """

    train: torch.Tensor
    val: torch.Tensor

    @property
    def seq_len(self) -> int:
        """Input length T."""
        return self.train.shape[1] - 1


def _cut_windows(walk: torch.Tensor, n: int, width: int) -> torch.Tensor:
    starts = torch.arange(n) * STRIDE  # (n,)
    windows = walk[starts[:, None] + torch.arange(width)[None, :]]  # (n, width)
    return windows - windows[:, :1]  # each window starts at 0: the level of a walk carries no signal


def _steps(length: int, step_std: float, momentum: float, generator: torch.Generator) -> torch.Tensor:
    """AR(1) steps d_t = momentum * d_(t-1) + step_std * e_t, started in their stationary law."""
    noise = torch.randn(length + 1, generator=generator, dtype=torch.float64) * step_std  # (length + 1,)
    if momentum == 0.0:
        return noise[1:]
    # A plain Python loop over Python floats (the same float64 arithmetic as on tensors, bit for
    # bit): indexing a tensor element by element costs ~1 µs a step, this ~0.1 µs, so a new
    # config's data is ready in a few ms (the training page previews it before any run).
    e = noise.tolist()
    steps = [0.0] * length
    previous = e[0] / math.sqrt(1.0 - momentum**2)  # stationary: Var = s² / (1 - m²)
    for t in range(length):
        previous = momentum * previous + e[t + 1]
        steps[t] = previous
    return torch.tensor(steps, dtype=torch.float64)


def random_walk_dataset(
    n_train: int = 1024,
    n_val: int = 256,
    seq_len: int = 32,
    *,
    step_std: float = 0.1,
    momentum: float = 0.0,
    seed: int = 0,
) -> RandomWalkData:
    """Overlapping windows of T + 1 values cut from two seeded random walks.

    The walk is x_t = x_(t-1) + d_t with steps d_t = momentum * d_(t-1) + step_std * e_t, e_t ~ N(0, 1):
    ``momentum = 0`` is the plain Gaussian random walk; ``momentum > 0`` makes consecutive steps
    alike (a "correlated random walk"), so the previous value carries information about the next
    step. One walk feeds the training windows and an independent one the validation windows, so
    no validation value was ever seen in training. Windows start every ``STRIDE`` steps and are
    shifted to start at 0.

    Args:
        n_train, n_val: number of windows N.
        seq_len: input length T (each window has T + 1 values).
        step_std: standard deviation of the step noise e_t (same units as the values).
        momentum: correlation of consecutive steps, in [0, 1).
        seed: seeds a private ``torch.Generator`` (the global torch RNG is not touched).

    Returns:
        :class:`RandomWalkData` with train (n_train, T + 1) and val (n_val, T + 1), float32.

    Raises:
        ValueError: on non-positive sizes, a non-positive step_std or momentum outside [0, 1).
    """
    for name, n in (("n_train", n_train), ("n_val", n_val), ("seq_len", seq_len)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    if not (isinstance(step_std, int | float) and math.isfinite(step_std) and step_std > 0):
        raise ValueError(f"step_std must be a finite positive number, got {step_std!r}")
    if not (isinstance(momentum, int | float) and 0.0 <= momentum < 1.0):
        raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
    generator = torch.Generator().manual_seed(seed)
    splits = []
    for n in (n_train, n_val):
        length = (n - 1) * STRIDE + seq_len + 1
        steps = _steps(length, float(step_std), float(momentum), generator)
        splits.append(_cut_windows(steps.cumsum(0), n, seq_len + 1).to(torch.float32))
    return RandomWalkData(train=splits[0], val=splits[1])


@dataclass(frozen=True)
class Baselines:
    """Next-step MSE of three reference predictors, on the same windows as the model.

    Attributes:
        mean: predict x[t+1] by the mean of x[0..t] (uniform attention over the past).
        last_value: predict x[t+1] = x[t] (all attention on the newest position).
        optimum: x[t] + momentum * (x[t] - x[t-1]) (x[0] at t = 0), the best any predictor can do
            knowing the process; about step_std². Equal to ``last_value`` for a plain walk.
    """

    mean: float
    last_value: float
    optimum: float


def baseline_losses(windows: torch.Tensor, momentum: float = 0.0) -> Baselines:
    """:class:`Baselines` of (N, T + 1) windows whose steps have correlation ``momentum``."""
    inputs, targets = windows[:, :-1], windows[:, 1:]  # (N, T) each
    counts = torch.arange(1, inputs.shape[1] + 1, dtype=inputs.dtype)  # (T,)
    running_mean = inputs.cumsum(1) / counts  # (N, T)
    trend = torch.zeros_like(inputs)
    trend[:, 1:] = inputs[:, 1:] - inputs[:, :-1]
    optimum = inputs + momentum * trend
    return Baselines(
        mean=float(((running_mean - targets) ** 2).mean()),
        last_value=float(((inputs - targets) ** 2).mean()),
        optimum=float(((optimum - targets) ** 2).mean()),
    )
