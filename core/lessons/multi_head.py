"""The multi-head lesson: one seeded multi-head layer measured on the page's input, and the
experiments the page runs on it.

``core.multihead`` holds the module, ``core.positional`` the encodings, ``core.diagnostics`` the
statistics of attention maps; this module runs them on one input (the built-in sentence or random
token vectors, ``core.tokens``), with or without positional encodings and a causal mask, and
returns numpy arrays in frozen dataclasses:

- **The layer and its heads** (:func:`head_view`, :func:`library_check`, :func:`positions_view`):
  every head's weights and their diagnostics, the check against ``torch.nn.MultiheadAttention``,
  the positional tables and their kernels.
- **The ``contiguous()`` pitfall** (the post's section 3.2, :func:`run_contiguity_pitfall`): after
  the heads are computed they are (B, H, L, d_v); to concatenate them the head and position axes
  are swapped, (B, H, L, d_v) -> (B, L, H, d_v), and the last two merged into H * d_v.
  ``transpose`` does not move any data, it only swaps two strides, so the result is no longer
  laid out row by row in memory ("not contiguous"), and ``view``, which can only reinterpret
  memory, raises ``RuntimeError: view size is not compatible with input tensor's size and
  stride ...``. The fix is ``.contiguous()`` (copy into a fresh row-major block) before ``view``,
  or ``reshape``. Both are run, with the real error text from the installed torch.
- **The permutation experiment** (the post's section 3.3, :func:`permutation_experiment`):
  self-attention without positional information is permutation-equivariant, A(P x) = P A(x) Pᵀ
  and out(P x) = P out(x): nothing in the map says where a token stood. Add a positional encoding
  to the *slots* (PE is added after the shuffle, position p keeps PE[p]) and the identity breaks.
  A causal mask is position information too: with a mask the identity fails even without any
  encoding.
- **Redundancy against the number of heads** (the post's section 5.3, :func:`redundancy_vs_heads`:
  "with 32 heads training took much longer and the result was no better; the attention maps
  showed many heads had learned very similar patterns"): for a fixed d_model and every head count
  H that divides it (up to 32), a one-layer model built from the same seed, its heads' maps
  compared with ``core.diagnostics.redundancy_score`` (mean pairwise similarity, 1 - JS / log 2)
  at initialisation and after a short, seeded training run on the post's toy task (predict the
  next value of a random walk, sinusoidal positions, causal mask). Random heads are similar
  mostly because random maps are all fairly flat, trained heads because several learn the same
  useful pattern; ``effective_support`` tells the two apart. The training page trains the full
  model; this is the cheap version.

Shapes: B batch, H heads, T sequence length (L = S = T: self-attention), d_model model width,
d_v value width. Weights are (H, T, T), rows = queries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from core.attention import causal_mask
from core.diagnostics import (
    effective_support,
    head_similarity,
    per_head_summary,
    redundancy_score,
    redundant_pairs,
)
from core.multihead import MAX_HEADS, MultiHeadAttention, compare_with_library, head_options, seeded_multihead
from core.positional import (
    POSITIONAL_KINDS,
    position_kernel,
    positional_table,
    sinusoidal_encoding,
    sinusoidal_kernel_of_distance,
)
from core.threads import one_thread
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
    """The permutation experiment (:func:`permutation_experiment`) on the page's layer and input.

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


# ----------------------------------------------------------------------------------------------
# the contiguous() pitfall (the post, section 3.2)
# ----------------------------------------------------------------------------------------------

#: The two lines the page shows (B, L, H, d_v are the shapes of the run).
BROKEN_CODE = "heads.transpose(1, 2).view(B, L, H * d_v)"
FIXED_CODE = "heads.transpose(1, 2).contiguous().view(B, L, H * d_v)"


@dataclass(frozen=True)
class ContiguityDemo:
    """What ``view`` after ``transpose`` did, and what the fix did.

    Attributes:
        shape: (B, H, L, d_v) of the per-head outputs.
        strides: their strides (elements to skip per step along each axis).
        transposed_shape: (B, L, H, d_v) after ``transpose(1, 2)``.
        transposed_strides: strides after the transpose (two of them swapped, no data moved).
        transposed_is_contiguous: ``is_contiguous()`` after the transpose.
        view_error: the ``RuntimeError`` message ``view`` raised, or None when it worked (it does
            when H, L or d_v is 1: an axis of length 1 has no stride to disturb).
        fixed_shape: (B, L, H * d_v) from ``.contiguous().view(...)``.
        fixed_strides: its strides (row-major again).
        fixed_matches_reshape: whether the fix equals ``reshape`` exactly (it must).
        concat_row0: the first query's concatenated heads, (H * d_v,), to show what the fix built.
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    transposed_shape: tuple[int, ...]
    transposed_strides: tuple[int, ...]
    transposed_is_contiguous: bool
    view_error: str | None
    fixed_shape: tuple[int, ...]
    fixed_strides: tuple[int, ...]
    fixed_matches_reshape: bool
    concat_row0: tuple[float, ...]


def run_contiguity_pitfall(heads: torch.Tensor) -> ContiguityDemo:
    """Try ``heads.transpose(1, 2).view(B, L, H * d_v)``, then the ``.contiguous()`` fix.

    Args:
        heads: (B, H, L, d_v) per-head outputs, contiguous (as ``weights @ v`` produces them).

    Raises:
        ValueError: if ``heads`` is not a 4-D tensor.
    """
    if not isinstance(heads, torch.Tensor) or heads.dim() != 4:
        raise ValueError("heads must be a (B, H, L, d_v) tensor")
    heads = heads.detach().contiguous()
    B, H, L, d_v = heads.shape
    swapped = heads.transpose(1, 2)  # (B, L, H, d_v), a new view of the same memory
    try:
        swapped.view(B, L, H * d_v)
        error = None
    except RuntimeError as err:  # the pitfall itself: this is the message users meet
        error = str(err)
    fixed = swapped.contiguous().view(B, L, H * d_v)  # (B, L, H * d_v), copied row-major
    return ContiguityDemo(
        shape=tuple(heads.shape),
        strides=tuple(heads.stride()),
        transposed_shape=tuple(swapped.shape),
        transposed_strides=tuple(swapped.stride()),
        transposed_is_contiguous=swapped.is_contiguous(),
        view_error=error,
        fixed_shape=tuple(fixed.shape),
        fixed_strides=tuple(fixed.stride()),
        fixed_matches_reshape=bool(torch.equal(fixed, swapped.reshape(B, L, H * d_v))),
        concat_row0=tuple(float(v) for v in fixed[0, 0]),
    )


# ----------------------------------------------------------------------------------------------
# the permutation experiment (the post, section 3.3)
# ----------------------------------------------------------------------------------------------

PERMUTATIONS = ("shuffle", "reverse")


def make_permutation(length: int, kind: str = "shuffle", seed: int = 0) -> torch.Tensor:
    """A permutation of range(length) as a (T,) long tensor; position i receives token perm[i].

    ``"shuffle"``: a seeded random order that is not the identity (when length > 1).
    ``"reverse"``: length-1, ..., 0.

    Raises:
        ValueError: if length is not a positive integer or kind is unknown.
    """
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError(f"length must be a positive integer, got {length!r}")
    if kind == "reverse":
        return torch.arange(length - 1, -1, -1)
    if kind != "shuffle":
        raise ValueError(f"unknown permutation {kind!r}; known: {list(PERMUTATIONS)}")
    generator = torch.Generator().manual_seed(int(seed) + 2)
    perm = torch.randperm(length, generator=generator)
    if length > 1 and torch.equal(perm, torch.arange(length)):
        perm = torch.roll(perm, 1)  # a "shuffle" that changes nothing would teach nothing
    return perm


def permute_map(weights: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """P A Pᵀ for a map of shape (..., T, T): entry (i, j) becomes A[perm[i], perm[j]]."""
    return weights[..., perm, :][..., :, perm]


@dataclass(frozen=True)
class PermutationResult:
    """One run of the experiment for one choice of positions and mask.

    Attributes:
        perm: (T,) the permutation; slot i of the shuffled input holds token perm[i].
        weights: (H, T, T) map of the original order, A(x + PE).
        weights_shuffled: (H, T, T) map of the shuffled tokens, A(P x + PE).
        weights_predicted: (H, T, T) what equivariance predicts, P A(x + PE) Pᵀ.
        difference: (H, T, T) |A(P x + PE) - P A(x + PE) Pᵀ|.
        map_max_diff: its maximum (≈ 1e-16 without positions or mask).
        output_max_diff: max |out(P x + PE) - P out(x + PE)|.
    """

    perm: torch.Tensor
    weights: torch.Tensor
    weights_shuffled: torch.Tensor
    weights_predicted: torch.Tensor
    difference: torch.Tensor
    map_max_diff: float
    output_max_diff: float


def permutation_experiment(
    module: MultiHeadAttention,
    x: torch.Tensor,
    perm: torch.Tensor,
    positions: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
) -> PermutationResult:
    """Self-attention on x and on its shuffled tokens, with positions added to the slots.

    Args:
        module: the multi-head attention to probe (run without gradients).
        x: (T, d_model) token vectors (content only).
        perm: (T,) permutation of range(T), e.g. from :func:`make_permutation`.
        positions: optional (T, d_model) table added to both inputs by slot; None = no encoding.
        mask: optional bool (T, T), True where a query may attend (e.g. causal).

    Raises:
        ValueError: on mismatched shapes or a ``perm`` that is not a permutation of range(T).
    """
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError("x must be a (T, d_model) tensor")
    T = x.shape[0]
    perm = torch.as_tensor(perm, dtype=torch.long)
    if perm.shape != (T,) or not torch.equal(perm.sort().values, torch.arange(T)):
        raise ValueError(f"perm must be a permutation of range({T})")
    if positions is not None and positions.shape != x.shape:
        raise ValueError(f"positions must have the shape of x {tuple(x.shape)}, got {tuple(positions.shape)}")
    pos = torch.zeros_like(x) if positions is None else positions.to(x.dtype)
    with torch.no_grad():
        out, w = module((x + pos)[None], (x + pos)[None], (x + pos)[None], mask=mask)
        xs = x[perm] + pos  # tokens move, positions stay with the slots
        out_s, w_s = module(xs[None], xs[None], xs[None], mask=mask)
    w, w_s, out, out_s = w[0], w_s[0], out[0], out_s[0]  # (H, T, T), (T, d_model)
    predicted = permute_map(w, perm)
    difference = (w_s - predicted).abs()  # (H, T, T)
    return PermutationResult(
        perm=perm,
        weights=w,
        weights_shuffled=w_s,
        weights_predicted=predicted,
        difference=difference,
        map_max_diff=float(difference.max()),
        output_max_diff=float((out_s - out[perm]).abs().max()),
    )


# ----------------------------------------------------------------------------------------------
# redundancy against the number of heads (the post, section 5.3)
# ----------------------------------------------------------------------------------------------

#: Caps that keep one request cheap on a shared server.
MAX_TRAIN_STEPS = 400
MAX_SEQ_LEN = 32


@dataclass(frozen=True)
class RedundancyPoint:
    """Measurements for one head count, on the same held-out batch of walks.

    Attributes:
        n_heads: H.
        redundancy_init / redundancy_trained: mean pairwise head similarity in [0, 1] (0 for H = 1).
        similar_pairs_init / similar_pairs_trained: share of head pairs with similarity >= the
            threshold (0 for H = 1).
        support_init / support_trained: mean effective number of attended keys per row.
        loss_init / loss_trained: mean squared error of the next-value prediction (1.0 is the
            noise floor: a random-walk step has variance 1).
    """

    n_heads: int
    redundancy_init: float
    redundancy_trained: float
    similar_pairs_init: float
    similar_pairs_trained: float
    support_init: float
    support_trained: float
    loss_init: float
    loss_trained: float


@dataclass(frozen=True)
class RedundancyCurve:
    """The experiment's settings and one :class:`RedundancyPoint` per head count."""

    d_model: int
    seq_len: int
    train_steps: int
    threshold: float
    points: tuple[RedundancyPoint, ...]


class _ToyModel(nn.Module):
    """value -> Linear(1, d_model) + PE -> multi-head self-attention (causal) -> Linear(d_model, 1)."""

    def __init__(self, d_model: int, n_heads: int, seq_len: int, generator: torch.Generator) -> None:
        super().__init__()
        self.embed = nn.Linear(1, d_model)
        self.attention = MultiHeadAttention(d_model, n_heads)
        self.readout = nn.Linear(d_model, 1)
        for linear in (self.embed, self.readout):
            nn.init.xavier_uniform_(linear.weight, generator=generator)
            nn.init.zeros_(linear.bias)
        self.attention.reset_parameters(generator)
        self.register_buffer("pe", sinusoidal_encoding(seq_len, d_model), persistent=False)
        self.register_buffer("mask", causal_mask(seq_len), persistent=False)

    def forward(self, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.embed(values[..., None]) + self.pe  # (B, T) -> (B, T, d_model)
        out, weights = self.attention(h, h, h, mask=self.mask)  # (B, T, d_model), (B, H, T, T)
        return self.readout(out)[..., 0], weights  # (B, T), (B, H, T, T)


def _walks(n: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n random walks of seq_len + 1 steps: inputs (n, T) and next-value targets (n, T)."""
    walk = torch.cumsum(torch.randn(n, seq_len + 1, generator=generator), dim=1)
    return walk[:, :-1], walk[:, 1:]


def _measure(model: _ToyModel, x: torch.Tensor, y: torch.Tensor, threshold: float) -> tuple[float, ...]:
    with torch.no_grad():
        pred, w = model(x)
        loss = float(((pred - y) ** 2).mean())
        H = w.shape[1]
        if H > 1:
            sim = head_similarity(w).mean(0)  # (B, H, H) -> (H, H), averaged over the batch
            upper = sim[torch.triu(torch.ones(H, H, dtype=torch.bool), diagonal=1)]
            share = float((upper >= threshold).double().mean())
        else:
            share = 0.0
        return redundancy_score(w), share, float(effective_support(w).mean()), loss


def redundancy_vs_heads(
    d_model: int,
    heads: Sequence[int] | None = None,
    *,
    seq_len: int = 16,
    train_steps: int = 150,
    batch_size: int = 32,
    lr: float = 3e-3,
    threshold: float = 0.9,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> RedundancyCurve:
    """Redundancy of H heads at initialisation and after ``train_steps`` Adam steps, for each H.

    Args:
        d_model: model width (1..256).
        heads: head counts to try; default every divisor of d_model up to 32.
        seq_len: walk length T (2..32).
        train_steps: Adam steps per head count (0..400); 0 reports the initial model twice.
        threshold: similarity from which a pair of heads counts as "repeating".
        seed: fixes the weights, the training batches and the held-out batch.
        progress: optional callback ``progress(done, total)`` after each head count.

    Raises:
        ValueError: on sizes outside the caps or a head count that does not divide d_model.
    """
    if not isinstance(d_model, int) or not 1 <= d_model <= 256:
        raise ValueError(f"d_model must be an integer in [1, 256], got {d_model!r}")
    if not isinstance(seq_len, int) or not 2 <= seq_len <= MAX_SEQ_LEN:
        raise ValueError(f"seq_len must be an integer in [2, {MAX_SEQ_LEN}], got {seq_len!r}")
    if not isinstance(train_steps, int) or not 0 <= train_steps <= MAX_TRAIN_STEPS:
        raise ValueError(f"train_steps must be an integer in [0, {MAX_TRAIN_STEPS}], got {train_steps!r}")
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    valid = head_options(d_model, MAX_HEADS)
    heads = valid if heads is None else list(heads)
    bad = [h for h in heads if h not in valid]
    if bad or not heads:
        raise ValueError(
            f"head counts {bad or heads} are not divisors of d_model={d_model} up to {MAX_HEADS}"
        )

    with one_thread():
        points = _run(d_model, heads, seq_len, train_steps, batch_size, lr, threshold, int(seed), progress)
    return RedundancyCurve(d_model, seq_len, train_steps, threshold, tuple(points))


def _run(
    d_model: int,
    heads: list[int],
    seq_len: int,
    train_steps: int,
    batch_size: int,
    lr: float,
    threshold: float,
    seed: int,
    progress: Callable[[int, int], None] | None,
) -> list[RedundancyPoint]:
    test_x, test_y = _walks(32, seq_len, torch.Generator().manual_seed(seed + 1000))
    points = []
    for done, n_heads in enumerate(heads, start=1):
        model = _ToyModel(d_model, n_heads, seq_len, torch.Generator().manual_seed(seed))
        init = _measure(model, test_x, test_y, threshold)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        batches = torch.Generator().manual_seed(seed + 1)  # same batches for every H
        model.train()
        for _ in range(train_steps):
            x, y = _walks(batch_size, seq_len, batches)
            pred, _ = model(x)
            loss = ((pred - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        trained = _measure(model, test_x, test_y, threshold)
        points.append(
            RedundancyPoint(
                n_heads=n_heads,
                redundancy_init=init[0],
                redundancy_trained=trained[0],
                similar_pairs_init=init[1],
                similar_pairs_trained=trained[1],
                support_init=init[2],
                support_trained=trained[2],
                loss_init=init[3],
                loss_trained=trained[3],
            )
        )
        if progress is not None:
            progress(done, len(heads))
    return points


def points_to_json(points: Sequence[RedundancyPoint]) -> str:
    """The points as JSON (a list of objects with :class:`RedundancyPoint`'s fields)."""
    return json.dumps([asdict(p) for p in points], indent=1)


def points_from_json(text: str) -> tuple[RedundancyPoint, ...]:
    """Inverse of :func:`points_to_json`.

    Raises:
        ValueError: if the text is not a list of objects with exactly the point's fields.
    """
    try:
        rows = json.loads(text)
        return tuple(RedundancyPoint(**row) for row in rows)
    except (TypeError, json.JSONDecodeError) as err:
        raise ValueError(f"not a list of redundancy points: {err}") from err


if (
    __name__ == "__main__"
):  # regenerate the shipped default: python -m core.lessons.multi_head OUT d_model steps seed
    import sys

    out, d, steps, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    curve = redundancy_vs_heads(d, train_steps=steps, seed=seed)
    with open(out, "w", encoding="utf-8") as f:
        f.write(points_to_json(curve.points) + "\n")
