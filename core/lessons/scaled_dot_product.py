"""The scaled dot-product lesson: measurements of one attention computation, and the d_k experiment.

``core.attention`` holds the math on tensors; this module runs it on one set of inputs (random
Q, K, V or a built-in sentence, see ``core.tokens``) and returns numpy arrays in frozen
dataclasses: every step of the pipeline, statistics of the weight rows, the additive -inf trap,
the comparison with torch's built-in, softmax vs sparsemax vs entmax-1.5 (on the page's scores and
on a Nadaraya-Watson query), and the custom mask's text form (the URL keeps a hand-made mask).
:func:`dk_experiment` shows why the scores are divided by √D, in numbers.

Shapes: L queries, S keys (L = S here: self-attention), D key dim, Dv value dim, N samples.
Weights are always (L, S), rows = queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from core import attention as attn
from core import diagnostics, tokens
from core import kernel_attention as bridge
from core.data import make_data
from core.nadaraya_watson import nw_weights

#: Input sources of the scaled dot-product page.
SOURCES = ("random", "sentence_en", "sentence_zh")
#: Mask choices: none, causal, padding (the last keys), custom (the editor's text).
MASK_MODES = ("none", "causal", "padding", "custom")
#: Width Dv of V.
D_V = 4
#: Key dimensions the d_k control and the d_k experiment offer.
DK_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: The installed torch version (the page says which built-in it compared against).
TORCH_VERSION = torch.__version__
#: A weight whose score is this far below its row's best is exp-underflow territory in float64
#: (exp(-745) is the smallest subnormal): a zero there is rounding, not structure.
UNDERFLOW_GAP = 700.0


# --------------------------------------------------------------------------------------------
# Inputs and masks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionInputs:
    """Q (L, D), K (S, D), V (S, Dv) as float64 numpy, with unique tick labels and the tokens.

    ``tokens`` is empty for random inputs; ``n_pad`` counts the padding keys at the end
    (appended ``<pad>`` tokens, or the last random keys).
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    labels: tuple[str, ...]
    tokens: tuple[str, ...]
    n_pad: int


def make_inputs(source: str, length: int, d_k: int, seed: int, n_pad: int) -> AttentionInputs:
    """Random Q, K, V of ``length`` rows, or a built-in sentence (plus ``n_pad`` <pad> tokens).

    For random inputs the padding is the last ``min(n_pad, length)`` keys; for a sentence,
    ``n_pad`` padding tokens are appended (capped so the total stays <= ``tokens.MAX_LENGTH``).

    Raises:
        ValueError: on an unknown source or out-of-range sizes.
    """
    if source == "random":
        q, k, v = attn.random_qkv(length, d_k, D_V, seed)
        labels = tuple(str(i) for i in range(length))
        return AttentionInputs(q.numpy(), k.numpy(), v.numpy(), labels, (), min(max(n_pad, 0), length))
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; known: {list(SOURCES)}")
    toks = tokens.sentence_tokens(source.removeprefix("sentence_"))
    n_pad = min(max(n_pad, 0), tokens.MAX_LENGTH - len(toks))
    toks = tokens.pad_tokens(toks, n_pad)
    q, k, v = tokens.sentence_qkv(toks, d_k, D_V, seed)
    return AttentionInputs(
        q.numpy(), k.numpy(), v.numpy(), tuple(tokens.token_labels(toks)), tuple(toks), n_pad
    )


def default_custom_mask(L: int) -> str:
    """The custom editor's starting point: the causal mask of length L, as text."""
    return attn.mask_to_string(attn.causal_mask(L))


def build_mask(mode: str, L: int, n_pad: int, custom_text: str | None) -> np.ndarray | None:
    """The (L, L) boolean mask for a mask mode (None for ``none``); True = may attend.

    ``custom`` decodes ``custom_text`` (:func:`core.attention.mask_from_string`); an empty text
    means the causal starting point.

    Raises:
        ValueError: on an unknown mode, or a custom text that does not decode to an (L, L) mask.
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
    """Encode an (L, S) boolean array as the compact URL text (one hex number per row)."""
    return attn.mask_to_string(torch.as_tensor(np.asarray(mask, dtype=bool)))


def apply_editor_edits(
    text: str, L: int, edited_rows: Mapping[Any, Mapping[str, Any]], labels: tuple[str, ...] | list[str]
) -> str:
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


def count_fully_masked(mask: np.ndarray | None) -> int:
    """Number of queries whose every key is masked (0 without a mask)."""
    if mask is None:
        return 0
    return int(attn.fully_masked_rows(torch.from_numpy(np.asarray(mask, dtype=bool))).sum())


def _tensors(inp: AttentionInputs, mask: np.ndarray | None) -> tuple[torch.Tensor, ...]:
    m = None if mask is None else torch.from_numpy(np.asarray(mask, dtype=bool))
    return torch.from_numpy(inp.q), torch.from_numpy(inp.k), torch.from_numpy(inp.v), m


# --------------------------------------------------------------------------------------------
# The pipeline and its statistics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PipelineSteps:
    """Every step of ``softmax(mask(Q Kᵀ · scale)) V`` as numpy (see ``core.attention.AttentionSteps``).

    raw, scaled, masked (-inf where masked), weights: (L, S); output: (L, Dv); scale: the factor
    the scores were multiplied by (the inverse temperature 1/τ).
    """

    raw: np.ndarray
    scaled: np.ndarray
    masked: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    scale: float


def pipeline_steps(
    inp: AttentionInputs, mask: np.ndarray | None, scale: float, normalizer: str = "softmax"
) -> PipelineSteps:
    """Run attention on the inputs and keep every step.

    Raises:
        ValueError: as :func:`core.attention.attention_steps`.
    """
    q, k, v, m = _tensors(inp, mask)
    s = attn.attention_steps(q, k, v, mask=m, scale=scale, normalizer=normalizer)
    return PipelineSteps(
        s.raw.numpy(), s.scaled.numpy(), s.masked.numpy(), s.weights.numpy(), s.output.numpy(), s.scale
    )


def naive_weights(inp: AttentionInputs, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """Weights (L, S) of the additive -inf version: NaN rows where every key is masked."""
    q, k, v, m = _tensors(inp, mask)
    _, w = attn.naive_masked_attention(q, k, v, mask=m, scale=scale)
    return w.numpy()


@dataclass(frozen=True)
class RowStats:
    """Summary of a weight matrix (L, S).

    max_weight / entropy: over rows that hold weight (no NaN, not all zero), the mean largest
    weight and the mean entropy in nats (``core.diagnostics``); 0 when no row holds weight.
    nan_rows: rows holding a NaN; zero_rows: finite rows whose weights are all zero.
    """

    max_weight: float
    entropy: float
    nan_rows: int
    zero_rows: int


def row_stats(weights: np.ndarray) -> RowStats:
    """:class:`RowStats` of an (L, S) weight matrix."""
    w = np.asarray(weights, dtype=float)
    finite_rows = ~np.isnan(w).any(-1)
    live = finite_rows & (np.where(np.isnan(w), 0.0, w).sum(-1) > 0)
    wl = torch.from_numpy(w[live])
    return RowStats(
        max_weight=float(diagnostics.max_weight(wl).mean()) if wl.numel() else 0.0,
        entropy=float(diagnostics.attention_entropy(wl).mean()) if wl.numel() else 0.0,
        nan_rows=int((~finite_rows).sum()),
        zero_rows=int((finite_rows & ~live).sum()),
    )


def score_std(scores: np.ndarray) -> float:
    """Standard deviation (unbiased) of the finite entries of a score matrix; 0 with < 2 of them."""
    z = np.asarray(scores, dtype=float)
    finite = z[np.isfinite(z)]
    return float(finite.std(ddof=1)) if finite.size > 1 else 0.0


@dataclass(frozen=True)
class RepeatedToken:
    """A token that occurs more than once, its positions, and the largest difference between
    their rows of attention weights (0 without positional information)."""

    token: str
    positions: tuple[int, ...]
    max_diff: float


def repeated_token_rows(toks: tuple[str, ...], weights: np.ndarray) -> tuple[RepeatedToken, ...]:
    """One :class:`RepeatedToken` per repeated token (``<pad>`` excluded), in order of appearance."""
    out = []
    for tok in dict.fromkeys(toks):
        pos = tuple(i for i, x in enumerate(toks) if x == tok)
        if len(pos) > 1 and tok != tokens.PAD:
            rows = np.asarray(weights)[list(pos)]
            out.append(RepeatedToken(tok, pos, float(np.abs(rows - rows[0]).max())))
    return tuple(out)


def torch_comparison(
    inp: AttentionInputs, mask: np.ndarray | None, scale: float, repeat: int = 30
) -> attn.TorchComparison:
    """Ours vs ``torch.nn.functional.scaled_dot_product_attention`` on these inputs (and timings)."""
    q, k, v, m = _tensors(inp, mask)
    return attn.compare_with_torch(q, k, v, mask=m, scale=scale, repeat=repeat)


# --------------------------------------------------------------------------------------------
# Softmax vs sparsemax vs entmax-1.5
# --------------------------------------------------------------------------------------------


def _underflow_zeros(weights: np.ndarray, scores: np.ndarray, allowed: np.ndarray) -> int:
    """Exact zeros among allowed entries whose score is > UNDERFLOW_GAP below the row's best."""
    z = np.where(allowed, scores, -np.inf)
    best = z.max(-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        gap = z - np.where(np.isfinite(best), best, 0.0)
    return int(((weights == 0) & allowed & (gap < -UNDERFLOW_GAP)).sum())


@dataclass(frozen=True)
class NormalizerWeights:
    """One normaliser's weights (L, S) on the page's scaled scores.

    zeros: exact zeros among allowed (query, key) pairs; underflow: how many of those have a score
    more than UNDERFLOW_GAP below their row's best (exp underflow, not structure); allowed: the
    number of allowed pairs.
    """

    name: str
    weights: np.ndarray
    zeros: int
    underflow: int
    allowed: int


def normalizer_weights(
    inp: AttentionInputs, mask: np.ndarray | None, scale: float
) -> tuple[NormalizerWeights, ...]:
    """Softmax, sparsemax and entmax-1.5 (``core.attention.NORMALIZERS``, in that order)."""
    q, k, v, m = _tensors(inp, mask)
    L, S = inp.q.shape[0], inp.k.shape[0]
    allowed = np.ones((L, S), bool) if mask is None else np.asarray(mask, bool)
    out = []
    for name in attn.NORMALIZERS:
        s = attn.attention_steps(q, k, v, mask=m, scale=scale, normalizer=name)
        w = s.weights.numpy()
        zeros = int(((w == 0) & allowed).sum())
        underflow = _underflow_zeros(w, s.scaled.numpy(), allowed)
        out.append(NormalizerWeights(name, w, zeros, underflow, int(allowed.sum())))
    return tuple(out)


@dataclass(frozen=True)
class NwNormalizers:
    """One Nadaraya-Watson query's weights on the post's data under each normaliser.

    x: (N,) samples; rows: {normaliser: (N,) weights}; nonzero / underflow: {normaliser: count};
    radius: the sparsemax radius r; epanechnikov: (N,) Epanechnikov NW weights of bandwidth r;
    max_diff_epanechnikov: largest |sparsemax - Epanechnikov| weight.
    """

    x: np.ndarray
    rows: Mapping[str, np.ndarray]
    nonzero: Mapping[str, int]
    underflow: Mapping[str, int]
    radius: float
    epanechnikov: np.ndarray
    max_diff_epanechnikov: float


def nw_normalizers(bandwidth: float, x0: float) -> NwNormalizers:
    """One query ``x0``'s NW weights (Gaussian scores of ``bandwidth``) under each normaliser.

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
    return NwNormalizers(
        x=data.x,
        rows=rows,
        nonzero={name: int((w > 0).sum()) for name, w in rows.items()},
        underflow={name: _underflow_zeros(w[None], scores, everything) for name, w in rows.items()},
        radius=r,
        epanechnikov=epa,
        max_diff_epanechnikov=float(np.abs(rows["sparsemax"] - epa).max()),
    )


# --------------------------------------------------------------------------------------------
# Why divide by √D: the d_k experiment
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DkExperiment:
    """Statistics of attention on random unit-variance Q, K, V, for each key dimension D.

    Every array has shape (M,), one entry per D in ``d_k``. Entropies in nats (a uniform row over
    S keys has log S). Gradients come from one backward pass of ℓ = Σ G ⊙ output with a random
    upstream gradient G ~ N(0, 1) of fixed width (``DK_VALUE_DIM``), so that only D changes:

    - ``grad_scores_*``: median over query rows of |∂ℓ/∂x|₂, x the softmax input row: the signal
      that gets through softmax (near 0 = saturated, "vanishing");
    - ``grad_query_cv_*``: coefficient of variation (std / mean) over rows of |∂ℓ/∂q|₂: how
      uneven the updates of the queries are (most rows get nothing, a few get a lot: unstable).
    """

    d_k: np.ndarray
    var_measured: np.ndarray  # variance of raw q·k over all samples
    var_theory: np.ndarray  # D (independent unit-variance entries)
    var_scaled: np.ndarray  # variance of q·k/√D (theory: 1)
    entropy_scaled: np.ndarray
    entropy_unscaled: np.ndarray
    max_weight_scaled: np.ndarray  # mean over rows of the largest weight
    max_weight_unscaled: np.ndarray
    saturated_scaled: np.ndarray  # fraction of rows with largest weight > 0.99
    saturated_unscaled: np.ndarray
    grad_scores_scaled: np.ndarray
    grad_scores_unscaled: np.ndarray
    grad_query_cv_scaled: np.ndarray
    grad_query_cv_unscaled: np.ndarray
    log_s: float  # entropy of a uniform row, log S

    @property
    def length(self) -> int:
        """S, the sequence length of the experiment's problems (from ``log_s``)."""
        return round(float(np.exp(self.log_s)))


#: Width of V and of the upstream gradient in :func:`dk_experiment` (fixed so only D varies).
DK_VALUE_DIM = 16


def dk_experiment(
    d_ks: Sequence[int], *, length: int = 16, n_trials: int = 32, seed: int = 0
) -> DkExperiment:
    """Measure what the √D scale does, for each key dimension D in ``d_ks``.

    Draws ``n_trials`` independent problems (L = S = ``length``) with Q, K of width D and V of
    width ``DK_VALUE_DIM``, entries ~ N(0, 1) (float64, seeded), and for scale 1/√D and scale 1
    reports score variance, softmax entropy, largest weight, fraction of saturated rows and the
    gradients described in :class:`DkExperiment`. Var(q·k) = D for such entries (a sum of D
    products of unit variance), so without the scale the scores spread like √D and softmax
    saturates: one weight near 1, the gradient through softmax near 0 for most rows.

    Raises:
        ValueError: if a D is not in 1..4096, ``length`` not in 2..256 or ``n_trials`` not in 1..1024.
    """
    d_ks = [int(d) for d in d_ks]
    if not d_ks or any(d < 1 or d > 4096 for d in d_ks):
        raise ValueError(f"every d_k must be in 1..4096, got {d_ks}")
    if not 2 <= length <= 256:
        raise ValueError(f"length must be in 2..256, got {length}")
    if not 1 <= n_trials <= 1024:
        raise ValueError(f"n_trials must be in 1..1024, got {n_trials}")
    gen = torch.Generator().manual_seed(int(seed))
    rows: dict[str, list[float]] = {k: [] for k in DkExperiment.__dataclass_fields__ if k != "log_s"}
    f64 = torch.float64
    for d in d_ks:
        q = torch.randn(n_trials, length, d, generator=gen, dtype=f64)  # (T, L, D)
        k = torch.randn(n_trials, length, d, generator=gen, dtype=f64)  # (T, S, D)
        v = torch.randn(n_trials, length, DK_VALUE_DIM, generator=gen, dtype=f64)  # (T, S, Dv)
        g = torch.randn(n_trials, length, DK_VALUE_DIM, generator=gen, dtype=f64)  # (T, L, Dv)
        raw = attn.attention_scores(q, k)  # (T, L, S)
        rows["d_k"].append(d)
        rows["var_measured"].append(float(raw.var()))
        rows["var_theory"].append(float(d))
        rows["var_scaled"].append(float((raw / math.sqrt(d)).var()))
        for tag, s in (("scaled", 1 / math.sqrt(d)), ("unscaled", 1.0)):
            q_leaf = q.clone().requires_grad_(True)
            x = attn.attention_scores(q_leaf, k) * s  # the softmax input (T, L, S)
            w = torch.softmax(x, dim=-1)
            grad_x, grad_q = torch.autograd.grad((g * (w @ v)).sum(), (x, q_leaf))
            w = w.detach()
            top = w.amax(-1)  # (T, L)
            gq = grad_q.norm(dim=-1)  # (T, L)
            rows[f"entropy_{tag}"].append(float((-(w * torch.log(w.clamp_min(1e-300))).sum(-1)).mean()))
            rows[f"max_weight_{tag}"].append(float(top.mean()))
            rows[f"saturated_{tag}"].append(float((top > 0.99).to(f64).mean()))
            rows[f"grad_scores_{tag}"].append(float(grad_x.norm(dim=-1).median()))
            rows[f"grad_query_cv_{tag}"].append(float(gq.std() / gq.mean()))
    arrays = {k: np.asarray(v, dtype=float) for k, v in rows.items()}
    arrays["d_k"] = arrays["d_k"].astype(int)
    return DkExperiment(**arrays, log_s=math.log(length))
