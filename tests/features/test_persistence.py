"""Saved models whose classes moved since they were saved still load
(:data:`features.persistence.MOVED_CLASSES`)."""

from __future__ import annotations

import importlib
import sys
import types
import zlib
from pathlib import Path

import numpy as np
import pytest
from joblib import numpy_pickle

from features.embeddings import make_embedder
from features.embeddings.base import ProgressEmbedder
from features.embeddings.cache import CachedEmbedder
from features.persistence import MOVED_CLASSES, Folder

FOLDER = Folder("model.joblib", "model.json", "plb-test-embedder/1", "embedder")
DOCS = [
    "How do I sort a list in Python?",
    "Write a haiku about rain.",
    "What is the capital of France?",
    "Explain recursion to a child.",
]


def test_every_moved_class_is_where_the_table_says() -> None:
    for (old_module, old_name), (module, name) in MOVED_CLASSES.items():
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(cls, type) and (cls.__module__, cls.__name__) == (module, name)
        try:
            old = importlib.import_module(old_module)
        except ModuleNotFoundError:
            continue  # the module is gone
        assert not hasattr(old, old_name), (old_module, old_name)  # one import path


def pickled(path: Path) -> bytes:
    """The pickle of a folder's model file (joblib's zlib compression undone)."""
    return zlib.decompress((path / FOLDER.model_file).read_bytes())


def short(text: str) -> bytes:
    """``text`` as a pickle writes a short string (``SHORT_BINUNICODE``)."""
    return b"\x8c" + bytes([len(text.encode())]) + text.encode()


def saved_where_it_was(embedder: ProgressEmbedder, old_module: str, path: Path) -> None:
    """Save ``embedder`` into ``path`` as a fit saved before the move did: its pickle
    names its class in ``old_module``."""
    cls = type(embedder)
    with pytest.MonkeyPatch.context() as patch:
        module = sys.modules.get(old_module) or types.ModuleType(old_module)
        patch.setitem(sys.modules, old_module, module)
        patch.setattr(module, cls.__name__, cls, raising=False)
        patch.setattr(cls, "__module__", old_module)
        FOLDER.save(embedder, path, {})
    # the class by its module and name, as STACK_GLOBAL reads them (a memo put between)
    assert short(old_module) + b"\x94" + short(cls.__name__) in pickled(path)
    assert short(cls.__module__) not in pickled(path)


@pytest.mark.parametrize(
    ("name", "old_module"),
    [
        ("minilm-int8", "features.embeddings"),
        ("minilm-onnx", "features.onnx_minilm"),
        ("static", "features.light_embedders"),
        ("tfidf", "features.light_embedders"),
    ],
)
def test_a_backend_saved_under_its_old_module_loads_and_embeds_the_same(
    name: str, old_module: str, tmp_path: Path
) -> None:
    embedder = make_embedder(name)
    vectors = embedder.embed(DOCS)  # a TF-IDF is fitted on them
    saved_where_it_was(embedder, old_module, tmp_path)
    loaded = FOLDER.load(ProgressEmbedder, tmp_path)
    assert type(loaded) is type(embedder) and loaded.__dict__.keys() == embedder.__dict__.keys()
    np.testing.assert_array_equal(loaded.embed(DOCS), vectors)
    if name != "tfidf":  # a fresh TF-IDF is not fitted
        np.testing.assert_allclose(loaded.embed(DOCS), make_embedder(name).embed(DOCS), atol=1e-6)


def test_a_serving_cache_saved_under_its_old_module_loads(tmp_path: Path) -> None:
    cached = CachedEmbedder(make_embedder("static"), max_items=5)
    vectors = cached.embed(DOCS)
    saved_where_it_was(cached, "features.embedding_cache", tmp_path)
    loaded = FOLDER.load(CachedEmbedder, tmp_path)
    assert loaded.max_items == 5 and loaded.cache_info().size == 0  # pickled without vectors
    np.testing.assert_array_equal(loaded.embed(DOCS), vectors)


def test_loading_puts_joblib_s_unpickler_back(tmp_path: Path) -> None:
    unpickler = numpy_pickle.NumpyUnpickler
    FOLDER.save(make_embedder("tfidf"), tmp_path, {})
    assert type(FOLDER.load(ProgressEmbedder, tmp_path)).__name__ == "TfidfEmbedder"
    assert numpy_pickle.NumpyUnpickler is unpickler
