"""Cached wrappers and helpers of the scaled-dot-product page.

The page never touches torch: these wrappers call ``core.lessons.scaled_dot_product`` and hand back
numpy arrays in frozen dataclasses. Every cached function takes
only its arguments (no module globals) and keeps a bounded number of entries. The custom mask
editor's state lives in one bound text control (``sdp_cmask``, see
:func:`core.attention.mask_to_string`), so a hand-made mask is part of the URL; the data editor
only edits that text.

Below the wrappers: what the page's sections draw with (its controls and their callbacks, the
mask editor, the figures with their translated ``Labels``, the metrics, tables and the numbers
each question quotes), so the page reads as its table of contents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core import attention as attn
from core.lessons import scaled_dot_product as aa
from figures import attention_shared
from figures import scaled_dot_product as fa
from figures.attention_shared import vline_marks
from figures.common import Labels
from ui import caching
from ui import controls as uc
from ui import live_slider as live
from ui.controls import BIND
from ui.i18n import t
from ui.layout import cached, show_figure, table
from ui.plotly_spec import Marks

DK_OPTIONS = aa.DK_OPTIONS
#: Height of one row of Streamlit's data editor (px), to size the mask editor to every row.
EDITOR_ROW_PX = 35


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
    """The page's view (every section takes it): its controls, inputs, mask (None = no mask),
    scale factor 1/τ and pipeline steps."""

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


# ----------------------------------------------------------------------------------------------
# the page-wide controls, their callbacks (run before the next script run, so they may set bound
# controls) and the mask editor
# ----------------------------------------------------------------------------------------------


def set_controls(**values: object) -> None:
    """Button callback: set bound controls (``{key: value}``) before the next run."""
    for key, value in values.items():
        st.session_state[key] = value


def empty_row_mask(L: int) -> None:
    """Button callback: custom mask = causal with every key of query 0 masked (the NaN trap)."""
    set_controls(sdp_mask="custom", sdp_cmask=empty_row_mask_text(L))


def empty_row_mask_text(L: int) -> str:
    """The text of :func:`empty_row_mask`'s mask: causal, query 0 sees no key."""
    return "0" + aa.default_custom_mask(L)[1:]


def _on_mask_edit(editor_key: str, L: int, labels: tuple[str, ...]) -> None:
    edits = st.session_state.get(editor_key) or {}
    text = st.session_state.get("sdp_cmask", "") or aa.default_custom_mask(L)
    st.session_state["sdp_cmask"] = aa.apply_editor_edits(text, L, edits.get("edited_rows", {}), labels)


def _choice_then_slider(where, radio: Mapping, when: str, slider: Mapping, otherwise: int) -> tuple[str, int]:
    """A vertical radio and, when it says ``when``, the integer slider it opens (else ``otherwise``).

    ``radio`` / ``slider``: the keyword arguments of ``ui.controls.radio`` / ``ui.controls.slider``.
    """
    choice = uc.radio(**radio, horizontal=False, where=where)
    return choice, int(uc.slider(**slider, where=where)) if choice == when else otherwise


def input_controls(where) -> tuple[str, int, int]:
    """The inputs: (source, length L (8 unless random), seed)."""
    source, length = _choice_then_slider(
        where,
        {"label_key": "sdp.input", "key": "sdp_input", "options": aa.SOURCES, "option_prefix": "sdp.input_"},
        "random",
        {"label_key": "sdp.length", "key": "sdp_len", "min_value": 2, "max_value": 32, "value": 8, "step": 1},
        8,
    )
    return source, length, uc.seed("sdp_seed", value=0, where=where)


def scale_mode_control(where) -> str:
    """The scale's radio: √d_k, one or a custom temperature."""
    return uc.radio(
        "sdp.scale", key="sdp_scale", options=attn.SCALE_MODES, option_prefix="sdp.scale_", where=where
    )


def mask_controls(where) -> tuple[str, int]:
    """The mask: (mode, padding keys (0 unless padding))."""
    return _choice_then_slider(
        where,
        {"label_key": "sdp.mask", "key": "sdp_mask", "options": aa.MASK_MODES, "option_prefix": "sdp.mask_"},
        "padding",
        {"label_key": "sdp.pad", "key": "sdp_pad", "min_value": 0, "max_value": 32, "value": 2, "step": 1,
         "help_key": "sdp.pad_help"},
        0,
    )  # fmt: skip


def mask_editor(L: int, labels: tuple[str, ...]) -> str:
    """The custom mask: a bound text (the URL form) and a grid of checkboxes that edits it."""
    st.subheader(t("sdp.editor_title"))
    st.markdown(t("sdp.editor_body"))
    text = text_control("sdp.editor_text", key="sdp_cmask", help_key="sdp.editor_text_help")
    try:
        mask = sdp_mask("custom", L, 0, text)
    except ValueError:
        st.warning(t("sdp.mask_invalid", L=L))
        mask = sdp_mask("causal", L, 0, None)
    current = text.strip() if text and text.strip() else aa.default_custom_mask(L)
    editor_key = f"sdp_mask_editor_{L}_{current}"
    st.data_editor(
        mask_frame(mask, labels),
        key=editor_key,
        on_change=_on_mask_edit,
        args=(editor_key, L, labels),
        width="stretch",
        height=EDITOR_ROW_PX * (L + 1) + 3,  # header + every row: the last row is never hidden
    )
    st.caption(t("sdp.editor_caption", text=aa.mask_text(mask)))
    return text


def setup_view(c: SdpControls) -> SdpSetup | None:
    """The page's view: Q, K, V, the mask (with its editor) and the pipeline; None (and an error)
    on bad sizes."""
    try:
        inp = sdp_inputs(c.source, c.length, c.dk, c.seed, c.n_pad)
        scale = attn.scale_for(c.scale_mode, c.dk, c.temperature)
    except ValueError:
        st.error(t("sdp.input_error"))
        return None
    L = len(inp.labels)
    if c.mask_mode == "padding":
        st.caption(t("sdp.pad_caption", n=inp.n_pad, L=L))
    text = mask_editor(L, inp.labels) if c.mask_mode == "custom" else None
    try:
        mask = sdp_mask(c.mask_mode, L, inp.n_pad, text)
    except ValueError:
        mask = sdp_mask("causal", L, 0, None)
    return SdpSetup(c, inp, mask, scale, sdp_steps(inp, mask, scale))


# ----------------------------------------------------------------------------------------------
# what the sections show: figures with their labels, metrics, tables, the numbers questions quote
# ----------------------------------------------------------------------------------------------


def _qk_labels(title: str = "") -> Labels:
    """A weight or score map's words: keys across, queries down."""
    return Labels.of(title=title, x=t("sdp.axis_key"), y=t("sdp.axis_query"))


def show_qkv(s: SdpSetup) -> None:
    """Q, K and V as heatmaps, one row per token."""
    dk = s.controls.dk
    fig = cached(fa.qkv_heatmaps)(
        s.inputs.q,
        s.inputs.k,
        s.inputs.v,
        tokens=s.labels,
        titles=(t("sdp.fig_q", dk=dk), t("sdp.fig_k", dk=dk), t("sdp.fig_v")),
        labels=Labels.of(x=t("sdp.axis_dk"), y=t("sdp.axis_token"), dv=t("sdp.axis_dv")),
        height=max(320, 60 + 22 * len(s.labels)),
    )
    show_figure(fig, key="sdp_fig_qkv", look_for_key="sdp.look_qkv", code=aa.make_inputs)


def show_heat(kind: str, z: np.ndarray, s: SdpSetup, title: str, key: str) -> None:
    """One (L, S) map of ``kind`` "scores" or "weights", with its note ``sdp.look_<key's end>``."""
    builder = {"scores": cached(fa.score_heatmap), "weights": cached(fa.weights_heatmap)}[kind]
    fig = builder(z, x_labels=s.labels, y_labels=s.labels, labels=_qk_labels(title))
    look_key = f"sdp.look_{key.removeprefix('sdp_fig_')}"
    show_figure(fig, key=key, look_for_key=look_key, code=attn.attention_steps)


def pipeline_metrics(s: SdpSetup, stats: aa.RowStats) -> None:
    """τ, the scale 1/τ, the raw scores' spread, the peak weight and the weights' entropy."""
    m = st.columns(5)
    m[0].metric(t("sdp.metric_temperature"), f"{s.temperature:.4g}", help=t("sdp.metric_temperature_help"))
    m[1].metric(t("sdp.metric_scale"), f"{s.scale:.4g}", help=t("sdp.metric_scale_help"))
    m[2].metric(t("sdp.metric_raw_std"), f"{score_std(s.steps.raw):.3g}")
    m[3].metric(t("sdp.metric_max_weight"), f"{stats.max_weight:.3f}")
    m[4].metric(t("sdp.metric_entropy"), f"{stats.entropy:.3f}", help=t("sdp.metric_entropy_help"))


def show_pipeline(s: SdpSetup, stats: aa.RowStats) -> None:
    """The four steps (raw, scaled, masked scores; weights) as one figure of four panels."""
    tau, factor = f"{s.temperature:.3g}", f"{s.scale:.3g}"
    titles = {
        "raw": t("sdp.fig_raw"),
        "scaled": t("sdp.fig_scaled", tau=tau, scale=factor),
        "masked": t("sdp.fig_masked", mask=t(f"sdp.mask_{s.controls.mask_mode}")),
        "weights": t("sdp.fig_weights"),
    }
    z = {"raw": s.steps.raw, "scaled": s.steps.scaled, "masked": s.steps.masked, "weights": s.steps.weights}
    fig = cached(fa.pipeline_heatmaps)(
        tuple((titles[k], z[k], "weights" if k == "weights" else "scores") for k in titles),
        x_labels=s.labels,
        y_labels=s.labels,
        labels=_qk_labels(),
        panel_height=max(300, 80 + 24 * len(s.labels)),
    )  # one chart: a step of a page-wide control redraws one chart, not four
    show_figure(
        fig,
        key="sdp_fig_pipeline",
        looks=[(titles[k], f"sdp.look_{k}") for k in titles],
        code=attn.attention_steps,
        max_weight=f"{stats.max_weight:.3f}",
    )


def show_output(s: SdpSetup) -> None:
    """The output (L, Dv), one row per query."""
    labels = Labels.of(title=t("sdp.fig_output"), x=t("sdp.axis_dv"), y=t("sdp.axis_query"))
    fig = cached(fa.output_heatmap)(s.steps.output, y_labels=s.labels, labels=labels)
    show_figure(fig, key="sdp_fig_output", look_for_key="sdp.look_output", code=attn.attention_steps)


def repeated_tokens(s: SdpSetup) -> None:
    """Tokens that occur twice get the same weight row: the table that shows it (sentences only)."""
    if not s.inputs.tokens:
        st.markdown(t("sdp.random_inputs_note"))
        return
    st.markdown(t("sdp.repeated_tokens"))
    rep = repeated_token_rows(s.inputs.tokens, s.steps.weights)
    if rep:
        table(
            {
                t("sdp.col_token"): [r.token for r in rep],
                t("sdp.col_positions"): [", ".join(map(str, r.positions)) for r in rep],
                t("sdp.col_max_row_diff"): [f"{r.max_diff:.1e}" for r in rep],
            },
            hide_index=True,
        )


#: The d_k figures: name -> (series ids, extra arguments of the line figure).
DK_FIGURES = {
    "var": (("var_measured", "var_theory", "var_scaled"), {"log_y": True, "dashed_ids": ("var_theory",)}),
    "entropy": (("entropy_scaled", "entropy_unscaled"), {"uniform": True}),
    "max": (("max_scaled", "max_unscaled", "sat_unscaled"), {"dashed_ids": ("sat_unscaled",)}),
    "grad": (("grad_scaled", "grad_unscaled"), {"log_y": True}),
}
#: The y axis title of each d_k figure.
Y_TITLES = {
    "var": "sdp.axis_variance",
    "entropy": "sdp.axis_entropy",
    "max": "sdp.axis_weight",
    "grad": "sdp.axis_grad",
}


def show_dk_figure(e: aa.DkExperiment, dk: int) -> None:
    """The four d_k curves in one figure (cached per seed and language); the current d_k is a
    marker drawn over it, so moving d_k rebuilds nothing and redraws one chart."""
    values = dk_series(e)
    panels = tuple(
        fa.LinePanel(
            title=t(f"sdp.fig_dk_{name}"),
            series={t(f"sdp.series_{i}"): values[i] for i in ids},
            y_title=t(Y_TITLES[name]),
            log_y=extra.get("log_y", False),
            dashed=tuple(t(f"sdp.series_{i}") for i in extra.get("dashed_ids", ())),
            hlines={t("sdp.uniform_entropy"): e.log_s} if extra.get("uniform") else None,
        )
        for name, (ids, extra) in DK_FIGURES.items()
    )
    fig = cached(fa.line_panels)(e.d_k, panels, labels=Labels.of(x="d_k"), log_x=True)
    axes = fa.panel_axes(len(panels))
    marker = Marks(*(tuple(part) for part in vline_marks(dk, t("sdp.current_dk"), log_x=True, axes=axes)))
    looks = [(t(f"sdp.fig_dk_{name}"), f"sdp.look_dk_{name}") for name in DK_FIGURES]
    show_figure(fig, key="sdp_fig_dk", looks=looks, code=aa.dk_experiment, marks=marker)


def dk_results(e: aa.DkExperiment, i: int, dk: int) -> None:
    """The reason, the four curves, the numbers at this d_k (index ``i``) and the table."""
    st.markdown(t("sdp.dk_body"))
    st.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k")
    show_dk_figure(e, dk)
    st.markdown(t("sdp.dk_claim", dk=dk, **dk_numbers(e, i)))
    table(dk_table(e))  # a static table wraps to the page width (a grid scrolls sideways)


#: The d_k experiment's numbers the texts quote: placeholder -> (field of ``DkExperiment``, format,
#: factor).
DK_NUMBERS = {
    "var": ("var_measured", ".1f", 1),
    "max_u": ("max_weight_unscaled", ".2f", 1),
    "max_s": ("max_weight_scaled", ".2f", 1),
    "sat_u": ("saturated_unscaled", ".0f", 100),  # a share, in percent
    "grad_u": ("grad_scores_unscaled", ".2g", 1),
    "grad_s": ("grad_scores_scaled", ".2g", 1),
    "cv_u": ("grad_query_cv_unscaled", ".2f", 1),
    "cv_s": ("grad_query_cv_scaled", ".2f", 1),
}


def dk_numbers(e: aa.DkExperiment, i: int) -> dict[str, str]:
    """The :data:`DK_NUMBERS` at d_k index ``i``, formatted (``sdp.dk_claim``, ``sdp.trouble_now_loss``)."""
    return {
        name: format(factor * getattr(e, field)[i], fmt) for name, (field, fmt, factor) in DK_NUMBERS.items()
    }


def dk_peak(e: aa.DkExperiment, i: int) -> tuple[str, dict[str, str]]:
    """Without scaling, is the peak weight at d_k index ``i`` nearer one-hot or uniform? The answer
    ("one" / "uniform") and the numbers its explanation quotes."""
    peak = float(e.max_weight_unscaled[i])
    answer = "one" if abs(peak - 1) < abs(peak - 1 / e.length) else "uniform"
    return answer, {"peak": f"{peak:.2f}", "scaled": f"{e.max_weight_scaled[i]:.2f}"}


def row_outcome(weights: np.ndarray) -> str:
    """What one weight row (1, S) holds: NaN, all zeros, or weights (spread over the keys)."""
    stats = row_stats(weights)
    return "nan" if stats.nan_rows else "zeros" if stats.zero_rows else "uniform"


def empty_row(s: SdpSetup, w_naive: np.ndarray, empty: int) -> tuple[str, dict[str, np.ndarray]]:
    """A query with every key masked: the page's first, or the one the "make one" button builds
    (query 0). Its label and its (1, S) weight rows {"naive": ..., "safe": ...}."""
    if empty:
        row = next(i for i, allowed in enumerate(s.mask) if not allowed.any())
        return s.labels[row], {"naive": w_naive[row : row + 1], "safe": s.steps.weights[row : row + 1]}
    probe = sdp_mask("custom", len(s.labels), 0, empty_row_mask_text(len(s.labels)))
    naive, safe = sdp_naive(s.inputs, probe, s.scale)[:1], sdp_steps(s.inputs, probe, s.scale).weights[:1]
    return s.labels[0], {"naive": naive, "safe": safe}


def nan_results(s: SdpSetup, w_naive: np.ndarray, empty: int) -> None:
    """Why NaN, the rows it hits on the page's mask, and the two weight maps side by side."""
    st.markdown(t("sdp.nan_body"))
    st.latex(
        r"\text{softmax}(z)_j=\frac{e^{z_j-\max_k z_k}}{\sum_l e^{z_l-\max_k z_k}},\qquad "
        r"z\equiv-\infty\ \Rightarrow\ z_j-\max_k z_k=-\infty-(-\infty)=\text{NaN}"
    )
    naive, safe = row_stats(w_naive), row_stats(s.steps.weights)
    m1, m2, m3 = st.columns(3)
    m1.metric(t("sdp.metric_empty_rows"), empty)
    m2.metric(t("sdp.metric_naive_nan"), naive.nan_rows)
    m3.metric(
        t("sdp.metric_safe_nan"), safe.nan_rows, help=t("sdp.metric_safe_nan_help", zero=safe.zero_rows)
    )
    if empty == 0:
        st.info(t("sdp.nan_none"))
        st.button(t("sdp.nan_make"), key="sdp_btn_empty_row", on_click=empty_row_mask, args=(len(s.labels),))
    c1, c2 = st.columns(2)
    with c1:
        show_heat("weights", w_naive, s, t("sdp.fig_naive"), "sdp_fig_naive")
    with c2:
        show_heat("weights", s.steps.weights, s, t("sdp.fig_safe"), "sdp_fig_safe")
    st.markdown(t("sdp.nan_why"))


def torch_metrics(s: SdpSetup) -> None:
    """Ours against torch's built-in (measured once per input): difference, times, NaN rows."""
    cmp = sdp_compare_torch(s.inputs, s.mask, s.scale)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(t("sdp.metric_max_diff"), f"{cmp.max_abs_diff:.1e}")
    m2.metric(t("sdp.metric_time_ours"), f"{1e6 * cmp.seconds_ours:.0f} µs")
    m3.metric(t("sdp.metric_time_torch"), f"{1e6 * cmp.seconds_torch:.0f} µs")
    m4.metric(t("sdp.metric_torch_nan"), cmp.torch_nan_rows)
    ratio = f"{cmp.seconds_ours / cmp.seconds_torch:.2f}"
    st.caption(t("sdp.torch_caption", rows=cmp.rows_compared, ratio=ratio, version=aa.TORCH_VERSION))


def normalizer_results(s: SdpSetup, res: tuple[aa.NormalizerWeights, ...]) -> None:
    """What each normaliser does, its exact zeros on the page's scores, and the three maps."""
    st.markdown(t("sdp.sparse_body"))
    st.latex(
        r"\mathrm{sparsemax}(z)_j=\max(z_j-\theta,0),\quad \sum_j \max(z_j-\theta,0)=1;\qquad"
        r"\mathrm{entmax}_{1.5}(z)_j=\max(z_j/2-\theta,0)^2"
    )
    names = {r.name: t(f"sdp.norm_{r.name}") for r in res}
    for col, r in zip(st.columns(len(res)), res, strict=True):
        col.metric(t("sdp.metric_zeros", name=names[r.name]), f"{r.zeros} / {r.allowed}")
    under = {r.name: r.underflow for r in res}
    st.caption(
        t("sdp.zeros_caption", soft=under["softmax"], sparse=under["sparsemax"], ent=under["entmax15"])
    )
    fig = cached(attention_shared.heatmap_row)(
        tuple((names[r.name], r.weights) for r in res),
        x_labels=s.labels,
        y_labels=s.labels,
        labels=Labels.of(x=t("sdp.axis_key"), y=t("sdp.axis_query")),
    )
    show_figure(
        fig, key="sdp_fig_normalizers", look_for_key="sdp.look_normalizers", code=aa.normalizer_weights
    )


def nw_results(h: float, x0: float) -> None:
    """Kernel regression's weights of one query under the three normalisers: the non-zero counts,
    the sparsemax radius, the figure and how close sparsemax is to Epanechnikov."""
    nw = nw_normalizers(h, x0)
    names = {n: t(f"sdp.norm_{n}") for n in nw.rows}
    n = len(nw.x)
    m = st.columns(4)
    for col, name in zip(m, names, strict=False):
        col.metric(t("sdp.metric_nonzero", name=names[name]), f"{nw.nonzero[name]} / {n}")
    m[3].metric(t("sdp.metric_radius"), f"{nw.radius:.3f}")
    struct = n - nw.nonzero["sparsemax"] - nw.underflow["sparsemax"]
    soft_zero, soft_uf = n - nw.nonzero["softmax"], nw.underflow["softmax"]
    st.caption(t("sdp.nw_zeros_caption", soft_zero=soft_zero, soft_uf=soft_uf, sparse_struct=struct))
    labels = Labels.of(
        title=t("sdp.fig_nw_normalizers", h=h),
        x=t("sdp.axis_x"),
        y=t("sdp.axis_weight"),
        query=t("sdp.query_point"),
        radius=t("sdp.radius_band"),
    )
    rows = {names[k]: w for k, w in nw.rows.items()}
    fig = cached(fa.normaliser_rows)(nw.x, rows, x0=x0, radius=nw.radius, labels=labels)
    show_figure(
        fig, key="sdp_fig_nw_normalizers", look_for_key="sdp.look_nw_normalizers", code=aa.nw_normalizers
    )
    st.markdown(t("sdp.sparse_epanechnikov", diff=f"{nw.max_diff_epanechnikov:.1e}", r=f"{nw.radius:.3f}"))


def _trouble_rows(s: SdpSetup) -> list[tuple[str, str, dict | None, dict]]:
    """(name, measured now, controls that reproduce it (None: the empty-row mask), controls that fix it)."""
    c = s.controls
    stats, naive = row_stats(s.steps.weights), row_stats(sdp_naive(s.inputs, s.mask, s.scale))
    e = sdp_dk_experiment(c.seed)
    i = list(e.d_k).index(c.dk)
    loss = t("sdp.trouble_now_loss", dk=c.dk, **dk_numbers(e, i))
    peak = t("sdp.trouble_now_peak", max_weight=f"{stats.max_weight:.3f}", entropy=f"{stats.entropy:.3f}")
    nan = t("sdp.trouble_now_nan", naive=naive.nan_rows, safe=stats.nan_rows)
    return [
        ("loss", loss, {"sdp_scale": "one", "sdp_dk": 512}, {"sdp_scale": "sqrt_dk"}),
        (
            "peak",
            peak,
            {"sdp_scale": "custom", "sdp_temp": 0.1, "sdp_mask": "none"},
            {"sdp_scale": "sqrt_dk"},
        ),
        ("nan", nan, None, {"sdp_mask": "causal"}),
    ]


def trouble_table(s: SdpSetup) -> None:
    """The post's table: each symptom, its cause and fix, measured now, with buttons that set the
    controls that reproduce and fix it; under it, the controls now."""
    widths = [2, 2, 2, 3, 2]
    for col, key in zip(st.columns(widths), ("symptom", "cause", "fix", "now", "try"), strict=True):
        col.markdown("**" + t(f"sdp.trouble_col_{key}") + "**")
    for name, now, reproduce, fix in _trouble_rows(s):
        c = st.columns(widths)
        for j, part in enumerate(("symptom", "cause", "fix")):
            c[j].markdown(t(f"sdp.trouble_{name}_{part}"))
        c[3].markdown(now)
        key = f"sdp_btn_{name}_reproduce"
        if reproduce is None:
            c[4].button(t("sdp.trouble_reproduce"), key=key, on_click=empty_row_mask, args=(len(s.labels),))
        else:
            c[4].button(t("sdp.trouble_reproduce"), key=key, on_click=set_controls, kwargs=reproduce)
        c[4].button(t("sdp.trouble_fix"), key=f"sdp_btn_{name}_fix", on_click=set_controls, kwargs=fix)
    c = s.controls
    st.caption(
        t(
            "sdp.trouble_now_controls",
            dk=c.dk,
            scale=t(f"sdp.scale_{c.scale_mode}"),
            tau=f"{s.temperature:.3g}",
            mask=t(f"sdp.mask_{c.mask_mode}"),
        )
    )


# ----------------------------------------------------------------------------------------------
# live sliders (ui.live_slider): what the browser redraws while d_k or τ moves
# ----------------------------------------------------------------------------------------------

#: d_k previews every option's scores only up to this many tokens (L² scores per option in the
#: component's data: 10 x 16² = 2,560 numbers); longer inputs redraw d_k on release only.
LIVE_DK_MAX_LENGTH = 16


def sdp_dk_control() -> live.Control:
    """The d_k select-slider of scaled dot-product."""
    return live.Control("sdp.dk", key="sdp_dk", value=16, options=tuple(DK_OPTIONS), help_key="sdp.dk_help")


def sdp_temperature_control(options: tuple[float, ...]) -> live.Control:
    """The temperature select-slider (custom scale only)."""
    return live.Control(
        "sdp.temperature", key="sdp_temp", value=4.0, options=options, help_key="sdp.temperature_help"
    )


@caching.data(max_entries=32)
def sdp_raw_scores(
    source: str, length: int, seed: int, n_pad: int, dks: tuple[int, ...]
) -> dict[int, np.ndarray]:
    """Raw scores Q Kᵀ (L, S) of the page's inputs for each d_k in ``dks`` (``core.attention_analysis``)."""
    return {dk: aa.pipeline_steps(sdp_inputs(source, length, dk, seed, n_pad), None, 1.0).raw for dk in dks}


def sdp_live_views(setup: SdpSetup) -> dict[str, live.Live]:
    """{"dk": ..., "temperature": ...}: the pipeline's score and weight maps, the d_k marker and the
    saturation readout. d_k previews every option's scores when L <= ``LIVE_DK_MAX_LENGTH``."""
    c = setup.controls
    dks = tuple(DK_OPTIONS) if len(setup.labels) <= LIVE_DK_MAX_LENGTH else (c.dk,)
    raw = sdp_raw_scores(c.source, c.length, c.seed, c.n_pad, dks)
    mask = None if setup.mask is None else ["".join("1" if a else "0" for a in row) for row in setup.mask]
    model = {
        "kind": "sdp",
        "raw": {str(dk): [live.numbers(r) for r in scores] for dk, scores in raw.items()},
        "mask": mask,
        "mode": c.scale_mode,
        "dk": c.dk,
        "temperature": float(c.temperature),
    }
    scaled = t("sdp.fig_scaled", tau="{tau:.3g}", scale="{scale:.3g}")
    pipeline = live.Target("sdp_fig_pipeline", "sdp_pipeline", (("annotation:panel_title_1", scaled),))
    readouts = (
        live.Readout(t("sdp.metric_max_weight"), "max_weight", ".3f"),
        live.Readout(t("sdp.metric_entropy"), "entropy", ".3f"),
    )
    return {
        "dk": live.Live(model, "dk", (pipeline, live.Target("sdp_fig_dk", "sdp_dk_marker")), readouts),
        "temperature": live.Live(model, "temperature", (pipeline,), readouts),
    }
