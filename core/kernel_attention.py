"""Kernel regression as attention: Gaussian Nadaraya-Watson regression *is* softmax attention.

    f̂(x) = Σ_i softmax_i( -(x - x_i)² / (2h²) ) y_i

is attention with the query x, the keys x_i, the values y_i and the score function
-(q - k)² / (2h²) (the post's sections 1.2 and 2.3). Three facts of the lesson live here:

1. :func:`nadaraya_watson_attention` computes Gaussian NW as softmax attention; it equals
   ``core.nadaraya_watson.nw_predict(..., kernel="gaussian")`` to rounding (tests check ~1e-15).
2. The dot-product / Gaussian identity. For unit-norm q and k, |q - k|² = 2 - 2 q·k, so
   exp(q·k / τ) = e^{1/τ} · exp(-|q - k|² / (2τ)): after normalisation, dot-product attention at
   temperature τ *is* a Gaussian kernel with h² = τ (:func:`dot_vs_gaussian`). With unequal norms
   the two differ by a per-key factor exp(|k|² / (2τ)): dot products favour long keys.
3. A learnable kernel (the post's section 6, "learnable kernels, Mahalanobis distance"): the
   bandwidth (or, for 2-D inputs, a full metric M = A Aᵀ) fitted by gradient descent on the
   training error. Each training point must be left out of its own estimate
   (leave-one-out): with the point included the loss is minimised by h -> 0, where every point
   predicts itself exactly (:func:`fit_bandwidth`, :func:`fit_metric`).

The page "kernels -> attention" shows these facts through four experiments on its own data, in
``core.lessons.kernels_to_attention``.

Shapes: x_train, y_train (N,), x_query (Q,), NW weights (Q, N) with rows = query points;
vectors for the identity: queries (L, D), keys (S, D), weights (L, S).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from core import checks
from core.attention import masked_softmax, normalize_scores
from core.kernels import softmax_weights

F64 = torch.float64

#: Caps on what one request may ask for (a page cannot starve the server).
MAX_SAMPLES = 400
MAX_STEPS = 1000
MAX_VECTORS = 64
MAX_DIM = 512
#: Adam's betas for the learnable kernels: β₂ = 0.9 (not 0.999) lets the step size follow the
#: gradient as it shrinks, so 300 steps are enough to converge (LOO) or to collapse (no LOO).
ADAM_BETAS = (0.9, 0.9)


# ----------------------------------------------------------------------------------------------
# 1. Gaussian Nadaraya-Watson as softmax attention
# ----------------------------------------------------------------------------------------------


def gaussian_scores(x_query: np.ndarray, x_train: np.ndarray, bandwidth: float) -> np.ndarray:
    """Attention scores of Gaussian NW: -(q - k)² / (2h²), (Q,) x (N,) -> (Q, N).

    The softmax of each row is the NW weight row; ``exp`` of a score is the Gaussian kernel.

    Raises:
        ValueError: on empty / non-1-D / non-finite inputs or a bandwidth that is not > 0.
    """
    xq, xt = checks.as_1d("x_query", x_query), checks.as_1d("x_train", x_train)
    h = checks.positive("bandwidth", bandwidth)
    d = xq[:, None] - xt[None, :]  # (Q, 1) - (1, N) -> (Q, N)
    return -(d * d) / (2 * h * h)


def nadaraya_watson_attention(
    x_train: np.ndarray, y_train: np.ndarray, x_query: np.ndarray, bandwidth: float
) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian Nadaraya-Watson computed as softmax attention: returns ``(y_hat, weights)``.

    query = x_query, keys = x_train, values = y_train, scores = -(q - k)² / (2h²),
    weights = softmax over the keys, y_hat = weights @ values.

    Args:
        x_train: (N,) sample inputs (keys).
        y_train: (N,) sample outputs (values).
        x_query: (Q,) query points.
        bandwidth: h > 0, in the units of x; plays the role of √τ (temperature τ = h²).

    Returns:
        y_hat (Q,) and weights (Q, N) (rows = query points, each summing to 1), float64 numpy.
        Equal to ``nw_predict(x_train, y_train, x_query, "gaussian", h)`` and ``nw_weights``.

    Raises:
        ValueError: on mismatched lengths, empty / non-1-D / non-finite inputs, h <= 0.
    """
    xt, yt = checks.as_1d("x_train", x_train), checks.as_1d("y_train", y_train)
    if xt.shape != yt.shape:
        raise ValueError(f"x_train and y_train must have the same length, got {xt.size} and {yt.size}")
    scores = torch.from_numpy(gaussian_scores(x_query, xt, bandwidth))  # (Q, N)
    weights = masked_softmax(scores)  # (Q, N): the NW weights
    y_hat = weights @ torch.from_numpy(yt)  # (Q, N) x (N,) -> (Q,)
    return y_hat.numpy(), weights.numpy()


def nw_attention_weights(
    x_train: np.ndarray, x_query: np.ndarray, bandwidth: float, normalizer: str = "softmax"
) -> np.ndarray:
    """NW weights from the Gaussian scores -(q - k)²/(2h²) with any normaliser, (Q,), (N,) -> (Q, N).

    ``softmax`` gives Gaussian NW (every weight > 0). ``sparsemax`` gives
    max(z_i - τ, 0) = (-τ)·(1 - (q - x_i)²/r²)₊ with r = h·√(-2τ): exactly the Epanechnikov
    kernel (3/4)(1 - u²)₊ normalised, with a radius r chosen per query (see
    :func:`sparsemax_radius`). ``entmax15`` lies in between.

    Raises:
        ValueError: on bad data, h <= 0 or an unknown normaliser.
    """
    scores = torch.from_numpy(gaussian_scores(x_query, x_train, bandwidth))  # (Q, N)
    return normalize_scores(scores, normalizer=normalizer).numpy()


def sparsemax_radius(x_train: np.ndarray, x_query: np.ndarray, bandwidth: float) -> np.ndarray:
    """Per-query radius r of the Epanechnikov kernel that sparsemax-over-Gaussian-scores equals, (Q,).

    From a support index i: τ = z_i - p_i, and r = h·√(-2τ). Only samples within r of the query
    get a non-zero weight.

    Raises:
        ValueError: as :func:`nw_attention_weights`.
    """
    z = gaussian_scores(x_query, x_train, bandwidth)  # (Q, N)
    p = nw_attention_weights(x_train, x_query, bandwidth, "sparsemax")
    i = p.argmax(axis=1)  # a support index per query
    rows = np.arange(z.shape[0])
    tau = z[rows, i] - p[rows, i]  # (Q,), < 0
    return float(bandwidth) * np.sqrt(-2.0 * tau)


# ----------------------------------------------------------------------------------------------
# 2. dot product vs distance
# ----------------------------------------------------------------------------------------------


def random_vectors(n: int, d: int, *, norm_spread: float = 0.0, seed: int = 0) -> np.ndarray:
    """n random vectors in R^d with uniformly random directions, (n, d).

    Norms are 1 when ``norm_spread`` is 0; otherwise exp(U(-spread, spread)), so the longest can be
    e^{2·spread} times the shortest.

    Raises:
        ValueError: if n is not in 1..MAX_VECTORS, d not in 1..MAX_DIM, or the spread not in [0, 3].
    """
    n = checks.int_in("n", n, 1, MAX_VECTORS)
    d = checks.int_in("d", d, 1, MAX_DIM)
    if not math.isfinite(norm_spread) or not 0 <= norm_spread <= 3:
        raise ValueError(f"norm_spread must be in [0, 3], got {norm_spread}")
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, d))
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms > 0, norms, 1.0)
    if norm_spread > 0:
        v = v * np.exp(rng.uniform(-norm_spread, norm_spread, size=(n, 1)))
    return v


def _queries_and_keys(queries: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (L, D) queries and (S, D) keys as float arrays, checked to share D.

    Raises:
        ValueError: if either is not 2-D and finite, or their D differ.
    """
    q, k = checks.as_2d("queries", queries), checks.as_2d("keys", keys)
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"queries and keys must share D, got {q.shape[1]} and {k.shape[1]}")
    return q, k


def dot_product_weights(queries: np.ndarray, keys: np.ndarray, temperature: float) -> np.ndarray:
    """Dot-product attention weights softmax(q·k / τ) over the keys, (L, D) x (S, D) -> (L, S).

    Raises:
        ValueError: on bad shapes or a temperature that is not > 0.
    """
    q, k = _queries_and_keys(queries, keys)
    tau = checks.positive("temperature", temperature)
    scores = torch.from_numpy(q @ k.T / tau)  # (L, S)
    return masked_softmax(scores).numpy()


def gaussian_vector_weights(queries: np.ndarray, keys: np.ndarray, bandwidth: float) -> np.ndarray:
    """Gaussian-kernel weights softmax(-|q - k|² / (2h²)) over the keys, (L, D) x (S, D) -> (L, S).

    Raises:
        ValueError: on bad shapes or a bandwidth that is not > 0.
    """
    q, k = _queries_and_keys(queries, keys)
    h = checks.positive("bandwidth", bandwidth)
    diff = q[:, None, :] - k[None, :, :]  # (L, 1, D) - (1, S, D) -> (L, S, D)
    scores = torch.from_numpy(-(diff * diff).sum(-1) / (2 * h * h))  # (L, S)
    return masked_softmax(scores).numpy()


@dataclass(frozen=True)
class DotVsGaussian:
    """Dot-product attention at temperature τ against the Gaussian kernel with h² = τ."""

    dot: np.ndarray  # (L, S) softmax(q·k / τ)
    gaussian: np.ndarray  # (L, S) softmax(-|q - k|² / (2τ))
    max_abs_diff: float  # max |dot - gaussian|: ~1e-16 for unit norms
    query_norms: np.ndarray  # (L,)
    key_norms: np.ndarray  # (S,)
    key_log_bias: np.ndarray  # (S,) |k|² / (2τ): the log-factor by which dot products favour key k
    temperature: float

    @property
    def diff(self) -> np.ndarray:
        """(L, S) dot - gaussian: zero to rounding for equal key norms."""
        return self.dot - self.gaussian


def dot_vs_gaussian(queries: np.ndarray, keys: np.ndarray, temperature: float) -> DotVsGaussian:
    """Compare dot-product attention at temperature τ with the Gaussian kernel at h = √τ.

    Expanding -|q - k|²/(2τ) = q·k/τ - |q|²/(2τ) - |k|²/(2τ): the query term cancels in each
    row's softmax; the key term does not unless all keys have the same norm. So with unit norms
    (any equal key norms) the two weight maps are identical; otherwise the dot product weights
    key k an extra factor exp(|k|²/(2τ)) relative to the Gaussian.

    Raises:
        ValueError: on bad shapes or a temperature that is not > 0.
    """
    tau = checks.positive("temperature", temperature)
    dot = dot_product_weights(queries, keys, tau)
    gauss = gaussian_vector_weights(queries, keys, math.sqrt(tau))
    q, k = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    key_norms = np.linalg.norm(k, axis=1)
    return DotVsGaussian(
        dot=dot,
        gaussian=gauss,
        max_abs_diff=float(np.abs(dot - gauss).max()),
        query_norms=np.linalg.norm(q, axis=1),
        key_norms=key_norms,
        key_log_bias=key_norms**2 / (2 * tau),
        temperature=tau,
    )


# ----------------------------------------------------------------------------------------------
# 3. a learnable kernel
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BandwidthFit:
    """Gradient descent on log h of the NW training error (1-D inputs)."""

    losses: np.ndarray  # (T,) mean squared training error before each step
    bandwidths: np.ndarray  # (T + 1,) h before each step, then the final h
    bandwidth: float  # the learned h
    leave_one_out: bool  # True: point i excluded from its own estimate (diagonal masked)


@dataclass(frozen=True)
class MetricFit:
    """Gradient descent on a Mahalanobis metric M = A Aᵀ of the NW training error (2-D inputs)."""

    losses: np.ndarray  # (T,)
    metric: np.ndarray  # (2, 2) the learned M; scores are -(q - k)ᵀ M (q - k) / 2
    length_scales: np.ndarray  # (2,) 1/√M_jj: the bandwidth along each input axis
    length_scale_path: np.ndarray  # (T + 1, 2) length scales before each step, then the final
    leave_one_out: bool


class _Adam:
    """``torch.optim.Adam``'s update (no weight decay, no AMSGrad) of a float64 parameter vector.

    The learnable kernels have one to three parameters, so the optimiser is written out: each
    step is a few float operations instead of a tensor graph. Tests check whole training paths
    against ``torch.optim.Adam`` driven by autograd gradients.
    """

    def __init__(self, params: np.ndarray, lr: float, betas: tuple[float, float], eps: float = 1e-8) -> None:
        self.params = np.array(params, dtype=np.float64)  # (P,)
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.m = np.zeros_like(self.params)  # (P,) first moment
        self.v = np.zeros_like(self.params)  # (P,) second moment
        self.t = 0

    def step(self, grad: np.ndarray) -> np.ndarray:
        """One Adam step down ``grad`` (P,); returns the new parameters (P,)."""
        self.t += 1
        self.m += (1.0 - self.beta1) * (grad - self.m)  # torch: exp_avg.lerp_(grad, 1 - beta1)
        self.v = self.v * self.beta2 + (1.0 - self.beta2) * grad * grad
        step_size = self.lr / (1.0 - self.beta1**self.t)
        denom = np.sqrt(self.v) / math.sqrt(1.0 - self.beta2**self.t) + self.eps
        self.params = self.params - step_size * self.m / denom
        return self.params


def _softmax_rows(shifted: np.ndarray, leave_one_out: bool) -> np.ndarray:
    """Attention weights of the training points from scores shifted so each row's allowed max is 0.

    Args:
        shifted: (N, N) training scores minus each row's largest allowed score; a scratch array
            (under leave-one-out its diagonal is overwritten).
        leave_one_out: mask the diagonal (point i may not attend to itself).

    Returns:
        (N, N) weights: rows sum to 1, a masked diagonal is exactly 0. The allowed maximum gives
        exp(0) = 1, so no row sum underflows (the max-subtraction of a stable softmax); no weight
        is below e^-700 (≈ 1e-304) but the masked ones.
    """
    # exp below about -708 leaves the normal floats: libm's slow path (8× slower) and subnormal
    # products downstream; e^-700 ≈ 1e-304 next to a row maximum of 1 changes no sum.
    np.maximum(shifted, -700.0, out=shifted)
    if leave_one_out:
        np.fill_diagonal(shifted, -np.inf)  # exp(-inf) = 0: no weight on itself
    return softmax_weights(shifted, shift=False, overwrite=True)  # rows already shifted: max 0


def _bandwidth_loss_grad(
    d2: np.ndarray, nearest2: np.ndarray, y: np.ndarray, log_h: float, leave_one_out: bool
) -> tuple[float, float]:
    """Training MSE of Gaussian NW as softmax attention, and its derivative in log h.

    Scores are s_ij = -c·d²_ij with c = 1/(2h²), weights w = softmax(s) by rows, predictions
    f_i = Σ_j w_ij y_j. With ∂s_ij/∂log h = 2c·d²_ij and ∂f_i/∂s_ij = w_ij (y_j - f_i):
    ∂f_i/∂log h = 2c (Σ_j w_ij d²_ij y_j - f_i Σ_j w_ij d²_ij), and the loss L = (1/N) Σ (f_i - y_i)²
    has ∂L/∂log h = (2/N) Σ (f_i - y_i) ∂f_i/∂log h (tests check it against torch autograd).

    Args:
        d2: (N, N) squared distances between the training points.
        nearest2: (N,) each row's smallest allowed d² (the nearest other point under LOO, else 0).
        y: (N,) training outputs.
        log_h: log of the bandwidth.
        leave_one_out: mask the diagonal.

    Returns:
        (L, ∂L/∂log h).
    """
    c = 0.5 * math.exp(-2.0 * log_h)
    w = _softmax_rows(-c * (d2 - nearest2[:, None]), leave_one_out)  # (N, N)
    f = w @ y  # (N,)
    r = f - y  # (N,)
    wd = w * d2  # (N, N)
    df = 2.0 * c * (wd @ y - f * wd.sum(axis=1))  # (N,) ∂f_i/∂log h
    return float(np.mean(r * r)), float(2.0 * np.mean(r * df))


def _metric_loss_grad(
    parts: tuple[np.ndarray, np.ndarray, np.ndarray], y: np.ndarray, params: np.ndarray, leave_one_out: bool
) -> tuple[float, np.ndarray]:
    """Training MSE of 2-D Gaussian NW under the metric M = A Aᵀ, and its gradient.

    A = [[e^a, 0], [o, e^b]] for params = (a, b, o); scores s_ij = -q_ij / 2 with
    q_ij = (x_i - x_j)ᵀ M (x_i - x_j). With g_ij = ∂L/∂s_ij = (2/N) r_i w_ij (y_j - f_i):
    ∂L/∂M = -½ Σ_ij g_ij d_ij d_ijᵀ =: G, ∂L/∂A = 2 G A, then the chain rule through e^a, e^b
    (tests check it against torch autograd).

    Args:
        parts: three (N, N) arrays dx², dx·dy, dy² of the pairwise differences d_ij.
        y: (N,) training outputs.
        params: (3,) = (a, b, o).
        leave_one_out: mask the diagonal.

    Returns:
        (L, (3,) gradient in (a, b, o)).
    """
    dxx, dxy, dyy = parts
    a, b, o = (float(v) for v in params)
    ea, eb = math.exp(a), math.exp(b)
    q = (ea * ea) * dxx + (2.0 * o * ea) * dxy + (o * o + eb * eb) * dyy  # (N, N)
    if leave_one_out:
        np.fill_diagonal(q, np.inf)
    w = _softmax_rows(-0.5 * (q - q.min(axis=1, keepdims=True)), leave_one_out)  # (N, N)
    f = w @ y  # (N,)
    r = f - y  # (N,)
    wr = w * (y[None, :] - f[:, None])  # (N, N) w_ij (y_j - f_i)
    g00, g01, g11 = (-float(r @ np.einsum("ij,ij->i", wr, t)) / y.size for t in (dxx, dxy, dyy))
    grad_a = 2.0 * (g00 * ea + g01 * o) * ea
    grad_b = 2.0 * g11 * eb * eb
    grad_o = 2.0 * (g01 * ea + g11 * o)
    return float(np.mean(r * r)), np.array([grad_a, grad_b, grad_o])


def _metric(params: np.ndarray) -> np.ndarray:
    """(2, 2) M = A Aᵀ, A = [[e^a, 0], [o, e^b]] for params (3,) = (a, b, o)."""
    a = np.array([[math.exp(params[0]), 0.0], [params[2], math.exp(params[1])]])
    return a @ a.T


def _length_scales(m: np.ndarray) -> list[float]:
    return (1.0 / np.sqrt(np.diagonal(m))).tolist()


def _check_fit_args(steps: int, lr: float, init_bandwidth: float) -> tuple[int, float, float]:
    steps = checks.int_in("steps", steps, 1, MAX_STEPS)
    lr = checks.positive("lr", lr)
    if lr > 1:
        raise ValueError(f"lr must be at most 1, got {lr}")
    return steps, lr, checks.positive("init_bandwidth", init_bandwidth)


def fit_bandwidth(
    x_train: np.ndarray,
    y_train: np.ndarray,
    *,
    leave_one_out: bool = True,
    init_bandwidth: float = 1.0,
    steps: int = 300,
    lr: float = 0.05,
    on_step: Callable[[int, float, float], None] | None = None,
) -> BandwidthFit:
    """Learn the Gaussian NW bandwidth by gradient descent (Adam on log h) of the training MSE.

    The loss is (1/N) Σ_i (y_i - f̂(x_i))², with f̂(x_i) computed by softmax attention of x_i over
    all training points (``leave_one_out=False``) or over all but itself (``True``: the diagonal of
    the (N, N) attention mask is False, the leave-one-out CV objective). Without leaving out, the
    loss falls monotonically as h -> 0 (each point ends up predicting itself: loss 0), so h
    collapses. Deterministic (full batch, no sampling).

    The gradient is written out (:func:`_bandwidth_loss_grad`) and the optimiser too (:class:`_Adam`):
    one parameter needs no autograd graph, and each step costs a few (N, N) array operations
    (2-7× quicker than torch autograd: ``python -m benchmarks learnable_kernel``). Tests check
    the whole path against ``torch.optim.Adam`` on autograd gradients of the same attention.

    Args:
        x_train: (N,) inputs, 2 <= N <= MAX_SAMPLES.
        y_train: (N,) outputs.
        leave_one_out: mask the diagonal (True) or not (False).
        init_bandwidth: h at step 0.
        steps: number of gradient steps, 1..MAX_STEPS.
        lr: Adam learning rate on log h, in (0, 1] (betas ``ADAM_BETAS``).
        on_step: optional callback(step, loss, h) after each step (e.g. a progress bar).

    Returns:
        :class:`BandwidthFit` with the loss curve, the bandwidth path and the learned h.

    Raises:
        ValueError: on bad data (as :func:`nadaraya_watson_attention`) or out-of-range arguments.
    """
    xt, yt = checks.as_1d("x_train", x_train), checks.as_1d("y_train", y_train)
    if xt.shape != yt.shape or not 2 <= xt.size <= MAX_SAMPLES:
        raise ValueError(f"x_train and y_train must have the same length in 2..{MAX_SAMPLES}")
    steps, lr, h0 = _check_fit_args(steps, lr, init_bandwidth)
    d2 = (xt[:, None] - xt[None, :]) ** 2  # (N, N)
    if leave_one_out:
        nearest2 = np.where(np.eye(xt.size, dtype=bool), np.inf, d2).min(axis=1)  # (N,)
    else:
        nearest2 = np.zeros(xt.size)  # each point is its own nearest: d² = 0
    adam = _Adam(np.array([math.log(h0)]), lr, ADAM_BETAS)
    losses, path = [], [h0]
    for step in range(steps):
        loss, grad = _bandwidth_loss_grad(d2, nearest2, yt, float(adam.params[0]), leave_one_out)
        losses.append(loss)
        path.append(math.exp(float(adam.step(np.array([grad]))[0])))
        if on_step is not None:
            on_step(step, losses[-1], path[-1])
    return BandwidthFit(np.array(losses), np.array(path), path[-1], bool(leave_one_out))


def data_2d(n: int = 150, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A 2-D problem where only the first input matters: y = sinc(x₁) + noise, x ~ U(-3, 3)².

    A good metric stretches along x₁ (short length scale) and ignores x₂ (long length scale).

    Returns:
        x (N, 2), y (N,).

    Raises:
        ValueError: if n is not in 2..MAX_SAMPLES or noise is negative / not finite.
    """
    n = checks.int_in("n", n, 2, MAX_SAMPLES)
    if not math.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be finite and >= 0, got {noise}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, size=(n, 2))
    y = np.sinc(x[:, 0]) + noise * rng.normal(size=n)
    return x, y


def fit_metric(
    x_train: np.ndarray,
    y_train: np.ndarray,
    *,
    leave_one_out: bool = True,
    init_bandwidth: float = 1.0,
    steps: int = 300,
    lr: float = 0.05,
    on_step: Callable[[int, float], None] | None = None,
) -> MetricFit:
    """Learn a Mahalanobis metric for 2-D Gaussian NW by gradient descent of the training MSE.

    Scores are -(q - k)ᵀ M (q - k) / 2 with M = A Aᵀ, A lower-triangular with a positive
    diagonal (parameterised by its log): M = I / h₀² at step 0. Otherwise as
    :func:`fit_bandwidth`: without leave-one-out, M grows without bound (every length scale
    collapses toward 0). The gradient in (log A₁₁, log A₂₂, A₂₁) is written out
    (:func:`_metric_loss_grad`; checked against torch autograd in the tests).

    Args:
        x_train: (N, 2) inputs, 2 <= N <= MAX_SAMPLES.
        y_train: (N,) outputs.
        leave_one_out, init_bandwidth, steps, lr: as :func:`fit_bandwidth`.
        on_step: optional callback(step, loss).

    Returns:
        :class:`MetricFit`.

    Raises:
        ValueError: on bad data or out-of-range arguments.
    """
    xt, yt = checks.as_2d("x_train", x_train), checks.as_1d("y_train", y_train)
    if xt.shape[1] != 2 or xt.shape[0] != yt.size or not 2 <= yt.size <= MAX_SAMPLES:
        raise ValueError(f"x_train must be (N, 2) and y_train (N,) with N in 2..{MAX_SAMPLES}")
    steps, lr, h0 = _check_fit_args(steps, lr, init_bandwidth)
    diff = xt[:, None, :] - xt[None, :, :]  # (N, N, 2)
    parts = (diff[..., 0] ** 2, diff[..., 0] * diff[..., 1], diff[..., 1] ** 2)  # 3 × (N, N)
    adam = _Adam(np.array([-math.log(h0), -math.log(h0), 0.0]), lr, ADAM_BETAS)  # M = I / h0²
    losses, path = [], [_length_scales(_metric(adam.params))]
    for step in range(steps):
        loss, grad = _metric_loss_grad(parts, yt, adam.params, leave_one_out)
        losses.append(loss)
        path.append(_length_scales(_metric(adam.step(grad))))
        if on_step is not None:
            on_step(step, losses[-1])
    return MetricFit(
        losses=np.array(losses),
        metric=_metric(adam.params),
        length_scales=np.array(path[-1]),
        length_scale_path=np.array(path),
        leave_one_out=bool(leave_one_out),
    )


def metric_predict(
    x_train: np.ndarray, y_train: np.ndarray, x_query: np.ndarray, metric: np.ndarray
) -> np.ndarray:
    """Gaussian NW prediction with a Mahalanobis metric M: (N, 2), (N,), (Q, 2), (2, 2) -> (Q,).

    Raises:
        ValueError: on bad shapes or a metric that is not a symmetric positive definite 2 x 2.
    """
    xt, yt, xq = (
        checks.as_2d("x_train", x_train),
        checks.as_1d("y_train", y_train),
        checks.as_2d("x_query", x_query),
    )
    m = np.asarray(metric, dtype=float)
    if m.shape != (2, 2) or not np.allclose(m, m.T) or np.linalg.eigvalsh(m).min() <= 0:
        raise ValueError("metric must be a symmetric positive definite 2 x 2 matrix")
    if xt.shape[1] != 2 or xq.shape[1] != 2 or xt.shape[0] != yt.size:
        raise ValueError("x_train must be (N, 2), x_query (Q, 2) and y_train (N,)")
    diff = xq[:, None, :] - xt[None, :, :]  # (Q, N, 2)
    scores = torch.from_numpy(-np.einsum("qnd,de,qne->qn", diff, m, diff) / 2)  # (Q, N)
    return (masked_softmax(scores) @ torch.from_numpy(yt)).numpy()
