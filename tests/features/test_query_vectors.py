"""Each distinct query embedded once, or looked up."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from features.query_vectors import distinct_vectors


class CountingEmbedder:
    """A BERTopic-style backend that records what it embeds."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, documents: list[str], verbose: bool = False) -> Any:
        self.seen.extend(documents)
        return np.array([[len(d), d.count("a"), 1.0] for d in documents])


def test_each_distinct_query_is_embedded_once_and_a_table_is_used() -> None:
    embedder = CountingEmbedder()
    texts = ["banana", "apple", "banana", "kiwi"]
    vectors, inverse, docs = distinct_vectors(embedder, texts, {"kiwi": [9.0, 9.0, 9.0]})
    assert docs == ["apple", "banana", "kiwi"] and sorted(embedder.seen) == ["apple", "banana"]
    np.testing.assert_array_equal(vectors[inverse][:, 0], [6, 5, 6, 9])
    rows = np.arange(12, dtype=float).reshape(4, 3)
    vectors, inverse, _ = distinct_vectors(embedder, texts, rows)
    np.testing.assert_array_equal(vectors[inverse], rows[[0, 1, 0, 3]])
    with pytest.raises(ValueError, match="one row per query \\(4\\)"):
        distinct_vectors(embedder, texts, rows[:2])
