"""The kernel-approximation lesson: random features and linear attention, measured on the page's inputs.

``core.random_features`` (random Fourier features, FAVOR+) and ``core.linear_attention`` (the
linear-time attention for any features, FAVOR+ and elu + 1 attention) hold the math; this module
runs it on the page's inputs and returns what the page shows, as frozen dataclasses of numpy arrays:

* :func:`rff_convergence`: the kernel and fit error of random Fourier features against m on the
  post's data, medians over seeds, with the c/√m reference;
* :func:`approximate_attention`, :func:`compare_features`: the approximate (L, S) attention map
  beside the exact one, and the error and denominator statistics of each feature kind against m;
* :func:`causal_check`: the causal prefix-sum form against the masked quadratic form;
* :func:`dissection_weights`, :func:`polynomial_match`: attention with other kernels, as in Tsai
  et al., "Transformer Dissection" (EMNLP 2019): exponential (softmax), RBF and polynomial;
* the cost: :func:`measure_cost` (time and peak memory of one attention call at length L, with
  ``core.timing``) and :class:`CostRun` (a whole measurement against L and its crossovers).

The exact reference is :func:`core.attention.scaled_dot_product_attention`.

Shapes (legend in ``core/__init__.py``): query (..., L, D), key (..., S, D), value (..., S, Dv),
features (..., L, m) and (..., S, m), output (..., L, Dv), weights (..., L, S) (rows = queries).
In the 1-D regression part: x_train, y_train (N,), x_query (Q,). Every statistic over seeds and m
uses an independent draw at every (seed, m) (``core.random_features.draw_seed``).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from core import checks
from core.attention import random_qkv, scaled_dot_product_attention
from core.data import X_HIGH, X_LOW
from core.linear_attention import (
    check_qkv,
    check_tensor,
    elu_features,
    kernel_attention,
    linear_attention,
    quadratic_kernel_attention,
)
from core.nadaraya_watson import nw_predict
from core.random_features import (
    FEATURE_KINDS,
    check_regression,
    draw_directions,
    favor_features,
    feature_sums,
    fourier_features,
    gaussian_kernel_matrix,
    resolve_scale,
    softmax_features,
)
from core.timing import best_of, crossover_length, peak_torch_memory

#: Kernels of the Transformer Dissection section.
DISSECTION_KERNELS = ("exponential", "rbf", "polynomial")

#: Training points the kernel error of :func:`rff_convergence` is checked against (a subset).
KERNEL_ERROR_SAMPLES = 50

#: A trigonometric denominator below this fraction of the exact one counts as "near zero".
NEAR_ZERO_FRACTION = 0.1

#: Two median errors within this relative distance count as "about the same" (FeatureComparison.versus).
SAME_RTOL = 0.1


# ----------------------------------------------------------------------------------------------
# random Fourier features against m, on the post's data
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RffConvergence:
    """How the random-feature approximation improves with m: medians over seeds.

    Every statistic over seeds is a median (a draw whose denominator nears zero can make a single
    fit arbitrarily bad, and a mean would follow it); each (seed, m) is an independent draw.

    Attributes:
        m: (M,) feature counts.
        kernel_rms: (M,) RMS error of the (Q, N) kernel matrix estimate, median over seeds.
        fit_rms: (M,) RMS error of the Nadaraya-Watson fit against the exact fit, median over
            seeds; ``fit_rms_draws[:, 0]`` is the draw ``rff_nw_predict(..., m, seed)`` shows.
        fit_rms_draws: (M, n_seeds) that RMS error for each seed (seed, seed + 1, ...).
        reference: (M,) the c/√m line through the last kernel_rms point.
        slope: least-squares slope of log kernel_rms on log m (about -1/2).
    """

    m: np.ndarray
    kernel_rms: np.ndarray
    fit_rms: np.ndarray
    fit_rms_draws: np.ndarray
    reference: np.ndarray
    slope: float


def rff_draw(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    bandwidth: float,
    m_values: tuple[int, ...],
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """One seed of :func:`rff_convergence`: the kernel and fit RMS errors (M,), (M,) of an
    independent draw of features at every m of ``m_values`` (seeded by (seed, m)).

    A page that moves its seed by one reuses the other seeds' draws (each is cached on its own).

    Raises:
        ValueError: on bad inputs (see :func:`rff_nw_predict`) or an empty m_values.
    """
    xt, yt, xq = check_regression(x_train, y_train, x_query)
    if len(m_values) == 0:
        raise ValueError("m_values is empty")
    exact_fit = nw_predict(xt, yt, xq, "gaussian", float(bandwidth))  # (Q,)
    step = max(1, xt.size // KERNEL_ERROR_SAMPLES)  # a subset (N',) of xt keeps the kernel check cheap
    exact_k = gaussian_kernel_matrix(xq, xt[::step], bandwidth)  # (Q, N')
    x_all, q = np.concatenate([xq, xt]), xq.size  # (Q + N,): one feature call per m
    kernel_rms, fit_rms = [], []
    for m in m_values:
        z = fourier_features(m, bandwidth, seed)(x_all)  # (Q + N, m)
        zq, zt = z[:q], z[q:]  # (Q, m), (N, m); the subset's features are rows of zt
        # the (Q, m) x (m, N') product in torch: its one thread in the app; numpy's BLAS threads
        # spin against each other on a busy machine
        k_hat = (torch.from_numpy(zq) @ torch.from_numpy(zt[::step]).T).numpy()  # (Q, N')
        k_hat -= exact_k
        kernel_rms.append(np.sqrt(np.mean(k_hat * k_hat)))
        numerator, denominator = feature_sums(zq, zt, yt)  # (Q,) each, no (Q, N) matrix
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = numerator / denominator
        fit_rms.append(np.sqrt(np.mean((fit - exact_fit) ** 2)))
    return np.asarray(kernel_rms), np.asarray(fit_rms)


def rff_convergence_of(
    m_values: tuple[int, ...], draws: list[tuple[np.ndarray, np.ndarray]]
) -> RffConvergence:
    """:class:`RffConvergence` from the :func:`rff_draw` results of consecutive seeds (medians)."""
    m_arr = np.asarray(m_values, dtype=float)
    k_arr = np.median(np.stack([k for k, _ in draws], axis=1), axis=1)  # (M,)
    fit_draws = np.stack([f for _, f in draws], axis=1)  # (M, n_seeds)
    slope = float(np.polyfit(np.log(m_arr), np.log(k_arr), 1)[0])
    return RffConvergence(
        m=m_arr,
        kernel_rms=k_arr,
        fit_rms=np.median(fit_draws, axis=1),
        fit_rms_draws=fit_draws,
        reference=k_arr[-1] * np.sqrt(m_arr[-1] / m_arr),
        slope=slope,
    )


def rff_convergence(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    bandwidth: float,
    m_values: tuple[int, ...] = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048),
    n_seeds: int = 8,
    seed: int = 0,
) -> RffConvergence:
    """Kernel and fit error of random Fourier features against m (seeds seed .. seed+n_seeds-1),
    medians over the seeds, an independent draw at every (seed, m) (:func:`rff_draw` per seed).

    Raises:
        ValueError: on bad inputs (see :func:`rff_nw_predict`), an empty m_values or n_seeds < 1.
    """
    n_seeds = checks.int_in("n_seeds", n_seeds, 1, 1000)
    draws = [rff_draw(x_train, y_train, x_query, bandwidth, m_values, seed + s) for s in range(n_seeds)]
    return rff_convergence_of(m_values, draws)


# ----------------------------------------------------------------------------------------------
# what the page shows about the approximation of attention
# ----------------------------------------------------------------------------------------------


def _as_tensor(name: str, x: object) -> torch.Tensor:
    """A numpy array (or a tensor) as a tensor; the page-level functions accept both."""
    if isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.floating):
            raise ValueError(f"{name} must be a floating-point array, got {x.dtype}")
        return torch.from_numpy(np.ascontiguousarray(x))
    return x  # type: ignore[return-value]


@dataclass(frozen=True)
class AttentionApproximation:
    """Exact and approximate attention weights for one draw of features (small L, for display).

    Attributes:
        exact: (L, S) softmax weights (``core.attention.scaled_dot_product_attention``).
        approx: (L, S) φ(q)·φ(k) normalised per row.
        relative_error: ‖approx - exact‖_F / ‖exact‖_F.
        output_error: ‖out_approx - out_exact‖_F / ‖out_exact‖_F.
        min_denominator_ratio: smallest estimated / exact denominator over the queries.
    """

    exact: np.ndarray
    approx: np.ndarray
    relative_error: float
    output_error: float
    min_denominator_ratio: float


def _exact_denominators(q: torch.Tensor, k: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.exp(scale * (q @ k.transpose(-2, -1))).sum(dim=-1)  # (..., L)


def approximate_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    m: int,
    kind: str = "positive_orthogonal",
    seed: int = 0,
    scale: float | None = None,
) -> AttentionApproximation:
    """The approximate (L, S) attention matrix beside the exact one, with their errors.

    Args:
        query: (L, D); key: (S, D); value: (S, Dv) (float64 recommended).

    Raises:
        ValueError: on bad shapes, kind, m, seed or scale.
    """
    query, key, value = check_qkv(
        _as_tensor("query", query), _as_tensor("key", key), _as_tensor("value", value)
    )
    s = resolve_scale(scale, query.shape[-1])
    exact_out, exact_w = scaled_dot_product_attention(query, key, value, scale=s)
    phi_q, phi_k = favor_features(query, key, m, kind, seed, s, stabilise=False)
    approx_out, approx_w = quadratic_kernel_attention(phi_q, phi_k, value)
    den = (phi_q * phi_k.sum(dim=-2)).sum(dim=-1)  # (L,)
    ratio = den / _exact_denominators(query, key, s)
    return AttentionApproximation(
        exact=exact_w.numpy(),
        approx=approx_w.numpy(),
        relative_error=float((approx_w - exact_w).norm() / exact_w.norm()),
        output_error=float((approx_out - exact_out).norm() / exact_out.norm()),
        min_denominator_ratio=float(ratio.min()),
    )


@dataclass(frozen=True)
class FeatureComparison:
    """Relative error of the attention matrix against m, per feature kind (medians over seeds).

    Each (seed, m) is an independent draw of directions (:func:`draw_seed`), and every statistic
    over seeds is a median: the per-draw errors are heavy-tailed (one draw can be 100x the
    others), so a mean over a dozen draws would follow whichever draw is worst.

    Attributes:
        m: (M,) feature counts.
        kinds: the feature kinds, in order.
        error: (K, M) median over seeds of ‖approx - exact‖_F / ‖exact‖_F of the weights.
        kernel_mse: (K, M) median over seeds of the mean squared error of the unnormalised kernel
            estimate φ(q)·φ(k) against exp(scale q·k), relative to the mean squared kernel.
        negative_share: (K, M) share of (query, seed) pairs whose estimated denominator is <= 0.
        near_zero_share: (K, M) share whose estimated denominator is below
            ``NEAR_ZERO_FRACTION`` x the exact one (negatives included).
    """

    m: np.ndarray
    kinds: tuple[str, ...]
    error: np.ndarray
    kernel_mse: np.ndarray
    negative_share: np.ndarray
    near_zero_share: np.ndarray

    @property
    def sqrt_m_reference(self) -> np.ndarray:
        """(M,) the Monte-Carlo rate 1/√m through the first kind's error at the largest m."""
        return self.error[0, -1] * np.sqrt(self.m[-1] / self.m)

    def versus(self, kind: str, others: tuple[str, ...], rtol: float = SAME_RTOL) -> tuple[str, ...]:
        """At each m, ``kind``'s error against the best (smallest) error of ``others``.

        Returns:
            (M,) ``"worse"`` (above the best by more than ``rtol``), ``"better"`` (below it by
            more than ``rtol``) or ``"same"``.

        Raises:
            ValueError: on a kind this comparison does not hold.
        """
        for name in (kind, *others):
            if name not in self.kinds:
                raise ValueError(f"kind {name!r} not in this comparison ({', '.join(self.kinds)})")
        mine = self.error[self.kinds.index(kind)]  # (M,)
        best = self.error[[self.kinds.index(o) for o in others]].min(axis=0)  # (M,)
        return tuple(
            "worse" if a > best_m * (1 + rtol) else "better" if a < best_m / (1 + rtol) else "same"
            for a, best_m in zip(mine, best, strict=True)
        )

    def ratio(self, kind: str, others: tuple[str, ...]) -> np.ndarray:
        """(M,) ``kind``'s error divided by the best error of ``others`` at each m."""
        best = self.error[[self.kinds.index(o) for o in others]].min(axis=0)
        return self.error[self.kinds.index(kind)] / best


@functools.lru_cache(maxsize=32)  # one comparison's kinds x m values; ~10 MB at m <= 512, D <= 32
def _stacked_directions(
    kind: str, m: int, d: int, seeds: tuple[int, ...], dtype: torch.dtype
) -> torch.Tensor:
    """(B, r, D) directions of ``seeds`` for :func:`compare_features`, drawn once per process (a
    new L, σ or input seed reuses them; QR draws were ~half its time). Shared: never written to."""
    return torch.stack([draw_directions(kind, m, d, i, dtype=dtype) for i in seeds])


#: compare_features draws this many kernel entries (seeds x L x S) at most per batched product.
_COMPARE_BATCH_ENTRIES = 1 << 22


def compare_features(
    query: torch.Tensor,
    key: torch.Tensor,
    m_values: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256, 512),
    kinds: tuple[str, ...] = FEATURE_KINDS,
    n_seeds: int = 16,
    seed: int = 0,
    scale: float | None = None,
) -> FeatureComparison:
    """Error and denominator statistics of each feature kind against m (seeds seed, seed+1, ...).

    Args:
        query: (L, D); key: (S, D) (float64 recommended).
        m_values: even feature counts (trigonometric features need pairs).

    Raises:
        ValueError: on bad shapes, kinds, m values, n_seeds, seed or scale.
    """
    query = check_tensor("query", _as_tensor("query", query))
    key = check_tensor("key", _as_tensor("key", key))
    if len(m_values) == 0:
        raise ValueError("m_values is empty")
    n_seeds = checks.int_in("n_seeds", n_seeds, 1, 1000)
    s = resolve_scale(scale, query.shape[-1])
    exact_k = torch.exp(s * (query @ key.transpose(-2, -1)))  # (L, S)
    exact_w = exact_k / exact_k.sum(-1, keepdim=True)
    exact_den = exact_k.sum(-1)
    exact_w_norm, exact_k_ms = exact_w.norm(), (exact_k**2).mean()
    root = math.sqrt(s)
    xq, xk = query * root, key * root
    # Seeds in batches of at most ~4M kernel entries: one batched product instead of a loop per seed.
    batch = max(1, min(n_seeds, _COMPARE_BATCH_ENTRIES // (query.shape[-2] * key.shape[-2])))
    shape = (len(kinds), len(m_values))
    err, mse, neg, near = (np.zeros(shape) for _ in range(4))
    for a, kind in enumerate(kinds):
        for b, m in enumerate(m_values):
            e, k_mse, n_neg, n_near = [], [], 0, 0
            for first in range(0, n_seeds, batch):
                seeds = range(seed + first, seed + min(n_seeds, first + batch))
                w = _stacked_directions(kind, m, query.shape[-1], tuple(seeds), query.dtype)  # (B, r, D)
                phi_q, phi_k = softmax_features(xq, w, kind), softmax_features(xk, w, kind)  # (B, L|S, m)
                k_hat = phi_q @ phi_k.transpose(-2, -1)  # (B, L, S)
                den = k_hat.sum(-1)  # (B, L)
                e.append((k_hat / den.unsqueeze(-1) - exact_w).flatten(1).norm(dim=1) / exact_w_norm)
                k_mse.append(((k_hat - exact_k) ** 2).flatten(1).mean(dim=1) / exact_k_ms)
                n_neg += int((den <= 0).sum())
                n_near += int((den < NEAR_ZERO_FRACTION * exact_den).sum())
            err[a, b] = np.median(torch.cat(e).numpy())
            mse[a, b] = np.median(torch.cat(k_mse).numpy())
            neg[a, b] = n_neg / (n_seeds * query.shape[-2])
            near[a, b] = n_near / (n_seeds * query.shape[-2])
    return FeatureComparison(
        m=np.asarray(m_values, dtype=float),
        kinds=tuple(kinds),
        error=err,
        kernel_mse=mse,
        negative_share=neg,
        near_zero_share=near,
    )


@dataclass(frozen=True)
class CausalCheck:
    """The causal prefix-sum form against the masked quadratic form of the same features.

    Attributes:
        prefix: (L, Dv) output of the prefix-sum (linear-time) form.
        masked: (L, Dv) output of the masked (L, L) form.
        difference: (L, Dv) prefix - masked.
        max_abs_diff: largest |difference|.
        exact_error: ‖prefix - causal softmax‖_F / ‖causal softmax‖_F (the approximation error).
    """

    prefix: np.ndarray
    masked: np.ndarray
    difference: np.ndarray
    max_abs_diff: float
    exact_error: float


def causal_check(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    m: int,
    kind: str = "positive_orthogonal",
    seed: int = 0,
    feature_map: str = "favor",
) -> CausalCheck:
    """Compare the causal prefix-sum form with the masked quadratic form (``favor`` or ``elu``).

    Args:
        query, key: (L, D); value: (L, Dv).

    Raises:
        ValueError: on bad shapes, kind, m, seed or an unknown feature_map.
    """
    query, key, value = check_qkv(
        _as_tensor("query", query), _as_tensor("key", key), _as_tensor("value", value)
    )
    if feature_map == "favor":
        phi_q, phi_k = favor_features(query, key, m, kind, seed)
    elif feature_map == "elu":
        phi_q, phi_k = elu_features(query), elu_features(key)
    else:
        raise ValueError(f"unknown feature_map {feature_map!r}; known: favor, elu")
    prefix = kernel_attention(phi_q, phi_k, value, causal=True).output
    masked, _ = quadratic_kernel_attention(phi_q, phi_k, value, causal=True)
    L = query.shape[-2]
    exact, _ = scaled_dot_product_attention(query, key, value, mask=torch.ones(L, L, dtype=torch.bool).tril())
    diff = prefix - masked
    return CausalCheck(
        prefix=prefix.numpy(),
        masked=masked.numpy(),
        difference=diff.numpy(),
        max_abs_diff=float(diff.abs().max()),
        exact_error=float((prefix - exact).norm() / exact.norm()),
    )


def dissection_weights(
    query: torch.Tensor, key: torch.Tensor, kernel: str, scale: float | None = None
) -> np.ndarray:
    """Attention weights with another kernel in the softmax's place (Tsai et al. 2019).

    K(q, k), each row normalised to sum 1, with s = scale (default 1/√D):
    exponential exp(s q·k) (= softmax attention), rbf exp(-s |q - k|² / 2), polynomial
    (1 + s q·k)² (degree 2, non-negative).

    Args:
        query: (L, D); key: (S, D).

    Returns:
        (L, S) weights, rows = queries.

    Raises:
        ValueError: on an unknown kernel or mismatched shapes.
    """
    query = check_tensor("query", _as_tensor("query", query))
    key = check_tensor("key", _as_tensor("key", key))
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share D, got {query.shape[-1]} and {key.shape[-1]}")
    s = resolve_scale(scale, query.shape[-1])
    dots = query @ key.transpose(-2, -1)  # (L, S)
    if kernel == "exponential":
        k = torch.softmax(s * dots, dim=-1)
        return k.numpy()
    if kernel == "rbf":
        sq = torch.cdist(query, key) ** 2
        logits = -0.5 * s * sq
        return torch.softmax(logits, dim=-1).numpy()
    if kernel == "polynomial":
        k = (1.0 + s * dots) ** 2
        return (k / k.sum(-1, keepdim=True)).numpy()
    raise ValueError(f"unknown kernel {kernel!r}; known: {', '.join(DISSECTION_KERNELS)}")


#: The relative gap within which the polynomial kernel (1 + s)² counts as matching exp(2s).
POLYNOMIAL_RTOL = 0.05


@dataclass(frozen=True)
class PolynomialMatch:
    """Where the degree-2 polynomial kernel (1 + s)² tracks an exponential, on the scores shown.

    (1 + s)² = 1 + 2s + s² and exp(2s) = 1 + 2s + 2s² + ...: the two agree to first order, so for
    small scores the polynomial kernel behaves like the exponential of **twice** the score (a
    softmax at half the temperature), not like exp(s) (which it leaves at once: 1 + s ≠ 1 + 2s).

    Attributes:
        rtol: the relative gap allowed.
        radius: the largest r with |(1 + s)² / exp(2s) - 1| <= rtol for every |s| <= r.
        share: fraction of the (L, S) scores s = scale·q·k with |s| <= radius.
        lowest, highest: the smallest and largest score.
    """

    rtol: float
    radius: float
    share: float
    lowest: float
    highest: float


def polynomial_gap(s: np.ndarray | float) -> np.ndarray:
    """|(1 + s)² / exp(2s) - 1|: the relative gap of the polynomial kernel to exp(2s), elementwise."""
    s = np.asarray(s, dtype=np.float64)
    return np.abs((1.0 + s) ** 2 * np.exp(-2.0 * s) - 1.0)


def _gap_edge(rtol: float, direction: float) -> float:
    """Bisection for the |s| where the gap first reaches rtol, walking from 0 in ``direction`` (±1).

    The gap grows monotonically away from 0 on (-1, 0] and on [0, ∞): the ratio (1 + s)²e^{-2s}
    has derivative -2s(1 + s)e^{-2s}, so it peaks at 1 at s = 0.
    """
    lo, hi = 0.0, 1.0  # the gap is 1 at s = -1 and > 0.5 at s = 1: the edge lies in (0, 1)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if polynomial_gap(direction * mid) <= rtol else (lo, mid)
    return lo


def polynomial_match(
    query: torch.Tensor, key: torch.Tensor, rtol: float = POLYNOMIAL_RTOL, scale: float | None = None
) -> PolynomialMatch:
    """The range of scores where (1 + s)² stays within ``rtol`` of exp(2s), and how many of the
    scores s = scale·q·k (default scale 1/√D) of these inputs lie in it.

    Args:
        query: (L, D); key: (S, D).

    Raises:
        ValueError: on mismatched shapes or rtol not in (0, 0.5).
    """
    query = check_tensor("query", _as_tensor("query", query))
    key = check_tensor("key", _as_tensor("key", key))
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share D, got {query.shape[-1]} and {key.shape[-1]}")
    rtol = checks.positive("rtol", rtol)
    if rtol >= 0.5:
        raise ValueError(f"rtol must be below 0.5, got {rtol}")
    scores = (resolve_scale(scale, query.shape[-1]) * (query @ key.transpose(-2, -1))).numpy()  # (L, S)
    radius = min(_gap_edge(rtol, 1.0), _gap_edge(rtol, -1.0))
    return PolynomialMatch(
        rtol=rtol,
        radius=radius,
        share=float(np.mean(np.abs(scores) <= radius)),
        lowest=float(scores.min()),
        highest=float(scores.max()),
    )


# ----------------------------------------------------------------------------------------------
# cost: time and peak memory against L, measured
# ----------------------------------------------------------------------------------------------


#: Methods of the cost measurement.
COST_METHODS = ("exact", "favor", "linear")


def cost_inputs(
    L: int, d: int, seed: int = 0, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, ...]:
    """Random (1, L, D) query, key and value (N(0, 1), seeded) for the cost measurement."""
    L = checks.int_in("L", L, 1, 1 << 20)
    d = checks.int_in("d", d, 1, 4096)
    gen = torch.Generator().manual_seed(checks.seed(seed))
    return tuple(torch.randn(1, L, d, generator=gen).to(dtype) for _ in range(3))


def cost_function(
    method: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: int
) -> Callable[[], object]:
    """A no-argument call of ``method`` (``exact``, ``favor`` or ``linear``) on fixed inputs.

    FAVOR+ draws its directions once outside the call (a model keeps them fixed between steps).

    Raises:
        ValueError: on an unknown method.
    """
    if method == "exact":
        return lambda: scaled_dot_product_attention(q, k, v)
    if method == "favor":
        d = q.shape[-1]
        w = draw_directions("positive_orthogonal", m, d, 0, dtype=q.dtype)
        root = d**-0.25

        def run() -> torch.Tensor:
            phi_q = softmax_features(q * root, w, "positive_orthogonal", stabilise=True)
            phi_k = softmax_features(k * root, w, "positive_orthogonal", stabilise=True)
            return kernel_attention(phi_q, phi_k, v).output

        return run
    if method == "linear":
        return lambda: linear_attention(q, k, v).output
    raise ValueError(f"unknown method {method!r}; known: {', '.join(COST_METHODS)}")


def torch_version() -> str:
    """The version of torch that runs the measurements."""
    return torch.__version__


@dataclass(frozen=True)
class AttentionInputs:
    """Random self-attention inputs as float64 numpy: q, k (L, D) with N(0, σ²) entries, v (L, Dv);
    ``sigma`` is that σ."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    sigma: float


def attention_inputs(length: int, d_k: int, sigma: float, seed: int = 0, d_v: int = 4) -> AttentionInputs:
    """Seeded random Q, K (entries N(0, σ²)) and V (N(0, 1)) from ``core.attention.random_qkv``.

    A larger σ makes the scores larger and the softmax kernel harder to approximate (the variance
    of positive random features grows like exp(|q + k|²)).

    Raises:
        ValueError: on out-of-range sizes or σ not finite and > 0.
    """
    sigma = checks.positive("sigma", sigma)
    q, k, v = random_qkv(length, d_k, d_v, seed)
    return AttentionInputs(q=(q * sigma).numpy(), k=(k * sigma).numpy(), v=v.numpy(), sigma=sigma)


@dataclass(frozen=True)
class CostPoint:
    """One measurement: method, length L, best-of-n seconds and peak bytes."""

    method: str
    L: int
    seconds: float
    peak_bytes: int


def measure_cost(method: str, L: int, d: int, m: int, repeat: int = 3) -> CostPoint:
    """Best-of-``repeat`` wall time and peak tensor memory of one attention call at length L.

    Raises:
        ValueError: on an unknown method or bad sizes.
    """
    q, k, v = cost_inputs(L, d)
    fn = cost_function(method, q, k, v, m)
    repeat = checks.int_in("repeat", repeat, 1, 100)
    with torch.no_grad():
        best, _ = best_of(fn, repeat)
        peak = peak_torch_memory(fn)
    return CostPoint(method=method, L=int(L), seconds=best, peak_bytes=peak)


@dataclass(frozen=True)
class CostRun:
    """One measurement of time and peak memory against L (:func:`measure_costs`).

    Attributes:
        points: every measured point, in order.
        d, m: the key dimension and the number of FAVOR+ features.
        max_length: the largest L asked for.
        stopped: method -> L at which it stopped because a call exceeded the per-point budget
            (or the total budget ran out), absent when it reached max_length.
        seconds: total wall time of the run.
        torch_version: the torch that ran it.
    """

    points: tuple[CostPoint, ...]
    d: int
    m: int
    max_length: int
    stopped: dict[str, int]
    seconds: float
    torch_version: str

    def series(self, method: str, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(lengths, values) of one method, (P,) each; field is ``seconds`` or ``peak_bytes``."""
        pts = [p for p in self.points if p.method == method]
        return np.array([p.L for p in pts], dtype=float), np.array(
            [getattr(p, field) for p in pts], dtype=float
        )

    def crossover(self, method: str, field: str) -> float | None:
        """L where ``method`` becomes cheaper than the exact attention (None: not within the run)."""
        le, ve = self.series("exact", field)
        la, va = self.series(method, field)
        common = np.intersect1d(le, la)
        if common.size == 0:
            return None
        e = np.array([ve[le == x][0] for x in common])
        a = np.array([va[la == x][0] for x in common])
        return crossover_length(common, e, a)


def measure_costs(
    lengths: tuple[int, ...],
    d: int,
    m: int,
    *,
    max_length: int,
    point_budget_s: float,
    total_budget_s: float,
    on_progress: Callable[[float, str], None] | None = None,
    repeat: int = 2,
) -> CostRun:
    """Measure every method of ``COST_METHODS`` at each length of ``lengths``, in order, in budget.

    A method stops growing L once one call takes more than ``point_budget_s``; every method
    stops once the whole run has taken ``total_budget_s``. ``on_progress(fraction, method)`` is
    called before each point (a progress bar).

    Args:
        lengths: increasing lengths L to measure.
        d, m: key dimension and FAVOR+ features (:func:`measure_cost`).
        max_length: the largest L asked for (recorded in the result).
        point_budget_s, total_budget_s: the budgets, in wall seconds.
        repeat: calls per point (best of).

    Raises:
        ValueError: on bad sizes (from :func:`measure_cost`).
    """
    start = time.perf_counter()
    points: list[CostPoint] = []
    stopped: dict[str, int] = {}
    total = len(lengths) * len(COST_METHODS)
    done = 0
    for L in lengths:
        for method in COST_METHODS:
            done += 1
            if method in stopped:
                continue
            if time.perf_counter() - start > total_budget_s:
                stopped[method] = L
                continue
            if on_progress is not None:
                on_progress(done / total, method)
            point = measure_cost(method, L, d, m, repeat=repeat)
            points.append(point)
            if point.seconds > point_budget_s:
                stopped[method] = L
    return CostRun(
        points=tuple(points),
        d=int(d),
        m=int(m),
        max_length=int(max_length),
        stopped=stopped,
        seconds=time.perf_counter() - start,
        torch_version=torch_version(),
    )


# ----------------------------------------------------------------------------------------------
# the page's grids and sentences
# ----------------------------------------------------------------------------------------------


def regression_grid(n_points: int) -> np.ndarray:
    """(Q,) = ``n_points`` evenly spaced query points over the post's data range [-3, 3]."""
    return np.linspace(X_LOW, X_HIGH, checks.int_in("n_points", n_points, 2, 100_000))


def outcome_runs(m: np.ndarray, outcomes: tuple[str, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """Consecutive m with the same outcome of ``FeatureComparison.versus``, in order of m:
    [(outcome, (m, ...)), ...]."""
    runs: list[tuple[str, list[int]]] = []
    for value, outcome in zip(m, outcomes, strict=True):
        if runs and runs[-1][0] == outcome:
            runs[-1][1].append(int(value))
        else:
            runs.append((outcome, [int(value)]))
    return [(outcome, tuple(ms)) for outcome, ms in runs]


@dataclass(frozen=True)
class OutcomeRun:
    """Consecutive feature counts where one kind compares the same way with others, for a sentence.

    outcome: ``worse``, ``same`` or ``better``; m_range: ``"2–64"`` or ``"128"``; ratio: the
    error ratios over the run, ``"×1.35–2.58"`` or ``"×0.93"``.
    """

    outcome: str
    m_range: str
    ratio: str


def comparison_runs(cmp: FeatureComparison, kind: str, others: tuple[str, ...]) -> list[OutcomeRun]:
    """``kind`` against the best of ``others`` along m (``FeatureComparison.versus`` and ``ratio``),
    as runs of consecutive m with the same outcome."""
    ratio = cmp.ratio(kind, others)  # (M,)
    position = {int(m): i for i, m in enumerate(cmp.m)}
    out = []
    for outcome, ms in outcome_runs(cmp.m, cmp.versus(kind, others)):
        r = ratio[[position[m] for m in ms]]
        lo, hi = f"{r.min():.2f}", f"{r.max():.2f}"
        span = str(ms[0]) if len(ms) == 1 else f"{ms[0]}–{ms[-1]}"
        out.append(OutcomeRun(outcome, span, f"×{lo}" if lo == hi else f"×{lo}–{hi}"))
    return out
