"""Cached wrappers and helpers for the two attention pages (kernels-to-attention, scaled-dot-product).

Pages never touch torch: these wrappers call ``core`` and hand back numpy arrays and plain
dataclasses. Every cached function takes only its arguments (no module globals) and keeps a
bounded number of entries. The custom mask editor's state lives in one bound text control
(``sdp_cmask``, see :func:`core.attention.mask_to_string`), so a hand-made mask is part of the
URL; the data editor only edits that text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
import torch

from core import attention as attn
from core import bridge, diagnostics, sentence
from core.data import make_data
from core.nadaraya_watson import nw_predict, nw_weights, select_bandwidth
from ui.controls import BIND
from ui.i18n import t

#: Scale choices (ids), re-exported for the page: 1/√d_k, 1, 1/τ.
SCALE_MODES = attn.SCALE_MODES
scale_for = attn.scale_for
#: Input sources of the scaled-dot-product page.
SOURCES = ("random", "sentence_en", "sentence_zh")
MASK_MODES = ("none", "causal", "padding", "custom")
#: Width of V on the scaled-dot-product page.
D_V = 4
#: Key dimensions the d_k slider and the d_k experiment offer.
DK_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


# ----------------------------------------------------------------------------------------------
# scaled-dot-product: inputs, masks, pipeline
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SdpInputs:
    """Q (L, D), K (L, D), V (L, Dv) as float64 numpy, with unique tick labels and the token list."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    labels: list[str]
    tokens: list[str]
    n_pad: int  # padding keys at the end (appended <pad> tokens, or masked random keys)


@st.cache_data(max_entries=64, show_spinner=False)
def sdp_inputs(source: str, length: int, d_k: int, seed: int, n_pad: int) -> SdpInputs:
    """Random Q, K, V of ``length`` rows, or a built-in sentence (plus ``n_pad`` <pad> tokens).

    For random inputs the padding is the last ``min(n_pad, length)`` keys; for a sentence,
    ``n_pad`` padding tokens are appended (capped so the total stays <= MAX_LENGTH).

    Raises:
        ValueError: on an unknown source or out-of-range sizes.
    """
    if source == "random":
        q, k, v = attn.random_qkv(length, d_k, D_V, seed)
        labels = [str(i) for i in range(length)]
        return SdpInputs(q.numpy(), k.numpy(), v.numpy(), labels, [], min(n_pad, length))
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; known: {list(SOURCES)}")
    tokens = sentence.sentence_tokens(source.removeprefix("sentence_"))
    n_pad = min(n_pad, sentence.MAX_LENGTH - len(tokens))
    tokens = sentence.pad_tokens(tokens, n_pad)
    q, k, v = sentence.sentence_qkv(tokens, d_k, D_V, seed)
    return SdpInputs(q.numpy(), k.numpy(), v.numpy(), sentence.token_labels(tokens), tokens, n_pad)


def default_custom_mask(L: int) -> str:
    """The custom editor's starting point: the causal mask of length L, as text."""
    return attn.mask_to_string(attn.causal_mask(L))


def build_mask(mode: str, L: int, n_pad: int, custom_text: str | None) -> np.ndarray | None:
    """The (L, L) boolean mask for a mask mode (None for ``none``).

    ``custom`` decodes ``custom_text``; an empty text means the causal starting point.

    Raises:
        ValueError: on an unknown mode, or a custom text that does not decode to an (L, L) mask
            (the page warns and falls back to the causal mask).
    """
    if mode == "none":
        return None
    if mode == "causal":
        return attn.causal_mask(L).numpy()
    if mode == "padding":
        return attn.padding_mask([L - n_pad], S=L)[0].expand(L, L).numpy().copy()
    if mode == "custom":
        text = custom_text.strip() if custom_text else ""
        if not text:
            return attn.causal_mask(L).numpy()
        return attn.mask_from_string(text, L, L).numpy()
    raise ValueError(f"unknown mask mode {mode!r}; known: {list(MASK_MODES)}")


def mask_text(mask: np.ndarray) -> str:
    """Encode an (L, S) boolean array as the compact URL text."""
    return attn.mask_to_string(torch.as_tensor(np.asarray(mask, dtype=bool)))


def apply_editor_edits(text: str, L: int, edited_rows: dict[Any, dict[str, Any]], labels: list[str]) -> str:
    """Apply a data editor's ``edited_rows`` ({row: {column label: bool}}) to a mask text.

    An undecodable ``text`` starts from the causal mask. Unknown rows or columns are ignored.
    """
    try:
        mask = build_mask("custom", L, 0, text)
    except ValueError:
        mask = attn.causal_mask(L).numpy()
    mask = mask.copy()
    column = {label: j for j, label in enumerate(labels)}
    for row, changes in edited_rows.items():
        i = int(row)
        if not 0 <= i < L:
            continue
        for label, value in changes.items():
            if label in column:
                mask[i, column[label]] = bool(value)
    return mask_text(mask)


def mask_frame(mask: np.ndarray, labels: list[str]) -> pd.DataFrame:
    """The mask as a DataFrame of booleans: rows = queries, columns = keys (unique labels)."""
    return pd.DataFrame(np.asarray(mask, dtype=bool), index=labels, columns=labels)


def text_control(label_key: str, *, key: str, value: str = "", help_key: str | None = None) -> str:
    """A bound, keyed text input (``ui.controls`` has no text wrapper)."""
    return st.text_input(
        t(label_key), value=value, key=key, help=t(help_key) if help_key else None, bind=BIND
    )


def _tensors(inp: SdpInputs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.from_numpy(inp.q), torch.from_numpy(inp.k), torch.from_numpy(inp.v)


@st.cache_data(max_entries=64, show_spinner=False)
def sdp_steps(inp: SdpInputs, mask: np.ndarray | None, scale: float, normalizer: str = "softmax") -> dict:
    """Every step of the pipeline as numpy: raw, scaled, masked (-inf where masked), weights, output.

    Raises:
        ValueError: as :func:`core.attention.attention_steps`.
    """
    q, k, v = _tensors(inp)
    m = None if mask is None else torch.from_numpy(np.asarray(mask, dtype=bool))
    s = attn.attention_steps(q, k, v, mask=m, scale=scale, normalizer=normalizer)
    return {
        "raw": s.raw.numpy(),
        "scaled": s.scaled.numpy(),
        "masked": s.masked.numpy(),
        "weights": s.weights.numpy(),
        "output": s.output.numpy(),
    }


@st.cache_data(max_entries=64, show_spinner=False)
def sdp_naive(inp: SdpInputs, mask: np.ndarray | None, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The additive -inf version: ``(output, weights)`` as numpy (NaN rows where all keys are masked)."""
    q, k, v = _tensors(inp)
    m = None if mask is None else torch.from_numpy(np.asarray(mask, dtype=bool))
    out, w = attn.naive_masked_attention(q, k, v, mask=m, scale=scale)
    return out.numpy(), w.numpy()


def sdp_compare_torch(inp: SdpInputs, mask: np.ndarray | None, scale: float) -> attn.TorchComparison:
    """Ours vs ``torch.nn.functional.scaled_dot_product_attention`` on the page's inputs (not cached:
    the timing is measured now)."""
    q, k, v = _tensors(inp)
    m = None if mask is None else torch.from_numpy(np.asarray(mask, dtype=bool))
    return attn.compare_with_torch(q, k, v, mask=m, scale=scale, repeat=30)


@st.cache_data(max_entries=8, show_spinner=False)
def sdp_dk_experiment(seed: int) -> attn.DkExperiment:
    """The d_k experiment over ``DK_OPTIONS`` (L = S = 16, 32 trials)."""
    return attn.dk_experiment(list(DK_OPTIONS), length=16, n_trials=32, seed=seed)


@st.cache_data(max_entries=32, show_spinner=False)
def row_stats(weights: np.ndarray) -> dict[str, float]:
    """Summary of a weight matrix (L, S): over rows that hold weight (no NaN, not all zero), the
    mean largest weight and mean entropy (nats, ``core.diagnostics``); the count of NaN rows and of
    all-zero rows."""
    w = np.asarray(weights, dtype=float)
    finite_rows = ~np.isnan(w).any(-1)
    live = finite_rows & (w.sum(-1, where=~np.isnan(w)) > 0)
    wl = torch.from_numpy(w[live])
    return {
        "max_weight": float(diagnostics.max_weight(wl).mean()) if wl.numel() else 0.0,
        "entropy": float(diagnostics.attention_entropy(wl).mean()) if wl.numel() else 0.0,
        "nan_rows": int((~finite_rows).sum()),
        "zero_rows": int((finite_rows & ~live).sum()),
    }


def score_std(scores: np.ndarray) -> float:
    """Standard deviation of the finite entries of a score matrix."""
    z = np.asarray(scores, dtype=float)
    return float(torch.from_numpy(z[np.isfinite(z)]).std()) if np.isfinite(z).sum() > 1 else 0.0


def count_fully_masked(mask: np.ndarray | None) -> int:
    """Number of queries whose every key is masked (0 without a mask)."""
    if mask is None:
        return 0
    return int(attn.fully_masked_rows(torch.from_numpy(np.asarray(mask, dtype=bool))).sum())


def repeated_token_rows(tokens: list[str], weights: np.ndarray) -> list[dict[str, Any]]:
    """For each token that occurs more than once: its positions and the largest difference between
    their rows of attention weights (0 without positional information)."""
    out = []
    for tok in dict.fromkeys(tokens):
        pos = [i for i, x in enumerate(tokens) if x == tok]
        if len(pos) > 1 and tok != sentence.PAD:
            rows = np.asarray(weights)[pos]
            out.append(
                {
                    "token": tok,
                    "positions": ", ".join(map(str, pos)),
                    "max_diff": float(np.abs(rows - rows[0]).max()),
                }
            )
    return out


def torch_version() -> str:
    """The installed torch version (the page says which built-in it compared against)."""
    return torch.__version__


#: A weight whose score is this far below its row's best is exp-underflow territory in float64
#: (exp(-745) is the smallest subnormal): a zero there is rounding, not structure.
UNDERFLOW_GAP = 700.0


def _underflow_zeros(weights: np.ndarray, scores: np.ndarray, allowed: np.ndarray) -> int:
    """Exact zeros among allowed entries whose score is > UNDERFLOW_GAP below the row's best."""
    z = np.where(allowed, scores, -np.inf)
    best = z.max(-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        gap = z - np.where(np.isfinite(best), best, 0.0)
    return int(((weights == 0) & allowed & (gap < -UNDERFLOW_GAP)).sum())


@st.cache_data(max_entries=32, show_spinner=False)
def normalizer_weights(inp: SdpInputs, mask: np.ndarray | None, scale: float) -> dict[str, dict]:
    """Weights of softmax, sparsemax and entmax-1.5 on the page's scaled scores, with zero counts.

    ``zeros``: exact zeros among allowed (query, key) pairs; ``underflow``: how many of those
    have a score more than UNDERFLOW_GAP below their row's best (exp underflow, not structure).
    """
    out: dict[str, dict] = {}
    q, k, v = _tensors(inp)
    m = None if mask is None else torch.from_numpy(np.asarray(mask, dtype=bool))
    allowed = np.ones((inp.q.shape[0], inp.k.shape[0]), bool) if mask is None else np.asarray(mask, bool)
    for name in attn.NORMALIZERS:
        s = attn.attention_steps(q, k, v, mask=m, scale=scale, normalizer=name)
        w = s.weights.numpy()
        out[name] = {
            "weights": w,
            "zeros": int(((w == 0) & allowed).sum()),
            "underflow": _underflow_zeros(w, s.scaled.numpy(), allowed),
            "allowed": int(allowed.sum()),
        }
    return out


# ----------------------------------------------------------------------------------------------
# NW with other normalisers (scaled-dot-product page, "softmax vs sparsemax")
# ----------------------------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def nw_normalizers(bandwidth: float, x0: float) -> dict[str, Any]:
    """One query's NW weights on the post's data under softmax / sparsemax / entmax-1.5.

    Also the sparsemax radius r and the largest difference between sparsemax weights and
    Epanechnikov NW weights of bandwidth r computed by ``core.nadaraya_watson.nw_weights``.
    """
    data = make_data()
    xq = np.array([x0])
    rows = {name: bridge.nw_attention_weights(data.x, xq, bandwidth, name)[0] for name in attn.NORMALIZERS}
    r = float(bridge.sparsemax_radius(data.x, xq, bandwidth)[0])
    epa = nw_weights(data.x, xq, kernel="epanechnikov", bandwidth=r)[0]
    scores = bridge.gaussian_scores(xq, data.x, bandwidth)  # (1, N)
    everything = np.ones_like(scores, dtype=bool)
    return {
        "x": data.x,
        "rows": rows,
        "nonzero": {name: int((w > 0).sum()) for name, w in rows.items()},
        "underflow": {name: _underflow_zeros(w[None], scores, everything) for name, w in rows.items()},
        "radius": r,
        "epanechnikov": epa,
        "max_diff_epanechnikov": float(np.abs(rows["sparsemax"] - epa).max()),
    }


# ----------------------------------------------------------------------------------------------
# kernels-to-attention
# ----------------------------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def k2a_three_figures(n: int, seed: int, bandwidth: float, n_queries: int = 60) -> dict[str, Any]:
    """The post's three figures' data: NW (``core.nadaraya_watson``) vs attention (``core.bridge``).

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


@st.cache_data(max_entries=32, show_spinner=False)
def k2a_one_query(n: int, seed: int, bandwidth: float, x0: float) -> dict[str, Any]:
    """One query's NW weights (``nw_weights``) and attention weights (``core.bridge``), with scores."""
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


@st.cache_data(max_entries=32, show_spinner=False)
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


@st.cache_data(max_entries=16, show_spinner=False)
def k2a_learn_1d(n: int, seed: int, steps: int, lr: float, h0: float) -> dict[str, Any]:
    """Learn h with and without leave-one-out; the LOO-CV h of core; test MSE on fresh data."""
    data = make_data(n=n, seed=seed)
    test = make_data(n=400, seed=seed + 1000)
    fits = {
        loo: bridge.fit_bandwidth(data.x, data.y, leave_one_out=loo, init_bandwidth=h0, steps=steps, lr=lr)
        for loo in (True, False)
    }
    h_cv = select_bandwidth(data.x, data.y, kernel="gaussian")
    xg = np.linspace(-3, 3, 300)
    return {
        "x": data.x,
        "y": data.y,
        "grid": xg,
        "truth": data.truth(xg),
        "h_cv": h_cv,
        "fits": {
            loo: {
                "losses": f.losses,
                "bandwidths": f.bandwidths,
                "h": f.bandwidth,
                "train_mse": float(f.losses[-1]),
                "test_mse": float(
                    np.mean((nw_predict(data.x, data.y, test.x, "gaussian", f.bandwidth) - test.y) ** 2)
                ),
                "curve": nw_predict(data.x, data.y, xg, "gaussian", f.bandwidth),
            }
            for loo, f in fits.items()
        },
    }


@st.cache_data(max_entries=16, show_spinner=False)
def k2a_learn_2d(n: int, seed: int, steps: int, lr: float, h0: float) -> dict[str, Any]:
    """Learn a 2-D Mahalanobis metric with and without leave-one-out; test MSE on fresh data."""
    x, y = bridge.data_2d(n, 0.1, seed)
    x_test, y_test = bridge.data_2d(400, 0.1, seed + 1000)
    out: dict[Any, Any] = {}
    for loo in (True, False):
        f = bridge.fit_metric(x, y, leave_one_out=loo, init_bandwidth=h0, steps=steps, lr=lr)
        pred = bridge.metric_predict(x, y, x_test, f.metric)
        out[loo] = {
            "losses": f.losses,
            "metric": f.metric,
            "length_scales": f.length_scales,
            "path": f.length_scale_path,
            "train_mse": float(f.losses[-1]),
            "test_mse": float(np.mean((pred - y_test) ** 2)),
        }
    return {"fits": out}
