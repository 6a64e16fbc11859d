"""The TF-IDF backend on few distinct prompts: a vocabulary and an SVD the prompts support.

(The backends' shared behaviour is tested in ``test_backends.py``.)
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from features.embeddings.tfidf import TfidfEmbedder
from tests.features.test_topic_sizes import PROMPTS


def embedded(
    documents: list[str], caplog: pytest.LogCaptureFixture
) -> tuple[TfidfEmbedder, np.ndarray, str]:
    """A TF-IDF backend fitted on ``documents``, their vectors, and what it logged."""
    caplog.clear()
    embedder = TfidfEmbedder()
    with caplog.at_level(logging.WARNING, logger="features.embeddings.tfidf"):
        vectors = embedder.embed(documents)
    return embedder, vectors, caplog.text


def test_13_prompts_get_words_of_any_prompt_and_13_dimensions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # words of 2 prompts: 4 words, 3 dimensions, most of LLMFAO's 13 prompts without any
    embedder, vectors, said = embedded(PROMPTS, caplog)
    assert vectors.shape == (13, 13)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.abs(vectors @ vectors.T - np.eye(13)).max() < 0.9  # no two the same
    assert "13 distinct prompts, so its vocabulary is words of any prompt" in said
    assert "so 13 of 100 dimensions" in said
    again = embedder.embed(["kubernetes in the style of a haiku"])
    assert int(np.argmax(vectors @ again[0])) == 0


def test_many_prompts_keep_the_usual_vocabulary_and_say_nothing(
    corpus: tuple[list[str], np.ndarray], caplog: pytest.LogCaptureFixture
) -> None:
    embedder, vectors, said = embedded(corpus[0], caplog)
    assert vectors.shape == (400, 100) and said == ""
    assert embedder.pipeline[0].min_df == 2


def test_one_prompt_is_embedded_without_an_svd(caplog: pytest.LogCaptureFixture) -> None:
    embedder, vectors, said = embedded([PROMPTS[0]] * 3, caplog)
    assert vectors.shape[0] == 3 and vectors.shape[1] >= 4
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert "1 distinct prompt of" in said and "so no SVD" in said
    assert embedder.embed(["nothing in common"]).shape == (1, vectors.shape[1])


def test_prompts_of_stop_words_or_punctuation_still_embed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, vectors, said = embedded(["What is it?", "How are you?"], caplog)
    assert "stop words too" in said
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0)
    _, vectors, said = embedded(["?", "!!"], caplog)
    assert "character n-grams" in said
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_prompts_with_nothing_to_embed_are_named() -> None:
    with pytest.raises(ValueError, match="found no word or character to embed in 2 distinct"):
        TfidfEmbedder().embed(["", " "])
