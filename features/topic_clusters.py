"""The clusters behind the topics: BERTopic built and fitted, every query given a topic.

:func:`new_bertopic` builds BERTopic with the sub-models of a plan of sizes
(:mod:`features.topic_sizes`); :func:`cluster_topics` fits it on distinct prompts and
gives each outlier of HDBSCAN (``-1``) the topic whose centroid embedding is most
similar (cosine, :func:`nearest_topics`), or, where HDBSCAN found no cluster at all,
puts every prompt in one topic.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt

from features.topic_sizes import TopicSizes, make_clusterer, make_reducer, make_vectorizer

__all__ = ["centroids", "cluster_topics", "nearest_topics", "new_bertopic"]

logger = logging.getLogger(__name__)


def new_bertopic(
    embedder: Any, sizes: TopicSizes, docs: list[str], *, random_state: int, top_n_words: int
) -> Any:
    """BERTopic with the sub-models of ``sizes``, unfitted.

    Parameters
    ----------
    embedder : BERTopic-style backend
        The embedding backend, kept for new queries.
    sizes : TopicSizes
        The reducer's and the clusterer's sizes (:func:`features.topic_sizes.topic_sizes`).
    docs : list of str
        The distinct prompts it is to be fitted on (its vectorizer depends on them).
    random_state : int
        Seed of the reducer and the clusterer.
    top_n_words : int
        Words kept per topic.
    """
    from bertopic import BERTopic
    from bertopic.vectorizers import ClassTfidfTransformer

    return BERTopic(
        embedding_model=embedder,
        umap_model=make_reducer(sizes, random_state),
        hdbscan_model=make_clusterer(sizes, random_state),
        vectorizer_model=make_vectorizer(docs),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        top_n_words=top_n_words,
        nr_topics=None if sizes.clusterer == "kmeans" else sizes.n_topics,
        calculate_probabilities=False,
    )


def cluster_topics(
    model: Any, docs: list[str], vectors: npt.NDArray[np.floating[Any]]
) -> npt.NDArray[np.intp]:
    """Fit BERTopic ``model`` on distinct ``docs`` and their ``vectors``; their topics.

    Every prompt gets a topic: an outlier that of the nearest centroid, and, where
    HDBSCAN found no cluster, all the same one. Where there were outliers, ``model``'s
    topics are updated to the topics returned.

    Returns
    -------
    ndarray of int
        The topic of each of ``docs``, in ``0 .. n_topics - 1``.
    """
    found = np.asarray(model.fit_transform(docs, vectors)[0], dtype=np.intp)
    if (found < 0).all():  # HDBSCAN found no cluster: one topic holds every query
        logger.warning(
            "topics: HDBSCAN found no cluster in %d distinct prompts, so one topic",
            len(docs),
        )
        topics = np.zeros_like(found)
    else:
        topics = nearest_topics(vectors, found, centroids(vectors, found))
    if (found < 0).any():
        quiet = logging.getLogger("BERTopic")
        level, quiet.level = quiet.level, logging.ERROR  # "custom topics" warning
        try:
            model.update_topics(
                docs,
                topics=topics.tolist(),
                vectorizer_model=model.vectorizer_model,
                ctfidf_model=model.ctfidf_model,
            )
        finally:
            quiet.level = level
    return topics


def centroids(
    vectors: npt.NDArray[np.floating[Any]], topics: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """Unit-length mean embedding of each topic's queries (outliers, ``-1``, left out).

    Parameters
    ----------
    vectors : ndarray of shape (n, d)
        The queries' embeddings.
    topics : ndarray of int
        The topic of each, ``-1`` for an outlier.

    Returns
    -------
    ndarray of shape (n_topics, d)
        One row per topic up to the largest id.
    """
    kept = topics >= 0
    n_topics = int(topics.max()) + 1 if kept.any() else 0
    sums = np.zeros((n_topics, vectors.shape[1]))
    np.add.at(sums, topics[kept], vectors[kept])
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return sums / np.where(norms > 0, norms, 1.0)


def nearest_topics(
    vectors: npt.NDArray[np.floating[Any]],
    topics: npt.NDArray[np.intp],
    centroids: npt.NDArray[np.float64],
) -> npt.NDArray[np.intp]:
    """Give each outlier (``-1``) the topic whose centroid is most similar (cosine).

    Parameters
    ----------
    vectors : ndarray of shape (n, d)
        The queries' embeddings.
    topics : ndarray of int
        Their topics, ``-1`` for an outlier.
    centroids : ndarray of shape (n_topics, d)
        Unit-length centroid of each topic (:func:`centroids`).

    Returns
    -------
    ndarray of int
        ``topics`` with every outlier given a topic (itself where there is none).
    """
    outliers = np.flatnonzero(topics < 0)
    if outliers.size == 0:
        return topics
    topics = topics.copy()
    topics[outliers] = np.argmax(vectors[outliers] @ centroids.T, axis=1)
    return topics
