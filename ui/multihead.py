"""Cached wrappers of the multi-head & positions page: call core, return plain numbers and arrays.

Every argument that changes the result is a parameter (nothing is read from module globals), the
caches are bounded, and results are numpy arrays or frozen dataclasses, so they pickle cheaply.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st
import torch

from core.attention import causal_mask
from core.contiguity import BROKEN_CODE, FIXED_CODE, ContiguityDemo, run_contiguity_pitfall  # noqa: F401 (re-exported for the page)
from core.diagnostics import head_similarity, per_head_summary, redundancy_score, redundant_pairs
from core.head_redundancy import RedundancyPoint, redundancy_vs_heads
from core.multihead import MAX_HEADS, MultiHeadAttention, compare_with_library, head_options, seeded_multihead
from core.permutation import make_permutation, permutation_experiment
from core.positional import (
    POSITIONAL_KINDS,
    position_kernel,
    positional_table,
    sinusoidal_kernel_of_distance,
)
from core.tokens_mh import input_tokens

#: Positions shown in the encoding and position-kernel figures.
PE_FIGURE_LENGTH = 64
#: Reference positions p whose kernel rows are drawn against the distance.
KERNEL_REFERENCE_POSITIONS = (0, 16, 32)


_Setup = tuple[
    MultiHeadAttention, torch.Tensor, torch.Tensor | None, torch.Tensor | None, tuple[str, ...] | None
]


def _setup(
    d_model: int,
    n_heads: int,
    d_k: int | None,
    d_v: int | None,
    seed: int,
    input_kind: str,
    length: int,
    sentence: str,
    pe_kind: str,
    mask_kind: str,
) -> _Setup:
    module = seeded_multihead(d_model, n_heads, d_k, d_v, seed=seed)
    x, words = input_tokens(input_kind, d_model, seed, length=length, sentence=sentence)  # (T, d_model)
    T = x.shape[0]
    table = positional_table(pe_kind, T, d_model, seed=seed)
    mask = causal_mask(T) if mask_kind == "causal" else None
    return module, x, table, mask, words


@st.cache_data(max_entries=32, show_spinner=False)
def head_view(
    d_model: int,
    n_heads: int,
    d_k: int | None,
    d_v: int | None,
    seed: int,
    input_kind: str,
    length: int,
    sentence: str,
    pe_kind: str,
    mask_kind: str,
) -> dict[str, Any]:
    """One forward pass of seeded multi-head self-attention on the page's input.

    Returns a dict of numpy arrays: ``weights`` (H, T, T), ``concat`` (T, H * d_v), ``output``
    (T, d_model), per-head ``entropy``/``normalized_entropy``/``support``/``max_weight`` (H,),
    ``similarity`` (H, H), ``redundancy`` (float), ``words`` (tuple or None), ``d_k``, ``d_v``,
    ``heads`` (1, H, T, d_v) for the contiguity demo.

    Raises:
        ValueError: on sizes the core rejects.
    """
    module, x, table, mask, words = _setup(
        d_model, n_heads, d_k, d_v, seed, input_kind, length, sentence, pe_kind, mask_kind
    )
    h = (x if table is None else x + table)[None]  # (1, T, d_model)
    with torch.no_grad():
        trace = module.forward_trace(h, h, h, mask=mask)
    summary = per_head_summary(trace.weights)
    return {
        "weights": trace.weights[0].numpy(),
        "concat": trace.concat[0].numpy(),
        "output": trace.output[0].numpy(),
        "heads": trace.heads.numpy(),
        "entropy": summary.entropy.numpy(),
        "normalized_entropy": summary.normalized_entropy.numpy(),
        "support": summary.effective_support.numpy(),
        "max_weight": summary.max_weight.numpy(),
        "similarity": head_similarity(trace.weights[0]).numpy(),
        "redundancy": redundancy_score(trace.weights),
        "words": words,
        "d_k": module.d_k,
        "d_v": module.d_v,
    }


@st.cache_data(max_entries=64, show_spinner=False)
def head_pairs(weights: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """Head pairs (a, b, similarity) at or above ``threshold``, most similar first (core.diagnostics)."""
    return redundant_pairs(torch.as_tensor(weights), threshold=threshold)


@st.cache_data(max_entries=32, show_spinner=False)
def library_check(
    d_model: int,
    n_heads: int,
    d_k: int | None,
    d_v: int | None,
    seed: int,
    input_kind: str,
    length: int,
    sentence: str,
    pe_kind: str,
    mask_kind: str,
) -> list[dict[str, Any]]:
    """Our module against the library with the same weights, in float64 and float32.

    Returns one dict per precision: ``dtype``, ``reference``, ``output_max_diff``,
    ``weights_max_diff`` (None when the reference returns no weights).
    """
    module, x, table, mask, _ = _setup(
        d_model, n_heads, d_k, d_v, seed, input_kind, length, sentence, pe_kind, mask_kind
    )
    h = x if table is None else x + table
    rows = []
    for dtype in (torch.float64, torch.float32):
        r = compare_with_library(module, h, mask, dtype=dtype)
        rows.append(
            {
                "dtype": r.dtype,
                "reference": r.reference,
                "output_max_diff": r.output_max_diff,
                "weights_max_diff": r.weights_max_diff,
            }
        )
    return rows


@st.cache_data(max_entries=32, show_spinner=False)
def contiguity(heads: np.ndarray) -> ContiguityDemo:
    """Run the post's ``view``-after-``transpose`` pitfall on the (B, H, L, d_v) head outputs."""
    return run_contiguity_pitfall(torch.as_tensor(heads))


@st.cache_data(max_entries=16, show_spinner=False)
def positions_view(d_model: int, seed: int, length: int = PE_FIGURE_LENGTH) -> dict[str, Any]:
    """Sinusoidal and (untrained) learned tables, their kernels PE·PEᵀ and kernel rows by distance.

    Returns ``sinusoidal``/``learned`` (T, d_model) tables, ``kernel_sinusoidal``/``kernel_learned``
    (T, T), ``rows_sinusoidal``/``rows_learned``: lists of (p, distances, values) for the reference
    positions, and ``formula``: (distances, Σ cos(δ ω_i)) or None for an odd d_model.
    """
    out: dict[str, Any] = {}
    for kind in ("sinusoidal", "learned"):
        table = positional_table(kind, length, d_model, seed=seed)
        kernel = position_kernel(table)  # (T, T)
        out[kind] = table.numpy()
        out[f"kernel_{kind}"] = kernel.numpy()
        q = np.arange(length)
        out[f"rows_{kind}"] = [
            (p, q - p, kernel[p].numpy()) for p in KERNEL_REFERENCE_POSITIONS if p < length
        ]
    distances = np.arange(-length + 1, length)
    out["formula"] = (
        (distances, sinusoidal_kernel_of_distance(torch.as_tensor(distances), d_model).numpy())
        if d_model % 2 == 0
        else None
    )
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def permutation_view(
    d_model: int,
    n_heads: int,
    d_k: int | None,
    d_v: int | None,
    seed: int,
    input_kind: str,
    length: int,
    sentence: str,
    pe_kind: str,
    mask_kind: str,
    perm_kind: str,
) -> dict[str, Any]:
    """The permutation experiment for every encoding × mask, and the maps for the page's mask.

    Returns ``perm`` (T,), ``table``: {(pe, mask): map max diff} for pe in POSITIONAL_KINDS and mask
    in ("none", "causal"), ``output_table`` likewise for the outputs, and ``maps``: {pe: (shuffled,
    predicted, difference)} each (H, T, T), under the page's mask.
    """
    module, x, _, _, _ = _setup(
        d_model, n_heads, d_k, d_v, seed, input_kind, length, sentence, "none", "none"
    )
    T = x.shape[0]
    perm = make_permutation(T, perm_kind, seed)
    table, output_table, maps = {}, {}, {}
    for pe in POSITIONAL_KINDS:
        positions = positional_table(pe, T, d_model, seed=seed)
        for mk in ("none", "causal"):
            result = permutation_experiment(
                module, x, perm, positions, causal_mask(T) if mk == "causal" else None
            )
            table[(pe, mk)] = result.map_max_diff
            output_table[(pe, mk)] = result.output_max_diff
            if mk == mask_kind:
                maps[pe] = (
                    result.weights_shuffled.numpy(),
                    result.weights_predicted.numpy(),
                    result.difference.numpy(),
                )
    return {"perm": perm.numpy(), "table": table, "output_table": output_table, "maps": maps}


@st.cache_data(max_entries=64, show_spinner=False)
def redundancy_point(d_model: int, n_heads: int, train_steps: int, seed: int) -> RedundancyPoint:
    """One head count of the redundancy experiment (core.head_redundancy).

    One cached call per head count, so the page can move its progress bar between calls (a
    cached function must not draw into a block created outside it). Every call uses the same
    seeded weights, batches and held-out walks, so the points equal one ``redundancy_vs_heads`` run.
    """
    return redundancy_vs_heads(d_model, [n_heads], train_steps=train_steps, seed=seed).points[0]


def heads_for(d_model: int, dims: str = "split") -> list[int]:
    """Head counts the page offers: divisors of d_model up to 32 ("split"), or 1..32 ("custom")."""
    return head_options(d_model) if dims == "split" else list(range(1, MAX_HEADS + 1))
