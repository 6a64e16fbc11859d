"""The topic model: recovery of known topics, outliers, new queries, persistence, errors."""

from __future__ import annotations

from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score

from features.topic_settings import DEFAULTS
from features.topic_words import describe_topics
from features.topics import Topic, TopicModel
from tests.conftest import RecordedProgress

Corpus = tuple[list[str], np.ndarray]


@pytest.fixture(scope="module")
def fitted(corpus: Corpus, corpus_embeddings: np.ndarray) -> TopicModel:
    return TopicModel("minilm-int8", n_topics=8).fit(corpus[0], embeddings=corpus_embeddings)


def test_topics_recover_the_simulators_true_topics(fitted: TopicModel, corpus: Corpus) -> None:
    assert fitted.n_topics_ == 8
    assert adjusted_rand_score(corpus[1], fitted.labels_) > 0.4


def test_every_topic_has_a_size_share_and_top_words(fitted: TopicModel, corpus: Corpus) -> None:
    assert [t.topic for t in fitted.topics_] == list(range(8))
    assert sum(t.size for t in fitted.topics_) == len(corpus[0])
    assert sum(t.share for t in fitted.topics_) == pytest.approx(1.0)
    assert all(len(t.words) >= 4 and t.label for t in fitted.topics_)
    frame = fitted.topic_table()
    assert list(frame.columns) == ["topic", "size", "share", "words", "label", "name"]


def test_stop_words_are_not_topic_words(fitted: TopicModel) -> None:
    words = {w for t in fitted.topics_ for w in t.words}
    assert not words & {"the", "and", "to", "of", "is"}


def test_predict_agrees_with_the_fit_and_embeds_by_itself(
    fitted: TopicModel, corpus: Corpus, corpus_embeddings: np.ndarray
) -> None:
    given = fitted.predict(corpus[0], embeddings=corpus_embeddings)
    np.testing.assert_array_equal(given, fitted.labels_)
    own = fitted.predict(corpus[0][:30])  # embeds the queries itself
    assert np.mean(own == fitted.labels_[:30]) > 0.9


def test_transform_is_one_hot_with_named_columns(fitted: TopicModel, corpus: Corpus) -> None:
    onehot = fitted.transform(corpus[0][:5])
    assert onehot.shape == (5, 8)
    np.testing.assert_array_equal(onehot.sum(axis=1), 1.0)
    assert list(fitted.get_feature_names_out()) == [f"topic_{k}" for k in range(8)]


def test_duplicate_queries_share_a_topic(corpus: Corpus, corpus_embeddings: np.ndarray) -> None:
    docs = corpus[0][:60] + corpus[0][:20]
    vectors = np.vstack([corpus_embeddings[:60], corpus_embeddings[:20]])
    model = TopicModel("minilm-int8", n_topics=4).fit(docs, embeddings=vectors)
    np.testing.assert_array_equal(model.labels_[60:], model.labels_[:20])
    assert sum(t.size for t in model.topics_) == 80


#: UMAP compiles its kernels in each process that first fits one (15-35 s): the tests that
#: fit one share an xdist group, here and in test_topic_sizes.py, so one worker pays it.
@pytest.mark.parametrize(
    "reducer", ["pca", pytest.param("umap", marks=pytest.mark.xdist_group("umap"))]
)
def test_hdbscan_leaves_no_query_without_a_topic(
    reducer: str, corpus: Corpus, corpus_embeddings: np.ndarray
) -> None:
    model = TopicModel("minilm-int8", reducer=reducer, clusterer="hdbscan", min_topic_size=5)
    model.fit(corpus[0], embeddings=corpus_embeddings)
    assert model.labels_.min() >= 0 and model.labels_.max() == model.n_topics_ - 1
    assert model.predict(corpus[0][:10], embeddings=corpus_embeddings[:10]).min() >= 0


def test_save_and_load_keep_predictions_and_not_the_weights(
    fitted: TopicModel, corpus: Corpus, tmp_path: Path
) -> None:
    folder = fitted.save(tmp_path / "topics")
    assert sum(p.stat().st_size for p in folder.iterdir()) < 5_000_000
    loaded = TopicModel.load(folder)
    np.testing.assert_array_equal(loaded.predict(corpus[0][:20]), fitted.predict(corpus[0][:20]))
    assert [t.words for t in loaded.topics_] == [t.words for t in fitted.topics_]


def test_load_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no topic model in"):
        TopicModel.load(tmp_path)


def test_fit_end_to_end_with_the_tfidf_fallback(corpus: Corpus) -> None:
    model = TopicModel("tfidf", n_topics=5).fit(corpus[0])
    assert model.n_topics_ == 5 and model.predict(["write a python function"]).shape == (1,)


def test_fit_and_predict_report_their_stages(corpus: Corpus) -> None:
    docs = corpus[0][:200]
    progress = RecordedProgress()
    model = TopicModel("tfidf", n_topics=4).fit(docs + docs[:5], progress=progress)
    assert [(s.name, s.total) for s in progress.stages] == [
        ("embedding queries (TF-IDF)", 200),  # each distinct query once
        ("topics", 1),
    ]
    progress.assert_complete()
    np.testing.assert_array_equal(
        model.labels_, TopicModel("tfidf", n_topics=4).fit(docs + docs[:5]).labels_
    )
    later = RecordedProgress()
    model.predict(["write a python function", "bake bread"], progress=later)
    assert [(s.name, s.total) for s in later.stages] == [("embedding queries (TF-IDF)", 2)]


def test_precomputed_embeddings_leave_only_the_clustering_to_report(
    corpus: Corpus, corpus_embeddings: np.ndarray
) -> None:
    progress = RecordedProgress()
    TopicModel("minilm-int8", n_topics=4).fit(
        corpus[0], embeddings=corpus_embeddings, progress=progress
    )
    assert progress.named() == ["topics"]


def test_clone_keeps_parameters() -> None:
    model = TopicModel("static", reducer="umap", n_topics=12)
    assert clone(model).get_params() == model.get_params()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"embedding": "bert"}, "'embedding' must be one of"),
        ({"reducer": "tsne"}, "'reducer' must be one of .*not 'tsne'"),
        ({"clusterer": "dbscan"}, "'clusterer' must be one of"),
        ({"n_topics": 0}, "'n_topics' must be a positive integer, not 0"),
    ],
)
def test_bad_parameters_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TopicModel(**kwargs).fit(["a query", "another query"])


def test_bad_queries_are_named(corpus_embeddings: np.ndarray) -> None:
    with pytest.raises(ValueError, match=r"queries\[1\] must be a string, not 3"):
        TopicModel().fit(["fine", 3])
    with pytest.raises(ValueError, match="not one string"):
        TopicModel().fit("one string")
    with pytest.raises(ValueError, match="at least one query"):
        TopicModel().fit([])
    with pytest.raises(ValueError, match="one row per query"):
        TopicModel().fit(["a", "b"], embeddings=corpus_embeddings[:3])


def test_topic_label() -> None:
    topic = Topic(topic=2, size=5, share=0.5, words=("code", "python", "error", "fix", "bug"))
    assert topic.label == "code, python, error, fix"
    assert topic.to_dict()["label"] == topic.label
    assert topic.name == topic.to_dict()["name"] == "programming"  # a name a person would use


def test_embeddings_of_any_float_type_fit_and_predict(
    corpus: Corpus, corpus_embeddings: np.ndarray
) -> None:
    own = TopicModel("minilm-int8", n_topics=3).fit(corpus[0][:40])  # embeds by itself
    given = own.predict(corpus[0][:5], embeddings=corpus_embeddings[:5].astype(np.float64))
    np.testing.assert_array_equal(given, own.labels_[:5])
    wide = TopicModel("minilm-int8", n_topics=3)
    wide.fit(corpus[0][:40], embeddings=corpus_embeddings[:40].astype(np.float64))
    assert wide.predict(corpus[0][:5]).shape == (5,)


def test_hdbscan_without_any_cluster_puts_every_query_in_one_topic(corpus: Corpus) -> None:
    vectors = np.random.default_rng(0).normal(size=(30, 8)).astype(np.float32)  # no structure
    model = TopicModel("minilm-int8", clusterer="hdbscan", min_topic_size=25, n_components=4)
    model.fit(corpus[0][:30], embeddings=vectors)
    assert model.n_topics_ == 1 and (model.labels_ == 0).all()
    assert (model.predict(corpus[0][:3], embeddings=vectors[:3]) == 0).all()


def test_a_table_of_embeddings_by_query_fits_and_predicts_like_the_rows(
    corpus: Corpus, corpus_embeddings: np.ndarray
) -> None:
    docs = corpus[0][:80]
    rows = TopicModel("minilm-int8", n_topics=4).fit(docs, embeddings=corpus_embeddings[:80])
    table = dict(zip(docs, corpus_embeddings[:80], strict=True))
    looked_up = TopicModel("minilm-int8", n_topics=4).fit(docs, embeddings=table)
    np.testing.assert_array_equal(looked_up.labels_, rows.labels_)
    np.testing.assert_array_equal(looked_up.predict(docs[:30], table), rows.labels_[:30])
    assert not any(isinstance(v, dict) for v in vars(looked_up).values())  # used, not kept
    # A query missing from the table is embedded by the backend.
    del table[docs[0]]
    vectors = corpus_embeddings[:80].copy()
    vectors[0] = looked_up.embedder_.embed(docs[:1])[0]
    partial = TopicModel("minilm-int8", n_topics=4).fit(docs, embeddings=table)
    expected = TopicModel("minilm-int8", n_topics=4).fit(docs, embeddings=vectors)
    np.testing.assert_array_equal(partial.labels_, expected.labels_)


# -- top words a person would accept (issue 16) ------------------------------------------

_COOKING = [
    f"{verb} a {dish} recipe with {extra} for dinner"
    for verb, dish, extra in zip(
        ["Share", "Suggest", "Find", "Plan", "Describe", "Choose", "Pick", "Name"] * 2,
        ["pasta", "soup", "curry", "salad", "bread", "stew", "risotto", "pie"] * 2,
        ["garlic", "onion", "garlic", "butter", "onion", "garlic", "butter", "onion"] * 2,
        strict=True,
    )
]
_CODING = [
    f"My python {thing} fails with an error when I {verb} the {what}"
    for thing, verb, what in zip(
        ["script", "program", "function", "module"] * 4,
        ["parse", "load", "read", "sort"] * 4,
        ["file", "list", "json", "table", "file", "list", "csv", "rows"] * 2,
        strict=True,
    )
]


def _two_blobs(n_first: int, n_second: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    centres = np.eye(8, dtype=np.float32)[:2] * 10
    return np.vstack(
        [centres[0] + rng.normal(size=(n_first, 8)), centres[1] + rng.normal(size=(n_second, 8))]
    ).astype(np.float32)


def _words_of(model: TopicModel) -> set[str]:
    return {w for t in model.topics_ for w in t.words}


def test_a_prompt_asked_40_times_does_not_name_a_topic() -> None:
    pasted = "Kitboga quokka zanzibar " * 20  # one prompt, its words repeated in it
    docs = _COOKING + [pasted] * 40 + _CODING
    vectors = _two_blobs(len(_COOKING) + 40, len(_CODING))
    model = TopicModel("minilm-int8", n_topics=2, n_components=4).fit(docs, embeddings=vectors)
    words = _words_of(model)
    assert not words & {"kitboga", "quokka", "zanzibar"}
    assert {"recipe", "garlic"} <= words and {"python", "error"} <= words
    # Counted once a vote, the pasted prompt would hold 40 of the 56 prompts of its topic.
    assert model.topics_[int(model.labels_[0])].size == len(_COOKING) + 40


def test_min_df_keeps_one_prompts_words_out_of_the_top_words() -> None:
    docs = _COOKING + ["Kitboga roasts kitboga: the kitboga pie " * 5] + _CODING
    vectors = _two_blobs(len(_COOKING) + 1, len(_CODING))
    fitted = {
        min_df: TopicModel("minilm-int8", n_topics=2, n_components=4, min_df=min_df).fit(
            docs, embeddings=vectors
        )
        for min_df in (1, 2)
    }
    assert "kitboga" not in _words_of(fitted[2])
    assert "kitboga" in _words_of(fitted[1])  # the test can fail: min_df is what holds it out


def test_identifiers_code_and_spanish_function_words_are_not_topic_words() -> None:
    code = [
        f"const predictions_df = std::div(dynamicScore, x{i}); // python error" for i in range(12)
    ]
    spanish = [f"¿Cómo se hace una receta de {d} para la cena con los niños?" for d in _COOKING]
    docs, vectors = code + spanish, _two_blobs(len(code), len(spanish))
    model = TopicModel("minilm-int8", n_topics=2, n_components=4).fit(docs, embeddings=vectors)
    words = _words_of(model)
    assert not words & {"const", "std", "div", "predictions_df", "dynamicscore", "x1"}
    assert not words & {"cómo", "se", "una", "de", "para", "la", "con", "los"}
    assert {"python", "receta", "cena"} <= words


def test_describe_topics_counts_prompts_and_names_bad_topics() -> None:
    docs = ["bread recipe", "bread oven", "bread flour", "python error", "python bug"]
    words = describe_topics(docs, [0, 0, 0, 1, 1], 2, min_df=2)
    assert [w for w, _ in words[0]] == ["bread"] and [w for w, _ in words[1]] == ["python"]
    assert describe_topics(["the and of"], [0], 1) == [[]]
    with pytest.raises(ValueError, match="one entry per document"):
        describe_topics(docs, [0, 1], 2)


def test_a_model_saved_before_min_df_and_text_loads_and_predicts(
    corpus: Corpus, corpus_embeddings: np.ndarray, tmp_path: Path
) -> None:
    model = TopicModel("minilm-int8", n_topics=3).fit(
        corpus[0][:60], embeddings=corpus_embeddings[:60]
    )
    folder = model.save(tmp_path / "old")
    del model.min_df  # as pickled before issue 16
    del model.embedder_.text
    model.embedder_.max_tokens = 32
    joblib.dump(model, folder / "topic_model.joblib", compress=3)
    loaded = TopicModel.load(folder)
    assert loaded.get_params()["min_df"] == DEFAULTS["min_df"]
    assert loaded.embedder_.text == "head" and loaded.embedder_.max_tokens == 32
    assert loaded.predict(corpus[0][:5]).shape == (5,)


# -- fitted on a sample of the distinct prompts (issue 33) ----------------------------------


def test_a_fit_on_a_sample_labels_every_query_and_finds_the_same_topics(
    corpus: Corpus, corpus_embeddings: np.ndarray, fitted: TopicModel
) -> None:
    docs = corpus[0] + corpus[0][:50]  # repeated queries share their prompt's topic
    vectors = np.vstack([corpus_embeddings, corpus_embeddings[:50]])
    progress = RecordedProgress()
    model = TopicModel("minilm-int8", n_topics=8, max_fit_documents=150)
    model.fit(docs, embeddings=vectors, progress=progress)
    assert model.n_fit_documents_ == 150
    assert model.labels_.shape == (450,)
    np.testing.assert_array_equal(model.labels_[400:], model.labels_[:50])
    assert sum(t.size for t in model.topics_) == 450
    assert all(t.words for t in model.topics_)
    stages = {s.name: s for s in progress.stages}
    assert stages["topics of the other prompts"].total == 400 - 150
    assert stages["topics of the other prompts"].done == 400 - 150
    # the fitted model agrees with the labels it gave, and with the fit on every prompt
    np.testing.assert_array_equal(model.predict(docs, embeddings=vectors), model.labels_)
    # (a full fit with another seed agrees with this one at 0.65; 150 prompts k-means 8)
    assert adjusted_rand_score(fitted.labels_, model.labels_[:400]) > 0.4
    assert adjusted_rand_score(corpus[1], model.labels_[:400]) > 0.5


def test_a_fit_within_the_limit_is_the_fit_on_every_prompt(
    corpus: Corpus, corpus_embeddings: np.ndarray, fitted: TopicModel
) -> None:
    progress = RecordedProgress()
    model = TopicModel("minilm-int8", n_topics=8, max_fit_documents=400)
    model.fit(corpus[0], embeddings=corpus_embeddings, progress=progress)
    unlimited = TopicModel("minilm-int8", n_topics=8, max_fit_documents=None)
    unlimited.fit(corpus[0], embeddings=corpus_embeddings)
    for other in (unlimited, fitted):  # fitted: the default limit
        np.testing.assert_array_equal(model.labels_, other.labels_)
        assert [t.words for t in model.topics_] == [t.words for t in other.topics_]
    assert model.n_fit_documents_ == 400
    assert "topics of the other prompts" not in progress.named()


def test_the_sample_follows_the_seed(corpus: Corpus, corpus_embeddings: np.ndarray) -> None:
    def labels(seed: int) -> np.ndarray:
        model = TopicModel("minilm-int8", n_topics=4, max_fit_documents=60, random_state=seed)
        return model.fit(corpus[0], embeddings=corpus_embeddings).labels_

    np.testing.assert_array_equal(labels(0), labels(0))
    assert not np.array_equal(labels(0), labels(1))


@pytest.mark.parametrize("limit", [0, 1, -5, 2.5, True, "many"])
def test_a_bad_max_fit_documents_is_named(limit: object, corpus: Corpus) -> None:
    with pytest.raises(ValueError, match=f"'max_fit_documents'.*not {limit!r}"):
        TopicModel("tfidf", max_fit_documents=limit).fit(corpus[0][:20])  # type: ignore[arg-type]


def test_fit_distinct_checks_its_vectors(corpus: Corpus, corpus_embeddings: np.ndarray) -> None:
    docs = corpus[0][:10]
    with pytest.raises(ValueError, match=r"'vectors' must have one row per query \(10\)"):
        TopicModel("minilm-int8").fit_distinct(docs, corpus_embeddings[:9], np.arange(10))
    with pytest.raises(ValueError, match="'docs' must hold at least one query"):
        TopicModel("minilm-int8").fit_distinct([], corpus_embeddings[:0], [])


def test_a_model_saved_before_the_sample_loads_without_one(
    fitted: TopicModel, tmp_path: Path
) -> None:
    model = clone(fitted).set_params(max_fit_documents=50)
    del model.max_fit_documents  # as pickled before issue 33
    joblib.dump(model, tmp_path / "old.joblib")
    loaded = joblib.load(tmp_path / "old.joblib")
    assert loaded.get_params()["max_fit_documents"] is None
