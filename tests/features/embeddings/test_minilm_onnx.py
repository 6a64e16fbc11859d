"""The ONNX Runtime MiniLM backend: the network's own tokens and vectors, exported once."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from features.embeddings import make_embedder
from features.embeddings.minilm_onnx import OnnxMiniLMEmbedder, _tokenizer, exported_model
from features.embeddings.model_files import load_minilm

TRICKY = [
    "How do I sort a list in Python?",
    "",
    "   leading and trailing   ",
    "\n\ttabs and\nnew lines\n",
    "émoji 🤖, ünïcödé and 中文字符",
    "[CLS] [SEP] [PAD] [UNK] spelt out",
    "word " * 300,  # cut at max_tokens
    "x" * 5_000,
]


@pytest.mark.parametrize("max_tokens", [16, 64])
def test_tokens_are_those_sentence_transformers_reads(max_tokens: int) -> None:
    reference = load_minilm()
    reference.max_seq_length = max_tokens
    expected = reference.preprocess(TRICKY)
    encoded = _tokenizer(max_tokens).encode_batch(TRICKY)
    for name, ours in [
        ("input_ids", [e.ids for e in encoded]),
        ("attention_mask", [e.attention_mask for e in encoded]),
        ("token_type_ids", [e.type_ids for e in encoded]),
    ]:
        np.testing.assert_array_equal(np.array(ours), expected[name].numpy(), err_msg=name)


def test_vectors_are_near_the_full_precision_network_and_cut_like_it() -> None:
    texts = [t for t in TRICKY if t.strip()]
    full = make_embedder("minilm").embed(texts)
    ours = make_embedder("minilm-onnx").embed(texts)
    assert np.min(np.sum(full * ours, axis=1)) > 0.85
    head = "Explain recursion with an example in Python. " * 4
    cut = OnnxMiniLMEmbedder(max_tokens=16).embed([head + "cats " * 50, head + "dogs " * 50])
    np.testing.assert_array_equal(cut[0], cut[1])


def test_served_a_query_at_a_time_a_vector_is_its_text_alone() -> None:
    embedder = OnnxMiniLMEmbedder()
    embedder.serve()
    alone = embedder.embed(TRICKY[:1])
    among = embedder.embed([TRICKY[4], TRICKY[0], TRICKY[6]])
    np.testing.assert_array_equal(among[1], alone[0])


def test_the_exported_model_is_made_once_then_read(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"
    assert exported_model(target) == target and target.stat().st_size > 1_000_000
    made = target.stat().st_mtime_ns
    assert exported_model(target) == target and target.stat().st_mtime_ns == made
    assert list(tmp_path.iterdir()) == [target]  # no staging left behind


def test_a_pickled_backend_is_its_settings() -> None:
    embedder = OnnxMiniLMEmbedder(max_tokens=32, text="ask")
    before = embedder.embed(TRICKY[:2])
    blob = pickle.dumps(embedder)
    assert len(blob) < 5_000
    again = pickle.loads(blob)
    assert (again.max_tokens, again.text, again.name) == (32, "ask", "minilm-onnx")
    np.testing.assert_array_equal(again.embed(TRICKY[:2]), before)
