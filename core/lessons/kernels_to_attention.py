"""The kernels-to-attention lesson: the page's four experiments, each one function returning a
frozen dataclass.

``core.kernel_attention`` holds the math (Gaussian Nadaraya-Watson as softmax attention, the
dot-product / Gaussian identity, the learnable kernels); this module runs it on the page's data
(``core.data.make_data``, and ``core.kernel_attention.data_2d`` for the 2-D metric):

- :func:`nw_vs_attention`: the post's three figures (both weight matrices, both fits);
- :func:`query_weights`: the weights one query x* gives the samples, both ways;
- :func:`random_dot_vs_gaussian`: dot-product vs Gaussian weights on random vectors;
- the learnable kernels: :func:`learned_bandwidth` + :func:`bandwidth_learning` (1-D), and
  :func:`learned_metric` + :class:`MetricLearning` (2-D), each with and without leave-one-out.

Shapes: x_train, y_train (N,), x_query (Q,), NW weights (Q, N) with rows = query points;
vectors: queries (L, D), keys (S, D), weights (L, S).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from core import checks
from core.data import make_data
from core.kernel_attention import (
    MAX_SAMPLES,
    BandwidthFit,
    DotVsGaussian,
    MetricFit,
    data_2d,
    dot_vs_gaussian,
    fit_bandwidth,
    fit_metric,
    gaussian_scores,
    metric_predict,
    nadaraya_watson_attention,
    random_vectors,
)
from core.nadaraya_watson import nw_predict, nw_weights, select_bandwidth

#: The query grids span the data's range: x ~ U[-3, 3] (``core.data.make_data``).
GRID_LOW, GRID_HIGH = -3.0, 3.0
#: Q of the grid the learned 1-D fits are drawn on.
N_CURVE = 300
#: The test error is measured on N_TEST fresh points drawn with seed + TEST_SEED_OFFSET.
N_TEST = 400
TEST_SEED_OFFSET = 1000
#: Noise of the 2-D problem (:func:`data_2d`) the metric is learned on.
NOISE_2D = 0.1


@dataclass(frozen=True)
class NwVsAttention:
    """Gaussian NW (``core.nadaraya_watson``) and softmax attention on one data set and query grid.

    The post's three figures: the weight matrices side by side, and both fits. Shapes: N samples,
    Q query points; weights (Q, N), rows = query points, each summing to 1.
    """

    x: np.ndarray  # (N,) sample inputs, sorted: the keys
    y: np.ndarray  # (N,) sample outputs: the values
    x_query: np.ndarray  # (Q,) evenly spaced over [GRID_LOW, GRID_HIGH]: the queries
    truth: np.ndarray  # (Q,) the noiseless target at the queries
    weights_nw: np.ndarray  # (Q, N) ``nw_weights``
    weights_attention: np.ndarray  # (Q, N) ``nadaraya_watson_attention``'s softmax weights
    fit_nw: np.ndarray  # (Q,) ``nw_predict``
    fit_attention: np.ndarray  # (Q,) weights_attention @ y
    max_diff_weights: float  # max |weights_nw - weights_attention|: rounding (~1e-16)
    max_diff_fit: float  # max |fit_nw - fit_attention|: rounding


def nw_vs_attention(n: int, seed: int, bandwidth: float, n_queries: int = 60) -> NwVsAttention:
    """Gaussian NW and attention on ``make_data(n, seed=seed)`` at Q = ``n_queries`` grid points.

    Args:
        n: samples N, 1..MAX_SAMPLES.
        seed: seed of the data (``core.data.make_data``), >= 0.
        bandwidth: h > 0 (attention at temperature τ = h²).
        n_queries: Q, 1..MAX_SAMPLES.

    Returns:
        :class:`NwVsAttention` (float64 arrays).

    Raises:
        ValueError: on n, seed or n_queries out of range, or h not finite and > 0.
    """
    n, seed = checks.int_in("n", n, 1, MAX_SAMPLES), checks.seed(seed)
    h = checks.positive("bandwidth", bandwidth)
    n_queries = checks.int_in("n_queries", n_queries, 1, MAX_SAMPLES)
    data = make_data(n=n, seed=seed)
    xq = np.linspace(GRID_LOW, GRID_HIGH, n_queries)  # (Q,)
    w_nw = nw_weights(data.x, xq, kernel="gaussian", bandwidth=h)  # (Q, N)
    fit_nw = nw_predict(data.x, data.y, xq, kernel="gaussian", bandwidth=h)  # (Q,)
    fit_att, w_att = nadaraya_watson_attention(data.x, data.y, xq, h)  # (Q,), (Q, N)
    return NwVsAttention(
        x=data.x,
        y=data.y,
        x_query=xq,
        truth=data.truth(xq),
        weights_nw=w_nw,
        weights_attention=w_att,
        fit_nw=fit_nw,
        fit_attention=fit_att,
        max_diff_weights=float(np.abs(w_nw - w_att).max()),
        max_diff_fit=float(np.abs(fit_nw - fit_att).max()),
    )


@dataclass(frozen=True)
class QueryWeights:
    """The weights one query x* gives the N samples, by NW and by attention. Shapes: N samples."""

    x: np.ndarray  # (N,) sample inputs, sorted: the keys
    y: np.ndarray  # (N,) sample outputs: the values
    query: float  # x*
    scores: np.ndarray  # (N,) attention scores -(x* - x_i)² / (2h²)
    weights_nw: np.ndarray  # (N,) ``nw_weights`` at x*, summing to 1
    weights_attention: np.ndarray  # (N,) softmax(scores)
    prediction: float  # f̂(x*) = weights_attention @ y
    max_diff: float  # max |weights_nw - weights_attention|: rounding (~1e-16)


def query_weights(n: int, seed: int, bandwidth: float, x0: float) -> QueryWeights:
    """One query's NW weights (``nw_weights``) and attention weights on ``make_data(n, seed=seed)``.

    Args:
        n: samples N, 1..MAX_SAMPLES.
        seed: seed of the data, >= 0.
        bandwidth: h > 0.
        x0: the query x*, finite.

    Raises:
        ValueError: on n or seed out of range, h not finite and > 0, or x0 not finite.
    """
    n, seed = checks.int_in("n", n, 1, MAX_SAMPLES), checks.seed(seed)
    h = checks.positive("bandwidth", bandwidth)
    x0 = checks.finite("x0", x0)
    data = make_data(n=n, seed=seed)
    xq = np.array([x0])  # (1,): Q = 1
    w_nw = nw_weights(data.x, xq, kernel="gaussian", bandwidth=h)[0]  # (1, N) -> (N,)
    pred, w_att = nadaraya_watson_attention(data.x, data.y, xq, h)  # (1,), (1, N)
    return QueryWeights(
        x=data.x,
        y=data.y,
        query=x0,
        scores=gaussian_scores(xq, data.x, h)[0],
        weights_nw=w_nw,
        weights_attention=w_att[0],
        prediction=float(pred[0]),
        max_diff=float(np.abs(w_nw - w_att[0]).max()),
    )


def random_dot_vs_gaussian(
    n_vectors: int, dim: int, temperature: float, norm_spread: float, seed: int
) -> DotVsGaussian:
    """:func:`dot_vs_gaussian` on random queries (seed) and keys (seed + 1), L = S = ``n_vectors``.

    Both come from :func:`random_vectors` with norms spread by ``norm_spread`` (0: unit norms,
    where the two weight maps agree to rounding).

    Raises:
        ValueError: as :func:`random_vectors` and :func:`dot_vs_gaussian`.
    """
    q = random_vectors(n_vectors, dim, norm_spread=norm_spread, seed=seed)  # (L, D)
    k = random_vectors(n_vectors, dim, norm_spread=norm_spread, seed=seed + 1)  # (S, D)
    return dot_vs_gaussian(q, k, temperature)


def _curve_grid() -> np.ndarray:
    """(Q,) = (N_CURVE,) the grid the learned 1-D fits are drawn on."""
    return np.linspace(GRID_LOW, GRID_HIGH, N_CURVE)


F = TypeVar("F")


@dataclass(frozen=True)
class _TrainTest(Generic[F]):
    """One fit on ``data(n, seed)`` and its error on fresh data (what both learnable kernels report)."""

    n: int
    seed: int
    x: np.ndarray  # (N,) or (N, D): the training inputs
    y: np.ndarray  # (N,) the training outputs
    fit: F
    test_mse: float  # MSE of the fit's predictions on data(N_TEST, seed + TEST_SEED_OFFSET)


def _train_and_test(
    n: int,
    seed: int,
    data: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
    fit: Callable[[np.ndarray, np.ndarray], F],
    predict: Callable[[np.ndarray, np.ndarray, np.ndarray, F], np.ndarray],
) -> _TrainTest[F]:
    """``fit(x, y)`` on ``(x, y) = data(n, seed)``; its test MSE on ``data(N_TEST, seed + TEST_SEED_OFFSET)``
    through ``predict(x, y, x_test, fit)`` -> (N_TEST,).

    Raises:
        ValueError: if n is not in 2..MAX_SAMPLES or seed < 0, or what ``fit`` raises.
    """
    n, seed = checks.int_in("n", n, 2, MAX_SAMPLES), checks.seed(seed)
    x, y = data(n, seed)
    x_test, y_test = data(N_TEST, seed + TEST_SEED_OFFSET)
    fitted = fit(x, y)
    pred = predict(x, y, x_test, fitted)  # (N_TEST,)
    return _TrainTest(n, seed, x, y, fitted, float(np.mean((pred - y_test) ** 2)))


def _data_1d(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``make_data(n, seed=seed)``'s inputs and outputs, (N,) each."""
    data = make_data(n=n, seed=seed)
    return data.x, data.y


@dataclass(frozen=True)
class LearnedBandwidth:
    """One bandwidth learned on ``make_data(n, seed=seed)`` (:func:`fit_bandwidth`) and how it does."""

    n: int  # N: the data it was learned on is make_data(n, seed=seed)
    seed: int
    fit: BandwidthFit  # losses (T,), bandwidth path (T + 1,), the learned h
    curve: np.ndarray  # (Q,) NW with the learned h on the N_CURVE-point grid over [-3, 3]
    train_mse: float  # the last training loss (before the last step): fit.losses[-1]
    test_mse: float  # MSE of NW with the learned h on N_TEST fresh points (seed + TEST_SEED_OFFSET)


def learned_bandwidth(
    n: int,
    seed: int,
    *,
    leave_one_out: bool,
    steps: int = 300,
    lr: float = 0.05,
    init_bandwidth: float = 1.0,
    on_step: Callable[[int, float, float], None] | None = None,
) -> LearnedBandwidth:
    """Learn h on ``make_data(n, seed=seed)`` by :func:`fit_bandwidth`; its curve and test error.

    Args:
        n: samples N, 2..MAX_SAMPLES.
        seed: seed of the training data, >= 0 (the test data uses seed + TEST_SEED_OFFSET).
        leave_one_out, steps, lr, init_bandwidth, on_step: as :func:`fit_bandwidth`.

    Raises:
        ValueError: on n or seed out of range, or the arguments :func:`fit_bandwidth` rejects.
    """
    run = _train_and_test(
        n,
        seed,
        _data_1d,
        lambda x, y: fit_bandwidth(
            x,
            y,
            leave_one_out=leave_one_out,
            init_bandwidth=init_bandwidth,
            steps=steps,
            lr=lr,
            on_step=on_step,
        ),
        lambda x, y, x_new, fit: nw_predict(x, y, x_new, "gaussian", fit.bandwidth),
    )
    return LearnedBandwidth(
        n=run.n,
        seed=run.seed,
        fit=run.fit,
        curve=nw_predict(run.x, run.y, _curve_grid(), "gaussian", run.fit.bandwidth),
        train_mse=float(run.fit.losses[-1]),
        test_mse=run.test_mse,
    )


def _check_pair(loo: LearnedBandwidth | LearnedMetric, no_loo: LearnedBandwidth | LearnedMetric) -> None:
    """Check that ``loo`` and ``no_loo`` are the two objectives' fits on one data set.

    Raises:
        ValueError: if ``loo`` is not a leave-one-out fit, ``no_loo`` is one, or the two were
            learned on different data (n, seed).
    """
    if not loo.fit.leave_one_out or no_loo.fit.leave_one_out:
        raise ValueError("loo must be a leave-one-out fit and no_loo one without")
    if (loo.n, loo.seed) != (no_loo.n, no_loo.seed):
        raise ValueError(
            f"the fits were learned on different data: {loo.n, loo.seed} vs {no_loo.n, no_loo.seed}"
        )


@dataclass(frozen=True)
class BandwidthLearning:
    """The 1-D learnable kernel: h learned with and without leave-one-out on one data set.

    Shapes: N samples, Q = N_CURVE grid points.
    """

    x: np.ndarray  # (N,) the training inputs
    y: np.ndarray  # (N,) the training outputs
    grid: np.ndarray  # (Q,) where the fits' curves are drawn
    truth: np.ndarray  # (Q,) the noiseless target on the grid
    h_cv: float  # core's LOO-CV bandwidth (``select_bandwidth``): what LOO training should find
    loo: LearnedBandwidth  # point i left out of its own estimate
    no_loo: LearnedBandwidth  # point i included: h collapses toward 0

    @property
    def fits(self) -> tuple[LearnedBandwidth, LearnedBandwidth]:
        """(leave-one-out, point included): the order the page shows them in."""
        return self.loo, self.no_loo


def bandwidth_learning(loo: LearnedBandwidth, no_loo: LearnedBandwidth) -> BandwidthLearning:
    """Put the two fits of one data set together with the data, the truth and the LOO-CV h.

    Raises:
        ValueError: if ``loo`` is not a leave-one-out fit, ``no_loo`` is one, or the two were
            learned on different data (n, seed).
    """
    _check_pair(loo, no_loo)
    data = make_data(n=loo.n, seed=loo.seed)
    grid = _curve_grid()
    return BandwidthLearning(
        x=data.x,
        y=data.y,
        grid=grid,
        truth=data.truth(grid),
        h_cv=float(select_bandwidth(data.x, data.y, kernel="gaussian")),
        loo=loo,
        no_loo=no_loo,
    )


@dataclass(frozen=True)
class LearnedMetric:
    """One 2-D metric learned on ``data_2d(n, NOISE_2D, seed)`` (:func:`fit_metric`) and how it does."""

    n: int  # N: the data it was learned on is data_2d(n, NOISE_2D, seed)
    seed: int
    fit: MetricFit  # losses (T,), the metric (2, 2), length scales (2,) and their path (T + 1, 2)
    train_mse: float  # the last training loss (before the last step): fit.losses[-1]
    test_mse: float  # MSE of :func:`metric_predict` on N_TEST fresh points (seed + TEST_SEED_OFFSET)


def learned_metric(
    n: int,
    seed: int,
    *,
    leave_one_out: bool,
    steps: int = 300,
    lr: float = 0.05,
    init_bandwidth: float = 1.0,
    on_step: Callable[[int, float], None] | None = None,
) -> LearnedMetric:
    """Learn a metric on ``data_2d(n, NOISE_2D, seed)`` by :func:`fit_metric`; its test error.

    Args:
        n: samples N, 2..MAX_SAMPLES.
        seed: seed of the training data, >= 0 (the test data uses seed + TEST_SEED_OFFSET).
        leave_one_out, steps, lr, init_bandwidth, on_step: as :func:`fit_metric`.

    Raises:
        ValueError: on n or seed out of range, or the arguments :func:`fit_metric` rejects.
    """
    run = _train_and_test(
        n,
        seed,
        lambda n, seed: data_2d(n, NOISE_2D, seed),  # (N, 2), (N,)
        lambda x, y: fit_metric(
            x,
            y,
            leave_one_out=leave_one_out,
            init_bandwidth=init_bandwidth,
            steps=steps,
            lr=lr,
            on_step=on_step,
        ),
        lambda x, y, x_new, fit: metric_predict(x, y, x_new, fit.metric),
    )
    return LearnedMetric(
        n=run.n, seed=run.seed, fit=run.fit, train_mse=float(run.fit.losses[-1]), test_mse=run.test_mse
    )


@dataclass(frozen=True)
class MetricLearning:
    """The 2-D learnable kernel: a metric learned with and without leave-one-out on one data set.

    Raises:
        ValueError: if ``loo`` is not a leave-one-out fit, ``no_loo`` is one, or the two were
            learned on different data (n, seed).
    """

    loo: LearnedMetric  # point i left out: x₂ (irrelevant) gets a long length scale
    no_loo: LearnedMetric  # point i included: both length scales collapse

    def __post_init__(self) -> None:
        _check_pair(self.loo, self.no_loo)

    @property
    def fits(self) -> tuple[LearnedMetric, LearnedMetric]:
        """(leave-one-out, point included): the order the page shows them in."""
        return self.loo, self.no_loo
