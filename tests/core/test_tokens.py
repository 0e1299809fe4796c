"""core.tokens: deterministic, capped inputs; repeated words share one vector."""

from __future__ import annotations

import pytest
import torch

from core.tokens import MAX_D_MODEL, MAX_RANDOM_LENGTH, SENTENCES, input_tokens, random_tokens


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sentence_repeats_words_with_identical_vectors(lang):
    x, words = input_tokens("sentence", 16, seed=4, sentence=lang)
    assert words == SENTENCES[lang]
    assert x.shape == (len(words), 16)
    assert x.dtype == torch.float64
    assert len(set(words)) < len(words)  # the lesson needs a repeated word
    for i, a in enumerate(words):
        for j, b in enumerate(words):
            assert torch.equal(x[i], x[j]) == (a == b)
    again, _ = input_tokens("sentence", 16, seed=5, sentence=lang)
    assert torch.equal(x, again)  # the sentence's embeddings do not depend on the seed


def test_random_tokens_are_seeded_and_capped():
    x, words = input_tokens("random", 8, seed=0, length=12)
    assert words is None
    assert x.shape == (12, 8)
    assert torch.equal(x, random_tokens(12, 8, 0))
    assert not torch.equal(x, random_tokens(12, 8, 1))
    for bad_len in (0, MAX_RANDOM_LENGTH + 1):
        with pytest.raises(ValueError, match="length"):
            random_tokens(bad_len, 8, 0)
    with pytest.raises(ValueError, match="d_model"):
        random_tokens(4, MAX_D_MODEL + 1, 0)
    with pytest.raises(ValueError, match="unknown input"):
        input_tokens("poem", 8, 0)
    with pytest.raises(ValueError, match="unknown sentence"):
        input_tokens("sentence", 8, 0, sentence="fr")
