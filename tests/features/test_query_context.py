"""Embedding components of queries: standardised PCA, and each distinct query embedded once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from features.query_context import QueryComponents, row_vectors


class CountingEmbedder:
    """A BERTopic-style backend that records what it embeds."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, documents: list[str], verbose: bool = False) -> Any:
        self.seen.extend(documents)
        return np.array([[len(d), d.count("a"), 1.0] for d in documents])


def test_components_have_unit_variance_and_are_clipped() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 10)) * np.arange(1, 11)
    model = QueryComponents(4).fit(x)
    z = model.transform(x)
    assert z.shape == (200, 4) and model.n_components_ == 4
    np.testing.assert_allclose(z.std(axis=0), 1.0, rtol=0.05)
    assert np.abs(model.transform(x * 100)).max() == 5.0
    assert list(model.get_feature_names_out()) == [f"query_pc:{k}" for k in range(4)]
    assert model.transform(np.zeros((0, 10))).shape == (0, 4)


def test_unwhitened_components_keep_their_relative_spread() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 3)) * np.array([3.0, 2.0, 1.0])
    z = QueryComponents(3, whiten=False).fit(x).transform(x)
    spread = z.std(axis=0)
    assert spread[0] > spread[1] > spread[2]
    np.testing.assert_allclose(np.mean(spread**2), 1.0, rtol=0.01)  # up to clipping


def test_components_are_capped_by_the_data_and_bad_numbers_named() -> None:
    assert QueryComponents(50).fit(np.eye(6)).n_components_ == 5
    with pytest.raises(ValueError, match="'n_components' must be a positive integer, not 0"):
        QueryComponents(0).fit(np.eye(3))
    with pytest.raises(ValueError, match="'vectors' must be 2-d"):
        QueryComponents(2).fit(np.ones(3))


def test_each_distinct_query_is_embedded_once_and_a_table_is_used() -> None:
    embedder = CountingEmbedder()
    texts = ["banana", "apple", "banana", "kiwi"]
    vectors, inverse, docs = row_vectors(embedder, texts, {"kiwi": [9.0, 9.0, 9.0]})
    assert docs == ["apple", "banana", "kiwi"] and sorted(embedder.seen) == ["apple", "banana"]
    np.testing.assert_array_equal(vectors[inverse][:, 0], [6, 5, 6, 9])
    rows = np.arange(12, dtype=float).reshape(4, 3)
    vectors, inverse, _ = row_vectors(embedder, texts, rows)
    np.testing.assert_array_equal(vectors[inverse], rows[[0, 1, 0, 3]])
    with pytest.raises(ValueError, match="one row per query \\(4\\)"):
        row_vectors(embedder, texts, rows[:2])
