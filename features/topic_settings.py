"""What a topic model may be asked: its choices, its defaults, and their checks.

:data:`DEFAULTS` are the settings measured in ``bench/features/topics.py`` (see the
README's "Topics" section for the table behind them); :func:`check_topic_settings`
checks the settings of a :class:`features.topics.TopicModel` and :func:`as_queries` the
queries given to it, each error naming the argument and the value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from features.embeddings import BACKENDS, DEFAULT_BACKEND
from features.topic_words import DEFAULT_MIN_DF

__all__ = ["CLUSTERERS", "DEFAULTS", "REDUCERS", "as_queries", "check_topic_settings"]

REDUCERS = ("pca", "umap")
CLUSTERERS = ("kmeans", "hdbscan")
DEFAULTS: dict[str, Any] = {
    "embedding": DEFAULT_BACKEND,
    "reducer": "pca",
    "clusterer": "kmeans",
    "n_topics": 10,
    "n_components": 30,
    "min_df": DEFAULT_MIN_DF,
}


def check_topic_settings(params: dict[str, Any]) -> None:
    """Check a topic model's settings (its ``get_params()``).

    Parameters
    ----------
    params : dict
        ``embedding``, ``reducer``, ``clusterer``, ``n_topics``, ``n_components``,
        ``min_topic_size``, ``top_n_words``, ``min_df`` and ``max_fit_documents``
        (:class:`features.topics.TopicModel`).

    Raises
    ------
    ValueError
        Naming the first setting out of its range, and its value.
    """
    embedding = params["embedding"]
    if embedding is not None and embedding not in BACKENDS:
        raise ValueError(
            f"Argument 'embedding' must be one of {', '.join(BACKENDS)}, not {embedding!r}."
        )
    if params["reducer"] not in REDUCERS:
        raise ValueError(
            f"Argument 'reducer' must be one of {', '.join(REDUCERS)}, not {params['reducer']!r}."
        )
    if params["clusterer"] not in CLUSTERERS:
        raise ValueError(
            f"Argument 'clusterer' must be one of {', '.join(CLUSTERERS)}, "
            f"not {params['clusterer']!r}."
        )
    limit = params["max_fit_documents"]
    for name in ("n_topics", "n_components", "min_topic_size", "top_n_words", "min_df"):
        value = params[name]
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"Argument '{name}' must be a positive integer, not {value!r}.")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 2
    ):
        raise ValueError(
            f"Argument 'max_fit_documents' must be an integer of at least 2 or None, not {limit!r}."
        )


def as_queries(X: Any, *, name: str = "queries") -> list[str]:
    """Validate a sequence of query strings; an error names the index and the value."""
    if isinstance(X, str):
        raise ValueError(f"Argument '{name}' must be a sequence of strings, not one string.")
    queries = list(X.tolist() if isinstance(X, np.ndarray | pd.Series) else X)
    for index, query in enumerate(queries):
        if not isinstance(query, str):
            raise ValueError(f"{name}[{index}] must be a string, not {query!r}.")
    return queries
