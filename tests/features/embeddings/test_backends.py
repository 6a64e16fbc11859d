"""Embedding backends: real offline models, unit vectors, nothing heavy pickled."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from bertopic.backend import BaseEmbedder

from features.embeddings import BACKENDS, make_embedder
from features.embeddings.base import embed
from features.embeddings.minilm import MiniLMEmbedder
from features.embeddings.model_files import minilm_path
from features.embeddings.query_text import DEFAULT_MAX_TOKENS, select_text
from tests.conftest import RecordedProgress

SENTENCES = [
    "How do I sort a list in Python?",
    "What is the fastest way to sort an array in Python?",
    "Give me a recipe for banana bread.",
]


def test_minilm_weights_come_from_the_installed_package() -> None:
    path = minilm_path()
    assert (path / "model.safetensors").exists()


@pytest.mark.parametrize("name", ["minilm", "minilm-int8", "minilm-onnx", "static"])
def test_network_backends_give_unit_vectors_that_mean_something(name: str) -> None:
    vectors = make_embedder(name).embed(SENTENCES)
    assert vectors.shape[0] == 3 and vectors.shape[1] in (256, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > unrelated + 0.2
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


@pytest.mark.parametrize("name", ["minilm-int8", "minilm-onnx"])
def test_quantised_minilm_stays_close_to_full_precision(name: str) -> None:
    full = make_embedder("minilm").embed(SENTENCES)
    quantised = make_embedder(name).embed(SENTENCES)
    assert np.min(np.sum(full * quantised, axis=1)) > 0.9


def test_max_tokens_cuts_long_queries() -> None:
    head = "Explain recursion with an example in Python. " * 4
    cut = MiniLMEmbedder(max_tokens=16).embed([head + "cats " * 50, head + "rockets " * 50])
    np.testing.assert_allclose(cut[0], cut[1], atol=1e-6)
    whole = MiniLMEmbedder(max_tokens=256).embed([head + "cats " * 50, head + "rockets " * 50])
    assert whole[0] @ whole[1] < 0.99


def test_tfidf_backend_fits_on_its_first_corpus_then_transforms() -> None:
    embedder = make_embedder("tfidf")
    corpus = SENTENCES * 4 + ["sort a list", "bread recipe with bananas"]
    first = embedder.embed(corpus)
    again = embedder.embed(SENTENCES)
    np.testing.assert_allclose(again, first[:3], atol=1e-8)


def test_a_pickled_backend_leaves_the_network_behind() -> None:
    embedder = make_embedder("minilm")
    before = embedder.embed(SENTENCES[:1])
    blob = pickle.dumps(embedder)
    assert len(blob) < 10_000
    np.testing.assert_allclose(pickle.loads(blob).embed(SENTENCES[:1]), before, atol=1e-6)


def test_unknown_backend_is_named() -> None:
    with pytest.raises(ValueError, match="'embedding' must be one of .*not 'bert'"):
        make_embedder("bert")
    assert set(BACKENDS) == {"minilm", "minilm-int8", "minilm-onnx", "static", "tfidf"}


@pytest.mark.parametrize("name", ["minilm-int8", "minilm-onnx", "static"])
def test_each_batch_embedded_alone_gives_the_vectors_of_embed(
    name: str, corpus: tuple[list[str], np.ndarray]
) -> None:
    # service.scale embeds the batches on a Dask cluster, one call a batch: the vectors
    # must be those of one local call, bit for bit (int8 scales are per batch).
    docs = corpus[0][:150]
    embedder = make_embedder(name)
    whole = embedder.embed(docs)
    batches = embedder.batches(docs)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(docs)))
    alone = np.zeros_like(whole)
    for batch in reversed(batches):
        alone[batch] = make_embedder(name).embed([docs[i] for i in batch])
    np.testing.assert_array_equal(alone, whole)


@pytest.mark.parametrize(
    ("name", "stage"),
    [
        ("minilm-int8", "embedding queries"),
        ("minilm-onnx", "embedding queries"),
        ("static", "embedding queries"),
        ("tfidf", "embedding queries (TF-IDF)"),
    ],
)
def test_progress_counts_the_queries_and_changes_no_vector(
    name: str, stage: str, corpus: tuple[list[str], np.ndarray]
) -> None:
    docs = corpus[0][:150]  # several batches
    plain = make_embedder(name).embed(docs)
    progress = RecordedProgress()
    told = embed(make_embedder(name), docs, progress)
    np.testing.assert_array_equal(told, plain)
    assert [(s.name, s.total, s.unit) for s in progress.stages] == [(stage, 150, "queries")]
    progress.assert_complete()
    if name.startswith("minilm"):
        assert progress.stages[0].calls == len(make_embedder(name).batches(docs))  # one a batch


def test_embed_calls_another_backend_as_bertopic_does() -> None:
    class Counting(BaseEmbedder):  # a backend that knows nothing of progress
        def embed(self, documents: list[str], verbose: bool = False) -> np.ndarray:
            return np.ones((len(documents), 2))

    progress = RecordedProgress()
    assert embed(Counting(), SENTENCES, progress).shape == (3, 2)
    assert progress.stages == []


_TRACE = (
    "I get this error when I start my Flask server.\n"
    + 'File "app.py", line 12, in <module>\n  import numpy as np\n' * 15
    + "ImportError: cannot import name 'x'\n"
    + "How do I fix this import error?"
)


def test_select_text_reads_the_head_the_ends_or_the_ask() -> None:
    assert select_text(_TRACE, "head") == _TRACE
    ends = select_text(_TRACE, "ends")
    assert ends == "I get this error when I start my Flask server. How do I fix this import error?"
    story = "Once upon a time. There was a fox. How would you end this story? The end."
    assert select_text(story, "ask") == "Once upon a time. How would you end this story?"
    assert select_text(story, "ends") == "Once upon a time. The end."
    assert select_text("One sentence only", "ask") == "One sentence only"
    long_first = " ".join(["word"] * 100) + ". Last one."
    assert len(select_text(long_first, "ends").split()) == 24 + 2  # each sentence cut at 24
    with pytest.raises(ValueError, match="'text' must be one of head, ends, ask, not 'tail'"):
        select_text(_TRACE, "tail")
    with pytest.raises(ValueError, match="not 'tail'"):
        MiniLMEmbedder(text="tail")


def test_the_embedder_reads_the_selected_text() -> None:
    ends = MiniLMEmbedder(text="ends", quantize=True)
    head = MiniLMEmbedder(quantize=True)
    np.testing.assert_allclose(
        ends.embed([_TRACE]), head.embed([select_text(_TRACE, "ends")]), atol=1e-6
    )
    assert float(ends.embed([_TRACE])[0] @ head.embed([_TRACE])[0]) < 0.99
    assert make_embedder("minilm", text="ask").text == "ask"
    assert DEFAULT_MAX_TOKENS == 64 and make_embedder("minilm").max_tokens == 64


def test_batches_follow_the_selected_text() -> None:
    # Batches are made by the length of what is read, so that a batch embedded alone
    # elsewhere (service.scale) gives the vectors of one local call.
    docs = ["Hi.\n" + "padding line.\n" * 30 + "Bye.", "one single sentence of middling length"]
    assert [int(b[0]) for b in MiniLMEmbedder(batch_size=1).batches(docs)] == [0, 1]
    assert [int(b[0]) for b in MiniLMEmbedder(text="ends", batch_size=1).batches(docs)] == [1, 0]
