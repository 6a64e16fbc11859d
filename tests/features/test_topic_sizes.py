"""Few distinct prompts: the topic model's sizes adapt, and every backend fits and predicts.

A real log (LLMFAO) holds 8,931 votes on 13 prompts; the sizes the topic model is asked
for (30 PCA components, 10 topics, UMAP's 5, HDBSCAN's 10, TF-IDF's 100) assume many.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from features.embeddings import BACKENDS
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.topic_sizes import (
    TopicSizes,
    make_clusterer,
    make_reducer,
    make_vectorizer,
    topic_sizes,
    words_min_df,
)
from features.topics import TopicModel

#: Thirteen distinct prompts, of the kinds LLMFAO's are.
PROMPTS = [
    "Argue for and against the use of kubernetes in the style of a haiku.",
    "Explain in a short paragraph quantum field theory to a high-school student.",
    "Write a Python function that merges two sorted lists into one sorted list.",
    "Give me a recipe for banana bread without eggs.",
    "Translate this sentence into French: the weather is lovely today.",
    "Write a limerick about a cat who learns to play the piano.",
    "What are the main causes of the French revolution?",
    "Fix this SQL query: SELECT name FROM users WHERE age > 30 ORDER name",
    "Summarise the plot of Hamlet in three sentences.",
    "How many planets of the solar system have rings, and which?",
    "Write a short cover letter for a junior data analyst position.",
    "Is it healthier to run in the morning or in the evening?",
    "Explain the difference between TCP and UDP to a network engineer.",
]
MODELS = ["alpha", "bravo", "charlie", "delta"]
ASKED = {"n_topics": 10, "n_components": 30, "min_topic_size": 10}


def few_prompt_battles(n_prompts: int, n_votes: int = 240, seed: int = 0) -> pd.DataFrame:
    """Votes of 12 users on 4 models, every one on one of the first ``n_prompts`` prompts;
    ``alpha`` wins most often, ties included."""
    rng = np.random.default_rng(seed)
    pairs = rng.choice(len(MODELS), size=(n_votes, 2), replace=True)
    pairs[pairs[:, 0] == pairs[:, 1], 1] = (pairs[pairs[:, 0] == pairs[:, 1], 0] + 1) % 4
    a, b = pairs[:, 0], pairs[:, 1]
    draw = rng.random(n_votes)
    winner = np.where(draw < 0.2, "tie", np.where((a < b) == (draw < 0.75), "model_a", "model_b"))
    return pd.DataFrame(
        {
            "battle_id": [str(i) for i in range(n_votes)],
            "model_a": [MODELS[i] for i in a],
            "model_b": [MODELS[i] for i in b],
            "winner": winner,
            "user_id": [f"u{i % 12}" for i in range(n_votes)],
            "prompt": [PROMPTS[i % n_prompts] for i in rng.permutation(n_votes)],
        }
    )


def sizes_of(
    caplog: pytest.LogCaptureFixture,
    *,
    n_docs: int,
    width: int,
    reducer: str = "pca",
    clusterer: str = "kmeans",
) -> tuple[TopicSizes, str]:
    """:func:`topic_sizes` of the default sizes, and what it logged."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="features.topic_sizes"):
        sizes = topic_sizes(
            reducer=reducer, clusterer=clusterer, **ASKED, n_docs=n_docs, width=width
        )
    return sizes, caplog.text


# -- the sizes -------------------------------------------------------------------------------


def test_many_prompts_get_the_sizes_asked_and_nothing_is_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for reducer, clusterer in [("pca", "kmeans"), ("umap", "hdbscan")]:
        sizes, said = sizes_of(caplog, reducer=reducer, clusterer=clusterer, n_docs=400, width=384)
        assert sizes == TopicSizes(reducer, 30 if reducer == "pca" else 5, clusterer, 10, 10, 15)
        assert said == ""


def test_13_prompts_of_3_dimensions_cap_pca_and_kmeans_and_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the TF-IDF embedding of LLMFAO's 13 prompts had 3 dimensions: PCA(13) failed
    sizes, said = sizes_of(caplog, n_docs=13, width=3)
    assert (sizes.reducer, sizes.n_components, sizes.n_topics) == ("pca", 3, 10)
    assert "13 distinct prompts of 3 dimensions, so PCA keeps 3 of 30 components" in said
    sizes, said = sizes_of(caplog, n_docs=5, width=384)
    assert (sizes.n_components, sizes.n_topics) == (5, 5)
    assert "at most 5 of 10 topics" in said and "PCA keeps 5 of 30" in said


@pytest.mark.parametrize(("n_docs", "components"), [(3, 1), (4, 2), (6, 4), (7, 5), (50, 5)])
def test_umap_keeps_two_prompts_fewer_components(
    caplog: pytest.LogCaptureFixture, n_docs: int, components: int
) -> None:
    sizes, said = sizes_of(caplog, reducer="umap", n_docs=n_docs, width=384)
    assert (sizes.reducer, sizes.n_components) == ("umap", components)
    assert sizes.n_neighbors == min(15, n_docs - 1)
    assert ("UMAP keeps" in said) == (components < 5)


def test_two_prompts_are_too_few_for_umap_and_hdbscan_clusters_shrink(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sizes, said = sizes_of(caplog, reducer="umap", clusterer="hdbscan", n_docs=2, width=384)
    assert sizes == TopicSizes("pca", 2, "hdbscan", 2, 2, 1)
    assert "too few for UMAP" in said and "smallest cluster is 2 prompts, not 10" in said


def test_one_prompt_is_one_topic_without_reduction(caplog: pytest.LogCaptureFixture) -> None:
    for reducer, clusterer in [("pca", "kmeans"), ("umap", "hdbscan")]:
        sizes, said = sizes_of(caplog, reducer=reducer, clusterer=clusterer, n_docs=1, width=7)
        assert sizes == TopicSizes("none", 7, "kmeans", 1, 1, 1)
        assert "1 distinct prompt, so one topic" in said
    reducer = make_reducer(sizes, 0)
    np.testing.assert_array_equal(reducer.fit(np.ones((1, 7))).transform(np.ones((1, 7))), 1.0)
    assert make_clusterer(sizes, 0).fit(np.ones((1, 7))).labels_.tolist() == [0]


def test_sizes_name_a_bad_count() -> None:
    with pytest.raises(ValueError, match="'n_docs' and 'width' must be positive, not 0 and 3"):
        topic_sizes(reducer="pca", clusterer="kmeans", **ASKED, n_docs=0, width=3)


def test_a_word_of_fewer_prompts_names_topics_of_few_prompts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="features.topic_sizes"):
        assert words_min_df(3, 400, 8) == 3
        assert caplog.text == ""
        assert words_min_df(3, 13, 10) == 1
        assert words_min_df(3, 20, 10) == 2
    assert "13 distinct prompts in 10 topics, so a word of 1 prompt may name" in caplog.text


def test_prompts_without_a_topic_word_count_placeholders(
    caplog: pytest.LogCaptureFixture,
) -> None:
    words = make_vectorizer(["Write about bread", "What is it?"])
    assert words.fit(["Write about bread"]).get_feature_names_out().tolist() == ["bread"]
    with caplog.at_level(logging.WARNING, logger="features.topic_sizes"):
        none = make_vectorizer(["What is it?", "?"])
    assert len(none.fit(["What is it?", "?"]).get_feature_names_out()) == 2
    assert "no topic word in 2 distinct prompts" in caplog.text


# -- fits of few prompts, every backend ------------------------------------------------------


@pytest.mark.parametrize("embedding", BACKENDS)
@pytest.mark.parametrize("n_prompts", [1, 2, 3, 13])
def test_topics_and_profiles_fit_few_prompts_with_every_backend(
    embedding: str, n_prompts: int, caplog: pytest.LogCaptureFixture
) -> None:
    battles = few_prompt_battles(n_prompts)
    with caplog.at_level(logging.WARNING, logger="features"):
        profiler = UserProfiler(TopicModel(embedding))
        profiles = profiler.fit_transform(battles)
    model = profiler.topic_model_
    assert 1 <= model.n_topics_ <= n_prompts
    assert profiles.values.shape[0] == 12 and np.isfinite(profiles.values).all()
    assert "distinct prompt" in caplog.text  # the reductions are said, not silent
    components = profiler.query_model_
    if n_prompts == 1:
        assert components is None and "so none, not 128" in caplog.text
    else:
        assert components is not None and components.n_components_ <= n_prompts - 1
    new = profiler.transform_queries(["Write a sonnet about the sea", PROMPTS[0]])
    assert new.values.shape == (1, len(profiler.feature_names_))
    assert np.isfinite(new.values).all()
    if n_prompts == 13:
        assert model.n_topics_ == 10 and sum(len(t.words) > 0 for t in model.topics_) >= 5


# UMAP compiles its numba kernels in each process at its first fit (over 15 s): all on
# one xdist worker (tests/conftest.py keeps a marked group together), compiled once
@pytest.mark.xdist_group("umap")
@pytest.mark.parametrize("n_prompts", [1, 3, 13])
@pytest.mark.parametrize(("reducer", "clusterer"), [("umap", "kmeans"), ("umap", "hdbscan")])
def test_umap_and_hdbscan_fit_few_prompts(n_prompts: int, reducer: str, clusterer: str) -> None:
    queries = [PROMPTS[i % n_prompts] for i in range(40)]
    model = TopicModel("minilm-onnx", reducer=reducer, clusterer=clusterer).fit(queries)
    assert 1 <= model.n_topics_ <= n_prompts
    assert model.predict(["Write a sonnet about the sea"])[0] in range(model.n_topics_)


@pytest.mark.parametrize("embedding", ["tfidf", "minilm-onnx"])
def test_prompts_without_a_topic_word_fit_one_topic_each_or_one_in_all(embedding: str) -> None:
    queries = ["What is it?", "How are you?", "?"] * 4
    model = TopicModel(embedding).fit(queries)
    assert model.n_topics_ == 3 and all(t.words == () for t in model.topics_)
    assert TopicModel(embedding, clusterer="hdbscan").fit(queries).n_topics_ == 1


@pytest.mark.parametrize("embedding", ["tfidf", "minilm-onnx"])
@pytest.mark.parametrize("n_prompts", [1, 2, 3, 13])
def test_the_rating_predictor_fits_and_predicts_few_prompts(embedding: str, n_prompts: int) -> None:
    battles = few_prompt_battles(n_prompts)
    profiler = UserProfiler(TopicModel(embedding))
    predictor = RatingPredictor(profiler, style_components=2, folds=2, alpha=1.0)
    prediction = predictor.fit(battles).predict_queries(["Write a sonnet about the sea"])
    assert prediction.ratings.shape == (1, len(MODELS))
    assert np.isfinite(prediction.ratings).all()
    assert (prediction.lower <= prediction.ratings).all()
    if n_prompts == 1:  # all write alike: no style is scaled up from rounding errors
        style = predictor.training_profiles_.style(predictor.style_source)
        assert np.abs(predictor.style_basis.standard_style(style)).max() < 1e-6
