"""Cached wrappers and helpers of the scaled-dot-product page.

The page never touches torch: these wrappers call ``core.lessons.scaled_dot_product`` and hand back
numpy arrays in frozen dataclasses. Every cached function takes
only its arguments (no module globals) and keeps a bounded number of entries. The custom mask
editor's state lives in one bound text control (``sdp_cmask``, see
:func:`core.attention.mask_to_string`), so a hand-made mask is part of the URL; the data editor
only edits that text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core import attention as attn
from core.lessons import scaled_dot_product as aa
from figures import attention_shared
from figures import scaled_dot_product as fa
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
# scaled-dot-product: thin cached wrappers around core.lessons.scaled_dot_product
# ----------------------------------------------------------------------------------------------


@caching.data(max_entries=64)
def sdp_inputs(source: str, length: int, d_k: int, seed: int, n_pad: int) -> aa.AttentionInputs:
    """:func:`core.lessons.scaled_dot_product.make_inputs`, cached."""
    return aa.make_inputs(source, length, d_k, seed, n_pad)


@caching.data(max_entries=64)
def sdp_mask(mode: str, L: int, n_pad: int, custom_text: str | None) -> np.ndarray | None:
    """:func:`core.lessons.scaled_dot_product.build_mask`, cached (raises ValueError on a bad custom text)."""
    return aa.build_mask(mode, L, n_pad, custom_text)


@caching.data(max_entries=64)
def sdp_steps(inp: aa.AttentionInputs, mask: np.ndarray | None, scale: float) -> aa.PipelineSteps:
    """:func:`core.lessons.scaled_dot_product.pipeline_steps` (softmax), cached."""
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
def sdp_dk_experiment(seed: int) -> aa.DkExperiment:
    """The d_k experiment over ``DK_OPTIONS`` (L = S = 16, 32 trials)."""
    return aa.dk_experiment(list(aa.DK_OPTIONS), length=16, n_trials=32, seed=seed)


@caching.data(max_entries=64)
def row_stats(weights: np.ndarray) -> aa.RowStats:
    """:func:`core.lessons.scaled_dot_product.row_stats`, cached."""
    return aa.row_stats(weights)


@caching.data(max_entries=64)
def score_std(scores: np.ndarray) -> float:
    """:func:`core.lessons.scaled_dot_product.score_std`, cached."""
    return aa.score_std(scores)


@caching.data(max_entries=64)
def repeated_token_rows(tokens: tuple[str, ...], weights: np.ndarray) -> tuple[aa.RepeatedToken, ...]:
    """:func:`core.lessons.scaled_dot_product.repeated_token_rows`, cached."""
    return aa.repeated_token_rows(tuple(tokens), weights)


@caching.data(max_entries=32)
def normalizer_weights(
    inp: aa.AttentionInputs, mask: np.ndarray | None, scale: float
) -> tuple[aa.NormalizerWeights, ...]:
    """:func:`core.lessons.scaled_dot_product.normalizer_weights`, cached."""
    return aa.normalizer_weights(inp, mask, scale)


@caching.data(max_entries=32)
def nw_normalizers(bandwidth: float, x0: float) -> aa.NwNormalizers:
    """:func:`core.lessons.scaled_dot_product.nw_normalizers`, cached."""
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
heatmap_row = cached_figure(attention_shared.heatmap_row)
normaliser_rows = cached_figure(fa.normaliser_rows)


def dk_table(e: aa.DkExperiment) -> pd.DataFrame:
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


def dk_series(e: aa.DkExperiment) -> dict[str, np.ndarray]:
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
