"""Induction heads: the task, the attention-only model and the two scores that find the heads.

The best-known mechanism of in-context learning in real Transformers is the **induction head**
(Elhage et al., *A Mathematical Framework for Transformer Circuits*, 2021; Olsson et al.,
*In-context Learning and Induction Heads*, 2022). In a two-layer attention-only model:

1. a **previous-token head** in layer 0 writes "the token before me" into every position;
2. an **induction head** in layer 1 uses that as its key: the current token's query finds the
   positions whose *previous* token equals it (the place just after its earlier occurrence) and
   copies the token found there, so ``... A B ... A`` predicts ``B``.

Read as kernel regression over tokens: the keys are "previous token" features, the kernel is close
to a same-token indicator, its sharpness is the query-key scale, the values are the tokens to copy
(``core.lessons.induction_heads.kernel_view`` measures that reading).

**The task** (:func:`induction_batch`): each sequence of T tokens is a random prefix of length
``a``, then a segment of ``p`` distinct random tokens (the period, drawn in
[``min_period``, ``max_period``]), then that segment again and again until the sequence ends:
``tokens[t] = tokens[t - p]`` for ``t >= a + p``. Position t predicts token t + 1; from
``t >= a + p`` on the current token has occurred ``p`` positions earlier and the next one is a
copy: that is the **repeated part**, where accuracy is measured (``copy_mask``). Elsewhere the next
token is random and nothing beats chance (1/V).

**The model** (:class:`InductionTransformer`): token embedding + learned positions, L layers of
causal multi-head self-attention (``core.multihead.MultiHeadAttention``'s projections,
``core.attention.scaled_dot_product_attention`` for the softmax) added to a residual stream, no
MLP, then the unembedding. ``forward`` returns the logits and every layer's per-head weights; it
can switch heads off (ablation) and multiply a layer's query-key scale (blur or sharpen the lookup).

**The scores** (Olsson et al., section "Methods: prefix matching"): :func:`previous_token_score`
and :func:`prefix_matching_score` of one sequence's maps, and their batch means.

Shapes: B batch, T sequence length (L = S = T), H heads, n_layers layers, V vocabulary, d_model
width. Attention weights are (..., T, T), rows = queries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.attention import causal_mask, scaled_dot_product_attention
from core.multihead import MultiHeadAttention

#: Classroom caps: one request must stay cheap on a shared server.
MAX_VOCAB = 256
MAX_SEQ_LEN = 64
MAX_D_MODEL = 128
MAX_HEADS = 8
MAX_LAYERS = 3
MAX_STEPS = 5000
MAX_BATCH = 256
MAX_EVAL = 1024
#: Cap on :attr:`InductionConfig.work`: 12x the default run (~10 CPU s), so about 2 minutes at most.
MAX_WORK = 12 * 600 * 32 * 2 * 64

#: Random streams (the second entry of every numpy seed tuple): training batches, the held-out set.
STREAM_TRAIN, STREAM_EVAL, STREAM_TEXT = 0, 1, 2


@dataclass(frozen=True)
class InductionConfig:
    """One induction-head run: the task, the model and the training.

    Defaults measured on one CPU thread (``benchmarks/bench_induction.py``): with them the
    2-layer model formed its induction head (repeated-part accuracy > 0.95) between steps 260 and
    500 on each of seeds 0-11, in ~10 CPU s per run; the 1-layer control stays near 0.25.
    Measured alternatives (600 steps): lr 1e-2 left 2 of 6 seeds on the plateau; d_model 32
    formed on 1 of 2 seeds, late (step 560); pre-LayerNorm formed on none of 4 (lr 3e-3 and 5e-3,
    2 seeds each): those models climb slowly to ~0.45-0.5 by another route, no head matches
    prefixes. Frozen (hashable) so it can key caches; invalid values (and runs over ``MAX_WORK``)
    raise ``ValueError`` in ``__post_init__``.
    """

    vocab: int = 32  # V: distinct tokens; 1/V is chance accuracy on the random parts
    seq_len: int = 32  # T: tokens per sequence (prefix + segment + its repeats)
    min_period: int = 4  # shortest repeated segment p; the repeat then covers most of the sequence
    max_period: int = 12  # longest p; needs seq_len >= 2 * max_period (one full repeat)
    d_model: int = 64  # residual-stream width
    n_heads: int = 2  # heads per layer; in layer 1 both usually become induction heads (redundant)
    n_layers: int = 2  # 2: previous-token head + induction head; 1: the control that cannot compose
    layer_norm: bool = False  # pre-LayerNorm before each attention and the unembedding; off: it
    # kept every measured run from forming a head within 600 steps (see above)
    lr: float = 5e-3  # Adam learning rate: 3e-3 forms ~80 steps later, 1e-2 sometimes not at all
    batch_size: int = 32  # sequences per optimiser step, drawn fresh every step
    steps: int = 600  # optimiser steps of a run
    eval_every: int = 20  # steps between two measurements on the held-out set
    eval_size: int = 256  # held-out sequences (fixed by the seed)
    seed: int = 0  # fixes the initial weights, every batch and the held-out set

    def __post_init__(self) -> None:
        ints = {
            "vocab": (2, MAX_VOCAB),
            "seq_len": (4, MAX_SEQ_LEN),
            "min_period": (1, MAX_SEQ_LEN),
            "max_period": (1, MAX_SEQ_LEN),
            "d_model": (2, MAX_D_MODEL),
            "n_heads": (1, MAX_HEADS),
            "n_layers": (1, MAX_LAYERS),
            "batch_size": (1, MAX_BATCH),
            "steps": (0, MAX_STEPS),
            "eval_every": (1, MAX_STEPS),
            "eval_size": (1, MAX_EVAL),
            "seed": (0, 2**63 - 1),
        }
        for name, (low, high) in ints.items():
            value = getattr(self, name)
            if not (_is_int(value) and low <= value <= high):
                raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
        if not self.min_period <= self.max_period:
            raise ValueError(f"min_period ({self.min_period}) must be <= max_period ({self.max_period})")
        if self.max_period > self.vocab:
            raise ValueError(f"a segment of {self.max_period} distinct tokens needs vocab >= max_period")
        if 2 * self.max_period > self.seq_len:
            raise ValueError(f"seq_len must be >= 2 * max_period = {2 * self.max_period} (one full repeat)")
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"n_heads={self.n_heads} must divide d_model={self.d_model}")
        if not isinstance(self.layer_norm, bool):
            raise ValueError(f"layer_norm must be True or False, got {self.layer_norm!r}")
        if not (_is_real(self.lr) and 0 < self.lr <= 1):
            raise ValueError(f"lr must be a real number in (0, 1], got {self.lr!r}")
        if self.work > MAX_WORK:
            raise ValueError(
                f"this run is {self.work / (MAX_WORK / 12):.0f}x the default's work; at most 12x "
                "(fewer steps, a smaller batch, width or depth)"
            )

    @property
    def work(self) -> int:
        """steps x batch_size x n_layers x d_model: what a run's training time grows with."""
        return self.steps * self.batch_size * self.n_layers * self.d_model

    def replace(self, **changes: object) -> InductionConfig:
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)

    def same_run_as(self, other: InductionConfig) -> bool:
        """True when ``other`` describes the same run, except perhaps for how many steps it lasts."""
        return isinstance(other, InductionConfig) and all(
            getattr(self, f.name) == getattr(other, f.name) for f in fields(self) if f.name != "steps"
        )

    @property
    def control(self) -> InductionConfig:
        """The 1-layer control: the same run with one layer (no head can read a previous head)."""
        return self.replace(n_layers=1)


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_real(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# --------------------------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InductionBatch:
    """B sequences of the task, with where each one repeats.

    Attributes:
        tokens: (B, T) int64 token ids in [0, V).
        period: (B,) the segment length p of each sequence.
        start: (B,) where the first copy of the segment starts (= the prefix length a); the repeat
            starts at ``start + period``.
        copy_mask: (B, T - 1) bool, True at the positions t whose next token is a copy:
            ``t >= start + period`` (the current token occurred p positions earlier and the token
            after that occurrence is the target). Accuracy on the repeated part is measured there.
    """

    tokens: np.ndarray
    period: np.ndarray
    start: np.ndarray
    copy_mask: np.ndarray


def induction_batch(config: InductionConfig, rng: np.random.Generator, batch: int) -> InductionBatch:
    """``batch`` sequences: random prefix, a segment of p distinct tokens, the segment repeated.

    Per sequence: p uniform in [min_period, max_period]; the prefix length a uniform in
    [0, T - 2p] (so at least one full repeat fits); prefix tokens uniform over the vocabulary
    (they may equal segment tokens, as in real text); segment tokens drawn without replacement
    (so inside the repeat, a token's earlier occurrence in the segment is unique);
    ``tokens[t] = tokens[t - p]`` from ``a + p`` to the end.

    Args:
        config: the task's sizes (vocab, seq_len, min_period, max_period).
        rng: the numpy generator to draw from (deterministic for a seeded generator).
        batch: B >= 1.

    Returns:
        An :class:`InductionBatch`.

    Raises:
        ValueError: if ``batch`` is not a positive integer.
    """
    if not (_is_int(batch) and batch >= 1):
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    T, V = config.seq_len, config.vocab
    period = rng.integers(config.min_period, config.max_period + 1, size=batch)  # (B,)
    start = rng.integers(0, T - 2 * period + 1)  # (B,), prefix length a in [0, T - 2p]
    prefix = rng.integers(0, V, size=(batch, T))  # (B, T), only the first a used
    # p distinct tokens per row: the first p of a random permutation of the vocabulary
    segment = np.argsort(rng.random((batch, V)), axis=1)  # (B, V)
    t = np.arange(T)[None, :]  # (1, T)
    offset = t - start[:, None]  # (B, T), position inside the repeating part
    in_repeat = offset >= 0
    idx = np.where(in_repeat, offset, 0) % period[:, None]  # (B, T), index into the segment
    tokens = np.where(in_repeat, np.take_along_axis(segment, idx, axis=1), prefix)
    copy_mask = t[:, :-1] >= (start + period)[:, None]  # (B, T - 1)
    return InductionBatch(tokens=tokens.astype(np.int64), period=period, start=start, copy_mask=copy_mask)


def training_batch(config: InductionConfig, step: int) -> InductionBatch:
    """The batch of optimiser step ``step``: a function of the seed and the step only (resumable)."""
    return induction_batch(
        config, np.random.default_rng((config.seed, STREAM_TRAIN, step)), config.batch_size
    )


def eval_batch(config: InductionConfig) -> InductionBatch:
    """The held-out sequences every measurement of a run uses (fixed by the seed)."""
    return induction_batch(config, np.random.default_rng((config.seed, STREAM_EVAL)), config.eval_size)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InductionOutput:
    """One forward pass.

    Attributes:
        logits: (B, T, V) next-token scores; position t predicts token t + 1.
        weights: (B, n_layers, H, T, T) every layer's per-head attention, rows = queries.
        streams: (B, n_layers + 1, T, d_model) the residual stream before layer 0, after layer 0, ...
    """

    logits: torch.Tensor
    weights: torch.Tensor
    streams: torch.Tensor


class InductionTransformer(nn.Module):
    """An attention-only Transformer (Elhage et al., 2021): embeddings, L attention layers, unembedding.

    ``x_0 = E[tokens] + P[positions]``; ``x_{l+1} = x_l + Attn_l(LN(x_l))`` with causal multi-head
    self-attention and no MLP; ``logits = LN(x_L) W_U``. (LN is the identity unless
    ``config.layer_norm``.) Without MLPs, everything a layer reads is a sum of what earlier layers
    wrote into the residual stream, which is what lets a layer-1 head use a layer-0 head's output
    as its key (K-composition): with one layer, no head can, and no induction head can form.

    Every weight is drawn from a ``torch.Generator`` seeded by ``config.seed``: the same config
    gives the same model, independently of torch's global generator.

    Raises:
        ValueError: if ``config`` is not an :class:`InductionConfig`.
    """

    def __init__(self, config: InductionConfig) -> None:
        super().__init__()
        if not isinstance(config, InductionConfig):
            raise ValueError(f"expected an InductionConfig, got {type(config).__name__}")
        self.config = config
        d = config.d_model
        self.embed = nn.Embedding(config.vocab, d)
        self.positions = nn.Parameter(torch.zeros(config.seq_len, d))
        self.attention = nn.ModuleList(MultiHeadAttention(d, config.n_heads) for _ in range(config.n_layers))
        norm = nn.LayerNorm if config.layer_norm else (lambda _: nn.Identity())
        self.norms = nn.ModuleList(norm(d) for _ in range(config.n_layers))
        self.final_norm = norm(d)
        self.unembed = nn.Linear(d, config.vocab, bias=False)
        self.register_buffer("mask", causal_mask(config.seq_len), persistent=False)
        self.reset_parameters(torch.Generator().manual_seed(config.seed))

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator) -> None:
        """Draw every weight from ``generator``.

        Token and position tables N(0, 1/d_model) (unit-norm rows on average, so both are as loud
        as each other in the stream); attention projections Xavier-uniform with zero biases
        (``MultiHeadAttention.reset_parameters``); unembedding N(0, 1/d_model).
        """
        std = 1.0 / math.sqrt(self.config.d_model)
        nn.init.normal_(self.embed.weight, 0.0, std, generator=generator)
        nn.init.normal_(self.positions, 0.0, std, generator=generator)
        for attention in self.attention:
            attention.reset_parameters(generator)
        nn.init.normal_(self.unembed.weight, 0.0, std, generator=generator)

    def _layer(
        self, layer: int, x: torch.Tensor, head_mask: torch.Tensor | None, qk_scale: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Layer ``layer``'s attention on the stream x (B, T, d_model): output and weights (B, H, T, T)."""
        attn = self.attention[layer]
        B, T, _ = x.shape
        H, dk = attn.n_heads, attn.d_k
        h = self.norms[layer](x)
        # (B, T, H * dk) -> (B, T, H, dk) -> (B, H, T, dk)
        q = attn.w_query(h).view(B, T, H, dk).transpose(1, 2)
        k = attn.w_key(h).view(B, T, H, dk).transpose(1, 2)
        v = attn.w_value(h).view(B, T, H, dk).transpose(1, 2)
        heads, weights = scaled_dot_product_attention(
            q, k, v, mask=self.mask[:T, :T], scale=qk_scale / math.sqrt(dk)
        )  # (B, H, T, dk), (B, H, T, T)
        if head_mask is not None:
            heads = heads * head_mask[:, None, None]  # (H, 1, 1): an ablated head writes nothing
        concat = heads.transpose(1, 2).reshape(B, T, H * dk)  # (B, H, T, dk) -> (B, T, H * dk)
        return attn.w_out(concat), weights  # (B, T, d_model)

    def forward(
        self,
        tokens: torch.Tensor,
        *,
        ablate: frozenset[tuple[int, int]] | set[tuple[int, int]] = frozenset(),
        qk_scale: dict[int, float] | None = None,
    ) -> InductionOutput:
        """Next-token logits and every layer's attention.

        Args:
            tokens: (B, T) int64 ids in [0, V), 1 <= T <= seq_len.
            ablate: (layer, head) pairs switched off: that head's output is zeroed before W_O
                (its weights are still returned: they are what it *would* attend to).
            qk_scale: {layer: multiplier} on that layer's score scale 1/√d_k (the kernel's
                sharpness: < 1 blurs the lookup, > 1 sharpens it); default 1 everywhere.

        Returns:
            An :class:`InductionOutput`.

        Raises:
            ValueError: on tokens that are not (B, T) integers in range, a (layer, head) that does
                not exist, or a multiplier that is not finite and positive.
        """
        c = self.config
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or torch.is_floating_point(tokens):
            raise ValueError(
                f"tokens must be a (batch, length) integer tensor, got {getattr(tokens, 'shape', tokens)}"
            )
        T = tokens.shape[1]
        if not 1 <= T <= c.seq_len:
            raise ValueError(f"sequence length {T} must be in [1, {c.seq_len}]")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= c.vocab):
            raise ValueError(f"token ids must be in [0, {c.vocab})")
        head_masks = _head_masks(ablate, c.n_layers, c.n_heads)
        scales = _layer_scales(qk_scale, c.n_layers)
        x = self.embed(tokens) + self.positions[:T]  # (B, T, d_model)
        streams, weights = [x], []
        for layer in range(c.n_layers):
            out, w = self._layer(layer, x, head_masks[layer], scales[layer])
            x = x + out  # residual stream (B, T, d_model)
            streams.append(x)
            weights.append(w)
        logits = self.unembed(self.final_norm(x))  # (B, T, d_model) -> (B, T, V)
        return InductionOutput(
            logits=logits,
            weights=torch.stack(weights, dim=1),  # n_layers x (B, H, T, T) -> (B, n_layers, H, T, T)
            streams=torch.stack(streams, dim=1),  # (B, n_layers + 1, T, d_model)
        )


def _head_masks(ablate: object, n_layers: int, n_heads: int) -> list[torch.Tensor | None]:
    masks: list[torch.Tensor | None] = [None] * n_layers
    for pair in ablate:  # type: ignore[attr-defined]
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(_is_int(i) for i in pair)):
            raise ValueError(f"ablate holds (layer, head) pairs, got {pair!r}")
        layer, h = pair
        if not (0 <= layer < n_layers and 0 <= h < n_heads):
            raise ValueError(f"no head {pair}: layers 0..{n_layers - 1}, heads 0..{n_heads - 1}")
        if masks[layer] is None:
            masks[layer] = torch.ones(n_heads)
        masks[layer][h] = 0.0
    return masks


def _layer_scales(qk_scale: dict[int, float] | None, n_layers: int) -> list[float]:
    scales = [1.0] * n_layers
    for layer, m in (qk_scale or {}).items():
        if not (_is_int(layer) and 0 <= layer < n_layers):
            raise ValueError(f"qk_scale names layer {layer!r}; layers are 0..{n_layers - 1}")
        if not (_is_real(m) and m > 0):
            raise ValueError(f"a qk_scale multiplier must be finite and positive, got {m!r}")
        scales[layer] = float(m)
    return scales


def next_token_loss(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting token t + 1 from position t: logits (B, T, V), tokens (B, T)."""
    V = logits.shape[-1]
    # (B, T - 1, V) -> (B (T - 1), V) against (B (T - 1),)
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))


# --------------------------------------------------------------------------------------------
# The scores (Olsson et al., 2022)
# --------------------------------------------------------------------------------------------


def _as_weights(weights: object, batched: bool) -> np.ndarray:
    w = np.asarray(weights.detach() if isinstance(weights, torch.Tensor) else weights, dtype=float)
    want = 4 if batched else 3
    if w.ndim != want or w.shape[-1] != w.shape[-2] or w.shape[-1] < 1:
        shape = "(B, heads, T, T)" if batched else "(heads, T, T)"
        raise ValueError(f"weights must be {shape} with square maps, got {w.shape}")
    return w


def _as_tokens(tokens: object, shape: tuple[int, ...]) -> np.ndarray:
    t = np.asarray(tokens.detach() if isinstance(tokens, torch.Tensor) else tokens)
    if t.shape != shape:
        raise ValueError(f"tokens must have shape {shape} to fit the weights, got {t.shape}")
    if t.size and not np.issubdtype(t.dtype, np.integer):
        raise ValueError(f"tokens must be integers, got {t.dtype}")
    return t


def previous_token_score(weights: object) -> np.ndarray:
    """Each head's mean attention to the previous position: mean over t >= 1 of ``weights[h, t, t-1]``.

    Args:
        weights: (heads, T, T) one sequence's maps, rows = queries (each summing to 1), T >= 2.

    Returns:
        (heads,) scores in [0, 1]; 1 = the head always looks exactly one token back.

    Raises:
        ValueError: if weights is not (heads, T, T) with T >= 2.
    """
    w = _as_weights(weights, batched=False)
    if w.shape[-1] < 2:
        raise ValueError("the previous-token score needs T >= 2")
    return np.diagonal(w, offset=-1, axis1=1, axis2=2).mean(axis=-1)  # (heads, T - 1) -> (heads,)


def _prefix_matches(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For tokens (..., T): match (..., T, T), True at (t, s) when 1 <= s <= t and tokens[s-1] == tokens[t];
    repeated (..., T), True at t when tokens[t] occurred before t."""
    T = tokens.shape[-1]
    same = tokens[..., :, None] == tokens[..., None, :]  # (..., T, T): tokens[t] == tokens[r]
    earlier = np.tril(np.ones((T, T), dtype=bool), k=-1)  # r < t
    repeated = (same & earlier).any(axis=-1)  # (..., T)
    match = np.zeros_like(same)
    # key s = r + 1 for every earlier occurrence r < t; s <= t holds since r < t
    match[..., :, 1:] = (same & earlier)[..., :, :-1]
    return match, repeated


def prefix_matching_score(weights: object, tokens: object) -> np.ndarray:
    """Each head's attention to "the token after an earlier occurrence of the current token".

    The mean, over query positions t whose token occurred earlier, of the total weight on the
    key positions s <= t with ``tokens[s-1] == tokens[t]`` (Olsson et al.'s prefix matching: an
    induction head scores near 1, a previous-token head near 0 on random tokens).

    Args:
        weights: (heads, T, T) one sequence's maps, rows = queries.
        tokens: (T,) that sequence's integer tokens.

    Returns:
        (heads,) scores in [0, 1], NaN for every head when no token of the sequence repeats
        (the score is then undefined).

    Raises:
        ValueError: if weights is not (heads, T, T) or tokens is not (T,) integers.
    """
    w = _as_weights(weights, batched=False)
    t = _as_tokens(tokens, (w.shape[-1],))
    match, repeated = _prefix_matches(t)  # (T, T), (T,)
    if not repeated.any():
        return np.full(w.shape[0], np.nan)
    on_match = (w * match).sum(axis=-1)  # (heads, T, T) -> (heads, T)
    return on_match[:, repeated].mean(axis=-1)


def batch_previous_token_score(weights: object) -> np.ndarray:
    """:func:`previous_token_score` of each sequence, averaged: weights (B, heads, T, T) -> (heads,)."""
    w = _as_weights(weights, batched=True)
    if w.shape[-1] < 2:
        raise ValueError("the previous-token score needs T >= 2")
    return np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(0, -1))  # (B, heads, T - 1) -> (heads,)


def batch_prefix_matching_score(weights: object, tokens: object) -> np.ndarray:
    """:func:`prefix_matching_score` of each sequence, averaged over the sequences where it is defined.

    Args:
        weights: (B, heads, T, T). tokens: (B, T) integers.

    Returns:
        (heads,); NaN when no sequence has a repeated token.

    Raises:
        ValueError: on shapes that do not fit.
    """
    w = _as_weights(weights, batched=True)
    t = _as_tokens(tokens, (w.shape[0], w.shape[-1]))
    match, repeated = _prefix_matches(t)  # (B, T, T), (B, T)
    on_match = (w * match[:, None]).sum(axis=-1)  # (B, heads, T)
    counts = repeated.sum(axis=-1)  # (B,)
    defined = counts > 0
    if not defined.any():
        return np.full(w.shape[1], np.nan)
    per_sequence = (on_match * repeated[:, None]).sum(axis=-1)[defined] / counts[defined, None]  # (B', heads)
    return per_sequence.mean(axis=0)


#: A head of a layer >= 1 counts as an induction head from this prefix-matching score on (Olsson et
#: al.'s induction heads score 0.5-0.9 on repeated random tokens; here the trained ones reach
#: 0.8-0.9, while a head that ignores content scores about 1/p, 0.05-0.15).
INDUCTION_THRESHOLD = 0.5


def induction_head_of(prefix_matching: np.ndarray) -> tuple[int, int] | None:
    """The (layer, head) with the highest prefix-matching score in a layer >= 1 (None with one layer).

    Args:
        prefix_matching: (n_layers, H) scores, as ``core.induction_training.EvalPoint.prefix_matching``.
    """
    later = np.asarray(prefix_matching, dtype=float)[1:]  # (n_layers - 1, H)
    if later.size == 0 or np.all(np.isnan(later)):
        return None
    layer, head = np.unravel_index(int(np.nanargmax(later)), later.shape)
    return int(layer) + 1, int(head)
