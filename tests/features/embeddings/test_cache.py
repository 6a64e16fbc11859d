"""The serving cache of query embeddings (:mod:`features.embeddings.cache`)."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from features.embeddings import make_embedder
from features.embeddings.cache import CachedEmbedder, cache_embeddings
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.text_cache import TextCache
from features.topics import TopicModel


class Counting:
    """A real backend that counts the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = make_embedder("static")
        self.asked: list[str] = []
        self.name = self.inner.name

    def embed(self, documents: Sequence[str], verbose: bool = False) -> np.ndarray:
        self.asked.extend(documents)
        return np.asarray(self.inner.embed(list(documents)))


QUERIES = ["How do I sort a list in Python?", "Write a poem about rain", "What is DNA?"]


def test_a_repeated_text_is_embedded_once_and_gets_the_same_vector() -> None:
    backend = Counting()
    cache = CachedEmbedder(backend, max_items=10)
    first = cache.embed(QUERIES)
    again = cache.embed([QUERIES[1], QUERIES[1], "Something new"])
    assert backend.asked == [*QUERIES, "Something new"]
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[1], first[1])
    np.testing.assert_array_equal(first, backend.inner.embed(QUERIES))
    info = cache.cache_info()
    assert (info.hits, info.misses, info.size) == (2, 4, 4)


def test_the_least_recently_used_text_is_dropped() -> None:
    backend = Counting()
    cache = CachedEmbedder(backend, max_items=2)
    cache.embed(QUERIES[:2])
    cache.embed([QUERIES[0]])  # used again: QUERIES[1] is now the oldest
    cache.embed([QUERIES[2]])
    backend.asked.clear()
    cache.embed(QUERIES)
    assert backend.asked == [QUERIES[1]]
    assert cache.cache_info().size == 2


def test_pickled_without_its_vectors_and_named_as_its_backend() -> None:
    cache = CachedEmbedder(make_embedder("static"), max_items=5)
    cache.embed(QUERIES)
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.cache_info().size == 0 and copy.name == "static"
    np.testing.assert_array_equal(copy.embed(QUERIES), cache.embed(QUERIES))


def test_bad_size_is_refused() -> None:
    with pytest.raises(ValueError, match="'max_items'"):
        CachedEmbedder(make_embedder("static"), max_items=0)


@pytest.fixture(scope="module")
def fitted(labelled_battles: pd.DataFrame) -> RatingPredictor:
    """A quick predictor on TF-IDF topics (its own: the cache is installed on it)."""
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
    return RatingPredictor(profiler, style_components=2, folds=2, alpha=1.0).fit(labelled_battles)


def test_installed_on_a_predictor_once_and_taken_away(fitted: RatingPredictor) -> None:
    cache = cache_embeddings(fitted, 100)
    assert cache is not None and cache_embeddings(fitted, 50) is cache
    assert cache.max_items == 50
    before = fitted.predict_queries(QUERIES).ratings
    misses = cache.cache_info().misses
    np.testing.assert_allclose(fitted.predict_queries(QUERIES).ratings, before)
    assert cache.cache_info().misses == misses  # all found the second time
    assert cache_embeddings(fitted, 0) is None
    assert not isinstance(fitted.profiler_.topic_model_.embedder_, CachedEmbedder)
    assert fitted.profiler_.style_cache_ is None


def test_the_installed_style_cache_keeps_predictions_unchanged(fitted: RatingPredictor) -> None:
    before = fitted.predict_queries(QUERIES).ratings
    cache_embeddings(fitted, 100)
    style = fitted.profiler_.style_cache_
    assert isinstance(style, TextCache) and style.max_items == 100
    np.testing.assert_allclose(fitted.predict_queries(QUERIES).ratings, before)
    np.testing.assert_allclose(fitted.predict_queries(QUERIES).ratings, before)
    assert style.cache_info().hits >= len(QUERIES)
    cache_embeddings(fitted, 0)


def test_serving_embeds_in_small_batches_cached_or_not() -> None:
    """The service's PyTorch backend embeds a request's queries 8 at a time (less padding
    than the fit's 64); ``serve=False`` leaves the fitted size."""
    from types import SimpleNamespace

    from features.embeddings.query_text import SERVING_BATCH_SIZE

    def served(max_items: int, **options: bool) -> int:
        backend = make_embedder("minilm-int8")  # the network loads only when it embeds
        profiler = SimpleNamespace(topic_model_=SimpleNamespace(embedder_=backend))
        cache_embeddings(SimpleNamespace(profiler_=profiler), max_items, **options)
        return int(backend.batch_size)

    fitted = int(make_embedder("minilm-int8").batch_size)
    assert served(100) == served(0) == SERVING_BATCH_SIZE != fitted
    assert served(100, serve=False) == fitted


def test_serving_runs_the_onnx_backend_a_query_at_a_time_on_one_thread() -> None:
    backend = make_embedder("minilm-onnx")
    profiler = SimpleNamespace(topic_model_=SimpleNamespace(embedder_=backend))
    assert (backend.batch_size, backend.threads) == (16, None)  # a fit's: every core
    cache_embeddings(SimpleNamespace(profiler_=profiler), 100)
    assert (backend.batch_size, backend.threads) == (1, 1)


def test_the_query_cache_gives_what_computing_gives(fitted: RatingPredictor) -> None:
    """Topics and components kept by text are those computed without the caches (to
    rounding), whatever the batch; a query found keeps its vector in use too."""
    profiler = fitted.profiler_
    texts = [*QUERIES, QUERIES[0]]
    cache_embeddings(fitted, 0)
    assert getattr(profiler, "query_cache_", None) is None
    topics, query = profiler.topics_and_context(texts)
    frame = pd.DataFrame({"user_id": "you", "prompt": texts})
    profile = profiler.transform(frame).values
    before = fitted.predict_queries(texts).ratings
    embedder = cache_embeddings(fitted, 100)
    kept = profiler.query_cache_
    assert isinstance(kept, TextCache) and kept.max_items == 100 and embedder is not None
    for batch in (texts, texts[::-1], texts):
        order = [texts.index(t) for t in batch]
        found, components = profiler.topics_and_context(batch)
        np.testing.assert_array_equal(found, topics[order])
        assert components is not None and query is not None
        np.testing.assert_allclose(components, query[order], rtol=0, atol=1e-12)
    assert (kept.cache_info().misses, kept.cache_info().size) == (3, 3)
    embedded = embedder.cache_info()
    np.testing.assert_allclose(profiler.transform_queries(texts).values, profile, atol=1e-12)
    np.testing.assert_allclose(profiler.transform(frame).values, profile, atol=1e-12)
    np.testing.assert_allclose(fitted.predict_queries(texts).ratings, before, atol=1e-9)
    assert embedder.cache_info().misses == embedded.misses  # nothing embedded again
    assert embedder.cache_info().hits == embedded.hits + 3 * len(texts)  # but all in use
    given = dict(zip(texts, embedder.embed(texts), strict=True))
    looked_up = kept.cache_info()
    np.testing.assert_array_equal(profiler.topics_and_context(texts, given)[0], topics)
    assert kept.cache_info() == looked_up  # given vectors are used as they are
    cache_embeddings(fitted, 0)
    assert profiler.query_cache_ is None and profiler.style_cache_ is None


def test_the_query_cache_is_bounded_and_refilled(fitted: RatingPredictor) -> None:
    profiler = fitted.profiler_
    cache_embeddings(fitted, 2)
    expected = profiler.topics_and_context(QUERIES)  # 3 texts: the first one dropped
    assert profiler.query_cache_.cache_info().size == 2
    again = profiler.topics_and_context(QUERIES)
    np.testing.assert_array_equal(again[0], expected[0])
    np.testing.assert_allclose(again[1], expected[1], rtol=0, atol=1e-12)
    cache_embeddings(fitted, 0)
