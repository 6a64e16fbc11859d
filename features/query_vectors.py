"""Embeddings of distinct queries: each text embedded once, or looked up.

A prompt voted on 40 times is one text. The topic model and the profiler's query
components both read the vectors of the distinct queries; precomputed embeddings, by text
or one row per query, stand in for the backend's work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from features.text_rows import TextRows
from ranking.progress import Progress

__all__ = ["distinct_vectors"]


def distinct_vectors(
    embedder: Any,
    texts: list[str],
    embeddings: Mapping[str, npt.ArrayLike] | npt.ArrayLike | None = None,
    progress: Progress | None = None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.intp], list[str]]:
    """Embeddings of the distinct ``texts``, each embedded once.

    Parameters
    ----------
    embedder : BERTopic-style backend
        Embeds what ``embeddings`` lacks (:func:`features.embeddings.base.embed`).
    texts : list of str
        Queries, duplicates allowed.
    embeddings : mapping of str to vector, or array of shape (len(texts), d), optional
        Precomputed embeddings by text, or one row per query. A mapping with a
        ``rows(texts)`` method (stacking the rows of many texts) is asked once.
    progress : Progress, optional
        Told of the stage ``"embedding queries"`` of what is embedded.

    Returns
    -------
    vectors : ndarray of float32
        ``(n_distinct, d)``.
    inverse : ndarray of int
        ``(len(texts),)`` row of ``vectors`` of each text.
    docs : list of str
        The distinct texts, in the rows' order.
    """
    from features.embeddings.base import embed

    # by hash, then the distinct texts sorted: np.unique's order, in half its time
    codes, distinct = pd.factorize(pd.Series(texts, dtype=object), sort=True)
    inverse = np.asarray(codes, dtype=np.intp)
    docs = [str(d) for d in distinct]
    if embeddings is not None and not isinstance(embeddings, Mapping):
        rows = np.asarray(embeddings, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise ValueError(
                f"Argument 'embeddings' must have one row per query ({len(texts)}), "
                f"not shape {rows.shape}."
            )
        first = np.zeros(len(docs), dtype=np.intp)
        first[inverse[::-1]] = np.arange(len(texts))[::-1]
        return rows[first], inverse.astype(np.intp), docs
    if not embeddings:  # nothing to look up: every text embedded, in one array
        computed = embed(embedder, docs, progress) if docs else np.zeros((0, 0))
        return np.asarray(computed, dtype=np.float32), inverse.astype(np.intp), docs
    if not docs:
        return np.zeros((0, 0), dtype=np.float32), inverse, docs
    table: Mapping[str, npt.ArrayLike] = embeddings
    if isinstance(table, TextRows) and table.holds_all(docs):  # a fit's, in its order
        return np.asarray(table.rows(docs), dtype=np.float32), inverse, docs
    held = np.fromiter((doc in table for doc in docs), dtype=bool, count=len(docs))
    found = [doc for doc, h in zip(docs, held, strict=True) if h]
    missing = [doc for doc, h in zip(docs, held, strict=True) if not h]
    parts = []
    if found:  # a table that stacks its own rows is asked once
        many = getattr(table, "rows", None)
        kept = many(found) if callable(many) else [np.asarray(table[doc]) for doc in found]
        parts.append((held, np.asarray(kept, dtype=np.float32)))
    if missing:
        parts.append((~held, np.asarray(embed(embedder, missing, progress), np.float32)))
    vectors = np.empty((len(docs), parts[0][1].shape[1]), dtype=np.float32)
    for where, rows in parts:
        vectors[where] = rows
    return vectors, inverse, docs
