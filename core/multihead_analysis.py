"""Measurements of one seeded multi-head layer on the page's input: what the multi-head page shows.

``core.multihead`` holds the module; this runs it on one input (the built-in sentence or random
token vectors, ``core.tokens``), with or without positional encodings (``core.positional``) and
a causal mask, and returns numpy arrays in frozen dataclasses: every head's weights and their
diagnostics (``core.diagnostics``), the library check, the contiguity pitfall on the page's own
head outputs, the positional tables and their kernels, and the permutation experiment
(``core.permutation``) for every encoding x mask.

Shapes: H heads, T sequence length (L = S = T: self-attention), d_model width, d_v value width.
Weights are (H, T, T), rows = queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from core.attention import causal_mask
from core.contiguity import ContiguityDemo, run_contiguity_pitfall
from core.diagnostics import head_similarity, per_head_summary, redundancy_score, redundant_pairs
from core.multihead import MAX_HEADS, MultiHeadAttention, compare_with_library, head_options, seeded_multihead
from core.permutation import make_permutation, permutation_experiment
from core.positional import POSITIONAL_KINDS, position_kernel, positional_table, sinusoidal_kernel_of_distance
from core.tokens import input_tokens

#: Mask choices of the page.
MASK_KINDS = ("none", "causal")
#: Positions shown in the encoding and position-kernel figures.
PE_FIGURE_LENGTH = 64
#: Reference positions p whose kernel rows are drawn against the distance.
KERNEL_REFERENCE_POSITIONS = (0, 16, 32)


@dataclass(frozen=True)
class LayerSpec:
    """Everything that fixes the page's layer and input (hashable: it keys caches).

    d_k / d_v: per-head widths, or None for d_model / n_heads. input_kind: ``"sentence"`` or
    ``"random"`` (``length`` vectors); sentence: which built-in sentence; pe_kind: one of
    ``core.positional.POSITIONAL_KINDS``; mask_kind: one of :data:`MASK_KINDS`.
    """

    d_model: int
    n_heads: int
    d_k: int | None
    d_v: int | None
    seed: int
    input_kind: str
    length: int
    sentence: str
    pe_kind: str
    mask_kind: str


def heads_for(d_model: int, dims: str = "split") -> list[int]:
    """Head counts the page offers: divisors of d_model up to 32 ("split"), or 1..32 ("custom")."""
    return head_options(d_model) if dims == "split" else list(range(1, MAX_HEADS + 1))


def _setup(
    spec: LayerSpec,
) -> tuple[
    MultiHeadAttention, torch.Tensor, torch.Tensor | None, torch.Tensor | None, tuple[str, ...] | None
]:
    if spec.mask_kind not in MASK_KINDS:
        raise ValueError(f"unknown mask {spec.mask_kind!r}; known: {list(MASK_KINDS)}")
    module = seeded_multihead(spec.d_model, spec.n_heads, spec.d_k, spec.d_v, seed=spec.seed)
    x, words = input_tokens(
        spec.input_kind, spec.d_model, spec.seed, length=spec.length, sentence=spec.sentence
    )  # (T, d_model)
    T = x.shape[0]
    table = positional_table(spec.pe_kind, T, spec.d_model, seed=spec.seed)
    mask = causal_mask(T) if spec.mask_kind == "causal" else None
    return module, x, table, mask, words


@dataclass(frozen=True)
class HeadView:
    """One forward pass of the seeded layer on the page's input.

    weights (H, T, T); concat (T, H * d_v); output (T, d_model); heads (1, H, T, d_v) (for the
    contiguity demo); per-head entropy / normalized_entropy / support / max_weight (H,);
    similarity (H, H) (1 - JS / log 2); redundancy: mean pairwise similarity; words: the tokens
    or None for random vectors; d_k, d_v: the per-head widths used.
    """

    weights: np.ndarray
    concat: np.ndarray
    output: np.ndarray
    heads: np.ndarray
    entropy: np.ndarray
    normalized_entropy: np.ndarray
    support: np.ndarray
    max_weight: np.ndarray
    similarity: np.ndarray
    redundancy: float
    words: tuple[str, ...] | None
    d_k: int
    d_v: int

    @property
    def labels(self) -> tuple[str, ...]:
        """Unique tick labels: ``"i:word"`` for the sentence, ``"i"`` for random vectors."""
        T = self.weights.shape[-1]
        if self.words is None:
            return tuple(str(i) for i in range(T))
        return tuple(f"{i}:{w}" for i, w in enumerate(self.words))


def head_view(spec: LayerSpec) -> HeadView:
    """Run the layer once (positions added to the input, the page's mask) and summarise the heads.

    Raises:
        ValueError: on sizes or kinds the core rejects.
    """
    module, x, table, mask, words = _setup(spec)
    h = (x if table is None else x + table)[None]  # (1, T, d_model)
    with torch.no_grad():
        trace = module.forward_trace(h, h, h, mask=mask)
    summary = per_head_summary(trace.weights)
    return HeadView(
        weights=trace.weights[0].numpy(),
        concat=trace.concat[0].numpy(),
        output=trace.output[0].numpy(),
        heads=trace.heads.numpy(),
        entropy=summary.entropy.numpy(),
        normalized_entropy=summary.normalized_entropy.numpy(),
        support=summary.effective_support.numpy(),
        max_weight=summary.max_weight.numpy(),
        similarity=head_similarity(trace.weights[0]).numpy(),
        redundancy=redundancy_score(trace.weights),
        words=words,
        d_k=module.d_k,
        d_v=module.d_v,
    )


def head_pairs(weights: np.ndarray, threshold: float) -> tuple[tuple[int, int, float], ...]:
    """Head pairs (a, b, similarity) of (H, T, T) weights at or above ``threshold``, most similar first."""
    return tuple(redundant_pairs(torch.as_tensor(weights), threshold=threshold))


def library_check(spec: LayerSpec) -> tuple:
    """Our module against the library with the same weights, in float64 then float32.

    Returns:
        two ``core.multihead.LibraryComparison`` (float64, float32).
    """
    module, x, table, mask, _ = _setup(spec)
    h = x if table is None else x + table
    return tuple(compare_with_library(module, h, mask, dtype=d) for d in (torch.float64, torch.float32))


def contiguity(heads: np.ndarray) -> ContiguityDemo:
    """The post's ``view``-after-``transpose`` pitfall on (B, H, L, d_v) head outputs."""
    return run_contiguity_pitfall(torch.as_tensor(heads))


@dataclass(frozen=True)
class KernelRow:
    """One reference position p's row of a position kernel: values (T,) against distances q - p."""

    p: int
    distances: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class PositionsView:
    """Sinusoidal and (untrained) learned tables (T, d_model), their kernels PE·PEᵀ (T, T), kernel
    rows by distance for the reference positions, and the closed form Σ cos(δ ω_i) against the
    distance δ (None for an odd d_model)."""

    sinusoidal: np.ndarray
    learned: np.ndarray
    kernel_sinusoidal: np.ndarray
    kernel_learned: np.ndarray
    rows_sinusoidal: tuple[KernelRow, ...]
    rows_learned: tuple[KernelRow, ...]
    formula: tuple[np.ndarray, np.ndarray] | None


def positions_view(d_model: int, seed: int, length: int = PE_FIGURE_LENGTH) -> PositionsView:
    """The encodings of ``length`` positions and their kernels (see :class:`PositionsView`)."""
    out: dict[str, object] = {}
    q = np.arange(length)
    for kind in ("sinusoidal", "learned"):
        table = positional_table(kind, length, d_model, seed=seed)
        kernel = position_kernel(table)  # (T, T)
        out[kind] = table.numpy()
        out[f"kernel_{kind}"] = kernel.numpy()
        out[f"rows_{kind}"] = tuple(
            KernelRow(p, q - p, kernel[p].numpy()) for p in KERNEL_REFERENCE_POSITIONS if p < length
        )
    distances = np.arange(-length + 1, length)
    formula = None
    if d_model % 2 == 0:
        formula = (distances, sinusoidal_kernel_of_distance(torch.as_tensor(distances), d_model).numpy())
    return PositionsView(formula=formula, **out)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PermutationView:
    """The permutation experiment (``core.permutation``) on the page's layer and input.

    perm (T,); map_diff / output_diff: {(pe, mask): largest |A(Px) - P A(x) Pᵀ|} (and the same for
    the outputs) for every positional kind and mask; maps: {pe: (shuffled, predicted, difference)},
    each (H, T, T), under the page's mask.
    """

    perm: np.ndarray
    map_diff: Mapping[tuple[str, str], float]
    output_diff: Mapping[tuple[str, str], float]
    maps: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def permutation_view(spec: LayerSpec, perm_kind: str) -> PermutationView:
    """Shuffle (or reverse) the input and compare the maps with the permuted maps, for every
    encoding x mask; the maps themselves for the page's mask (``spec.pe_kind`` is not used)."""
    module, x, _, _, _ = _setup(spec)
    T = x.shape[0]
    perm = make_permutation(T, perm_kind, spec.seed)
    map_diff, output_diff, maps = {}, {}, {}
    for pe in POSITIONAL_KINDS:
        positions = positional_table(pe, T, spec.d_model, seed=spec.seed)
        for mk in MASK_KINDS:
            result = permutation_experiment(
                module, x, perm, positions, causal_mask(T) if mk == "causal" else None
            )
            map_diff[(pe, mk)] = result.map_max_diff
            output_diff[(pe, mk)] = result.output_max_diff
            if mk == spec.mask_kind:
                maps[pe] = (
                    result.weights_shuffled.numpy(),
                    result.weights_predicted.numpy(),
                    result.difference.numpy(),
                )
    return PermutationView(perm.numpy(), map_diff, output_diff, maps)
