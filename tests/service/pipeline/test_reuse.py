"""``service.pipeline.reuse``: what a fit computes, and what it takes from an earlier one."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from features.style import style_features
from features.text_rows import TextRows
from service.pipeline.config import FitConfig
from service.pipeline.reuse import (
    Earlier,
    KeptStyle,
    distinct_prompts,
    embedding_identity,
    kept_rows,
    reusable_topics,
    style_identity,
)
from service.pipeline.text_store import TEXTS_DIR, write_shelves

TEXTS = ["How do I sort a list in Python?", "Write a haiku about rain.", "What is 2 + 2?"]


class CountingEmbedder:
    """A BERTopic-style backend that records what it embeds: a text's vector is its
    length and its number of spaces."""

    name = "counting"
    max_tokens = 64

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, documents: Sequence[str], verbose: bool = False) -> np.ndarray:
        self.calls.append(list(documents))
        return np.array([[len(d), d.count(" ")] for d in documents], dtype=np.float64)


def test_a_first_fit_computes_every_row_once() -> None:
    embedder = CountingEmbedder()
    rows = kept_rows(TEXTS, embedder, None)
    assert embedder.calls == [TEXTS]
    assert rows.counts == {
        "embeddings": {"kept": 0, "computed": 3},
        "style": {"kept": 0, "computed": 3},
    }
    assert rows.embeddings is not None
    np.testing.assert_array_equal(rows.embeddings[TEXTS[1]], [len(TEXTS[1]), 4])
    assert rows.embeddings[TEXTS[1]].dtype == np.float32  # as the topic model reads them
    style = np.stack([rows.style.table[t] for t in TEXTS])
    np.testing.assert_array_equal(style, style_features(TEXTS))
    assert sorted(s.kind for s in rows.shelves) == ["embeddings", "style"]


def test_a_refit_computes_only_the_new_prompts(tmp_path: Path) -> None:
    write_shelves(tmp_path / "fit", kept_rows(TEXTS, CountingEmbedder(), None).shelves)
    (tmp_path / "fit" / "manifest.json").write_text("{}", "utf-8")
    new = "Translate 'good morning' into French."
    embedder = CountingEmbedder()
    rows = kept_rows([*TEXTS, new], embedder, Earlier.load(tmp_path / "fit"))
    assert embedder.calls == [[new]]
    assert rows.counts["embeddings"] == {"kept": 3, "computed": 1}
    assert rows.counts["style"] == {"kept": 3, "computed": 1}
    assert rows.embeddings is not None
    for text in [*TEXTS, new]:
        np.testing.assert_array_equal(rows.embeddings[text], [len(text), text.count(" ")])
    style = np.stack([rows.style.table[t] for t in [*TEXTS, new]])
    np.testing.assert_array_equal(style, style_features([*TEXTS, new]))


def test_a_refit_held_in_memory_reads_its_own_rows_first(tmp_path: Path) -> None:
    first = kept_rows(TEXTS, CountingEmbedder(), None)
    earlier = Earlier(None, shelves=first.shelves)
    embedder = CountingEmbedder()
    again = kept_rows(TEXTS, embedder, earlier)
    assert embedder.calls == [] and again.counts["embeddings"] == {"kept": 3, "computed": 0}


def test_another_backend_setting_embeds_everything_again(tmp_path: Path) -> None:
    write_shelves(tmp_path / "fit", kept_rows(TEXTS, CountingEmbedder(), None).shelves)
    (tmp_path / "fit" / "manifest.json").write_text("{}", "utf-8")
    embedder = CountingEmbedder()
    embedder.max_tokens = 128
    rows = kept_rows(TEXTS, embedder, Earlier.load(tmp_path / "fit"))
    assert embedder.calls == [TEXTS] and rows.counts["style"]["kept"] == 3


def test_without_a_known_backend_only_style_rows_are_kept() -> None:
    rows = kept_rows(TEXTS, None, None)  # a TF-IDF fitted by the fit itself
    assert rows.embeddings is None and [s.kind for s in rows.shelves] == ["style"]


def test_the_style_cache_looks_rows_up_and_computes_what_it_lacks() -> None:
    cache = KeptStyle(TextRows(TEXTS[:1], np.array([[7.0, 8.0]])))
    computed: list[list[str]] = []

    def compute(missing: list[str]) -> np.ndarray:
        computed.append(missing)
        return np.array([[1.0, 2.0] for _ in missing])

    rows = cache.rows([TEXTS[0], TEXTS[1], TEXTS[1]], compute)
    assert computed == [[TEXTS[1]]]
    np.testing.assert_array_equal(np.stack(rows), [[7.0, 8.0], [1.0, 2.0], [1.0, 2.0]])


def test_a_fitted_tfidf_is_known_by_what_it_learnt(tmp_path: Path) -> None:
    from features.embeddings import make_embedder
    from features.persistence import Folder

    embedder = make_embedder("tfidf")
    assert embedding_identity(embedder) is None  # unfitted: its vectors are unknown
    corpus = [f"prompt {i} about {w}" for i, w in enumerate(["cats", "dogs", "rain"] * 5)]
    embedder.embed(corpus)
    identity = embedding_identity(embedder)
    assert identity is not None and identity["backend"] == "tfidf"
    folder = Folder("e.joblib", "e.json", "test/1", "embedder")
    folder.save(embedder, tmp_path / "e", {})
    assert embedding_identity(folder.load(type(embedder), tmp_path / "e")) == identity
    other = make_embedder("tfidf")
    other.embed([*corpus, "a prompt about snow and snow"])
    assert embedding_identity(other) != identity


def test_the_style_identity_is_stable() -> None:
    assert style_identity() == style_identity()
    assert style_identity()["features"][0]


def topic_model(name: str = "tfidf", n_topics: int = 4, seed: int = 0) -> Any:
    return SimpleNamespace(
        embedder_=SimpleNamespace(name=name), n_topics=n_topics, random_state=seed
    )


def test_topics_are_kept_only_when_the_fit_asks_for_the_same_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = FitConfig(embedding="tfidf", n_topics=4, seed=0)
    model = topic_model()
    assert reusable_topics(Earlier(None, model), config) is model
    assert reusable_topics(None, config) is None
    with caplog.at_level(logging.WARNING):
        for other in (topic_model(n_topics=5), topic_model(seed=1), topic_model("static")):
            assert reusable_topics(Earlier(None, other), config) is None
    assert "topics fitted afresh" in caplog.text


def test_an_earlier_fit_must_be_a_fit(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="holds no fit"):
        Earlier.load(tmp_path)
    (tmp_path / "manifest.json").write_text("{}", "utf-8")
    earlier = Earlier.load(tmp_path)
    assert earlier.topic_model is None and earlier.predictor is None
    found, missing = earlier.shelf("style", style_identity()).lookup(TEXTS)
    assert len(found) == 0 and missing == TEXTS and not (tmp_path / TEXTS_DIR).exists()


def test_the_prompts_are_those_of_votes_with_a_user() -> None:
    battles = pd.DataFrame(
        {"user_id": ["u", "u", None, "v"], "prompt": ["b", "a", "anonymous", None]}
    )
    assert distinct_prompts(battles) == ["a", "b"]
    assert distinct_prompts(battles.drop(columns="user_id")) == ["a", "anonymous", "b"]
