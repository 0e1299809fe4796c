"""core.kernel_attention: NW as attention equals nw_predict; dot product vs Gaussian; learnable kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.data import make_data
from core.kernel_attention import (
    ADAM_BETAS,
    _bandwidth_loss_grad,
    _metric_loss_grad,
    data_2d,
    dot_product_weights,
    dot_vs_gaussian,
    fit_bandwidth,
    fit_metric,
    gaussian_scores,
    gaussian_vector_weights,
    metric_predict,
    nadaraya_watson_attention,
    random_vectors,
)
from core.nadaraya_watson import nw_predict, nw_weights, select_bandwidth


def _data(n, noise, seed):
    d = make_data(n=n, noise=noise, seed=seed)
    return d.x, d.y


@pytest.mark.parametrize("h", [0.05, 0.3, 1.0, 5.0])
def test_bridge_equals_nw_predict(h):
    x, y = _data(120, 0.1, 1)
    xq = np.linspace(-3.5, 3.5, 57)
    y_hat, w = nadaraya_watson_attention(x, y, xq, h)
    assert w.shape == (57, 120)
    assert np.abs(y_hat - nw_predict(x, y, xq, kernel="gaussian", bandwidth=h)).max() < 1e-13
    assert np.abs(w - nw_weights(x, xq, kernel="gaussian", bandwidth=h)).max() < 1e-13
    assert np.allclose(w.sum(1), 1.0, atol=1e-13)


def test_bridge_matches_a_plain_loop():
    x, y = _data(15, 0.1, 2)
    xq = np.array([-1.0, 0.2, 2.5])
    y_hat, w = nadaraya_watson_attention(x, y, xq, 0.7)
    for qi, q in enumerate(xq):
        k = [math.exp(-((q - xi) ** 2) / (2 * 0.7**2)) for xi in x]
        for i in range(15):
            assert w[qi, i] == pytest.approx(k[i] / sum(k), abs=1e-15)
        assert y_hat[qi] == pytest.approx(
            sum(ki * yi for ki, yi in zip(k, y, strict=True)) / sum(k), abs=1e-14
        )
    assert gaussian_scores(xq, x, 0.7)[1, 3] == pytest.approx(-((0.2 - x[3]) ** 2) / (2 * 0.49))


def test_identity_unit_norm_dot_product_is_gaussian():
    q = random_vectors(9, 5, seed=3)
    k = random_vectors(11, 5, seed=4)
    assert np.allclose(np.linalg.norm(k, axis=1), 1.0)
    for tau in (0.05, 0.5, 2.0):
        cmp = dot_vs_gaussian(q, k, tau)
        assert cmp.max_abs_diff < 1e-14
        # the kernels themselves differ by the constant e^{1/τ}, checked entry by entry
        for i in range(3):
            for j in range(4):
                dot = math.exp(float(q[i] @ k[j]) / tau)
                gauss = math.exp(-float(((q[i] - k[j]) ** 2).sum()) / (2 * tau))
                assert dot / gauss == pytest.approx(math.exp(1 / tau), rel=1e-12)


def test_identity_breaks_with_unequal_key_norms_by_the_key_factor():
    q = random_vectors(6, 4, seed=5)
    k = random_vectors(7, 4, norm_spread=0.8, seed=6)
    tau = 0.5
    cmp = dot_vs_gaussian(q, k, tau)
    assert cmp.max_abs_diff > 1e-3
    # Gaussian weights = dot weights re-weighted by exp(-|k|²/(2τ)), renormalised (numpy reference)
    dot = np.exp(q @ k.T / tau)
    dot /= dot.sum(1, keepdims=True)
    assert np.allclose(cmp.dot, dot, atol=1e-14)
    reweighted = dot * np.exp(-(np.linalg.norm(k, axis=1) ** 2) / (2 * tau))
    reweighted /= reweighted.sum(1, keepdims=True)
    assert np.allclose(cmp.gaussian, reweighted, atol=1e-13)
    assert np.allclose(cmp.key_log_bias, np.linalg.norm(k, axis=1) ** 2 / (2 * tau))
    # equal (not unit) norms: identical again
    k_equal = 2.0 * random_vectors(7, 4, seed=6)
    assert dot_vs_gaussian(q, k_equal, tau).max_abs_diff < 1e-13


def test_vector_weights_against_loops():
    q, k = random_vectors(3, 2, seed=7), random_vectors(4, 2, norm_spread=0.5, seed=8)
    d = dot_product_weights(q, k, 0.3)
    g = gaussian_vector_weights(q, k, 0.6)
    for i in range(3):
        e = [math.exp(float(q[i] @ k[j]) / 0.3) for j in range(4)]
        f = [math.exp(-float(((q[i] - k[j]) ** 2).sum()) / (2 * 0.36)) for j in range(4)]
        assert d[i].tolist() == pytest.approx([v / sum(e) for v in e], abs=1e-15)
        assert g[i].tolist() == pytest.approx([v / sum(f) for v in f], abs=1e-15)


def test_learnable_bandwidth_collapses_without_leave_one_out():
    x, y = _data(100, 0.1, 0)
    h_cv = select_bandwidth(x, y, kernel="gaussian")
    with_loo = fit_bandwidth(x, y, leave_one_out=True, steps=300)
    without = fit_bandwidth(x, y, leave_one_out=False, steps=300)
    # leave-one-out gradient descent lands on the LOO-CV optimum of core.nadaraya_watson
    assert with_loo.bandwidth == pytest.approx(h_cv, rel=0.03)
    # without it, h heads to 0 and the training error with it
    assert without.bandwidth < 0.02 * h_cv
    assert without.losses[-1] < 1e-6 < with_loo.losses[-1]
    assert np.all(np.diff(without.bandwidths[20:]) < 0)
    assert without.losses.shape == (300,)
    assert without.bandwidths.shape == (301,)
    # the collapsed h fits the noise: worse on fresh data from the same curve
    x_test, y_test = _data(400, 0.1, 99)
    mse = {
        f.leave_one_out: float(np.mean((nw_predict(x, y, x_test, "gaussian", f.bandwidth) - y_test) ** 2))
        for f in (with_loo, without)
    }
    assert mse[False] > 1.3 * mse[True]


def test_learnable_metric_finds_the_irrelevant_axis_only_with_leave_one_out():
    x, y = data_2d(100, 0.1, seed=0)
    with_loo = fit_metric(x, y, leave_one_out=True, steps=300)
    without = fit_metric(x, y, leave_one_out=False, steps=300)
    ls_loo, ls_no = with_loo.length_scales, without.length_scales
    assert ls_loo[1] > 10 * ls_loo[0]  # x2 does not matter: long length scale
    assert 0.05 < ls_loo[0] < 1.0
    assert (ls_no < 0.25 * ls_loo[0]).all()  # everything collapses
    assert np.allclose(with_loo.metric, with_loo.metric.T)
    assert np.linalg.eigvalsh(with_loo.metric).min() > 0
    # the learned metric predicts like the scores it was trained with (a loop reference)
    xq = np.array([[0.1, -2.0], [1.5, 2.5]])
    pred = metric_predict(x, y, xq, with_loo.metric)
    for qi in range(2):
        k = [math.exp(-0.5 * float((xq[qi] - xi) @ with_loo.metric @ (xq[qi] - xi))) for xi in x]
        assert pred[qi] == pytest.approx(sum(a * b for a, b in zip(k, y, strict=True)) / sum(k), rel=1e-10)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nadaraya_watson_attention([1, 2], [1], [0], 0.5), "same length"),
        (lambda: nadaraya_watson_attention([1, 2], [1, 2], [0], 0.0), "bandwidth"),
        (lambda: nadaraya_watson_attention([1, np.nan], [1, 2], [0], 1.0), "NaN"),
        (lambda: dot_vs_gaussian(np.ones((2, 3)), np.ones((2, 4)), 1.0), "share D"),
        (lambda: dot_vs_gaussian(np.ones((2, 3)), np.ones((2, 3)), -1.0), "temperature"),
        (lambda: random_vectors(0, 3), "n must"),
        (lambda: random_vectors(3, 3, norm_spread=9.0), "norm_spread"),
        (lambda: fit_bandwidth([0.0, 1.0], [0.0, 1.0], steps=0), "steps"),
        (lambda: fit_bandwidth([0.0, 1.0], [0.0, 1.0], lr=2.0), "lr"),
        (lambda: fit_metric(np.zeros((3, 3)), np.zeros(3)), "N, 2"),
        (lambda: data_2d(1), "n must"),
        (
            lambda: metric_predict(np.zeros((3, 2)), np.zeros(3), np.zeros((1, 2)), -np.eye(2)),
            "positive definite",
        ),
    ],
)
def test_invalid_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ----------------------------------------------------------------------------------------------
# the learnable kernels against torch: autograd gradients, torch.optim.Adam paths
# ----------------------------------------------------------------------------------------------


def _torch_loss(scores, y, leave_one_out):
    """Reference: softmax attention of each training point (torch), its diagonal masked with -inf."""
    import torch

    if leave_one_out:
        scores = scores.masked_fill(torch.eye(y.shape[0], dtype=torch.bool), -math.inf)
    return ((torch.softmax(scores, dim=1) @ y - y) ** 2).mean()


def _torch_bandwidth_path(x, y, leave_one_out, h0, lr, steps):
    import torch

    x, y = torch.from_numpy(x), torch.from_numpy(y)
    log_h = torch.tensor(math.log(h0), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([log_h], lr=lr, betas=ADAM_BETAS)
    losses, path = [], [h0]
    for _ in range(steps):
        opt.zero_grad()
        loss = _torch_loss(-((x[:, None] - x[None, :]) ** 2) / (2 * torch.exp(2 * log_h)), y, leave_one_out)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        path.append(math.exp(log_h.item()))
    return np.array(losses), np.array(path)


def _torch_metric_scores(x, params):
    """Reference scores -(x_i - x_j)ᵀ A Aᵀ (x_i - x_j) / 2, A = [[e^a, 0], [o, e^b]] (torch)."""
    import torch

    a = torch.stack(
        [torch.stack([params[0].exp(), params[0] * 0]), torch.stack([params[2], params[1].exp()])]
    )
    diff = x[:, None, :] - x[None, :, :]  # (N, N, 2)
    return -torch.einsum("ijd,de,ije->ij", diff, a @ a.T, diff) / 2


def _torch_metric_path(x, y, leave_one_out, h0, lr, steps):
    import torch

    x, y = torch.from_numpy(x), torch.from_numpy(y)
    params = torch.tensor([-math.log(h0), -math.log(h0), 0.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([params], lr=lr, betas=ADAM_BETAS)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = _torch_loss(_torch_metric_scores(x, params), y, leave_one_out)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), params.detach().numpy()


@pytest.mark.parametrize("leave_one_out", [True, False])
@pytest.mark.parametrize("log_h", [-4.0, -1.5, 0.0, 1.2])
def test_bandwidth_gradient_is_torch_autograds(leave_one_out, log_h):
    import torch

    x, y = _data(60, 0.2, 4)
    x[7] = x[3]  # a duplicate: its nearest other point is at distance 0
    d2 = (x[:, None] - x[None, :]) ** 2
    nearest2 = np.where(np.eye(60, dtype=bool), np.inf, d2).min(1) if leave_one_out else np.zeros(60)
    loss, grad = _bandwidth_loss_grad(d2, nearest2, y, log_h, leave_one_out)
    t = torch.tensor(log_h, dtype=torch.float64, requires_grad=True)
    X, Y = torch.from_numpy(x), torch.from_numpy(y)
    ref = _torch_loss(-((X[:, None] - X[None, :]) ** 2) / (2 * torch.exp(2 * t)), Y, leave_one_out)
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    assert grad == pytest.approx(t.grad.item(), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("leave_one_out", [True, False])
@pytest.mark.parametrize("params", [(0.0, 0.0, 0.0), (1.3, -0.7, 0.4), (-0.5, 2.0, -1.1)])
def test_metric_gradient_is_torch_autograds(leave_one_out, params):
    import torch

    x, y = data_2d(50, 0.1, seed=2)
    diff = x[:, None, :] - x[None, :, :]
    parts = (diff[..., 0] ** 2, diff[..., 0] * diff[..., 1], diff[..., 1] ** 2)
    loss, grad = _metric_loss_grad(parts, y, np.array(params), leave_one_out)
    p = torch.tensor(params, dtype=torch.float64, requires_grad=True)
    ref = _torch_loss(_torch_metric_scores(torch.from_numpy(x), p), torch.from_numpy(y), leave_one_out)
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    assert grad == pytest.approx(p.grad.numpy(), rel=1e-8, abs=1e-14)


@pytest.mark.parametrize(
    ("leave_one_out", "h0", "lr"), [(True, 1.0, 0.05), (True, 0.2, 0.3), (False, 2.0, 0.1)]
)
def test_fit_bandwidth_follows_torch_adam_on_autograd(leave_one_out, h0, lr):
    x, y = _data(40, 0.1, 5)
    fit = fit_bandwidth(x, y, leave_one_out=leave_one_out, init_bandwidth=h0, lr=lr, steps=150)
    losses, path = _torch_bandwidth_path(x, y, leave_one_out, h0, lr, 150)
    assert fit.losses == pytest.approx(losses, rel=1e-8)
    assert fit.bandwidths == pytest.approx(path, rel=1e-8)
    assert fit.bandwidth == fit.bandwidths[-1]


@pytest.mark.parametrize(("leave_one_out", "h0", "lr"), [(True, 1.0, 0.05), (False, 0.5, 0.2)])
def test_fit_metric_follows_torch_adam_on_autograd(leave_one_out, h0, lr):
    x, y = data_2d(40, 0.1, seed=6)
    fit = fit_metric(x, y, leave_one_out=leave_one_out, init_bandwidth=h0, lr=lr, steps=120)
    losses, params = _torch_metric_path(x, y, leave_one_out, h0, lr, 120)
    assert fit.losses == pytest.approx(losses, rel=1e-8)
    a = np.array([[math.exp(params[0]), 0.0], [params[2], math.exp(params[1])]])
    assert fit.metric == pytest.approx(a @ a.T, rel=1e-7)
    assert fit.length_scales == pytest.approx(1 / np.sqrt(np.diag(a @ a.T)), rel=1e-7)
    assert fit.length_scale_path.shape == (121, 2)
    assert fit.length_scale_path[0] == pytest.approx([h0, h0])


def test_fits_stay_finite_at_extreme_bandwidths():
    x, y = _data(30, 0.1, 7)
    x[5] = x[4]  # duplicate x: nearest other at distance 0
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # underflow to 0 is fine
        for loo in (True, False):
            for h0 in (1e-4, 1e3):
                fit = fit_bandwidth(x, y, leave_one_out=loo, init_bandwidth=h0, lr=1.0, steps=40)
                assert np.isfinite(fit.losses).all()
                assert np.isfinite(fit.bandwidths).all()
            m = fit_metric(np.c_[x, x[::-1]], y, leave_one_out=loo, init_bandwidth=1e-3, lr=1.0, steps=40)
            assert np.isfinite(m.losses).all()
            assert np.isfinite(m.metric).all()
