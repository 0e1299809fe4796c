"""core.tokens_mh: deterministic, capped inputs; repeated words share one vector."""

from __future__ import annotations

import pytest
import torch

from core.tokens_mh import MAX_D_MODEL, MAX_RANDOM_LENGTH, SENTENCE, input_tokens, random_tokens


def test_sentence_repeats_words_with_identical_vectors():
    x, words = input_tokens("sentence", 16, seed=4)
    assert words == SENTENCE
    assert x.shape == (len(SENTENCE), 16)
    for i, a in enumerate(SENTENCE):
        for j, b in enumerate(SENTENCE):
            assert torch.equal(x[i], x[j]) == (a == b)
    again, _ = input_tokens("sentence", 16, seed=4)
    assert torch.equal(x, again)
    other, _ = input_tokens("sentence", 16, seed=5)
    assert not torch.equal(x, other)


def test_random_tokens_are_seeded_and_capped():
    x, words = input_tokens("random", 8, seed=0, length=12)
    assert words is None
    assert x.shape == (12, 8)
    assert torch.equal(x, random_tokens(12, 8, 0))
    for bad_len in (0, MAX_RANDOM_LENGTH + 1):
        with pytest.raises(ValueError, match="length"):
            random_tokens(bad_len, 8, 0)
    with pytest.raises(ValueError, match="d_model"):
        random_tokens(4, MAX_D_MODEL + 1, 0)
    with pytest.raises(ValueError, match="unknown input"):
        input_tokens("poem", 8, 0)
