"""Cached wrappers and helpers for the two attention pages (kernels-to-attention, scaled-dot-product).

Pages never touch torch: these wrappers call ``core`` (``core.attention_analysis`` for the scaled
dot-product page) and hand back numpy arrays in frozen dataclasses. Every cached function takes
only its arguments (no module globals) and keeps a bounded number of entries. The custom mask
editor's state lives in one bound text control (``sdp_cmask``, see
:func:`core.attention.mask_to_string`), so a hand-made mask is part of the URL; the data editor
only edits that text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core import attention as attn
from core import attention_analysis as aa
from core import kernel_attention as bridge
from core.data import make_data
from core.nadaraya_watson import nw_predict, nw_weights, select_bandwidth
from figures import attention as fa
from ui import caching
from ui.controls import BIND
from ui.i18n import t
from ui.layout import cached_figure

# Re-exported for the page (one vocabulary: the ids of core).
SCALE_MODES = attn.SCALE_MODES
scale_for = attn.scale_for
SOURCES = aa.SOURCES
MASK_MODES = aa.MASK_MODES
DK_OPTIONS = aa.DK_OPTIONS
TORCH_VERSION = aa.TORCH_VERSION
SdpInputs = aa.AttentionInputs
default_custom_mask = aa.default_custom_mask
build_mask = aa.build_mask
mask_text = aa.mask_text
apply_editor_edits = aa.apply_editor_edits
count_fully_masked = aa.count_fully_masked


# ----------------------------------------------------------------------------------------------
# scaled-dot-product: thin cached wrappers around core.attention_analysis
# ----------------------------------------------------------------------------------------------


@caching.data(max_entries=64)
def sdp_inputs(source: str, length: int, d_k: int, seed: int, n_pad: int) -> aa.AttentionInputs:
    """:func:`core.attention_analysis.make_inputs`, cached."""
    return aa.make_inputs(source, length, d_k, seed, n_pad)


@caching.data(max_entries=64)
def sdp_mask(mode: str, L: int, n_pad: int, custom_text: str | None) -> np.ndarray | None:
    """:func:`core.attention_analysis.build_mask`, cached (raises ValueError on a bad custom text)."""
    return aa.build_mask(mode, L, n_pad, custom_text)


@caching.data(max_entries=64)
def sdp_steps(inp: aa.AttentionInputs, mask: np.ndarray | None, scale: float) -> aa.PipelineSteps:
    """:func:`core.attention_analysis.pipeline_steps` (softmax), cached."""
    return aa.pipeline_steps(inp, mask, scale)


@caching.data(max_entries=64)
def sdp_naive(inp: aa.AttentionInputs, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """The additive -inf version's weights (L, S), cached (NaN rows where every key is masked)."""
    return aa.naive_weights(inp, mask, scale)


@caching.data(max_entries=32)
def sdp_compare_torch(inp: aa.AttentionInputs, mask: np.ndarray | None, scale: float) -> attn.TorchComparison:
    """Ours vs torch's built-in on the page's inputs, measured once per input (then cached)."""
    return aa.torch_comparison(inp, mask, scale, repeat=30)


@caching.data(max_entries=8)
def sdp_dk_experiment(seed: int) -> attn.DkExperiment:
    """The d_k experiment over ``DK_OPTIONS`` (L = S = 16, 32 trials)."""
    return attn.dk_experiment(list(aa.DK_OPTIONS), length=16, n_trials=32, seed=seed)


@caching.data(max_entries=64)
def row_stats(weights: np.ndarray) -> aa.RowStats:
    """:func:`core.attention_analysis.row_stats`, cached."""
    return aa.row_stats(weights)


@caching.data(max_entries=64)
def score_std(scores: np.ndarray) -> float:
    """:func:`core.attention_analysis.score_std`, cached."""
    return aa.score_std(scores)


@caching.data(max_entries=64)
def repeated_token_rows(tokens: tuple[str, ...], weights: np.ndarray) -> tuple[aa.RepeatedToken, ...]:
    """:func:`core.attention_analysis.repeated_token_rows`, cached."""
    return aa.repeated_token_rows(tuple(tokens), weights)


@caching.data(max_entries=32)
def normalizer_weights(
    inp: aa.AttentionInputs, mask: np.ndarray | None, scale: float
) -> tuple[aa.NormalizerWeights, ...]:
    """:func:`core.attention_analysis.normalizer_weights`, cached."""
    return aa.normalizer_weights(inp, mask, scale)


@caching.data(max_entries=32)
def nw_normalizers(bandwidth: float, x0: float) -> aa.NwNormalizers:
    """:func:`core.attention_analysis.nw_normalizers`, cached."""
    return aa.nw_normalizers(bandwidth, x0)


def mask_frame(mask: np.ndarray, labels: tuple[str, ...] | list[str]) -> pd.DataFrame:
    """The mask as a DataFrame of booleans: rows = queries, columns = keys (unique labels)."""
    return pd.DataFrame(np.asarray(mask, dtype=bool), index=list(labels), columns=list(labels))


def text_control(label_key: str, *, key: str, value: str = "", help_key: str | None = None) -> str:
    """A bound, keyed text input (``ui.controls`` has no text wrapper)."""
    return st.text_input(
        t(label_key), value=value, key=key, help=t(help_key) if help_key else None, bind=BIND
    )


# ----------------------------------------------------------------------------------------------
# kernels-to-attention
# ----------------------------------------------------------------------------------------------


@caching.data(max_entries=32)
def k2a_three_figures(n: int, seed: int, bandwidth: float, n_queries: int = 60) -> dict[str, Any]:
    """The post's three figures' data: NW (``core.nadaraya_watson``) vs attention (``core.kernel_attention``).

    Returns x, y (N,), the query grid (Q,), both weight matrices (Q, N), both fits (Q,) and the
    largest absolute differences between them.
    """
    data = make_data(n=n, seed=seed)
    xq = np.linspace(-3.0, 3.0, n_queries)
    w_nw = nw_weights(data.x, xq, kernel="gaussian", bandwidth=bandwidth)
    fit_nw = nw_predict(data.x, data.y, xq, kernel="gaussian", bandwidth=bandwidth)
    fit_att, w_att = bridge.nadaraya_watson_attention(data.x, data.y, xq, bandwidth)
    return {
        "x": data.x,
        "y": data.y,
        "truth": data.truth(xq),
        "xq": xq,
        "w_nw": w_nw,
        "w_att": w_att,
        "fit_nw": fit_nw,
        "fit_att": fit_att,
        "max_diff_weights": float(np.abs(w_nw - w_att).max()),
        "max_diff_fit": float(np.abs(fit_nw - fit_att).max()),
    }


@caching.data(max_entries=32)
def k2a_one_query(n: int, seed: int, bandwidth: float, x0: float) -> dict[str, Any]:
    """One query's NW weights (``nw_weights``) and attention weights (``core.kernel_attention``)."""
    data = make_data(n=n, seed=seed)
    xq = np.array([x0])
    w_nw = nw_weights(data.x, xq, kernel="gaussian", bandwidth=bandwidth)[0]
    pred, w_att = bridge.nadaraya_watson_attention(data.x, data.y, xq, bandwidth)
    return {
        "x": data.x,
        "y": data.y,
        "w_nw": w_nw,
        "w_att": w_att[0],
        "scores": bridge.gaussian_scores(xq, data.x, bandwidth)[0],
        "prediction": float(pred[0]),
        "max_diff": float(np.abs(w_nw - w_att[0]).max()),
    }


@caching.data(max_entries=32)
def k2a_dot_vs_gaussian(n_vectors: int, dim: int, temperature: float, spread: float, seed: int) -> dict:
    """Dot-product vs Gaussian weights for random queries/keys (keys' norms spread by ``spread``)."""
    q = bridge.random_vectors(n_vectors, dim, norm_spread=spread, seed=seed)
    k = bridge.random_vectors(n_vectors, dim, norm_spread=spread, seed=seed + 1)
    cmp = bridge.dot_vs_gaussian(q, k, temperature)
    return {
        "dot": cmp.dot,
        "gaussian": cmp.gaussian,
        "diff": cmp.dot - cmp.gaussian,
        "max_abs_diff": cmp.max_abs_diff,
        "key_norms": cmp.key_norms,
        "query_norms": cmp.query_norms,
        "key_log_bias": cmp.key_log_bias,
    }


@caching.data(max_entries=32)
def _fit_1d(n: int, seed: int, steps: int, lr: float, h0: float, loo: bool) -> dict[str, Any]:
    """One learned bandwidth (with or without leave-one-out), its losses and its test error."""
    data = make_data(n=n, seed=seed)
    test = make_data(n=400, seed=seed + 1000)
    f = bridge.fit_bandwidth(data.x, data.y, leave_one_out=loo, init_bandwidth=h0, steps=steps, lr=lr)
    xg = np.linspace(-3, 3, 300)
    return {
        "losses": f.losses,
        "bandwidths": f.bandwidths,
        "h": f.bandwidth,
        "train_mse": float(f.losses[-1]),
        "test_mse": float(
            np.mean((nw_predict(data.x, data.y, test.x, "gaussian", f.bandwidth) - test.y) ** 2)
        ),
        "curve": nw_predict(data.x, data.y, xg, "gaussian", f.bandwidth),
    }


@caching.data(max_entries=32)
def _h_cv(n: int, seed: int) -> float:
    data = make_data(n=n, seed=seed)
    return float(select_bandwidth(data.x, data.y, kernel="gaussian"))


def k2a_learn_1d(
    n: int, seed: int, steps: int, lr: float, h0: float, on_fit: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Learn h with and without leave-one-out; the LOO-CV h of core; test MSE on fresh data.

    Each fit is cached; ``on_fit(k)`` is called after the k-th of the two (a progress bar).
    """
    fits = {}
    for k, loo in enumerate((True, False), start=1):
        fits[loo] = _fit_1d(n, seed, steps, lr, h0, loo)
        if on_fit is not None:
            on_fit(k)
    data = make_data(n=n, seed=seed)
    xg = np.linspace(-3, 3, 300)
    return {
        "x": data.x,
        "y": data.y,
        "grid": xg,
        "truth": data.truth(xg),
        "h_cv": _h_cv(n, seed),
        "fits": fits,
    }


@caching.data(max_entries=32)
def _fit_2d(n: int, seed: int, steps: int, lr: float, h0: float, loo: bool) -> dict[str, Any]:
    """One learned 2-D Mahalanobis metric (with or without leave-one-out) and its test error."""
    x, y = bridge.data_2d(n, 0.1, seed)
    x_test, y_test = bridge.data_2d(400, 0.1, seed + 1000)
    f = bridge.fit_metric(x, y, leave_one_out=loo, init_bandwidth=h0, steps=steps, lr=lr)
    pred = bridge.metric_predict(x, y, x_test, f.metric)
    return {
        "losses": f.losses,
        "metric": f.metric,
        "length_scales": f.length_scales,
        "path": f.length_scale_path,
        "train_mse": float(f.losses[-1]),
        "test_mse": float(np.mean((pred - y_test) ** 2)),
    }


def k2a_learn_2d(
    n: int, seed: int, steps: int, lr: float, h0: float, on_fit: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Learn a 2-D Mahalanobis metric with and without leave-one-out; test MSE on fresh data.

    Each fit is cached; ``on_fit(k)`` is called after the k-th of the two (a progress bar).
    """
    out: dict[Any, Any] = {}
    for k, loo in enumerate((True, False), start=1):
        out[loo] = _fit_2d(n, seed, steps, lr, h0, loo)
        if on_fit is not None:
            on_fit(k)
    return {"fits": out}


# ----------------------------------------------------------------------------------------------
# scaled-dot-product: what the page-wide controls select, and cached figure builders
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SdpControls:
    """The page-wide controls of the scaled-dot-product page (every section depends on them)."""

    source: str
    length: int
    seed: int
    dk: int
    scale_mode: str
    temperature: float
    mask_mode: str
    n_pad: int


@dataclass(frozen=True)
class SdpSetup:
    """The page's inputs, mask (None = no mask), scale factor 1/τ and pipeline steps."""

    controls: SdpControls
    inputs: aa.AttentionInputs
    mask: np.ndarray | None
    scale: float
    steps: aa.PipelineSteps

    @property
    def labels(self) -> tuple[str, ...]:
        """Unique tick labels of the L tokens."""
        return self.inputs.labels

    @property
    def temperature(self) -> float:
        """τ = 1 / scale: what the scores are divided by."""
        return 1.0 / self.scale


score_heatmap = cached_figure(fa.score_heatmap)
weights_heatmap = cached_figure(fa.weights_heatmap)
output_heatmap = cached_figure(fa.output_heatmap)
qkv_heatmaps = cached_figure(fa.qkv_heatmaps)
line_panels = cached_figure(fa.line_panels)
pipeline_heatmaps = cached_figure(fa.pipeline_heatmaps)
heatmap_row = cached_figure(fa.heatmap_row)
normaliser_rows = cached_figure(fa.normaliser_rows)


def dk_table(e: attn.DkExperiment) -> pd.DataFrame:
    """The d_k experiment as a narrow table: one row per measured quantity, one column per d_k."""
    rows = {
        t("sdp.col_var"): [f"{v:.2f}" for v in e.var_measured],
        t("sdp.series_entropy_scaled"): [f"{v:.3f}" for v in e.entropy_scaled],
        t("sdp.series_entropy_unscaled"): [f"{v:.3f}" for v in e.entropy_unscaled],
        t("sdp.series_max_unscaled"): [f"{v:.3f}" for v in e.max_weight_unscaled],
        t("sdp.series_grad_scaled"): [f"{v:.2g}" for v in e.grad_scores_scaled],
        t("sdp.series_grad_unscaled"): [f"{v:.2g}" for v in e.grad_scores_unscaled],
        t("sdp.col_cv_scaled"): [f"{v:.2f}" for v in e.grad_query_cv_scaled],
        t("sdp.col_cv_unscaled"): [f"{v:.2f}" for v in e.grad_query_cv_unscaled],
    }
    columns = [f"d_k = {int(d)}" for d in e.d_k]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis(
        t("sdp.dk_table_quantity")
    )


def dk_series(e: attn.DkExperiment) -> dict[str, np.ndarray]:
    """The d_k experiment's curves by series id (the ids of the ``sdp.series_*`` catalogue keys)."""
    return {
        "var_measured": e.var_measured,
        "var_theory": e.var_theory,
        "var_scaled": e.var_scaled,
        "entropy_scaled": e.entropy_scaled,
        "entropy_unscaled": e.entropy_unscaled,
        "max_scaled": e.max_weight_scaled,
        "max_unscaled": e.max_weight_unscaled,
        "sat_unscaled": e.saturated_unscaled,
        "grad_scaled": e.grad_scores_scaled,
        "grad_unscaled": e.grad_scores_unscaled,
    }
