"""Deterministic inputs for the multi-head page: random token vectors or a tiny built-in sentence.

The sentence is the classic word-order example "dog bites man , man bites dog ." (Chinese:
"狗 咬 人 ， 人 咬 狗 。"): the two halves use the same words in a different order, so they mean
different things, yet without positional encoding attention cannot tell the two "dog"s apart:
identical embeddings give identical attention rows (the post, section 3.3).

Words are stable ids (``"dog"``, ``"comma"``); the page translates them for display. Each word id
gets one embedding vector drawn from the seed, so a repeated word has a repeated vector.

Shapes: T sequence length, d_model model width.
"""

from __future__ import annotations

import torch

#: The built-in sentence as word ids, in order.
SENTENCE: tuple[str, ...] = ("dog", "bites", "man", "comma", "man", "bites", "dog", "period")
#: Its vocabulary, in a fixed order (row i of the embedding table belongs to VOCABULARY[i]).
VOCABULARY: tuple[str, ...] = ("dog", "bites", "man", "comma", "period")
#: Longest random sequence the page may ask for.
MAX_RANDOM_LENGTH = 32
#: Widest embedding the page may ask for.
MAX_D_MODEL = 256


def _check(d_model: int) -> None:
    if not isinstance(d_model, int) or isinstance(d_model, bool) or not 1 <= d_model <= MAX_D_MODEL:
        raise ValueError(f"d_model must be an integer in [1, {MAX_D_MODEL}], got {d_model!r}")


def sentence_embeddings(d_model: int, seed: int, *, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Embeddings of :data:`SENTENCE`: (T=8, d_model), one standard-normal vector per vocabulary word.

    Raises:
        ValueError: if d_model is not an integer in [1, MAX_D_MODEL].
    """
    _check(d_model)
    generator = torch.Generator().manual_seed(int(seed) + 1)  # +1: not the stream of the weights
    table = torch.randn(len(VOCABULARY), d_model, generator=generator, dtype=torch.float64)  # (V, d)
    ids = torch.tensor([VOCABULARY.index(w) for w in SENTENCE])  # (T,)
    return table[ids].to(dtype)  # (T, d_model)


def random_tokens(
    length: int, d_model: int, seed: int, *, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """``length`` independent standard-normal token vectors: (T=length, d_model).

    Raises:
        ValueError: if length is not in [1, MAX_RANDOM_LENGTH] or d_model not in [1, MAX_D_MODEL].
    """
    _check(d_model)
    if not isinstance(length, int) or isinstance(length, bool) or not 1 <= length <= MAX_RANDOM_LENGTH:
        raise ValueError(f"length must be an integer in [1, {MAX_RANDOM_LENGTH}], got {length!r}")
    generator = torch.Generator().manual_seed(int(seed) + 1)
    return torch.randn(length, d_model, generator=generator, dtype=torch.float64).to(dtype)


#: The choices the multi-head page offers.
INPUT_KINDS = ("sentence", "random")


def input_tokens(
    kind: str, d_model: int, seed: int, *, length: int = 8, dtype: torch.dtype = torch.float64
) -> tuple[torch.Tensor, tuple[str, ...] | None]:
    """Token vectors (T, d_model) and, for the sentence, its word ids (None for random tokens).

    ``length`` is used by ``"random"`` only (the sentence has 8 words).

    Raises:
        ValueError: on an unknown kind or sizes outside the caps.
    """
    if kind == "sentence":
        return sentence_embeddings(d_model, seed, dtype=dtype), SENTENCE
    if kind == "random":
        return random_tokens(length, d_model, seed, dtype=dtype), None
    raise ValueError(f"unknown input {kind!r}; known: {list(INPUT_KINDS)}")
