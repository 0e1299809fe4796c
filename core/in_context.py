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

Shapes: B tasks in a batch, N context points, Q queries per task, D input dimension; attention
and NW weights are (B, Q, N), rows = queries. Seeds: every random draw comes from
``np.random.default_rng((seed, stream, ...))``, so results do not depend on how a run is split
into calls.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

import numpy as np
import torch

from core.checks import is_int, is_real
from core.kernels import gaussian_weights, softmax_weights
from core.threads import one_thread

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


def nw_sphere(x: np.ndarray, y: np.ndarray, xq: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Nadaraya-Watson with the Gaussian kernel exp(-|x_i - x_q|² / 2h²), from the distances.

    The manual path beside :func:`attention_predict` (equal to it for M = I / h² on the sphere).
    ``h = inf`` is the plain context mean. Shapes as in :func:`attention_predict`.
    """
    d2 = ((xq[:, :, None, :] - x[:, None, :, :]) ** 2).sum(-1)  # (B, Q, 1, D) - (B, 1, N, D) -> (B, Q, N)
    w = gaussian_weights(d2, h)  # (B, Q, N); h = inf: equal weights
    return np.einsum("bqn,bn->bq", w, y), w


def _torch_predict(
    m: torch.Tensor, x: torch.Tensor, y: torch.Tensor, xq: torch.Tensor, attention: str
) -> torch.Tensor:
    scores = torch.einsum("bqd,de,bne->bqn", xq, m, x)  # (B, Q, N)
    w = torch.softmax(scores, dim=-1) if attention == "softmax" else scores / x.shape[1]
    return torch.einsum("bqn,bn->bq", w, y)  # (B, Q)


# --------------------------------------------------------------------------------------------
# Reading a learned M
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


#: "Narrow along b, wide across it" holds when every direction across b is at least this many
#: times wider than the window along b (|curvature across| <= curvature along / WIDE_FACTOR²).
WIDE_FACTOR = 2.0


def curvature_kind(curvature: float) -> str:
    """What the score does along a direction of curvature λ (an eigenvalue of M).

    ``window``: λ > 1/H_CAP², a window of width 1/√λ; ``flat``: |λ| <= 1/H_CAP², the score hardly
    changes (no preference); ``grows``: λ < -1/H_CAP², the score grows with distance along that
    direction: keys on the opposite side of the query are favoured (no window at all).
    """
    if curvature > 1.0 / H_CAP**2:
        return "window"
    return "flat" if curvature >= -1.0 / H_CAP**2 else "grows"


@dataclass(frozen=True)
class Window:
    """The shape of the attention's window: M's eigen-directions and the widths along them, and
    M along the hidden direction b and across it.

    Along an eigenvector with eigenvalue (curvature) λ the score x_iᵀMx_q changes like
    λ (v·x_i)(v·x_q): λ > 0 is a window of width 1/√λ, λ < 0 makes the score *grow* with distance
    along v (:func:`curvature_kind`), which no width describes.

    Attributes:
        widths: (D,) 1/√λ for M's eigenvalues λ, largest curvature (narrowest) first; capped at
            :data:`H_CAP` (also for λ <= 0: read ``curvatures`` before showing a width).
        curvatures: (D,) the eigenvalues λ, largest first.
        directions: (D, D) eigenvectors as columns, in the same order.
        cosine: |cos| of the angle between the narrowest direction and ``b`` (1 = aligned).
        angle_deg: that angle in degrees, in [0, 90].
        along_b: bᵀMb, the curvature along b.
        across_b: (D - 1,) eigenvalues of M restricted to the directions across b (orthogonal to
            b), smallest first (the first is the direction :func:`plane_of` draws).
    """

    widths: np.ndarray
    curvatures: np.ndarray
    directions: np.ndarray
    cosine: float
    angle_deg: float
    along_b: float
    across_b: np.ndarray

    @property
    def narrow_along_wide_across(self) -> bool:
        """The claim "narrow along b and wide across it": a window along b, and every direction
        across b at least :data:`WIDE_FACTOR` times wider (or flat, or growing with distance at
        most that slowly)."""
        limit = self.along_b / WIDE_FACTOR**2
        return curvature_kind(self.along_b) == "window" and bool(np.all(np.abs(self.across_b) <= limit))


def _across(b: np.ndarray) -> np.ndarray:
    """(D, D - 1) orthonormal directions across the unit vector ``b``."""
    d = b.shape[0]
    q, _ = np.linalg.qr(np.column_stack([b, np.eye(d)]))  # (D, D): first column ±b, the rest across b
    return q[:, 1:d]


def window_of(m: np.ndarray, b: np.ndarray) -> Window:
    """Eigen-decompose the symmetric ``m`` (D, D), compare its narrowest direction with ``b`` (D,),
    and read M along b and across it."""
    sym = (m + m.T) / 2
    lam, vec = np.linalg.eigh(sym)
    order = np.argsort(lam)[::-1]
    lam, vec = lam[order], vec[:, order]
    cosine = float(min(1.0, abs(vec[:, 0] @ b)))
    widths = np.array([bandwidth_of(float(v)) for v in lam])
    others = _across(b)
    return Window(
        widths=widths,
        curvatures=lam,
        directions=vec,
        cosine=cosine,
        angle_deg=math.degrees(math.acos(cosine)),
        along_b=float(b @ sym @ b),
        across_b=np.linalg.eigvalsh(others.T @ sym @ others),  # ascending
    )


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
    if resume is not None and (not isinstance(resume, ICLRun) or not resume.config.same_run_as(config)):
        raise ValueError("resume must come from a run with the same config (only steps may change)")
    with one_thread():
        run = start_icl(config) if resume is None else resume
        run.config = config
        run.stopped = False
        target = config.steps if until_step is None else min(config.steps, until_step)
        while run.steps_done < target:
            if should_stop is not None and should_stop():
                run.stopped = True
                break
            clock = time.perf_counter()
            batch = training_tasks(config, run.steps_done)
            x, y, xq, yq = (torch.from_numpy(a) for a in (batch.x, batch.y, batch.xq, batch.yq))
            pred = _torch_predict(_symmetric(run.param), x, y, xq, config.attention)
            loss = torch.mean((pred - yq) ** 2)
            run.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            run.optimizer.step()
            # book-keeping last: an interruption never leaves a half-counted step
            run.loss.append(float(loss.detach()))
            run.steps_done += 1
            run._record()
            run.seconds += time.perf_counter() - clock
            if on_step is not None:
                on_step(run)
    return run


#: Steps over which :func:`bandwidth_drift` compares the learned bandwidth with the steps before.
DRIFT_WINDOW = 100


def bandwidth_drift(
    bandwidth: list[float] | np.ndarray, window: int = DRIFT_WINDOW
) -> tuple[float, int] | None:
    """How much the learned bandwidth still moves: (relative change, steps compared).

    The geometric mean of the last ``window`` steps against the ``window`` steps before them,
    minus 1 (-0.045: 4.5 % narrower). Runs shorter than 2 x ``window`` steps compare halves of
    what they have; None below 20 steps. A settled run only jitters (±2 % on the defaults);
    an under-trained one drifts one way (N = 128 after 500 steps: -4.5 %).
    """
    h = np.log(np.asarray(bandwidth, dtype=float))
    w = min(int(window), (h.size - 1) // 2)
    if w < 10:
        return None
    return float(np.exp(h[-w:].mean() - h[-2 * w : -w].mean()) - 1.0), w


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


# --------------------------------------------------------------------------------------------
# The paper's trends, measured
# --------------------------------------------------------------------------------------------

#: The sweep: Lipschitz constants (at two noise levels) and context sizes (at the base noise).
SWEEP_LIPSCHITZ = (1.0, 2.0, 4.0, 8.0)
SWEEP_NOISE = (0.1, 0.5)
SWEEP_N = (8, 16, 32, 64, 128)
#: The learned bandwidth of a sweep run is its mean over the last this many steps (Adam jitters).
SWEEP_TAIL = 50


@dataclass(frozen=True)
class Trend:
    """One of the paper's claims, measured: how the bandwidth moves along one swept quantity.

    Attributes:
        name: ``lipschitz``, ``noise`` or ``n_context``.
        expected: +1 if the window should widen as the quantity grows, -1 if it should narrow.
        pairs_ok, pairs: neighbouring sweep points where the *learned* bandwidth moved as expected.
        oracle_ok: neighbouring points where the *oracle* bandwidth moved as expected (the claim
            holds for the best NW only while N points can resolve the functions: with L large for
            N and d, the best window widens again towards the plain mean).
        agree: neighbouring points where the learned bandwidth moved the way the oracle's did.
        learned_fold, oracle_fold: bandwidth at the largest value over that at the smallest
            (learned, and the oracle's), averaged (geometrically) over the other swept quantity.
    """

    name: str
    expected: int
    pairs_ok: int
    pairs: int
    oracle_ok: int
    agree: int
    learned_fold: float
    oracle_fold: float

    @property
    def verdict(self) -> str:
        """``reproduced`` (every pair as the paper says), ``partly`` (most) or ``not_reproduced``."""
        if self.pairs_ok == self.pairs:
            return "reproduced"
        return "partly" if self.pairs_ok >= 0.75 * self.pairs else "not_reproduced"


@dataclass(frozen=True)
class Sweep:
    """Learned and oracle bandwidths over the sweep.

    Attributes:
        lipschitz: (A,) swept L; noise: (S,) noise levels; n_context: (C,) swept N.
        learned_l, oracle_l: (S, A) bandwidths against L, one row per noise level.
        learned_n, oracle_n: (C,) bandwidths against N (at the base config's noise and L).
        trends: the three :class:`Trend` s (lipschitz, noise, n_context).
        seconds: time the sweep took.
    """

    lipschitz: np.ndarray
    noise: np.ndarray
    n_context: np.ndarray
    learned_l: np.ndarray
    oracle_l: np.ndarray
    learned_n: np.ndarray
    oracle_n: np.ndarray
    trends: tuple[Trend, ...]
    seconds: float


def oracle_bandwidth(config: ICLConfig) -> float:
    """The grid bandwidth whose NW is best on held-out tasks (the oracle of :func:`references`)."""
    held_out = sample_tasks(
        config, max(256, config.test_tasks), np.random.default_rng((config.seed, _STREAM_ORACLE))
    )
    return float(BANDWIDTH_GRID[int(np.argmin(nw_grid_errors(held_out)))])


def learned_bandwidth(config: ICLConfig) -> float:
    """Train headless and return the bandwidth averaged over the last :data:`SWEEP_TAIL` steps."""
    run = train_icl(config)
    return float(np.exp(np.mean(np.log(run.bandwidth[-SWEEP_TAIL:]))))


def _trend(name: str, expected: int, learned: np.ndarray, oracle: np.ndarray) -> Trend:
    """``learned``/``oracle``: (R, K) bandwidths, K along the swept quantity (ascending)."""
    steps = np.sign(np.diff(np.log(learned), axis=1))  # (R, K - 1)
    oracle_steps = np.sign(np.diff(np.log(oracle), axis=1))
    fold = lambda h: float(np.exp(np.mean(np.log(h[:, -1] / h[:, 0]))))  # noqa: E731
    return Trend(
        name=name,
        expected=expected,
        pairs_ok=int(np.sum(steps == expected)),
        pairs=int(steps.size),
        oracle_ok=int(np.sum(oracle_steps == expected)),
        agree=int(np.sum(steps == oracle_steps)),
        learned_fold=fold(learned),
        oracle_fold=fold(oracle),
    )


def sweep(base: ICLConfig, on_progress: Callable[[int, int], None] | None = None) -> Sweep:
    """Measure the paper's trends: learned vs oracle bandwidth against L (at each noise level
    of :data:`SWEEP_NOISE`) and against N (at ``base``'s noise and L).

    Every run trains ``base`` (full family, softmax) with one quantity changed. ``on_progress(done,
    total)`` is called after each run.
    """
    started = time.perf_counter()
    base = base.replace(family="full", attention="softmax")
    configs_l = [[base.replace(lipschitz=lip, noise=s) for lip in SWEEP_LIPSCHITZ] for s in SWEEP_NOISE]
    configs_n = [base.replace(n_context=n) for n in SWEEP_N]
    total, done = len(SWEEP_NOISE) * len(SWEEP_LIPSCHITZ) + len(SWEEP_N), 0

    def measure(config: ICLConfig) -> tuple[float, float]:
        nonlocal done
        value = learned_bandwidth(config), oracle_bandwidth(config)
        done += 1
        if on_progress is not None:
            on_progress(done, total)
        return value

    grid_l = np.array([[measure(c) for c in row] for row in configs_l])  # (S, A, 2)
    grid_n = np.array([measure(c) for c in configs_n])  # (C, 2)
    learned_l, oracle_l = grid_l[..., 0], grid_l[..., 1]
    trends = (
        _trend("lipschitz", -1, learned_l, oracle_l),
        _trend("noise", +1, learned_l.T, oracle_l.T),
        _trend("n_context", -1, grid_n[None, :, 0], grid_n[None, :, 1]),
    )
    return Sweep(
        lipschitz=np.array(SWEEP_LIPSCHITZ),
        noise=np.array(SWEEP_NOISE),
        n_context=np.array(SWEEP_N),
        learned_l=learned_l,
        oracle_l=oracle_l,
        learned_n=grid_n[:, 0],
        oracle_n=grid_n[:, 1],
        trends=trends,
        seconds=time.perf_counter() - started,
    )


# --------------------------------------------------------------------------------------------
# What the page draws: one context, the window in a plane
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextView:
    """One held-out context drawn along a coordinate, with one query's weights.

    The coordinate is the angle on the circle for D = 2 (``angle``, radians), else the position
    along the task's direction u·x (``projection``), along which f varies.

    Attributes:
        coordinate: ``angle`` or ``projection``.
        grid_s, grid_f: (G,) positions and the true f there.
        ctx_s, ctx_y: (N,) the context's positions and noisy labels.
        query_s, query_f: the query's position and true value.
        pred_attention, pred_oracle: the attention's and the NW oracle's prediction at the query.
        w_attention, w_oracle: (N,) their weights on the context points (the query's row).
    """

    coordinate: str
    grid_s: np.ndarray
    grid_f: np.ndarray
    ctx_s: np.ndarray
    ctx_y: np.ndarray
    query_s: float
    query_f: float
    pred_attention: float
    pred_oracle: float
    w_attention: np.ndarray
    w_oracle: np.ndarray


def context_view(
    config: ICLConfig, m: np.ndarray, oracle_h: float, task: int = 0, query: int = 0
) -> ContextView:
    """The ``task``-th held-out context and its ``query``-th query, seen by M and by the oracle."""
    tests = held_out_tasks(config)
    x, y, xq = (
        tests.x[task : task + 1],
        tests.y[task : task + 1],
        tests.xq[task : task + 1, query : query + 1],
    )
    u, phase = tests.u[task], tests.phase[task]
    pred_a, w_a = attention_predict(m, x, y, xq, config.attention)
    pred_o, w_o = nw_sphere(x, y, xq, oracle_h)
    if config.dim == 2:
        coordinate = "angle"
        grid_s = np.linspace(-np.pi, np.pi, 361)
        points = np.stack([np.cos(grid_s), np.sin(grid_s)], axis=-1)  # (G, 2)
        ctx_s = np.arctan2(x[0, :, 1], x[0, :, 0])
        query_s = float(np.arctan2(xq[0, 0, 1], xq[0, 0, 0]))
        grid_f = np.cos(config.lipschitz * points @ u + phase)
    else:
        coordinate = "projection"
        grid_s = np.linspace(-1.0, 1.0, 201)
        ctx_s = x[0] @ u
        query_s = float(xq[0, 0] @ u)
        grid_f = np.cos(config.lipschitz * grid_s + phase)
    return ContextView(
        coordinate=coordinate,
        grid_s=grid_s,
        grid_f=grid_f,
        ctx_s=ctx_s,
        ctx_y=y[0].copy(),
        query_s=query_s,
        query_f=float(tests.fq[task, query]),
        pred_attention=float(pred_a[0, 0]),
        pred_oracle=float(pred_o[0, 0]),
        w_attention=w_a[0, 0].copy(),
        w_oracle=w_o[0, 0].copy(),
    )


def plane_of(matrices: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Key-query matrices restricted to a plane that shows the window's shape around ``b``.

    D = 2: the plane itself (the matrices unchanged, ``b`` as is). D > 2: the plane spanned by b
    and the direction across b in which the *last* matrix's window is widest (so every snapshot
    is drawn in the same plane, with b along the first axis).

    Args:
        matrices: (K, D, D) snapshots; b: (D,).

    Returns:
        (K, 2, 2) matrices Bᵀ M B and b in that basis (2,).
    """
    d = matrices.shape[-1]
    if d == 2:
        return matrices, b
    others = _across(b)  # (D, D - 1) orthonormal directions across b
    _, vec = np.linalg.eigh(others.T @ matrices[-1] @ others)  # ascending: the widest window first
    basis = np.stack([b, others @ vec[:, 0]], axis=1)  # (D, 2)
    return np.einsum("di,kde,ej->kij", basis, matrices, basis), np.array([1.0, 0.0])
