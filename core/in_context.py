"""In-context regression: one softmax attention unit, trained on many small regression tasks,
*becomes* a Nadaraya-Watson estimator and picks its own bandwidth.

After Collins, Parulekar, Mokhtari, Sanghavi, Shakkottai, "In-Context Learning with Transformers:
Softmax Attention Adapts to Function Lipschitzness" (NeurIPS 2024, arXiv 2402.11639).

**Tasks.** A task is a function f on the unit sphere S^{D-1} ⊂ R^D, a context of N points
x_i (uniform on the sphere) with labels y_i = f(x_i) + σ ε_i, and Q query points with labels.
The function family (like the paper's cosine class):

    f(x) = cos(L · u·x + φ),   φ ~ U[0, 2π)

* ``full``: the direction u is uniform on the sphere, a fresh one per task. The task
  distribution is isotropic; |∇f| = L |sin(·)| ≤ L, so f is L-Lipschitz (and the bound is reached
  whenever the argument crosses π/2, which it does for most φ once L ≥ π/2).
* ``low_rank``: u = b, one hidden direction shared by every task (drawn from the seed); tasks
  differ in their phase only. f(x) = g(b·x) varies along b and is flat across it.

**The attention unit.** With a key-query matrix M (D, D) (kept symmetric: M = (P + Pᵀ)/2),

    softmax:  ŷ(x_q) = Σ_i softmax_i(x_iᵀ M x_q) y_i
    linear:   ŷ(x_q) = (1/N) Σ_i (x_iᵀ M x_q) y_i

On the unit sphere |x_i - x_q|² = 2 - 2 x_i·x_q, so with M = w I the softmax score is
w x_i·x_q = w - (w/2) |x_i - x_q|²; the constant w is the same for every key and cancels in the
softmax: the weights are **exactly** Nadaraya-Watson's Gaussian weights with bandwidth
h = 1/√w (:func:`nw_sphere` is that manual path; a test checks the two agree). A general M gives
a different window per direction: along an eigenvector with eigenvalue λ the window is 1/√λ wide,
the post's "learnable Mahalanobis kernel".

**Effective bandwidth** of a learned M: ``full`` tasks are isotropic, so the learned M is close to
w I and h_eff = 1/√(tr M / D); ``low_rank``: h_eff = 1/√(bᵀ M b), the window along b.

**References**, measured on the same tasks: Nadaraya-Watson with the bandwidth that is best over
the task distribution (a grid search on held-out tasks: the *oracle*, i.e. the best M = w I), NW
with the bandwidth chosen per context by leave-one-out cross-validation (what the kernel
regression page's ``select_bandwidth`` does for one 1-D data set, done here for every context on
the sphere), and the noise floor σ² (the error of the true function).

What the in-context page measures on a run (the window's shape, whether the bandwidth has settled,
the paper's trends over a sweep, one context drawn) is in ``core.lessons.in_context``.

Shapes: B tasks in a batch, N context points, Q queries per task, D input dimension; attention
and NW weights are (B, Q, N), rows = queries. Seeds: every random draw comes from
``np.random.default_rng((seed, stream, ...))``, so results do not depend on how a run is split
into calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

import numpy as np
import torch

from core.checks import is_int, is_real
from core.kernels import gaussian_weights, softmax_weights
from core.threads import one_thread
from core.training import optimiser_steps, resume_or_start

FAMILIES = ("full", "low_rank")
ATTENTIONS = ("softmax", "linear")

#: Random streams (the second entry of every seed tuple).
_STREAM_B, _STREAM_TRAIN, _STREAM_TEST, _STREAM_ORACLE = 0, 1, 2, 3
#: Bandwidths searched by the references: log grid from a near-neighbour window to a flat one
#: (chord distances on the sphere are at most 2, so h = 8 is already a plain average).
BANDWIDTH_GRID = np.geomspace(0.02, 8.0, 61)
#: A bandwidth shown as "∞" (M has no positive curvature along that direction) is capped here.
H_CAP = 10.0
#: Largest N·Q·B (elements of one attention tensor) a config may ask for per step.
MAX_ELEMENTS = 2**21


@dataclass(frozen=True)
class ICLConfig:
    """One in-context regression experiment: the task distribution and the training.

    Raises ValueError (in ``__post_init__``) on any value outside the documented range.
    """

    lipschitz: float = 4.0  # L: slope of the task functions; larger = wigglier = narrower window
    noise: float = 0.25  # σ: label noise std; more noise = wider window (average more points)
    n_context: int = 32  # N: context points per task; more points = narrower window
    dim: int = 2  # D: inputs live on the unit sphere in R^D (D = 2: the unit circle)
    family: str = "full"  # "full": a fresh random direction per task; "low_rank": one hidden b
    attention: str = "softmax"  # "softmax" (a kernel smoother) or "linear" (no normalisation)
    steps: int = 500  # optimiser steps; each sees `batch_tasks` freshly sampled tasks
    lr: float = 1.0  # Adam learning rate on the entries of M (M starts at the identity, h = 1);
    # the oracle's M = w I has w = 1/h² of 5-100, so steps of about 1 reach it in a few hundred
    batch_tasks: int = 32  # B: tasks per step
    n_queries: int = 8  # Q: query points per task (their labels are the training targets)
    test_tasks: int = 256  # held-out tasks for the test error (fixed by the seed)
    eval_every: int = 10  # steps between two test-error measurements
    seed: int = 0  # every random draw (tasks, b, held-out sets) derives from it

    def __post_init__(self) -> None:
        ints = {"n_context": (2, 1024), "dim": (2, 64), "steps": (1, 100_000), "batch_tasks": (1, 4096)}
        ints |= {
            "n_queries": (1, 1024),
            "test_tasks": (1, 8192),
            "eval_every": (1, 100_000),
            "seed": (0, 2**63 - 1),
        }
        for name, (low, high) in ints.items():
            value = getattr(self, name)
            if not (is_int(value) and low <= value <= high):
                raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
        reals = {"lipschitz": (0.0, 100.0), "noise": (0.0, 10.0), "lr": (0.0, 10.0)}
        for name, (low, high) in reals.items():
            value = getattr(self, name)
            open_low = name != "noise"  # L and lr must be > 0; noise may be 0
            if not (is_real(value) and (low < value if open_low else low <= value) and value <= high):
                raise ValueError(
                    f"{name} must be a real number in {'(' if open_low else '['}{low}, {high}], got {value!r}"
                )
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        if self.batch_tasks * self.n_queries * self.n_context > MAX_ELEMENTS:
            raise ValueError(f"batch_tasks · n_queries · n_context must be <= {MAX_ELEMENTS}")

    def replace(self, **changes: object) -> ICLConfig:
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)

    def same_run_as(self, other: ICLConfig) -> bool:
        """True when ``other`` describes the same run, except perhaps for how many steps it lasts."""
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self) if f.name != "steps")


# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskBatch:
    """B regression tasks given in context.

    Attributes:
        x: (B, N, D) context inputs on the unit sphere.
        y: (B, N) context labels f(x_i) + σ ε_i.
        xq: (B, Q, D) query inputs.
        yq: (B, Q) noisy query labels (the training and test targets).
        fq: (B, Q) the noiseless f(x_q).
        u: (B, D) each task's direction (all equal to b for ``low_rank``).
        phase: (B,) each task's phase φ.
    """

    x: np.ndarray
    y: np.ndarray
    xq: np.ndarray
    yq: np.ndarray
    fq: np.ndarray
    u: np.ndarray
    phase: np.ndarray


def _sphere(rng: np.random.Generator, shape: tuple[int, ...], dim: int) -> np.ndarray:
    """Uniform points on the unit sphere S^{dim-1}: (*shape, dim)."""
    z = rng.standard_normal((*shape, dim))
    return z / np.linalg.norm(z, axis=-1, keepdims=True)


def hidden_direction(config: ICLConfig) -> np.ndarray:
    """The low-rank family's hidden direction b (D,), a unit vector drawn from the seed.

    (Drawn for ``full`` too, where no task uses it.)
    """
    return _sphere(np.random.default_rng((config.seed, _STREAM_B)), (), config.dim)


def task_function(u: np.ndarray, phase: np.ndarray, lipschitz: float, x: np.ndarray) -> np.ndarray:
    """f(x) = cos(L u·x + φ) for each task: u (B, D), phase (B,), x (B, K, D) -> (B, K)."""
    proj = np.einsum("bkd,bd->bk", x, u)  # (B, K, D)·(B, D) -> (B, K)
    return np.cos(lipschitz * proj + phase[:, None])


def sample_tasks(config: ICLConfig, n_tasks: int, rng: np.random.Generator) -> TaskBatch:
    """``n_tasks`` tasks of the config's family, with N context and Q query points each."""
    d, n, q = config.dim, config.n_context, config.n_queries
    if config.family == "full":
        u = _sphere(rng, (n_tasks,), d)
    else:
        u = np.broadcast_to(hidden_direction(config), (n_tasks, d)).copy()
    phase = rng.uniform(0.0, 2 * np.pi, n_tasks)
    x = _sphere(rng, (n_tasks, n), d)
    xq = _sphere(rng, (n_tasks, q), d)
    fx = task_function(u, phase, config.lipschitz, x)
    fq = task_function(u, phase, config.lipschitz, xq)
    y = fx + config.noise * rng.standard_normal((n_tasks, n))
    yq = fq + config.noise * rng.standard_normal((n_tasks, q))
    return TaskBatch(x=x, y=y, xq=xq, yq=yq, fq=fq, u=u, phase=phase)


def training_tasks(config: ICLConfig, step: int) -> TaskBatch:
    """The B fresh tasks of optimiser step ``step`` (a function of the seed and the step only)."""
    return sample_tasks(config, config.batch_tasks, np.random.default_rng((config.seed, _STREAM_TRAIN, step)))


def held_out_tasks(config: ICLConfig) -> TaskBatch:
    """The held-out tasks on which test errors are measured (fixed by the seed)."""
    return sample_tasks(config, config.test_tasks, np.random.default_rng((config.seed, _STREAM_TEST)))


# --------------------------------------------------------------------------------------------
# The attention unit and its manual Nadaraya-Watson twin
# --------------------------------------------------------------------------------------------


def attention_predict(
    m: np.ndarray, x: np.ndarray, y: np.ndarray, xq: np.ndarray, attention: str = "softmax"
) -> tuple[np.ndarray, np.ndarray]:
    """The one-unit attention's predictions and weights.

    Args:
        m: (D, D) key-query matrix. x: (B, N, D) keys. y: (B, N) values. xq: (B, Q, D) queries.
        attention: ``softmax`` or ``linear``.

    Returns:
        predictions (B, Q) and weights (B, Q, N) (softmax rows sum to 1; linear rows do not).

    Raises:
        ValueError: on an unknown ``attention``.
    """
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
    scores = np.einsum("bqd,de,bne->bqn", xq, m, x)  # x_qᵀ M x_i: (B, Q, D)(D, D)(B, N, D) -> (B, Q, N)
    # (B, Q, N): softmax rows sum to 1 (a stable softmax over the keys)
    w = softmax_weights(scores, overwrite=True) if attention == "softmax" else scores / x.shape[1]
    return np.einsum("bqn,bn->bq", w, y), w  # (B, Q, N)·(B, N) -> (B, Q)


def nw_sphere(
    x: np.ndarray, y: np.ndarray, xq: np.ndarray, bandwidth: float
) -> tuple[np.ndarray, np.ndarray]:
    """Nadaraya-Watson with the Gaussian kernel exp(-|x_i - x_q|² / 2h²), h = ``bandwidth``, from the
    distances.

    The manual path beside :func:`attention_predict` (equal to it for M = I / h² on the sphere).
    ``bandwidth = inf`` is the plain context mean. Shapes as in :func:`attention_predict`.
    """
    d2 = ((xq[:, :, None, :] - x[:, None, :, :]) ** 2).sum(-1)  # (B, Q, 1, D) - (B, 1, N, D) -> (B, Q, N)
    w = gaussian_weights(d2, bandwidth)  # (B, Q, N); h = inf: equal weights
    return np.einsum("bqn,bn->bq", w, y), w


def _torch_predict(
    m: torch.Tensor, x: torch.Tensor, y: torch.Tensor, xq: torch.Tensor, attention: str
) -> torch.Tensor:
    scores = torch.einsum("bqd,de,bne->bqn", xq, m, x)  # (B, Q, N)
    w = torch.softmax(scores, dim=-1) if attention == "softmax" else scores / x.shape[1]
    return torch.einsum("bqn,bn->bq", w, y)  # (B, Q)


# --------------------------------------------------------------------------------------------
# The bandwidth a learned M implements
# --------------------------------------------------------------------------------------------


def bandwidth_of(curvature: float) -> float:
    """The window 1/√λ of a kernel exp(λ x_i·x_q) (capped at :data:`H_CAP` when λ <= 1/H_CAP²)."""
    return 1.0 / math.sqrt(curvature) if curvature > 1.0 / H_CAP**2 else H_CAP


def effective_bandwidth(m: np.ndarray, family: str, b: np.ndarray | None = None) -> float:
    """The Nadaraya-Watson bandwidth the attention with key-query matrix ``m`` implements.

    ``full``: 1/√(tr M / D) (M ≈ w I on isotropic tasks); ``low_rank``: 1/√(bᵀ M b), the window
    along the hidden direction ``b`` (D,). Capped at :data:`H_CAP`.
    """
    if family == "low_rank":
        if b is None:
            raise ValueError("the low-rank effective bandwidth needs the hidden direction b")
        return bandwidth_of(float(b @ m @ b))
    return bandwidth_of(float(np.trace(m)) / m.shape[0])


# --------------------------------------------------------------------------------------------
# References: NW oracle, NW with LOO-CV per context, noise floor
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class References:
    """What the attention is measured against, on the same held-out tasks as its test error.

    Attributes:
        noise_floor: σ², the error of the true function (no predictor does better on average).
        oracle_h: the bandwidth whose NW is best over the task distribution (grid search on
            held-out tasks drawn apart from the test tasks).
        oracle_error: that NW's test error (MSE against the noisy query labels).
        loo_error: test error of NW with h chosen per context by leave-one-out CV (None when
            not measured: ``references(config, loo=False)``).
        loo_h_median: the median of those per-context bandwidths (None likewise).
        grid: (G,) the bandwidths searched; grid_errors: (G,) NW error on the held-out tasks.
        mean_error: the context mean's test error (h = ∞, the widest window).
    """

    noise_floor: float
    oracle_h: float
    oracle_error: float
    loo_error: float | None
    loo_h_median: float | None
    grid: np.ndarray
    grid_errors: np.ndarray
    mean_error: float


def _sq_dist(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Squared distances of points on the sphere: a (B, K, D), c (B, N, D) -> (B, K, N)."""
    return np.maximum(0.0, 2.0 - 2.0 * np.einsum("bkd,bnd->bkn", a, c))


def nw_grid_errors(tasks: TaskBatch, grid: np.ndarray = BANDWIDTH_GRID) -> np.ndarray:
    """NW test error (MSE vs ``yq``) for every bandwidth in ``grid``: (G,)."""
    d2 = _sq_dist(tasks.xq, tasks.x)  # (B, Q, N)
    shifted = d2 - d2.min(axis=-1, keepdims=True)  # once for every h: each row's nearest key at 0
    out = np.empty(len(grid))
    for g, h in enumerate(grid):
        k = gaussian_weights(shifted, h, normalise=False, shift=False)  # (B, Q, N), row max 1
        pred = np.einsum("bqn,bn->bq", k, tasks.y) / k.sum(-1)
        out[g] = float(np.mean((pred - tasks.yq) ** 2))
    return out


def loo_bandwidths(x: np.ndarray, y: np.ndarray, grid: np.ndarray = BANDWIDTH_GRID) -> np.ndarray:
    """Per context, the grid bandwidth minimising the leave-one-out CV error: x (B, N, D), y (B, N) -> (B,).

    Each context point is predicted by NW from the other N - 1 (the kernel regression page's
    LOO-CV, for every context at once); ties go to the wider window.
    """
    d2 = _sq_dist(x, x)  # (B, N, N)
    np.einsum("bii->bi", d2)[...] = np.inf  # leave each point out of its own prediction
    shifted = d2 - d2.min(axis=-1, keepdims=True)  # once for every h: each row's nearest key at 0
    cv = np.empty((x.shape[0], len(grid)))
    for g, h in enumerate(grid):
        k = gaussian_weights(shifted, h, normalise=False, shift=False)  # (B, N, N), row max 1
        pred = np.einsum("bin,bn->bi", k, y) / k.sum(-1)
        cv[:, g] = np.mean((pred - y) ** 2, axis=-1)
    best = len(grid) - 1 - np.argmin(cv[:, ::-1], axis=1)  # last minimum = widest window
    return grid[best]


def references(config: ICLConfig, *, loo: bool = True) -> References:
    """Measure the NW oracle, NW with LOO-CV and the noise floor for ``config``'s tasks.

    ``loo=False`` leaves out the leave-one-out part (``loo_error`` and ``loo_h_median`` are None):
    it costs B·N²·G kernel values, ~85 % of the time (0.2 s at N = 32, 2.8 s at N = 128).
    """
    held_out = sample_tasks(
        config, max(256, config.test_tasks), np.random.default_rng((config.seed, _STREAM_ORACLE))
    )
    grid_errors = nw_grid_errors(held_out)
    oracle_h = float(BANDWIDTH_GRID[int(np.argmin(grid_errors))])
    tests = held_out_tasks(config)
    oracle_error = float(np.mean((nw_sphere(tests.x, tests.y, tests.xq, oracle_h)[0] - tests.yq) ** 2))
    mean_pred = np.broadcast_to(tests.y.mean(-1, keepdims=True), tests.yq.shape)
    loo_error = loo_h_median = None
    if loo:
        hs = loo_bandwidths(tests.x, tests.y, BANDWIDTH_GRID[::2])  # a coarser grid: LOO costs N² per context
        w = gaussian_weights(_sq_dist(tests.xq, tests.x), hs[:, None, None])  # (B, Q, N), an h per task
        loo_pred = np.einsum("bqn,bn->bq", w, tests.y)
        loo_error = float(np.mean((loo_pred - tests.yq) ** 2))
        loo_h_median = float(np.median(hs))
    return References(
        noise_floor=config.noise**2,
        oracle_h=oracle_h,
        oracle_error=oracle_error,
        loo_error=loo_error,
        loo_h_median=loo_h_median,
        grid=BANDWIDTH_GRID.copy(),
        grid_errors=grid_errors,
        mean_error=float(np.mean((mean_pred - tests.yq) ** 2)),
    )


def oracle_bandwidth(config: ICLConfig) -> float:
    """The grid bandwidth whose NW is best on held-out tasks (the oracle of :func:`references`)."""
    held_out = sample_tasks(
        config, max(256, config.test_tasks), np.random.default_rng((config.seed, _STREAM_ORACLE))
    )
    return float(BANDWIDTH_GRID[int(np.argmin(nw_grid_errors(held_out)))])


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------


@dataclass
class ICLRun:
    """A training run so far; pass it back to :func:`train_icl` as ``resume`` to continue.

    Attributes:
        config: the run's config.
        param: the learnable (D, D) matrix P; the key-query matrix is M = (P + Pᵀ)/2.
        optimizer: Adam over ``param`` (its moments make a paused run resume exactly).
        b: (D,) the hidden direction of the low-rank family.
        steps_done: optimiser steps taken.
        loss: training MSE of every step.
        bandwidth: effective bandwidth after every step, with the initial one first (steps_done + 1).
        matrices: (steps_done + 1) copies of M (D, D), the initial one first.
        eval_steps, test_error: steps at which the test error was measured, and its values.
        seconds: time spent training (callbacks excluded).
        stopped: True when the last call returned because ``should_stop`` said so.
    """

    config: ICLConfig
    param: torch.Tensor
    optimizer: torch.optim.Optimizer
    b: np.ndarray
    tests: TaskBatch
    steps_done: int = 0
    loss: list[float] = field(default_factory=list)
    bandwidth: list[float] = field(default_factory=list)
    matrices: list[np.ndarray] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    test_error: list[float] = field(default_factory=list)
    seconds: float = 0.0
    stopped: bool = False

    @property
    def m(self) -> np.ndarray:
        """The current key-query matrix M (D, D)."""
        return self.matrices[-1]

    @property
    def finished(self) -> bool:
        """True once the config's steps are done."""
        return self.steps_done >= self.config.steps

    def _record(self) -> None:
        m = _symmetric(self.param).detach().numpy().copy()
        self.matrices.append(m)
        self.bandwidth.append(effective_bandwidth(m, self.config.family, self.b))
        due = self.steps_done % self.config.eval_every == 0 or self.steps_done == self.config.steps
        if due and (not self.eval_steps or self.eval_steps[-1] != self.steps_done):
            self.eval_steps.append(self.steps_done)
            self.test_error.append(query_error(m, self.tests, self.config.attention))


def _symmetric(p: torch.Tensor) -> torch.Tensor:
    return (p + p.T) / 2


def query_error(m: np.ndarray, tests: TaskBatch, attention: str) -> float:
    """MSE of the attention with key-query matrix ``m`` against the noisy query labels of ``tests``."""
    return float(np.mean((attention_predict(m, tests.x, tests.y, tests.xq, attention)[0] - tests.yq) ** 2))


def start_icl(config: ICLConfig) -> ICLRun:
    """A fresh run: M = I (bandwidth 1), Adam, the held-out tasks drawn."""
    param = torch.eye(config.dim, dtype=torch.float64, requires_grad=True)
    run = ICLRun(
        config=config,
        param=param,
        optimizer=torch.optim.Adam([param], lr=config.lr),
        b=hidden_direction(config),
        tests=held_out_tasks(config),
    )
    run._record()
    return run


def _step_loss(run: ICLRun) -> torch.Tensor:
    """The query MSE of step ``run.steps_done``'s freshly sampled tasks (a scalar)."""
    config = run.config
    batch = training_tasks(config, run.steps_done)
    x, y, xq, yq = (torch.from_numpy(a) for a in (batch.x, batch.y, batch.xq, batch.yq))
    pred = _torch_predict(_symmetric(run.param), x, y, xq, config.attention)
    return torch.mean((pred - yq) ** 2)


def _record_step(run: ICLRun, loss: float) -> None:
    """After an update: the step's loss, the step counted, the bandwidth (and any due test)."""
    run.loss.append(loss)
    run.steps_done += 1
    run._record()


def train_icl(
    config: ICLConfig,
    on_step: Callable[[ICLRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: ICLRun | None = None,
    *,
    until_step: int | None = None,
) -> ICLRun:
    """Train the attention unit by Adam on the query MSE of freshly sampled tasks.

    Args:
        config: the run's config; training goes on until ``config.steps`` steps are done.
        on_step: called with the run after every step (after its bandwidth is recorded).
        should_stop: called before every step; True ends the call at once, ready to resume. An
            exception raised inside it (Streamlit's stop signal) also leaves the run consistent.
        resume: a run returned earlier, trained further *in place*. Its config must equal
            ``config`` except for ``steps``.
        until_step: stop once this many steps are done (``min`` with ``config.steps``).

    Returns:
        The :class:`ICLRun`. Deterministic for a seed; a paused-and-resumed run equals one run.

    Raises:
        ValueError: if ``resume`` comes from a different config (other than ``steps``).
    """
    with one_thread():
        run = resume_or_start(ICLRun, config, resume, start_icl, length="steps")
        target = config.steps if until_step is None else min(config.steps, until_step)
        optimiser_steps(run, target, _step_loss, _record_step, on_step, should_stop)
    return run
