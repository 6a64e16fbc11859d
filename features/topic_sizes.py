"""The topic model's sizes, fitted to what few distinct prompts can support.

A log may hold thousands of votes on a handful of prompts (LLMFAO: 8,931 votes, 13
prompts). The topic model's settings assume many: 30 PCA components, 10 topics, UMAP's
spectral start, HDBSCAN clusters of 10. :func:`topic_sizes` clips each to what the
distinct prompts and the embedding's width allow, and says so on the log (a warning,
which ``plb`` prints on stderr) whenever it gives less than was asked:

* PCA keeps at most as many components as there are distinct prompts or dimensions;
* UMAP needs 2 more prompts than components (its spectral start), so it keeps fewer, or
  gives way to PCA below 3 prompts;
* k-means finds at most one topic a prompt; HDBSCAN's smallest cluster is at most all
  the prompts (and when it finds no cluster, the topic model puts every query in one
  topic);
* a single distinct prompt is one topic: nothing is reduced or clustered;
* a word names a topic when it is in ``min_df`` prompts; with fewer prompts a topic
  than that on average, no word of a single topic could, so the threshold is then the
  mean topic's prompts (:func:`words_min_df`);
* prompts without a single topic word ("What is it?") leave BERTopic's own c-TF-IDF
  nothing to count, so it counts placeholders and the topics have no top words
  (:func:`make_vectorizer`).

:func:`make_reducer` and :func:`make_clusterer` build the BERTopic sub-models of a plan.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from features.stopwords import topic_words
from features.topic_words import topic_vectorizer

__all__ = [
    "TopicSizes",
    "make_clusterer",
    "make_reducer",
    "make_vectorizer",
    "topic_sizes",
    "words_min_df",
]

logger = logging.getLogger(__name__)

#: Components UMAP keeps at most (BERTopic's default).
UMAP_COMPONENTS = 5
#: Neighbours UMAP looks at, at most.
UMAP_NEIGHBORS = 15


@dataclass(frozen=True)
class TopicSizes:
    """What the topic model fits on some distinct prompts.

    Attributes
    ----------
    reducer : {"pca", "umap", "none"}
        Dimension reduction ("none": one prompt, nothing to reduce).
    n_components : int
        Dimensions it keeps (the embedding's width for "none").
    clusterer : {"kmeans", "hdbscan"}
        Clustering of the reduced embeddings.
    n_topics : int
        Topics of k-means, or the most HDBSCAN keeps.
    min_topic_size : int
        HDBSCAN's smallest cluster.
    n_neighbors : int
        UMAP's neighbours.
    """

    reducer: str
    n_components: int
    clusterer: str
    n_topics: int
    min_topic_size: int
    n_neighbors: int


def topic_sizes(
    *,
    reducer: str,
    clusterer: str,
    n_topics: int,
    n_components: int,
    min_topic_size: int,
    n_docs: int,
    width: int,
) -> TopicSizes:
    """The sizes asked for, each clipped to what ``n_docs`` prompts of ``width`` allow.

    Parameters
    ----------
    reducer, clusterer, n_topics, n_components, min_topic_size
        What the topic model was asked for (:class:`features.topics.TopicModel`).
    n_docs : int
        Distinct prompts fitted (at least 1).
    width : int
        Dimensions of their embeddings (at least 1).

    Returns
    -------
    TopicSizes
        Every reduction is logged as a warning that names the asked and the given size.
    """
    if n_docs < 1 or width < 1:
        raise ValueError(
            f"Arguments 'n_docs' and 'width' must be positive, not {n_docs} and {width}."
        )
    few = _count(n_docs, "distinct prompt")
    if n_docs == 1:
        logger.warning("topics: %s, so one topic: nothing to reduce or cluster", few)
        return TopicSizes("none", width, "kmeans", 1, 1, 1)
    topics = min(n_topics, n_docs)
    if topics < n_topics:
        logger.warning("topics: %s, so at most %d of %d topics", few, topics, n_topics)
    smallest = min(min_topic_size, n_docs)
    if clusterer == "hdbscan" and smallest < min_topic_size:
        logger.warning(
            "topics: %s, so HDBSCAN's smallest cluster is %d prompts, not %d",
            few,
            smallest,
            min_topic_size,
        )
    neighbors = min(UMAP_NEIGHBORS, n_docs - 1)
    if reducer == "umap":
        asked = min(UMAP_COMPONENTS, n_components)
        kept = min(asked, n_docs - 2, width)
        if kept >= 1:
            if kept < asked:
                logger.warning("topics: %s, so UMAP keeps %d of %d components", few, kept, asked)
            return TopicSizes("umap", kept, clusterer, topics, smallest, neighbors)
        logger.warning("topics: %s are too few for UMAP; PCA reduces them instead", few)
    kept = min(n_components, n_docs, width)
    if kept < n_components:
        logger.warning(
            "topics: %s of %d dimensions, so PCA keeps %d of %d components",
            few,
            width,
            kept,
            n_components,
        )
    return TopicSizes("pca", kept, clusterer, topics, smallest, neighbors)


def make_reducer(sizes: TopicSizes, random_state: int) -> Any:
    """The BERTopic ``umap_model`` of ``sizes``: PCA, UMAP, or none (the identity)."""
    if sizes.reducer == "umap":
        from umap import UMAP

        return UMAP(
            n_neighbors=max(2, sizes.n_neighbors),
            n_components=sizes.n_components,
            min_dist=0.0,
            metric="cosine",
            random_state=random_state,
            n_jobs=1,
        )
    if sizes.reducer == "none":
        from bertopic.dimensionality import BaseDimensionalityReduction

        return BaseDimensionalityReduction()
    from sklearn.decomposition import PCA

    return PCA(sizes.n_components, random_state=random_state)


def make_clusterer(sizes: TopicSizes, random_state: int) -> Any:
    """The BERTopic ``hdbscan_model`` of ``sizes``: k-means or HDBSCAN."""
    if sizes.clusterer == "hdbscan":
        from hdbscan import HDBSCAN

        return HDBSCAN(
            min_cluster_size=max(2, sizes.min_topic_size), metric="euclidean", prediction_data=True
        )
    from sklearn.cluster import KMeans

    return KMeans(sizes.n_topics, n_init=3, random_state=random_state)


def make_vectorizer(docs: Sequence[str]) -> Any:
    """The BERTopic ``vectorizer_model`` for ``docs``: the topic words
    (:func:`features.topic_words.topic_vectorizer`), or, where no document holds one
    (BERTopic would fail on an empty vocabulary), placeholder words for every document.
    """
    if any(topic_words(doc) for doc in docs):
        return topic_vectorizer()
    from sklearn.feature_extraction.text import CountVectorizer

    logger.warning(
        "topics: no topic word in %s, so the topics have no top words",
        _count(len(docs), "distinct prompt"),
    )
    return CountVectorizer(analyzer=_placeholder)


def _placeholder(doc: str) -> list[str]:
    """The words of every document where none has a topic word (picklable): two, as
    BERTopic's c-TF-IDF fails on a vocabulary of one."""
    return ["<no", "word>"]


def words_min_df(min_df: int, n_docs: int, n_topics: int) -> int:
    """The prompts that must hold a word before it names a topic, for ``n_docs`` distinct
    prompts in ``n_topics`` topics: ``min_df``, or the mean topic's prompts (at least 1)
    where they are fewer, logged as a warning."""
    mean_topic = max(1, n_docs // max(1, n_topics))
    if mean_topic >= min_df:
        return min_df
    logger.warning(
        "topic words: %s in %s, so a word of %s may name a topic, not %d",
        _count(n_docs, "distinct prompt"),
        _count(n_topics, "topic"),
        _count(mean_topic, "prompt"),
        min_df,
    )
    return mean_topic


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 topic", "13 distinct prompts"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
