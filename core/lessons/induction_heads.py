"""The induction-heads lesson: its default run, shipped ahead, and the reading of a trained model.

``core.induction`` holds the task, the attention-only model and the two scores that find the heads;
``core.induction_training`` the resumable loop. This module is what the lesson shows:

- :func:`sequence_view`: one held-out sequence, every head's map on it and the model's guesses.
- :func:`ablation`: switch each head off (its output zeroed before W_O) and measure the accuracy on
  the repeated part, as Olsson et al. (2022) do to show the induction heads are *causally*
  responsible for in-context copying. Which head is the previous-token head (layer 0, highest
  previous-token score) and which the induction head (a later layer, highest prefix-matching
  score) is read from the model's own maps, not assumed.
- :func:`kernel_view`: the induction head as Nadaraya-Watson over tokens. The query is the current
  token, each key carries "the token before me" (written by the previous-token head), the value is
  the token to copy. Its query-key score is high when the key's previous token equals the query
  token and low otherwise, so the kernel ``exp(score)`` is close to a same-token indicator; the
  gap between the two score distributions is the kernel's sharpness, and multiplying the scores
  (the layer's QK scale) blurs or sharpens the lookup, with the copy accuracy following.
- :func:`encode_text` / :func:`predict_text`: any string (letters, Chinese characters) mapped into
  the vocabulary, and what the model predicts on it: a segment typed twice is copied on its
  second occurrence.
- **The default run, computed ahead** (:func:`default_runs`, :data:`SHIPPED_FILE`): a page should
  teach before anything is pressed: the default config's training curves, its 1-layer control's
  curve, and the trained model whose heads the page reads. Training both takes about 10-15 CPU
  seconds (``benchmarks/bench_induction.py``), too long for a first page load, so
  :func:`default_runs` is run once with ``python -m core.lessons.induction_heads`` and its result
  saved to :data:`SHIPPED_FILE` (the trained weights, float32, and both histories: ~0.2 MB).
  ``tests/core/lessons/test_induction_heads.py`` trains the default again and checks that the file
  is what the code produces. The file is a numpy ``.npz`` read with ``allow_pickle=False`` (no
  code can hide in it): the config as JSON, the model's ``state_dict`` under ``weights/``, and
  each history's fields as arrays.

Shapes: B batch, T sequence length, H heads, n_layers layers, V vocabulary, K scale multipliers.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch

from core.induction import (
    INDUCTION_THRESHOLD,
    STREAM_TEXT,
    InductionBatch,
    InductionConfig,
    InductionTransformer,
    eval_batch,
    induction_head_of,
)
from core.induction_training import EvalPoint, evaluate, train_induction
from core.threads import one_thread


def _check_model(model: object) -> InductionTransformer:
    if not isinstance(model, InductionTransformer):
        raise ValueError(f"expected an InductionTransformer, got {type(model).__name__}")
    return model


# --------------------------------------------------------------------------------------------
# One held-out sequence, read
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SequenceView:
    """The model on one held-out sequence: what the "read the heads" maps and token strip draw.

    Attributes:
        tokens: (T,) the sequence.
        period, start: its segment length p and where the segment starts (the repeat starts at
            ``start + period``).
        copy_mask: (T - 1,) True where the next token is a copy (the repeated part).
        weights: (n_layers, H, T, T) every head's attention, rows = queries.
        predicted: (T,) the model's next-token guess after each position.
    """

    tokens: np.ndarray
    period: int
    start: int
    copy_mask: np.ndarray
    weights: np.ndarray
    predicted: np.ndarray


@torch.no_grad()
def sequence_view(
    model: InductionTransformer, index: int = 0, config: InductionConfig | None = None
) -> SequenceView:
    """Held-out sequence ``index`` of ``config`` (default the model's) and the model's maps on it.

    Raises:
        ValueError: if ``model`` is not an :class:`InductionTransformer` or ``index`` is out of range.
    """
    model = _check_model(model)
    batch = eval_batch(config if config is not None else model.config)
    n = batch.tokens.shape[0]
    if not (isinstance(index, (int, np.integer)) and 0 <= index < n):
        raise ValueError(f"index must be in 0..{n - 1}, got {index!r}")
    tokens = batch.tokens[index]
    with one_thread():
        was_training = model.training
        model.eval()
        out = model(torch.from_numpy(tokens)[None])  # (1, T)
        model.train(was_training)
    return SequenceView(
        tokens=tokens,
        period=int(batch.period[index]),
        start=int(batch.start[index]),
        copy_mask=batch.copy_mask[index],
        weights=out.weights[0].numpy(),  # (n_layers, H, T, T)
        predicted=out.logits[0].argmax(-1).numpy(),  # (T,)
    )


# --------------------------------------------------------------------------------------------
# Ablation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadAblation:
    """The model with one head (or a group) switched off.

    Attributes:
        heads: the (layer, head) pairs switched off.
        accuracy: accuracy on the repeated part without them.
        drop: the full model's accuracy minus ``accuracy`` (how much they mattered).
    """

    heads: tuple[tuple[int, int], ...]
    accuracy: float
    drop: float


@dataclass(frozen=True)
class Ablation:
    """Every head switched off in turn, and the model's circuit named from its own scores.

    Attributes:
        full: the intact model measured on the held-out set (:class:`EvalPoint`; its
            ``previous_token`` and ``prefix_matching`` (n_layers, H) name the heads).
        single: one :class:`HeadAblation` per head asked for, in the order asked.
        previous_token_head: (0, h), the layer-0 head with the highest previous-token score.
        induction_head: (layer, head) with layer >= 1, the head with the highest prefix-matching score
            (None for a 1-layer model: no head can read a previous head's output).
        induction_heads: every head of a layer >= 1 with prefix-matching >= ``INDUCTION_THRESHOLD``
            (several heads can learn the same lookup: then each alone matters less).
        induction_group: those heads switched off together (None when there are none).
    """

    full: EvalPoint
    single: tuple[HeadAblation, ...]
    previous_token_head: tuple[int, int]
    induction_head: tuple[int, int] | None
    induction_heads: tuple[tuple[int, int], ...]
    induction_group: HeadAblation | None

    def of(self, layer: int, head: int) -> HeadAblation:
        """The single-head ablation of (layer, head).

        Raises:
            ValueError: if that head was not ablated.
        """
        for a in self.single:
            if a.heads == ((layer, head),):
                return a
        raise ValueError(f"head ({layer}, {head}) was not ablated")


def ablation(
    model: InductionTransformer,
    config: InductionConfig | None = None,
    heads: Iterable[tuple[int, int]] | None = None,
) -> Ablation:
    """Switch off each of ``heads`` alone (default: every head) and measure the accuracy drop.

    Args:
        model: a trained :class:`InductionTransformer`.
        config: whose held-out set to measure on (default the model's own config).
        heads: (layer, head) pairs to ablate one at a time.

    Returns:
        An :class:`Ablation`.

    Raises:
        ValueError: if ``model`` is not an :class:`InductionTransformer` or a head does not exist.
    """
    model = _check_model(model)
    c = model.config
    batch = eval_batch(config if config is not None else c)
    every = [(layer, h) for layer in range(c.n_layers) for h in range(c.n_heads)]
    pairs = every if heads is None else [(int(layer), int(h)) for layer, h in heads]
    with one_thread():
        full = evaluate(model, batch)

        def without(group: tuple[tuple[int, int], ...]) -> HeadAblation:
            acc = evaluate(model, batch, ablate=frozenset(group)).accuracy
            return HeadAblation(heads=group, accuracy=acc, drop=full.accuracy - acc)

        single = tuple(without((pair,)) for pair in pairs)
        pm = full.prefix_matching  # (n_layers, H)
        group = tuple((layer, h) for layer, h in every if layer >= 1 and pm[layer, h] >= INDUCTION_THRESHOLD)
        return Ablation(
            full=full,
            single=single,
            previous_token_head=(0, int(np.argmax(full.previous_token[0]))),
            induction_head=induction_head_of(pm),
            induction_heads=group,
            induction_group=without(group) if group else None,
        )


# --------------------------------------------------------------------------------------------
# The kernel view
# --------------------------------------------------------------------------------------------

#: QK-scale multipliers of the kernel view: from a blur that averages every earlier token (0.05)
#: to a lookup sharper than the trained one (8).
SCALES = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 4.0, 8.0)
#: Held-out sequences whose scores the kernel view returns (a few thousand points per distribution).
KERNEL_SEQUENCES = 64


@dataclass(frozen=True)
class KernelView:
    """An induction head read as Nadaraya-Watson over tokens.

    Attributes:
        head: the (layer, head) read.
        match_scores: (N_match,) the head's scaled query-key scores q·k/√d_k from queries in the
            repeated part to keys s <= t whose previous token equals the query token.
        other_scores: (N_other,) the same queries' scores to every other key s <= t.
        gap: mean(match_scores) - mean(other_scores); ``exp(gap)`` is how many times more a
            matching key weighs than a typical other one (the kernel's sharpness).
        scales: (K,) multipliers of the layer's QK scale (1 = as trained).
        accuracy: (K,) accuracy on the repeated part with the layer's scores multiplied.
        prefix_matching: (K,) the head's prefix-matching score at each multiplier.
        effective_keys: (K,) the head's mean effective number of attended keys, exp(entropy of a
            row), over queries in the repeated part: the kernel's width in tokens.
    """

    head: tuple[int, int]
    match_scores: np.ndarray
    other_scores: np.ndarray
    gap: float
    scales: np.ndarray
    accuracy: np.ndarray
    prefix_matching: np.ndarray
    effective_keys: np.ndarray


def _subset(batch: InductionBatch, n: int) -> InductionBatch:
    return InductionBatch(
        tokens=batch.tokens[:n], period=batch.period[:n], start=batch.start[:n], copy_mask=batch.copy_mask[:n]
    )


@torch.no_grad()
def head_scores(model: InductionTransformer, tokens: np.ndarray, layer: int) -> np.ndarray:
    """Layer ``layer``'s scaled query-key scores q·k/√d_k before the mask and the softmax.

    Args:
        model: an :class:`InductionTransformer`.
        tokens: (B, T) integer tokens.
        layer: which layer.

    Returns:
        (B, H, T, T) scores, rows = queries (entries above the diagonal are masked in the model).

    Raises:
        ValueError: on a layer that does not exist or tokens the model refuses.
    """
    model = _check_model(model)
    if not (isinstance(layer, int) and 0 <= layer < model.config.n_layers):
        raise ValueError(f"layer must be in 0..{model.config.n_layers - 1}, got {layer!r}")
    out = model(torch.as_tensor(tokens))
    attn = model.attention[layer]
    x = model.norms[layer](out.streams[:, layer])  # (B, T, d_model): what the layer reads
    B, T, _ = x.shape
    H, dk = attn.n_heads, attn.d_k
    q = attn.w_query(x).view(B, T, H, dk).transpose(1, 2)  # (B, H, T, dk)
    k = attn.w_key(x).view(B, T, H, dk).transpose(1, 2)  # (B, H, T, dk)
    return (q @ k.transpose(-2, -1) / math.sqrt(dk)).numpy()  # (B, H, T, T)


def kernel_view(
    model: InductionTransformer,
    head: tuple[int, int] | None = None,
    scales: Iterable[float] = SCALES,
    config: InductionConfig | None = None,
) -> KernelView:
    """Score distributions of an induction head and copy accuracy against its layer's QK scale.

    Args:
        model: a trained :class:`InductionTransformer` with at least 2 layers.
        head: the (layer, head) to read; default the induction head found by :func:`ablation`'s rule
            (highest prefix-matching score in a layer >= 1).
        scales: multipliers of that layer's QK scale (all heads of the layer together, as the
            scale is the layer's).
        config: whose held-out set to measure on (default the model's own config).

    Returns:
        A :class:`KernelView`.

    Raises:
        ValueError: for a 1-layer model, a head that does not exist, or a multiplier that is not
            finite and positive.
    """
    model, scales, batch = _scale_sweep_inputs(model, scales, config)
    with one_thread():
        layer, h = _kernel_head(model, batch, head)
        small = _subset(batch, KERNEL_SEQUENCES)
        scores = head_scores(model, small.tokens, layer)[:, h]  # (B, T, T)
        match_scores, other_scores = _split_scores(scores, small)
        accuracy, pm, keys = [], [], []
        for m in scales:
            point = evaluate(model, batch, qk_scale={layer: float(m)})
            accuracy.append(point.accuracy)
            pm.append(point.prefix_matching[layer, h])
            keys.append(_effective_keys(model, batch, layer, h, float(m)))
    return KernelView(
        head=(layer, h),
        match_scores=match_scores,
        other_scores=other_scores,
        gap=float(match_scores.mean() - other_scores.mean()),
        scales=scales,
        accuracy=np.array(accuracy),
        prefix_matching=np.array(pm),
        effective_keys=np.array(keys),
    )


def scale_accuracy(
    model: InductionTransformer,
    scales: Iterable[float],
    config: InductionConfig | None = None,
) -> np.ndarray:
    """Copy accuracy with the induction head's layer's QK scale multiplied by each of ``scales``.

    The same numbers as :func:`kernel_view`'s ``accuracy`` at those multipliers (same head, same
    held-out set), for one forward pass per multiplier instead of the whole sweep: what the blur
    question's answer needs before its chart is revealed.

    Args:
        model: a trained :class:`InductionTransformer` with at least 2 layers.
        scales: (K,) multipliers of the induction head's layer's QK scale.
        config: whose held-out set to measure on (default the model's own config).

    Returns:
        (K,) accuracy on the repeated part at each multiplier.

    Raises:
        ValueError: as :func:`kernel_view`.
    """
    model, scales, batch = _scale_sweep_inputs(model, scales, config)
    with one_thread():
        layer, _ = _kernel_head(model, batch, None)
        return np.array([evaluate(model, batch, qk_scale={layer: float(m)}).accuracy for m in scales])


def _scale_sweep_inputs(
    model: InductionTransformer, scales: Iterable[float], config: InductionConfig | None
) -> tuple[InductionTransformer, np.ndarray, InductionBatch]:
    """The checked model, the (K,) multipliers and the held-out batch of a QK-scale sweep."""
    model = _check_model(model)
    if model.config.n_layers < 2:
        raise ValueError("the kernel view needs a model with at least 2 layers (an induction head)")
    scales = np.asarray(list(scales), dtype=float)
    if scales.ndim != 1 or scales.size == 0 or not np.all(np.isfinite(scales) & (scales > 0)):
        raise ValueError("scales must be a non-empty list of finite positive numbers")
    return model, scales, eval_batch(config if config is not None else model.config)


def _kernel_head(
    model: InductionTransformer, batch: InductionBatch, head: tuple[int, int] | None
) -> tuple[int, int]:
    """``head`` checked, or the induction head (highest prefix-matching score in a layer >= 1)."""
    c = model.config
    if head is None:
        head = induction_head_of(evaluate(model, batch).prefix_matching)
    if not (isinstance(head, tuple) and len(head) == 2):
        raise ValueError(f"head must be a (layer, head) pair, got {head!r}")
    layer, h = head
    if not (1 <= layer < c.n_layers and 0 <= h < c.n_heads):
        raise ValueError(f"head must be (layer >= 1, head) of the model, got {head!r}")
    return layer, h


def _split_scores(scores: np.ndarray, batch: InductionBatch) -> tuple[np.ndarray, np.ndarray]:
    """Scores (B, T, T) of queries in the repeated part, split by "key's previous token == query token"."""
    tokens = batch.tokens  # (B, T)
    T = tokens.shape[1]
    query = np.zeros_like(tokens, dtype=bool)
    query[:, :-1] = batch.copy_mask  # (B, T): queries in the repeated part
    previous = np.full_like(tokens, -1)
    previous[:, 1:] = tokens[:, :-1]  # (B, T): the token before each key (-1: none)
    match = previous[:, None, :] == tokens[:, :, None]  # (B, T, T): key s's previous token == query t's token
    allowed = np.tril(np.ones((T, T), dtype=bool))[None] & query[:, :, None]  # (B, T, T): s <= t, t in repeat
    return scores[allowed & match], scores[allowed & ~match]


@torch.no_grad()
def _effective_keys(
    model: InductionTransformer, batch: InductionBatch, layer: int, head: int, m: float
) -> float:
    w = model(torch.from_numpy(batch.tokens), qk_scale={layer: m}).weights[:, layer, head]  # (B, T, T)
    entropy = -(w * torch.log(w.clamp_min(1e-30))).sum(-1)  # (B, T)
    rows = torch.zeros_like(entropy, dtype=torch.bool)
    rows[:, :-1] = torch.from_numpy(batch.copy_mask)
    return float(torch.exp(entropy[rows]).mean())


# --------------------------------------------------------------------------------------------
# Your own text
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodedText:
    """A string mapped into the model's vocabulary, one token per non-space character.

    Attributes:
        symbols: (T,) the characters kept (whitespace dropped), in order.
        tokens: (T,) int64 their token ids.
        alphabet: (symbol, token) for each distinct symbol, in order of first appearance.
    """

    symbols: tuple[str, ...]
    tokens: np.ndarray
    alphabet: tuple[tuple[str, int], ...]

    def symbol_of(self, token: int) -> str | None:
        """The character mapped to ``token``, or None when no character of the text uses it."""
        for symbol, t in self.alphabet:
            if t == token:
                return symbol
        return None


def encode_text(text: str, config: InductionConfig) -> EncodedText:
    """Map ``text`` into the vocabulary: one token per non-space character, deterministically.

    Distinct characters get distinct tokens, in order of first appearance, through a fixed
    permutation of the vocabulary drawn from ``config.seed`` (so "abcabc" does not become the
    unusual run 0, 1, 2, ...): the same text always gives the same tokens for a config. Letters,
    digits, punctuation and Chinese characters are all just symbols.

    Raises:
        ValueError: if the text is not a string, has no non-space character, is longer than
            ``config.seq_len`` characters (spaces not counted), or has more distinct characters
            than ``config.vocab``.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    symbols = tuple(ch for ch in text if not ch.isspace())
    if not symbols:
        raise ValueError("the text is empty: type a few characters, with a part repeated")
    if len(symbols) > config.seq_len:
        raise ValueError(f"the text has {len(symbols)} characters; the model reads at most {config.seq_len}")
    distinct = list(dict.fromkeys(symbols))
    if len(distinct) > config.vocab:
        raise ValueError(
            f"the text has {len(distinct)} different characters; the vocabulary has only {config.vocab}"
        )
    permutation = np.random.default_rng((config.seed, STREAM_TEXT)).permutation(config.vocab)
    table = {s: int(permutation[i]) for i, s in enumerate(distinct)}
    return EncodedText(
        symbols=symbols,
        tokens=np.array([table[s] for s in symbols], dtype=np.int64),
        alphabet=tuple(table.items()),
    )


@dataclass(frozen=True)
class TextPrediction:
    """What the model predicts after each character of an :class:`EncodedText`.

    Attributes:
        text: the encoded text.
        predicted: (T,) the most likely next token after each position.
        probability: (T,) its probability.
        predicted_symbols: (T,) the character of each predicted token (None: not in the text).
        copy_target: (T - 1,) the token an ideal induction head predicts after position t (the
            token after the latest earlier occurrence of the current token), -1 when the current
            token has not occurred before.
        copied: (T - 1,) True where the model predicted that copy target.
        correct: (T - 1,) True where the prediction equals the text's actual next token.
        weights: (n_layers, H, T, T) every head's attention on the text.
    """

    text: EncodedText
    predicted: np.ndarray
    probability: np.ndarray
    predicted_symbols: tuple[str | None, ...]
    copy_target: np.ndarray
    copied: np.ndarray
    correct: np.ndarray
    weights: np.ndarray

    @property
    def copy_accuracy(self) -> float:
        """Share of positions with a copy target where the model predicted it (NaN: none)."""
        has = self.copy_target >= 0
        return float(self.copied[has].mean()) if has.any() else float("nan")


def induction_targets(tokens: np.ndarray) -> np.ndarray:
    """The ideal induction head's next-token guess at each position t < T - 1 of tokens (T,).

    The token that followed the latest earlier occurrence of ``tokens[t]``, or -1 when
    ``tokens[t]`` has not occurred before t.
    """
    tokens = np.asarray(tokens)
    T = tokens.shape[0]
    last_seen: dict[int, int] = {}
    target = np.full(max(T - 1, 0), -1, dtype=np.int64)
    for t in range(T - 1):
        r = last_seen.get(int(tokens[t]))
        if r is not None:
            target[t] = tokens[r + 1]
        last_seen[int(tokens[t])] = t
    return target


@torch.no_grad()
def predict_text(model: InductionTransformer, text: EncodedText) -> TextPrediction:
    """Run the model on an encoded text: its next-token guesses, copies and attention.

    Raises:
        ValueError: if ``model`` is not an :class:`InductionTransformer` or the text does not fit it.
    """
    model = _check_model(model)
    if not isinstance(text, EncodedText):
        raise ValueError(f"expected an EncodedText, got {type(text).__name__}")
    with one_thread():
        was_training = model.training
        model.eval()
        out = model(torch.from_numpy(text.tokens)[None])  # (1, T)
        model.train(was_training)
    probs = torch.softmax(out.logits[0], dim=-1)  # (T, V)
    best = probs.max(dim=-1)
    predicted = best.indices.numpy()
    tokens = text.tokens
    target = induction_targets(tokens)
    return TextPrediction(
        text=text,
        predicted=predicted,
        probability=best.values.numpy(),
        predicted_symbols=tuple(text.symbol_of(int(p)) for p in predicted),
        copy_target=target,
        copied=(predicted[:-1] == target) & (target >= 0),
        correct=predicted[:-1] == tokens[1:],
        weights=out.weights[0].numpy(),  # (n_layers, H, T, T)
    )


# --------------------------------------------------------------------------------------------
# The default run, computed ahead and shipped
# --------------------------------------------------------------------------------------------

#: The shipped default run.
SHIPPED_FILE = Path(__file__).resolve().parents[2] / "assets" / "precomputed" / "induction_default.npz"
_POINT_FIELDS = tuple(f.name for f in fields(EvalPoint))


@dataclass(frozen=True)
class DefaultRuns:
    """A config's 2-layer run, trained to the end, with its 1-layer control: what a page shows first.

    Attributes:
        config: the 2-layer config (the control is ``config.control``).
        model: the trained :class:`InductionTransformer` in eval mode.
        history: the 2-layer run's measurements (:class:`EvalPoint`, one per ``eval_every`` steps).
        control_history: the 1-layer control's measurements, with the same budget.
    """

    config: InductionConfig
    model: InductionTransformer
    history: tuple[EvalPoint, ...]
    control_history: tuple[EvalPoint, ...]


def default_runs(config: InductionConfig | None = None) -> DefaultRuns:
    """Train ``config`` (default: :class:`InductionConfig`) and its 1-layer control to the end.

    Deterministic for the config (same weights and histories on one machine, run after run).

    Raises:
        ValueError: if ``config`` is not a 2-layer (or deeper) :class:`InductionConfig`.
    """
    config = InductionConfig() if config is None else config
    if not isinstance(config, InductionConfig) or config.n_layers < 2:
        raise ValueError("the default run needs an InductionConfig with at least 2 layers")
    run = train_induction(config)
    control = train_induction(config.control)
    run.model.eval()
    return DefaultRuns(
        config=config, model=run.model, history=tuple(run.history), control_history=tuple(control.history)
    )


def _history_arrays(prefix: str, history: tuple[EvalPoint, ...]) -> dict[str, np.ndarray]:
    return {f"{prefix}/{name}": np.array([getattr(p, name) for p in history]) for name in _POINT_FIELDS}


def save_default_runs(runs: DefaultRuns, path: str | Path = SHIPPED_FILE) -> None:
    """Write ``runs`` to ``path`` as a compressed ``.npz`` (see the module docstring)."""
    arrays = {"config": np.array(json.dumps(asdict(runs.config), sort_keys=True))}
    arrays |= {f"weights/{k}": v.detach().numpy() for k, v in runs.model.state_dict().items()}
    arrays |= _history_arrays("history", runs.history)
    arrays |= _history_arrays("control_history", runs.control_history)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def _history(data: dict[str, np.ndarray], prefix: str) -> tuple[EvalPoint, ...]:
    columns = [data[f"{prefix}/{name}"] for name in _POINT_FIELDS]
    n = len(columns[0])
    if any(len(c) != n for c in columns) or n < 1:
        raise ValueError(f"the {prefix} columns have different lengths")
    return tuple(
        EvalPoint(
            step=int(step), loss=float(loss), copy_loss=float(copy), accuracy=float(acc),
            previous_token=np.asarray(pt, dtype=float), prefix_matching=np.asarray(pm, dtype=float),
        )
        for step, loss, copy, acc, pt, pm in zip(*columns, strict=True)
    )  # fmt: skip


def load_default_runs(path: str | Path = SHIPPED_FILE) -> DefaultRuns:
    """Read a file written by :func:`save_default_runs`.

    Raises:
        ValueError: if the file is missing, not such a file, or its weights do not fit its config.
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {k: npz[k] for k in npz.files}
        config = InductionConfig(**json.loads(str(data["config"])))
        model = InductionTransformer(config)
        state = {
            k.removeprefix("weights/"): torch.from_numpy(v)
            for k, v in data.items()
            if k.startswith("weights/")
        }
        model.load_state_dict(state, strict=True)
        history, control = _history(data, "history"), _history(data, "control_history")
    except (OSError, KeyError, TypeError, ValueError, RuntimeError, zipfile.BadZipFile) as err:
        raise ValueError(f"not a shipped induction run ({path}): {err}") from err
    return DefaultRuns(config=config, model=model.eval(), history=history, control_history=control)


if __name__ == "__main__":  # regenerate the shipped default: python -m core.lessons.induction_heads [OUT]
    import sys

    save_default_runs(default_runs(), sys.argv[1] if len(sys.argv) > 1 else SHIPPED_FILE)
