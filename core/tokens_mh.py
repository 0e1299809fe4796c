"""Deterministic inputs for the multi-head page: the built-in sentence or random token vectors.

The sentence and its embeddings come from ``core.sentence`` (shared with the scaled dot-product
page): "the cat sat on the mat because the cat was tired" / "小猫 坐 在 垫子 上 ， 因为 小猫 累 了".
A repeated word has the *same* embedding, so without positional encoding attention cannot tell the
two "cat"s apart: identical keys give identical attention columns (the post, section 3.3).

Shapes: T sequence length, d_model model width.
"""

from __future__ import annotations

import torch

from core.sentence import SENTENCES, sentence_tokens, token_embeddings

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
        kind: ``"sentence"`` (``core.sentence.SENTENCES[sentence]``, embeddings that do not depend
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
