"""``service.pipeline.text_store``: rows kept by the hash of their text, part by part."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from service.pipeline.text_store import (
    MAX_PARTS,
    TEXTS_DIR,
    Shelf,
    open_shelf,
    text_keys,
    write_shelves,
)

IDENTITY = {"backend": "test", "width": 3}


def rows_of(texts: list[str]) -> np.ndarray:
    """A row per text that depends on the text alone (its length, its first letter)."""
    return np.array([[len(t), ord(t[0]), 0.5] for t in texts], dtype=np.float32)


def written(tmp_path: Path, shelf: Shelf, name: str = "fit") -> Path:
    write_shelves(tmp_path / name, [shelf])
    return tmp_path / name / TEXTS_DIR


def test_a_key_is_the_hash_of_the_text_alone() -> None:
    import hashlib

    keys = text_keys(["café", "cafe", "café", ""])
    assert keys.shape == (4, 2) and keys.dtype == np.uint64
    assert (keys[0] == keys[2]).all() and (keys[0] != keys[1]).any()
    assert (
        keys[0].astype("<u8").tobytes() == hashlib.blake2b("café".encode(), digest_size=16).digest()
    )


def test_an_empty_shelf_keeps_nothing() -> None:
    found, missing = Shelf("embeddings", IDENTITY).lookup(["a", "b"])
    assert len(found) == 0 and missing == ["a", "b"]


def test_written_rows_are_found_by_text_and_the_others_missing(tmp_path: Path) -> None:
    texts = ["alpha", "beta", "gamma"]
    texts_dir = written(tmp_path, Shelf("embeddings", IDENTITY).add(texts, rows_of(texts)))
    shelf = open_shelf(texts_dir, "embeddings", IDENTITY)
    assert len(shelf.parts) == 1
    found, missing = shelf.lookup(["gamma", "delta", "alpha"])
    assert missing == ["delta"] and set(found) == {"gamma", "alpha"}
    np.testing.assert_array_equal(found["gamma"], rows_of(["gamma"])[0])
    np.testing.assert_array_equal(found.rows(["alpha", "gamma"]), rows_of(["alpha", "gamma"]))
    assert found["gamma"].dtype == np.float32  # kept as computed
    producer = json.loads((shelf.parts[0].parent / "producer.json").read_text("utf-8"))
    assert producer == {"kind": "embeddings", "identity": IDENTITY}


def test_rows_of_another_producer_or_kind_are_another_shelf(tmp_path: Path) -> None:
    texts = ["alpha", "beta"]
    texts_dir = written(tmp_path, Shelf("embeddings", IDENTITY).add(texts, rows_of(texts)))
    for kind, identity in (("embeddings", {**IDENTITY, "width": 4}), ("style", IDENTITY)):
        found, missing = open_shelf(texts_dir, kind, identity).lookup(texts)
        assert len(found) == 0 and missing == texts


def test_a_refit_links_the_earlier_parts_and_adds_one(tmp_path: Path) -> None:
    first = ["alpha", "beta"]
    earlier = written(tmp_path, Shelf("style", IDENTITY).add(first, rows_of(first)), "one")
    shelf = open_shelf(earlier, "style", IDENTITY)
    _, missing = shelf.lookup(["beta", "gamma"])
    later = written(tmp_path, shelf.add(missing, rows_of(missing)), "two")
    reopened = open_shelf(later, "style", IDENTITY)
    assert len(reopened.parts) == 2
    old = shelf.parts[0]
    assert (reopened.parts[0].parent / old.name).stat().st_ino == old.stat().st_ino  # linked
    found, missing = reopened.lookup(["alpha", "beta", "gamma"])
    assert missing == []
    np.testing.assert_array_equal(
        found.rows(["alpha", "beta", "gamma"]), rows_of(["alpha", "beta", "gamma"])
    )
    assert not list(later.rglob("*.tmp"))  # nothing half-written left behind


def test_parts_beyond_the_limit_are_merged_into_one(tmp_path: Path) -> None:
    shelf = Shelf("style", IDENTITY)
    texts_dir = None
    texts = [f"text {i}" for i in range(MAX_PARTS + 1)]
    for i, text in enumerate(texts):
        texts_dir = written(tmp_path, shelf.add([text], rows_of([text])), f"fit{i}")
        shelf = open_shelf(texts_dir, "style", IDENTITY)
    assert len(shelf.parts) == 1
    found, missing = shelf.lookup(texts)
    assert missing == [] and np.array_equal(found.rows(texts), rows_of(texts))


def test_a_part_that_cannot_be_read_is_computed_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    texts = ["alpha", "beta"]
    texts_dir = written(tmp_path, Shelf("style", IDENTITY).add(texts, rows_of(texts)))
    shelf = open_shelf(texts_dir, "style", IDENTITY)
    shelf.parts[0].write_bytes(b"not parquet")
    with caplog.at_level(logging.WARNING):
        found, missing = shelf.lookup(texts)
    assert len(found) == 0 and missing == texts
    assert "cannot read kept rows" in caplog.text


def test_rows_added_in_memory_are_found_before_they_are_written() -> None:
    shelf = Shelf("style", IDENTITY).add(["alpha"], rows_of(["alpha"]))
    shelf = shelf.add(["beta"], rows_of(["beta"]))
    found, missing = shelf.lookup(["beta", "alpha", "zeta"])
    assert missing == ["zeta"]
    np.testing.assert_array_equal(found.rows(["alpha", "beta"]), rows_of(["alpha", "beta"]))


def test_rows_and_texts_must_pair() -> None:
    with pytest.raises(ValueError, match="2 texts but 1 rows"):
        Shelf("style", IDENTITY).add(["a", "b"], rows_of(["a"]))


def test_aligned_rows_are_in_the_texts_order_with_zeros_where_not_kept(tmp_path: Path) -> None:
    texts = ["alpha", "beta"]
    shelf = open_shelf(
        written(tmp_path, Shelf("style", IDENTITY).add(texts, rows_of(texts))), "style", IDENTITY
    )
    rows, found = shelf.aligned(["beta", "zeta", "alpha"])
    np.testing.assert_array_equal(found, [True, False, True])
    np.testing.assert_array_equal(rows[[0, 2]], rows_of(["beta", "alpha"]))
    assert (rows[1] == 0).all()
    rows, found = Shelf("style", IDENTITY).aligned(["a"])
    assert rows.shape == (1, 0) and not found.any()
