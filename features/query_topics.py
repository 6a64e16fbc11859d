"""Each query's topic and embedding components, computed or kept by text.

What a fitted :class:`features.profile.UserProfiler` reads of a user's queries beyond
their style: :func:`topics_and_components` embeds each distinct query once, for its topic
(the fitted topic model) and its components (the fitted
:class:`features.query_context.QueryComponents`); :func:`cached_topics_and_components`
does the same through a :class:`features.text_cache.TextCache` of one row per text, its
topic then its components, computing only the texts the cache lacks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from features.query_context import QueryComponents
from features.query_vectors import distinct_vectors
from features.text_cache import TextCache, stacked
from features.topics import Embeddings
from ranking.progress import Progress

__all__ = ["cached_topics_and_components", "topics_and_components"]

#: Each query's topic, and its embedding components (None without them).
TopicsAndComponents = tuple[npt.NDArray[np.intp], npt.NDArray[np.float64] | None]


def topics_and_components(
    topic_model: Any,
    query_model: QueryComponents | None,
    texts: list[str],
    embeddings: Embeddings | None = None,
    progress: Progress | None = None,
) -> TopicsAndComponents:
    """Topic of each of ``texts``, and its embedding components (None without them).

    Parameters
    ----------
    topic_model : TopicModel
        A fitted :class:`features.topics.TopicModel`.
    query_model : QueryComponents or None
        The fitted components, or None for none.
    texts : list of str
        The queries; each distinct one is embedded once, for both.
    embeddings : array or mapping, optional
        Their precomputed embeddings (:meth:`features.topics.TopicModel.fit`).
    progress : Progress, optional
        Told of the stage ``"embedding queries"``, unless precomputed.
    """
    if query_model is None:
        return topic_model.predict(texts, embeddings, progress), None
    vectors, inverse, docs = distinct_vectors(topic_model.embedder_, texts, embeddings, progress)
    topics = topic_model.predict(texts, dict(zip(docs, vectors, strict=True)))
    return topics, query_model.transform(vectors)[inverse]


def cached_topics_and_components(
    topic_model: Any,
    query_model: QueryComponents | None,
    texts: list[str],
    cache: TextCache,
    progress: Progress | None = None,
) -> TopicsAndComponents:
    """:func:`topics_and_components` by text: the rows ``cache`` keeps looked up, the
    others computed and kept.

    The embedding backend is told (its ``touch``, where it has one) of the texts found,
    so that their vectors stay as recent as their rows.
    """
    computed: set[str] = set()

    def compute(missing: list[str]) -> npt.NDArray[np.float64]:
        computed.update(missing)
        topics, query = topics_and_components(topic_model, query_model, missing, None, progress)
        columns = [topics.astype(np.float64)[:, None]]
        return np.hstack(columns if query is None else [*columns, query])

    width = 1 + (0 if query_model is None else int(query_model.n_components_))
    rows = stacked(cache.rows(texts, compute), width)
    touch = getattr(topic_model.embedder_, "touch", None)
    if touch is not None:  # the vectors of the rows found stay as recent as the rows
        touch([text for text in texts if text not in computed])
    topics = rows[:, 0].astype(np.intp)
    return topics, None if query_model is None else rows[:, 1:]
