"""The in-context lesson: what the page measures on a run of ``core.in_context``'s attention unit.

``core.in_context`` holds the tasks, the attention unit, its training and the references (the NW
oracle, NW with LOO-CV, the noise floor); this module reads a run the way the page shows it:

- **The window's shape** (:func:`window_of`): the learned key-query matrix M eigen-decomposed,
  its narrowest direction compared with the hidden direction b, M along b and across it, and what
  the score does along each direction (:func:`curvature_kind`: a window, flat, or growing with
  distance); :func:`window_snapshots` draws M's snapshots in one plane around b (:func:`plane_of`).
- **Has the run settled?** (:func:`bandwidth_drift`): how much the learned bandwidth still moves.
- **The paper's trends** (:func:`sweep`): learned vs oracle bandwidth against the Lipschitz
  constant, the noise and the context size, judged pair by pair (:class:`Trend`); and softmax
  against linear attention on one config (:func:`compare_attentions`).
- **One context drawn** (:func:`context_view`): a held-out context along a coordinate, one
  query's weights by the attention and by the oracle.

Shapes: B tasks, N context points, Q queries per task, D input dimension, K snapshots.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.in_context import (
    ATTENTIONS,
    H_CAP,
    ICLConfig,
    ICLRun,
    attention_predict,
    bandwidth_of,
    held_out_tasks,
    nw_sphere,
    oracle_bandwidth,
    train_icl,
)

# --------------------------------------------------------------------------------------------
# Reading a learned M: the window's shape
# --------------------------------------------------------------------------------------------

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


def untrained_matrix(dim: int) -> np.ndarray:
    """The untrained key-query matrix M = I (D, D): bandwidth 1 (where :func:`core.in_context.start_icl`
    starts)."""
    return np.eye(dim)


@dataclass(frozen=True)
class WindowShape:
    """What the ellipse figure needs: (K, 2, 2) matrices in the drawing plane, their steps, b
    in that plane (2,), the cap of an unbounded width, and the final :class:`Window`."""

    matrices: np.ndarray
    steps: tuple[int, ...]
    b: np.ndarray
    cap: float
    window: Window


def window_snapshots(run: ICLRun, count: int) -> WindowShape:
    """About ``count`` snapshots of M over the run (first and last included), in a 2-D plane."""
    last = len(run.matrices) - 1
    steps = tuple(sorted({round(i * last / max(1, count - 1)) for i in range(count)}))
    matrices, b = plane_of(np.array([run.matrices[s] for s in steps]), run.b)
    return WindowShape(matrices=matrices, steps=steps, b=b, cap=2.0, window=window_of(run.m, run.b))


# --------------------------------------------------------------------------------------------
# Has the run settled?
# --------------------------------------------------------------------------------------------

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


def learned_bandwidth(config: ICLConfig) -> float:
    """Train headless and return the bandwidth averaged over the last :data:`SWEEP_TAIL` steps."""
    return tail_bandwidth(train_icl(config).bandwidth)


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


def tail_bandwidth(bandwidth: list[float] | np.ndarray) -> float:
    """A run's learned bandwidth: the geometric mean over its last :data:`SWEEP_TAIL` steps (Adam jitters)."""
    return float(np.exp(np.mean(np.log(bandwidth[-SWEEP_TAIL:]))))


def compare_attentions(config: ICLConfig) -> dict[str, tuple[float, float]]:
    """The same training with softmax and with linear attention, headless.

    Returns:
        {attention: (final test error, :func:`tail_bandwidth`)} for each of ``ATTENTIONS``.
    """
    out = {}
    for attention in ATTENTIONS:
        run = train_icl(config.replace(attention=attention))
        out[attention] = (run.test_error[-1], tail_bandwidth(run.bandwidth))
    return out


# --------------------------------------------------------------------------------------------
# What the page draws: one context
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
