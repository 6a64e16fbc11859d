"""``features.topic_labels``: names a person would use, and queries far from their topic."""

from __future__ import annotations

import numpy as np
import pytest

from features.topic_labels import (
    CLOSENESS_BY_BACKEND,
    MIN_CLOSENESS,
    TOPIC_NAMES,
    closeness_threshold,
    fits_topic,
    name_topic,
    query_names,
    topic_closeness,
)


@pytest.mark.parametrize(
    ("words", "name"),
    [
        (("dinner", "recipe", "cook", "meal", "leftover", "suggest"), "cooking"),
        (("code", "python", "error", "items", "run", "file"), "programming"),
        (("compute", "solve", "understand", "commit", "undo", "formulas"), "maths"),
        (("story", "character", "novel", "poem", "rhyme", "children"), "creative writing"),
        (("trip", "budget", "days", "neighborhoods", "plan", "stay"), "travel"),
        (("science", "university", "physics", "experiments"), "science"),
        (("taxes", "income", "deduction", "freelancer"), "money and taxes"),
    ],
)
def test_topics_get_the_names_people_use(words: tuple[str, ...], name: str) -> None:
    assert name_topic(words) == name


def test_a_topic_no_name_fits_keeps_its_first_words() -> None:
    assert name_topic(("zyx", "qwv", "code")) == "zyx and qwv"  # one late hit is not enough
    assert name_topic(()) == "other questions"


def test_the_first_word_alone_may_name_it() -> None:
    assert name_topic(("recipes", "zyx", "qwv", "abc")) == "cooking"  # plural read as singular


def test_query_names_read_the_querys_own_words() -> None:
    assert "relationships and life" in query_names("A toast for my best friend's wedding")
    assert query_names("What deductions can I claim on my tax return?") == {"money and taxes"}
    assert query_names("zyx qwv") == set()


def test_a_query_fits_only_when_close_and_not_named_otherwise() -> None:
    queries = [
        "Give me a recipe for vegan lasagna",  # close, its words say cooking
        "Can you help me with a wedding toast for my best friend?",  # close, says otherwise
        "What deductions can I claim on my tax return?",  # far
        "Tell me something nice",  # close, its words name nothing
    ]
    closeness = [0.6, 0.38, 0.13, 0.3]
    fits = fits_topic(queries, closeness, ["cooking", "cooking", "programming", "cooking"])
    assert fits.tolist() == [True, False, False, True]
    # a topic without a curated name is named by its words wherever the query is close
    assert fits_topic(["wedding toast"], [0.5], ["zyx and qwv"]).tolist() == [True]
    assert fits_topic(["anything"], [MIN_CLOSENESS - 1e-9], ["x and y"]).tolist() == [False]


class _Embedder:
    """Embeds a text as a fixed vector by its first letter."""

    vectors = {"a": [1.0, 0.0], "b": [0.0, 2.0], "c": [1.0, 1.0]}

    def embed(self, documents: list[str]) -> np.ndarray:
        return np.asarray([self.vectors[d[0]] for d in documents], dtype=np.float32)


class _Model:
    embedder_ = _Embedder()
    centroids_ = np.array([[1.0, 0.0], [0.0, 1.0]])


def test_closeness_is_the_cosine_to_the_querys_own_topic() -> None:
    closeness = topic_closeness(_Model(), ["a1", "b1", "c1", "a2"], [0, 0, 1, 1])
    assert closeness == pytest.approx([1.0, 0.0, np.sqrt(0.5), 0.0])
    assert topic_closeness(object(), ["a"], [0]).tolist() == [1.0]  # no centroids: all fit
    with pytest.raises(ValueError, match="'topics' must have one entry per query"):
        topic_closeness(_Model(), ["a", "b"], [0])


def test_every_name_has_keywords_in_lower_case() -> None:
    for name, words in TOPIC_NAMES.items():
        assert words and all(w == w.lower() for w in words), name


def test_the_closeness_threshold_follows_the_embedding_backend() -> None:
    class Named:
        def __init__(self, name: str) -> None:
            self.embedder_ = type("E", (), {"name": name})()

    assert closeness_threshold(Named("minilm-onnx")) == MIN_CLOSENESS
    assert closeness_threshold(Named("static")) == CLOSENESS_BY_BACKEND["static"] > MIN_CLOSENESS
    assert closeness_threshold(Named("tfidf")) == 0.0  # cosines tell nothing: words only
    assert closeness_threshold(object()) == MIN_CLOSENESS
    # with no closeness threshold, a query's own words still decide
    fits = fits_topic(["my tax return", "hello"], [0.01, 0.01], ["cooking", "cooking"], 0.0)
    assert fits.tolist() == [False, True]
