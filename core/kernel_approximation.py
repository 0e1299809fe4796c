"""Attention as a kernel you can approximate: random features and linear attention.

If attention is Nadaraya-Watson regression with the kernel ``exp(q·k / √D)``, every trick for
kernels applies to it. The best known: write the kernel as an inner product of (random) feature
maps, ``K(q, k) ≈ φ(q)ᵀ φ(k)``; then

    out_i = Σ_j K(q_i, k_j) v_j / Σ_j K(q_i, k_j) ≈ φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j))

and the two sums are computed once for all queries: time and memory linear in the length, no
(L, S) matrix. This module holds:

* **Random Fourier features** for the Gaussian kernel (Rahimi & Recht, NeurIPS 2007):
  ``z(x) = √(2/m) cos(xw + b)``, ``w ~ N(0, 1/h²)``, ``b ~ U[0, 2π)``, so that
  ``E[z(x)·z(y)] = exp(-(x - y)² / (2h²))``; and Nadaraya-Watson regression whose numerator and
  denominator both use them (:func:`rff_nw_predict`).
* **FAVOR+** for the softmax kernel ``SM(x, y) = exp(x·y)`` (Choromanski et al., "Rethinking
  Attention with Performers", ICLR 2021): positive random features
  ``φ(x) = exp(Wx - |x|²/2) / √m`` with Gaussian rows of W, drawn iid or in orthogonal blocks
  (rows of each d x d block orthogonal, lengths redrawn from the χ_d law so each row is still
  marginally N(0, I)); and, for contrast, the trigonometric features
  ``exp(|x|²/2) [sin(Wx), cos(Wx)] / √(m/2)``, unbiased too but of either sign, so the
  denominator can come out near zero or negative.
* **Linear attention** with the feature map ``elu(x) + 1`` (Katharopoulos et al., "Transformers
  are RNNs", ICML 2020): a deterministic feature map, not an approximation of softmax.
* :func:`kernel_attention`: the linear-time attention for any features, non-causal and causal
  (prefix sums: the "RNN" form), beside :func:`quadratic_kernel_attention`, the same thing with
  the (L, S) matrix formed, for display and for tests.
* :func:`dissection_weights`: attention with other kernels, as in Tsai et al., "Transformer
  Dissection" (EMNLP 2019): exponential (softmax), RBF and polynomial.

The exact reference is :func:`core.attention.scaled_dot_product_attention`.

Shapes (legend in ``core/__init__.py``): query (..., L, D), key (..., S, D), value (..., S, Dv),
features (..., L, m) and (..., S, m), output (..., L, Dv), weights (..., L, S) (rows = queries).
In the 1-D regression part: x_train, y_train (N,), x_query (Q,), features (N, m) / (Q, m).
Every random draw takes a ``seed``; the same seed gives the same features. A draw of m features
depends on the pair (seed, m) (:func:`draw_seed`): m features are not the first m of a larger draw,
so statistics over seeds and m (:func:`rff_convergence`, :func:`compare_features`) use independent
draws at every point and their medians are honest.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from core import checks
from core.attention import random_qkv, scaled_dot_product_attention
from core.nadaraya_watson import nw_predict

#: Kinds of random features for the softmax kernel, in the order the page shows them.
FEATURE_KINDS = ("positive_orthogonal", "positive_iid", "trigonometric")
#: Kernels of the Transformer Dissection section.
DISSECTION_KERNELS = ("exponential", "rbf", "polynomial")
#: Largest number of random features any function here accepts.
MAX_FEATURES = 65_536
#: Training points the kernel error of :func:`rff_convergence` is checked against (a subset).
KERNEL_ERROR_SAMPLES = 50
#: A trigonometric denominator below this fraction of the exact one counts as "near zero".
NEAR_ZERO_FRACTION = 0.1
#: Two median errors within this relative distance count as "about the same" (FeatureComparison.versus).
SAME_RTOL = 0.1


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------


def draw_seed(seed: int, m: int) -> int:
    """The generator seed of the draw of ``m`` features for ``seed`` (a 63-bit integer).

    Derived from the pair through :class:`numpy.random.SeedSequence`, so draws of different m
    (or seeds) are independent instead of sharing their leading rows.

    Raises:
        ValueError: on a negative seed or m < 1.
    """
    pair = [checks.seed(seed), checks.int_in("m", m, 1, MAX_FEATURES)]
    return int(np.random.SeedSequence(pair).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def _check_kind(kind: object) -> str:
    if not isinstance(kind, str) or kind not in FEATURE_KINDS:
        raise ValueError(f"unknown feature kind {kind!r}; known: {', '.join(FEATURE_KINDS)}")
    return kind


def _check_tensor(name: str, x: object, min_dim: int = 2) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions, got shape {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains NaN or inf")
    return x


def _as_tensor(name: str, x: object) -> torch.Tensor:
    """A numpy array (or a tensor) as a tensor; the page-level functions accept both."""
    if isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.floating):
            raise ValueError(f"{name} must be a floating-point array, got {x.dtype}")
        return torch.from_numpy(np.ascontiguousarray(x))
    return x  # type: ignore[return-value]


def _check_qkv(q: object, k: object, v: object) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q, k, v = _check_tensor("query", q), _check_tensor("key", k), _check_tensor("value", v)
    if not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"query, key and value must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"query and key must share the last dimension D, got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"key and value must have the same length S, got {k.shape[-2]} and {v.shape[-2]}")
    return q, k, v


# ----------------------------------------------------------------------------------------------
# random Fourier features for the Gaussian kernel (Rahimi & Recht 2007), 1-D regression
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FourierFeatures:
    """m random Fourier features of the Gaussian kernel exp(-(x - y)² / (2h²)) on the real line.

    Attributes:
        w: (m,) frequencies, w ~ N(0, 1/h²).
        b: (m,) phases, b ~ U[0, 2π).
        bandwidth: h.
    """

    w: np.ndarray
    b: np.ndarray
    bandwidth: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """z(x) = √(2/m) cos(x w + b): (N,) -> (N, m)."""
        x = np.asarray(x, dtype=np.float64)
        return math.sqrt(2.0 / self.w.size) * np.cos(np.multiply.outer(x, self.w) + self.b)


def fourier_features(m: int, bandwidth: float, seed: int = 0) -> FourierFeatures:
    """Draw m random Fourier features for the Gaussian kernel of bandwidth h (seeded by the pair
    (seed, m): :func:`draw_seed`).

    ``z(x)·z(y)`` is an unbiased estimate of ``exp(-(x - y)² / (2h²))`` (the kernel is
    ``core.kernels.KERNELS["gaussian"]((x - y)/h)`` up to its constant 1/√(2π)), with variance
    O(1/m).

    Raises:
        ValueError: m not in 1..MAX_FEATURES, h not finite and > 0, or a negative seed.
    """
    m = checks.int_in("m", m, 1, MAX_FEATURES)
    h = checks.positive("bandwidth", bandwidth)
    rng = np.random.default_rng(draw_seed(seed, m))
    w = rng.normal(0.0, 1.0 / h, m)
    b = rng.uniform(0.0, 2.0 * math.pi, m)
    return FourierFeatures(w=w, b=b, bandwidth=h)


def gaussian_kernel_matrix(x: np.ndarray, y: np.ndarray, bandwidth: float) -> np.ndarray:
    """The exact exp(-(x_i - y_j)² / (2h²)): (Q,) x (N,) -> (Q, N)."""
    h = checks.positive("bandwidth", bandwidth)
    d = np.subtract.outer(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return np.exp(-0.5 * (d / h) ** 2)


@dataclass(frozen=True)
class RffFit:
    """Nadaraya-Watson with random Fourier features, beside the exact fit.

    Attributes:
        x_query: (Q,) query points.
        approx: (Q,) numerator / denominator with both estimated from the features.
        exact: (Q,) exact Nadaraya-Watson fit (``core.nadaraya_watson.nw_predict``, Gaussian).
        numerator, denominator: (Q,) the two estimated sums Σ K y_i and Σ K (the denominator can
            be near zero or negative: the features are signed).
        m: number of features.
    """

    x_query: np.ndarray
    approx: np.ndarray
    exact: np.ndarray
    numerator: np.ndarray
    denominator: np.ndarray
    m: int

    @property
    def rms_error(self) -> float:
        """Root-mean-square difference between the approximate and the exact fit."""
        return float(np.sqrt(np.mean((self.approx - self.exact) ** 2)))


def _check_regression(x_train: object, y_train: object, x_query: object) -> tuple[np.ndarray, ...]:
    out = []
    for name, a in (("x_train", x_train), ("y_train", y_train), ("x_query", x_query)):
        try:
            arr = np.asarray(a, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name} must be an array of real numbers") from err
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or inf")
        out.append(arr)
    if out[0].size != out[1].size:
        raise ValueError(
            f"x_train and y_train must have the same length, got {out[0].size} and {out[1].size}"
        )
    return tuple(out)


def rff_nw_predict(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    bandwidth: float,
    m: int,
    seed: int = 0,
) -> RffFit:
    """Gaussian Nadaraya-Watson with m random Fourier features, in O((N + Q) m).

    numerator(x) = z(x)ᵀ (Σ_i z(x_i) y_i),  denominator(x) = z(x)ᵀ (Σ_i z(x_i)):
    (Q, m) x (m,) -> (Q,) each; no (Q, N) matrix is formed.

    Args:
        x_train, y_train: (N,) samples.
        x_query: (Q,) query points.
        bandwidth: h > 0 of the Gaussian kernel.
        m: number of random features, 1..MAX_FEATURES.
        seed: seed of the features.

    Returns:
        An :class:`RffFit` (approximate and exact fits, both sums).

    Raises:
        ValueError: on empty, non-1-D, non-finite or mismatched inputs, a bad h, m or seed.
    """
    xt, yt, xq = _check_regression(x_train, y_train, x_query)
    z = fourier_features(m, bandwidth, seed)
    zt, zq = z(xt), z(xq)  # (N, m), (Q, m)
    numerator = zq @ (zt.T @ yt)  # (Q, m) x (m,) -> (Q,)
    denominator = zq @ zt.sum(axis=0)  # (Q, m) x (m,) -> (Q,)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = numerator / denominator
    exact = nw_predict(xt, yt, xq, "gaussian", float(bandwidth))
    return RffFit(
        x_query=xq, approx=approx, exact=exact, numerator=numerator, denominator=denominator, m=int(m)
    )


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
    medians over the seeds, an independent draw at every (seed, m).

    Raises:
        ValueError: on bad inputs (see :func:`rff_nw_predict`), an empty m_values or n_seeds < 1.
    """
    xt, yt, xq = _check_regression(x_train, y_train, x_query)
    if len(m_values) == 0:
        raise ValueError("m_values is empty")
    n_seeds = checks.int_in("n_seeds", n_seeds, 1, 1000)
    exact_fit = nw_predict(xt, yt, xq, "gaussian", float(bandwidth))  # (Q,)
    xs = xt[:: max(1, xt.size // KERNEL_ERROR_SAMPLES)]  # (N',) a subset keeps the kernel check cheap
    exact_k = gaussian_kernel_matrix(xq, xs, bandwidth)  # (Q, N')
    kernel_rms, fit_rms = [], []  # (M,) medians; fit_rms: (M, n_seeds) before the median
    for m in m_values:
        k_err, f_err = [], []
        for s in range(n_seeds):
            z = fourier_features(m, bandwidth, seed + s)
            zq, zt = z(xq), z(xt)  # (Q, m), (N, m)
            k_err.append(np.sqrt(np.mean((zq @ z(xs).T - exact_k) ** 2)))  # (Q, m) x (m, N') -> (Q, N')
            with np.errstate(divide="ignore", invalid="ignore"):
                fit = (zq @ (zt.T @ yt)) / (zq @ zt.sum(axis=0))  # (Q,), no (Q, N) matrix
            f_err.append(np.sqrt(np.mean((fit - exact_fit) ** 2)))
        kernel_rms.append(np.median(k_err))
        fit_rms.append(f_err)
    m_arr = np.asarray(m_values, dtype=float)
    k_arr = np.asarray(kernel_rms)
    draws = np.asarray(fit_rms)  # (M, n_seeds)
    slope = float(np.polyfit(np.log(m_arr), np.log(k_arr), 1)[0])
    reference = k_arr[-1] * np.sqrt(m_arr[-1] / m_arr)
    return RffConvergence(
        m=m_arr,
        kernel_rms=k_arr,
        fit_rms=np.median(draws, axis=1),
        fit_rms_draws=draws,
        reference=reference,
        slope=slope,
    )


# ----------------------------------------------------------------------------------------------
# FAVOR+: random features for the softmax kernel (Choromanski et al. 2021)
# ----------------------------------------------------------------------------------------------


def gaussian_directions(
    m: int, d: int, *, orthogonal: bool, seed: int = 0, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """(m, D) random directions whose rows are each N(0, I_D).

    iid: independent rows. orthogonal: rows in blocks of D that are exactly orthogonal (Q of a
    QR decomposition of a Gaussian matrix), each row rescaled to the length of an independent
    Gaussian vector, so every row is still marginally N(0, I_D) (the estimator stays unbiased)
    while rows of a block never point the same way (lower variance).

    Raises:
        ValueError: m not in 1..MAX_FEATURES, D not in 1..4096, or a negative seed.
    """
    m = checks.int_in("m", m, 1, MAX_FEATURES)
    d = checks.int_in("d", d, 1, 4096)
    gen = torch.Generator().manual_seed(checks.seed(seed))
    if not orthogonal:
        return torch.randn(m, d, generator=gen, dtype=torch.float64).to(dtype)
    # blocks drawn one by one (the generator's stream), decomposed in one batched QR
    g = torch.stack([torch.randn(d, d, generator=gen, dtype=torch.float64) for _ in range(math.ceil(m / d))])
    q, r = torch.linalg.qr(g)  # (blocks, D, D)
    q = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)  # Haar-distributed orthogonal
    w = q.transpose(-2, -1).reshape(-1, d)[:m]  # rows orthonormal within a block; (m, D)
    norms = torch.randn(m, d, generator=gen, dtype=torch.float64).norm(dim=1, keepdim=True)  # χ_D
    return (w * norms).to(dtype)


def draw_directions(
    kind: str, m: int, d: int, seed: int = 0, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """The directions W a feature kind uses: (m, D), or (m/2, D) for trigonometric (m features).

    The draw is seeded by the pair (seed, m) (:func:`draw_seed`): fresh directions for every m.

    Raises:
        ValueError: on an unknown kind, an odd m for trigonometric features, or bad sizes.
    """
    kind = _check_kind(kind)
    m = checks.int_in("m", m, 1, MAX_FEATURES)
    if kind == "trigonometric":
        if m % 2:
            raise ValueError(f"trigonometric features come in sin/cos pairs: m must be even, got {m}")
        return gaussian_directions(m // 2, d, orthogonal=False, seed=draw_seed(seed, m), dtype=dtype)
    orthogonal = kind == "positive_orthogonal"
    return gaussian_directions(m, d, orthogonal=orthogonal, seed=draw_seed(seed, m), dtype=dtype)


def softmax_features(x: torch.Tensor, w: torch.Tensor, kind: str, *, stabilise: bool = False) -> torch.Tensor:
    """Random features of the softmax kernel exp(x·y): E[φ(x)·φ(y)] = exp(x·y).

    positive_*: φ(x) = exp(Wx - |x|²/2) / √m, m = rows of W (always > 0).
    trigonometric: φ(x) = exp(|x|²/2) [sin(Wx), cos(Wx)] / √(m/2), m = 2 x rows of W.

    Args:
        x: (..., L, D) inputs, already multiplied by √scale (so that scale·q·k = x·y).
        w: (m, D) directions from :func:`draw_directions`, or (B, m, D): B draws at once, with
            x broadcast against them ((L, D) inputs give (B, L, m) features).
        kind: one of ``FEATURE_KINDS``.
        stabilise: subtract each row's largest exponent (positive kinds only). The features are
            then off by a per-row factor, which cancels in attention for queries, not in a kernel.

    Returns:
        (..., L, m) features.

    Raises:
        ValueError: on an unknown kind or mismatched D.
    """
    kind = _check_kind(kind)
    if x.shape[-1] != w.shape[-1]:
        raise ValueError(f"x has D = {x.shape[-1]} but the directions have D = {w.shape[-1]}")
    proj = x @ w.transpose(-2, -1)  # (..., L, D) x (..., D, r) -> (..., L, r)
    half_sq = 0.5 * (x * x).sum(dim=-1, keepdim=True)  # (..., L, 1)
    r = w.shape[-2]
    if kind == "trigonometric":
        return torch.exp(half_sq) * torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1) / math.sqrt(r)
    expo = proj - half_sq
    if stabilise:
        expo = expo - expo.amax(dim=-1, keepdim=True)
    return torch.exp(expo) / math.sqrt(r)


def elu_features(x: torch.Tensor) -> torch.Tensor:
    """Katharopoulos et al.'s feature map φ(x) = elu(x) + 1 (> 0): (..., L, D) -> (..., L, D)."""
    return F.elu(x) + 1.0


@dataclass(frozen=True)
class KernelAttentionResult:
    """Linear-time attention output and its denominators.

    Attributes:
        output: (..., L, Dv).
        denominator: (..., L) φ(q_i)ᵀ Σ_j φ(k_j) (for causal: j <= i).
    """

    output: torch.Tensor
    denominator: torch.Tensor


def kernel_attention(
    phi_q: torch.Tensor, phi_k: torch.Tensor, value: torch.Tensor, *, causal: bool = False
) -> KernelAttentionResult:
    """Attention with kernel φ(q)·φ(k) in O((L + S) m Dv) time, never forming the (L, S) matrix.

    Non-causal: out = φ(Q) (φ(K)ᵀ V) / φ(Q) (φ(K)ᵀ 1).
    Causal (L = S): prefix sums over the keys, s_i = Σ_{j<=i} φ(k_j) v_jᵀ (m, Dv) and
    z_i = Σ_{j<=i} φ(k_j) (m,); out_i = φ(q_i)ᵀ s_i / φ(q_i)ᵀ z_i: the recurrent ("RNN") form.

    Args:
        phi_q: (..., L, m) query features.
        phi_k: (..., S, m) key features.
        value: (..., S, Dv).
        causal: query i sees keys j <= i only (needs L = S).

    Returns:
        :class:`KernelAttentionResult`. A zero denominator gives inf/NaN there (it cannot happen
        with positive features).

    Raises:
        ValueError: on mismatched shapes or dtypes, or causal with L != S.
    """
    phi_q, phi_k, value = _check_qkv(phi_q, phi_k, value)
    if causal:
        if phi_q.shape[-2] != phi_k.shape[-2]:
            raise ValueError(f"causal attention needs L = S, got {phi_q.shape[-2]} and {phi_k.shape[-2]}")
        kv = torch.cumsum(phi_k.unsqueeze(-1) * value.unsqueeze(-2), dim=-3)  # (..., S, m, Dv)
        z = torch.cumsum(phi_k, dim=-2)  # (..., S, m)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)  # (..., L, m, 1) * (..., L, m, Dv) -> (..., L, Dv)
        den = (phi_q * z).sum(dim=-1)  # (..., L)
    else:
        kv = phi_k.transpose(-2, -1) @ value  # (..., m, S) x (..., S, Dv) -> (..., m, Dv)
        num = phi_q @ kv  # (..., L, m) x (..., m, Dv) -> (..., L, Dv)
        den = phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)  # (..., L, m) x (..., m, 1) -> (..., L, 1)
        den = den.squeeze(-1)
    return KernelAttentionResult(output=num / den.unsqueeze(-1), denominator=den)


def quadratic_kernel_attention(
    phi_q: torch.Tensor, phi_k: torch.Tensor, value: torch.Tensor, *, causal: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same attention with the (L, S) matrix formed: returns ``(output, weights)``.

    weights = A / A.sum(-1) with A = φ(Q) φ(K)ᵀ (..., L, S), masked to j <= i when causal;
    output = weights V (..., L, Dv). For display at small L and as the reference in tests.

    Raises:
        ValueError: on mismatched shapes or dtypes, or causal with L != S.
    """
    phi_q, phi_k, value = _check_qkv(phi_q, phi_k, value)
    a = phi_q @ phi_k.transpose(-2, -1)  # (..., L, m) x (..., m, S) -> (..., L, S)
    if causal:
        L, S = a.shape[-2], a.shape[-1]
        if L != S:
            raise ValueError(f"causal attention needs L = S, got {L} and {S}")
        a = a * torch.ones(L, S, dtype=torch.bool).tril()
    weights = a / a.sum(dim=-1, keepdim=True)
    return weights @ value, weights


def _resolve_scale(scale: float | None, d: int) -> float:
    return 1.0 / math.sqrt(d) if scale is None else checks.positive("scale", scale)


def favor_features(
    query: torch.Tensor,
    key: torch.Tensor,
    m: int,
    kind: str = "positive_orthogonal",
    seed: int = 0,
    scale: float | None = None,
    *,
    stabilise: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """φ(Q) (..., L, m) and φ(K) (..., S, m) with E[φ(q)·φ(k)] = exp(scale · q·k) (up to the
    per-row factors of ``stabilise``, which cancel in attention).

    Queries are stabilised per row, keys by one global maximum (both cancel after normalising).

    Raises:
        ValueError: on an unknown kind, bad m, seed or scale, or mismatched D.
    """
    if not isinstance(query, torch.Tensor) or not isinstance(key, torch.Tensor):
        raise ValueError("query and key must be torch.Tensors")
    d = query.shape[-1]
    if key.shape[-1] != d:
        raise ValueError(f"query and key must share the last dimension D, got {d} and {key.shape[-1]}")
    root = math.sqrt(_resolve_scale(scale, d))
    w = draw_directions(kind, m, d, seed, dtype=query.dtype)
    phi_q = softmax_features(query * root, w, kind, stabilise=stabilise)
    if stabilise and kind != "trigonometric":
        # one factor exp(-max) for all keys: it cancels between numerator and denominator
        xk = key * root
        expo_k = xk @ w.T - 0.5 * (xk * xk).sum(dim=-1, keepdim=True)  # (..., S, m)
        phi_k = torch.exp(expo_k - expo_k.amax()) / math.sqrt(w.shape[0])
    else:
        phi_k = softmax_features(key * root, w, kind)
    return phi_q, phi_k


def favor_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    m: int,
    kind: str = "positive_orthogonal",
    seed: int = 0,
    scale: float | None = None,
    *,
    causal: bool = False,
) -> KernelAttentionResult:
    """FAVOR+ approximation of softmax(scale · Q Kᵀ) V in time linear in L and S.

    Args:
        query: (..., L, D); key: (..., S, D); value: (..., S, Dv).
        m: number of random features.
        kind: ``positive_orthogonal`` (FAVOR+), ``positive_iid`` or ``trigonometric``.
        seed: seed of the random directions.
        scale: multiplies the scores; defaults to 1/√D like the exact attention.
        causal: prefix-sum form, query i sees keys j <= i (L = S).

    Returns:
        :class:`KernelAttentionResult` with output (..., L, Dv) and denominators (..., L).

    Raises:
        ValueError: on bad shapes, kind, m, seed or scale.
    """
    query, key, value = _check_qkv(query, key, value)
    phi_q, phi_k = favor_features(query, key, m, kind, seed, scale)
    return kernel_attention(phi_q, phi_k, value, causal=causal)


def linear_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, causal: bool = False
) -> KernelAttentionResult:
    """Katharopoulos et al.'s linear attention, φ = elu + 1 (D features), non-causal or causal.

    Shapes as :func:`kernel_attention` with m = D.

    Raises:
        ValueError: on bad shapes, or causal with L != S.
    """
    query, key, value = _check_qkv(query, key, value)
    return kernel_attention(elu_features(query), elu_features(key), value, causal=causal)


# ----------------------------------------------------------------------------------------------
# what the page shows about the approximation of attention
# ----------------------------------------------------------------------------------------------


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
    query, key, value = _check_qkv(
        _as_tensor("query", query), _as_tensor("key", key), _as_tensor("value", value)
    )
    s = _resolve_scale(scale, query.shape[-1])
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
    query = _check_tensor("query", _as_tensor("query", query))
    key = _check_tensor("key", _as_tensor("key", key))
    if len(m_values) == 0:
        raise ValueError("m_values is empty")
    n_seeds = checks.int_in("n_seeds", n_seeds, 1, 1000)
    s = _resolve_scale(scale, query.shape[-1])
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
    query, key, value = _check_qkv(
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
    query = _check_tensor("query", _as_tensor("query", query))
    key = _check_tensor("key", _as_tensor("key", key))
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share D, got {query.shape[-1]} and {key.shape[-1]}")
    s = _resolve_scale(scale, query.shape[-1])
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
    query = _check_tensor("query", _as_tensor("query", query))
    key = _check_tensor("key", _as_tensor("key", key))
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share D, got {query.shape[-1]} and {key.shape[-1]}")
    rtol = checks.positive("rtol", rtol)
    if rtol >= 0.5:
        raise ValueError(f"rtol must be below 0.5, got {rtol}")
    scores = (_resolve_scale(scale, query.shape[-1]) * (query @ key.transpose(-2, -1))).numpy()  # (L, S)
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


def peak_torch_memory(fn: Callable[[], object]) -> int:
    """Peak bytes of tensor memory torch allocates (CPU) while ``fn`` runs, beyond what was live.

    Measured with ``torch.profiler`` (``profile_memory=True``): the allocation (positive) and
    free (negative) events in time order, summed; the peak of the running sum.
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted(
        (e.time_range.start, e.self_cpu_memory_usage) for e in prof.events() if e.self_cpu_memory_usage
    )
    running = peak = 0
    for _, b in events:
        running += b
        peak = max(peak, running)
    return int(peak)


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
    best = math.inf
    with torch.no_grad():
        for _ in range(checks.int_in("repeat", repeat, 1, 100)):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        peak = peak_torch_memory(fn)
    return CostPoint(method=method, L=int(L), seconds=best, peak_bytes=peak)


def crossover_length(lengths: np.ndarray, exact: np.ndarray, approx: np.ndarray) -> float | None:
    """First L where ``approx`` becomes cheaper than ``exact``, interpolated on log-log axes.

    Args:
        lengths: (P,) increasing lengths; exact, approx: (P,) costs (NaN = not measured).

    Returns:
        The crossover length, ``lengths[0]`` if approx is cheaper from the start, or None if it
        never becomes cheaper within the measured lengths.
    """
    lengths, exact, approx = (np.asarray(a, dtype=float) for a in (lengths, exact, approx))
    ok = np.isfinite(exact) & np.isfinite(approx) & (exact > 0) & (approx > 0)
    x, r = np.log(lengths[ok]), np.log(approx[ok]) - np.log(exact[ok])  # r < 0: approx cheaper
    if r.size == 0:
        return None
    if r[0] < 0:
        return float(lengths[ok][0])
    for i in range(1, r.size):
        if r[i] < 0 <= r[i - 1]:
            t = r[i - 1] / (r[i - 1] - r[i])
            return float(np.exp(x[i - 1] + t * (x[i] - x[i - 1])))
    return None
