"""Token inputs of the attention pages: built-in sentences with deterministic embeddings, or
random token vectors.

Each token gets an embedding drawn from a generator seeded by the token's text (SHA-256), so the
same word always has the same vector, in every run and on every machine, and a repeated word
("the", "小猫") has the *same* embedding: without positions, its rows of attention are identical
(the post's section 3.3: attention alone has no sense of order). On the scaled dot-product page,
queries, keys and values are the embeddings times random projections W_Q, W_K, W_V (seeded), as
in a Transformer layer (the post's section 3.1: "Q, K, V usually come from three independent
linear layers"); the multi-head page feeds the embeddings (or random vectors) to its module.

Sentences: "the cat sat on the mat because the cat was tired" / "小猫 坐 在 垫子 上 ， 因为 小猫 累 了".

Shapes: tokens (L,), embeddings (L, D), Q and K (L, D), V (L, Dv); T sequence length, d_model width.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import torch

#: Built-in sentences, already split into tokens. Both contain a repeated token.
SENTENCES: dict[str, tuple[str, ...]] = {
    "en": ("the", "cat", "sat", "on", "the", "mat", "because", "the", "cat", "was", "tired"),
    "zh": ("小猫", "坐", "在", "垫子", "上", "，", "因为", "小猫", "累", "了"),
}
#: The padding token appended by :func:`pad_tokens`; its embedding is all zeros.
PAD = "<pad>"
#: Largest sequence length / embedding width this module builds.
MAX_LENGTH = 32
MAX_DIM = 512


def sentence_tokens(name: str) -> list[str]:
    """The tokens of a built-in sentence.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    if name not in SENTENCES:
        raise ValueError(f"unknown sentence {name!r}; known: {sorted(SENTENCES)}")
    return list(SENTENCES[name])


def pad_tokens(tokens: list[str], n_pad: int) -> list[str]:
    """``tokens`` followed by ``n_pad`` padding tokens (total length capped at MAX_LENGTH).

    Raises:
        ValueError: if n_pad is negative or the result would exceed MAX_LENGTH.
    """
    if n_pad < 0 or len(tokens) + n_pad > MAX_LENGTH:
        raise ValueError(f"n_pad must be in 0..{MAX_LENGTH - len(tokens)}, got {n_pad}")
    return list(tokens) + [PAD] * n_pad


def token_labels(tokens: list[str]) -> list[str]:
    """Unique tick labels ``"i:token"`` (tokens repeat; axis labels must not)."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def _token_seed(token: str) -> int:
    return int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "little")


def token_embeddings(tokens: list[str], d: int) -> np.ndarray:
    """Deterministic embeddings with unit-variance entries, (L,) -> (L, d); ``PAD`` maps to zeros.

    Raises:
        ValueError: if tokens is empty or longer than MAX_LENGTH, or d is not in 1..MAX_DIM.
    """
    if not tokens or len(tokens) > MAX_LENGTH:
        raise ValueError(f"need 1..{MAX_LENGTH} tokens, got {len(tokens)}")
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_DIM:
        raise ValueError(f"d must be an integer in 1..{MAX_DIM}, got {d!r}")
    rows = [
        np.zeros(d) if tok == PAD else np.random.default_rng(_token_seed(tok)).normal(size=d)
        for tok in tokens
    ]
    return np.stack(rows)  # (L, d)


def sentence_qkv(
    tokens: list[str], d_k: int, d_v: int = 4, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q = X W_Q, K = X W_K, V = X W_V for the token embeddings X (float64).

    The projections have N(0, 1/d_k) entries, so Q and K entries have unit variance like the
    random inputs of the d_k experiment. Embeddings have width d_k.

    Returns:
        query (L, d_k), key (L, d_k), value (L, d_v).

    Raises:
        ValueError: as :func:`token_embeddings`, or d_v not in 1..64.
    """
    if isinstance(d_v, bool) or not isinstance(d_v, int) or not 1 <= d_v <= 64:
        raise ValueError(f"d_v must be an integer in 1..64, got {d_v!r}")
    x = torch.from_numpy(token_embeddings(tokens, d_k))  # (L, D)
    gen = torch.Generator().manual_seed(int(seed))
    std = 1 / math.sqrt(d_k)
    w_q = torch.randn(d_k, d_k, generator=gen, dtype=torch.float64) * std
    w_k = torch.randn(d_k, d_k, generator=gen, dtype=torch.float64) * std
    w_v = torch.randn(d_k, d_v, generator=gen, dtype=torch.float64) * std
    return x @ w_q, x @ w_k, x @ w_v  # (L, D) x (D, D) -> (L, D); (L, D) x (D, Dv) -> (L, Dv)


# ------------------------------------------------------------------------------------------
# The multi-head page's inputs
# ------------------------------------------------------------------------------------------


#: Longest random sequence the page may ask for.
MAX_RANDOM_LENGTH = 32
#: Widest embedding the page may ask for.
MAX_D_MODEL = 256
#: The choices the multi-head page offers.
INPUT_KINDS = ("sentence", "random")


def _check_d_model(d_model: int) -> None:
    if not isinstance(d_model, int) or isinstance(d_model, bool) or not 1 <= d_model <= MAX_D_MODEL:
        raise ValueError(f"d_model must be an integer in [1, {MAX_D_MODEL}], got {d_model!r}")


def random_tokens(
    length: int, d_model: int, seed: int, *, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """``length`` independent standard-normal token vectors: (T=length, d_model).

    Raises:
        ValueError: if length is not in [1, MAX_RANDOM_LENGTH] or d_model not in [1, MAX_D_MODEL].
    """
    _check_d_model(d_model)
    if not isinstance(length, int) or isinstance(length, bool) or not 1 <= length <= MAX_RANDOM_LENGTH:
        raise ValueError(f"length must be an integer in [1, {MAX_RANDOM_LENGTH}], got {length!r}")
    generator = torch.Generator().manual_seed(int(seed) + 1)  # +1: not the stream of the weights
    return torch.randn(length, d_model, generator=generator, dtype=torch.float64).to(dtype)


def input_tokens(
    kind: str,
    d_model: int,
    seed: int,
    *,
    length: int = 8,
    sentence: str = "en",
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, tuple[str, ...] | None]:
    """Token vectors (T, d_model) and, for the sentence, its tokens (None for random vectors).

    Args:
        kind: ``"sentence"`` (``SENTENCES[sentence]``, embeddings that do not depend
            on the seed) or ``"random"`` (``length`` standard-normal vectors drawn from ``seed``).
        sentence: which built-in sentence (``"en"`` or ``"zh"``).

    Raises:
        ValueError: on an unknown kind or sentence, or sizes outside the caps.
    """
    _check_d_model(d_model)
    if kind == "sentence":
        if sentence not in SENTENCES:
            raise ValueError(f"unknown sentence {sentence!r}; known: {sorted(SENTENCES)}")
        tokens = sentence_tokens(sentence)
        x = torch.from_numpy(token_embeddings(tokens, d_model))  # (T, d_model)
        return x.to(dtype), tuple(tokens)
    if kind == "random":
        return random_tokens(length, d_model, seed, dtype=dtype), None
    raise ValueError(f"unknown input {kind!r}; known: {list(INPUT_KINDS)}")
