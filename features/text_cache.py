"""A bounded, thread-safe cache of per-text rows: what a repeated query costs nothing.

:class:`TextCache` keeps one float row per text, the least recently used dropped beyond
``max_items``; :meth:`TextCache.rows` looks a batch of texts up, computes the missing ones
in one call and keeps them. The serving caches of :mod:`features.embeddings.cache` (query
embeddings, the writing-style statistics of each query, and each query's topic and
embedding components) are three of them. It is only exact for a function of one text at
a time: a row that depends on the other texts of its batch is kept as its first batch
gave it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["CacheInfo", "TextCache", "stacked"]

Rows = npt.NDArray[Any]


@dataclass(frozen=True)
class CacheInfo:
    """How a cache has done: texts found, texts computed, texts kept, the most kept."""

    hits: int
    misses: int
    size: int
    max_items: int


class TextCache:
    """Rows of a per-text function, least recently used dropped beyond ``max_items``.

    Thread-safe: the service computes from several threads at once. Two threads missing
    the same text may both compute it; the row kept last is as good as the first.
    Pickled without its rows (a worker process starts empty).

    Parameters
    ----------
    max_items : int
        The most rows kept; at least 1.
    """

    def __init__(self, max_items: int = 10_000) -> None:
        if max_items < 1:
            raise ValueError(f"Argument 'max_items' must be at least 1, not {max_items}.")
        self.max_items = max_items
        self._rows: OrderedDict[str, Rows] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    def rows(self, texts: Sequence[str], compute: Callable[[list[str]], Rows]) -> list[Rows]:
        """The row of each text, in order: kept ones looked up, the others computed.

        Parameters
        ----------
        texts : sequence of str
            The texts; repeats are computed once.
        compute : callable
            ``compute(missing)`` returns one row per text of ``missing`` (distinct, in
            the order first seen), stacked ``(len(missing), ...)``.

        Returns
        -------
        list of ndarray
            One row per text of ``texts``.
        """
        with self._lock:
            found: dict[str, Rows | None] = {t: self._rows.get(t) for t in dict.fromkeys(texts)}
            for text, row in found.items():
                if row is not None:
                    self._rows.move_to_end(text)
        missing = [text for text, row in found.items() if row is None]
        if missing:
            computed = compute(missing)
            with self._lock:
                for text, row in zip(missing, computed, strict=True):
                    found[text] = row
                    self._rows[text] = np.array(row)  # its own: not a view keeping the batch
                    self._rows.move_to_end(text)
                while len(self._rows) > self.max_items:
                    self._rows.popitem(last=False)
        with self._lock:
            self._hits += len(texts) - len(missing)
            self._misses += len(missing)
        return [row for row in (found[t] for t in texts) if row is not None]

    def touch(self, texts: Sequence[str]) -> None:
        """Mark the kept ones of ``texts`` as just used, and count them found, as
        :meth:`rows` would, without reading them (their use was kept elsewhere)."""
        with self._lock:
            for text in dict.fromkeys(texts):
                if text in self._rows:
                    self._rows.move_to_end(text)
            self._hits += sum(text in self._rows for text in texts)

    def cache_info(self) -> CacheInfo:
        """Texts found and computed so far (a text repeated in one call counts each time)."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._rows), self.max_items)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_rows"] = OrderedDict()
        state["_lock"] = None
        state["_hits"] = state["_misses"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def stacked(rows: list[Rows] | Rows, width: int, dtype: type = np.float64) -> Rows:
    """``rows`` as one ``(n, width)`` array (``(0, width)`` for none); an array of them
    as it is."""
    if isinstance(rows, np.ndarray) and rows.ndim == 2:
        return rows.astype(dtype, copy=False)
    if not len(rows):
        return np.zeros((0, width), dtype=dtype)
    return np.stack(list(rows)).astype(dtype, copy=False)
