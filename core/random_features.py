"""Random features: a kernel written as an inner product of (random) feature maps, K(x, y) ≈ φ(x)·φ(y).

If attention is Nadaraya-Watson regression with the kernel ``exp(q·k / √D)``, every trick for
kernels applies to it; the best known writes the kernel as an inner product of feature maps, so
that the sums over the keys can be computed once for all queries (``core.linear_attention``).
This module holds the feature maps:

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
  denominator can come out near zero or negative (:func:`softmax_features`, :func:`favor_features`).

Shapes (legend in ``core/__init__.py``): inputs (..., L, D), features (..., L, m). In the 1-D
regression part: x_train, y_train (N,), x_query (Q,), features (N, m) / (Q, m). Every random draw
takes a ``seed``; the same seed gives the same features. A draw of m features depends on the pair
(seed, m) (:func:`draw_seed`): m features are not the first m of a larger draw, so statistics over
seeds and m use independent draws at every point and their medians are honest.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from core import checks
from core.nadaraya_watson import nw_predict

#: Kinds of random features for the softmax kernel, in the order the page shows them.
FEATURE_KINDS = ("positive_orthogonal", "positive_iid", "trigonometric")

#: Largest number of random features any function here accepts.
MAX_FEATURES = 65_536


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


def resolve_scale(scale: float | None, d: int) -> float:
    """The score scale: ``scale`` if given (finite and > 0), else attention's 1/√D."""
    return 1.0 / math.sqrt(d) if scale is None else checks.positive("scale", scale)


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
        z = np.multiply.outer(x, self.w)  # (N, m); then in place: no temporary arrays (the error
        z += self.b  # against m draws thousands of features on each step of the page)
        # torch's vectorised float64 cosine (within 1 ulp), on the same memory: ~5x numpy's
        # (libm, one element at a time), the cosines being most of the page's error against m
        torch.from_numpy(z).cos_()
        z *= math.sqrt(2.0 / self.w.size)
        return z


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
    unit, b = unit_fourier_draw(m, seed)
    # = rng.normal(0, 1/h, m) bit for bit (numpy draws it as 0 + (1/h) · standard normal)
    return FourierFeatures(w=unit * (1.0 / h), b=b, bandwidth=h)


@functools.lru_cache(maxsize=128)  # a page's 5 seeds x 12 m, twice; <= 4 MB at m <= 2048
def _unit_draw(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(draw_seed(seed, m))
    unit = rng.standard_normal(m)
    b = rng.uniform(0.0, 2.0 * math.pi, m)
    unit.flags.writeable = b.flags.writeable = False  # shared by every caller: never written to
    return unit, b


def unit_fourier_draw(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The draw behind :func:`fourier_features` at unit bandwidth: (m,) standard normal
    frequencies and (m,) phases U[0, 2π), seeded by (seed, m) (:func:`draw_seed`).

    Features of bandwidth h use the frequencies divided by h (w = z / h ~ N(0, 1/h²)) and the
    same phases, so a new h draws nothing: the draw is kept per (m, seed) (read-only arrays,
    shared by every caller).

    Raises:
        ValueError: m not in 1..MAX_FEATURES or a negative seed.
    """
    return _unit_draw(checks.int_in("m", m, 1, MAX_FEATURES), checks.seed(seed))


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


def check_regression(x_train: object, y_train: object, x_query: object) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_query) as float64 arrays: non-empty, 1-D, finite, x and y of one length.

    Raises:
        ValueError: naming the argument that is not.
    """
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


def feature_sums(zq: np.ndarray, zt: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nadaraya-Watson's two sums with the features: numerator zq (ztᵀ y), denominator zq (ztᵀ 1).

    One torch product (Q, m) x ((m, N) x (N, 2)) -> (Q, 2) for both (torch's thread in the app;
    numpy's BLAS threads stall on a busy machine); no (Q, N) matrix is formed.

    Args:
        zq: (Q, m) query features; zt: (N, m) training features; y: (N,) targets.

    Returns:
        numerator, denominator: (Q,) each.
    """
    ones = np.stack([np.asarray(y, dtype=np.float64), np.ones(zt.shape[0])])  # (2, N)
    # (2, N) x (N, m) with zt as stored: its transposed view would run ~7x slower
    per_feature = torch.from_numpy(ones) @ torch.from_numpy(np.ascontiguousarray(zt))  # (2, m)
    sums = (torch.from_numpy(np.ascontiguousarray(zq)) @ per_feature.T).numpy()  # (Q, 2)
    return sums[:, 0], sums[:, 1]


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
    xt, yt, xq = check_regression(x_train, y_train, x_query)
    z = fourier_features(m, bandwidth, seed)
    zt, zq = z(xt), z(xq)  # (N, m), (Q, m)
    numerator, denominator = feature_sums(zq, zt, yt)  # (Q,), (Q,)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = numerator / denominator
    exact = nw_predict(xt, yt, xq, "gaussian", float(bandwidth))
    return RffFit(
        x_query=xq, approx=approx, exact=exact, numerator=numerator, denominator=denominator, m=int(m)
    )


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
    root = math.sqrt(resolve_scale(scale, d))
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
