"""Rows by text held as one array: what a fit looks its prompts' rows up in.

A fit's rows by text (embeddings, style statistics) come in the order of its distinct
prompts, and the profiler asks for them in that very order. :class:`TextRows` answers
such a request with the array as it is, and any other by each text's position, its
index of texts built only when first needed (at two million prompts, a dictionary of
them costs seconds a fit need not pay).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["TextRows"]

Rows = npt.NDArray[Any]


class TextRows(Mapping[str, Rows]):
    """Rows by text, read from one array in the texts' order.

    Parameters
    ----------
    texts : sequence of str
        The texts, distinct.
    values : ndarray
        ``(len(texts), width)`` rows, in the order of ``texts``.
    """

    def __init__(self, texts: Sequence[str], values: Rows) -> None:
        if len(texts) != len(values):
            raise ValueError(f"{len(texts)} texts but {len(values)} rows")
        self.texts = texts if isinstance(texts, list) else list(texts)
        self.array = values
        self._index: dict[str, int] | None = None

    @property
    def index(self) -> dict[str, int]:
        """Each text's row, built on first use."""
        if self._index is None:
            self._index = {text: row for row, text in enumerate(self.texts)}
        return self._index

    def __getitem__(self, text: str) -> Rows:
        return self.array[self.index[text]]

    def __contains__(self, text: object) -> bool:  # Mapping's would read the row
        return text in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def is_in_order(self, texts: Sequence[str]) -> bool:
        """Whether ``texts`` are this table's texts in its order (no lookup needed)."""
        if texts is self.texts:
            return True
        return isinstance(texts, list) and len(texts) == len(self.texts) and texts == self.texts

    def holds_all(self, texts: Sequence[str]) -> bool:
        """Whether every one of ``texts`` has a row here."""
        if self.is_in_order(texts):
            return True
        index = self.index
        return all(text in index for text in texts)

    def rows(self, texts: Sequence[str]) -> Rows:
        """The rows of ``texts`` (each held), stacked ``(len(texts), width)``: the array
        itself when they are its texts in its order."""
        if self.is_in_order(texts):
            return self.array
        index = self.index
        return self.array[np.fromiter((index[t] for t in texts), np.intp, len(texts))]
