"""``features.text_rows``: rows by text held as one array."""

from __future__ import annotations

import numpy as np
import pytest

from features.text_rows import TextRows


def test_rows_in_the_tables_order_are_its_array_and_others_are_looked_up() -> None:
    table = TextRows(["a", "b", "c"], np.array([[1.0], [2.0], [3.0]]))
    assert table.rows(["a", "b", "c"]) is table.array  # no lookup, no copy
    assert table._index is None  # its index of texts not built for that
    np.testing.assert_array_equal(table.rows(["c", "a", "c"]), [[3.0], [1.0], [3.0]])
    assert table["b"][0] == 2.0 and "b" in table and "d" not in table
    assert list(table) == ["a", "b", "c"] and len(table) == 3 and table.get("d") is None


def test_holds_all_only_when_every_text_has_a_row() -> None:
    table = TextRows(("a", "b"), np.zeros((2, 1)))  # any sequence: kept as a list
    assert table.holds_all(["a", "b"]) and table.holds_all(["b"])
    assert not table.holds_all(["a", "z"]) and not table.is_in_order(["b", "a"])


def test_texts_and_rows_must_pair() -> None:
    with pytest.raises(ValueError, match="2 texts but 1 rows"):
        TextRows(["a", "b"], np.zeros((1, 3)))
