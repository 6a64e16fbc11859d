"""Top words of topics, counted over distinct prompts, as a person would name the topic.

BERTopic's class-based TF-IDF joins a topic's documents into one and counts its words,
so a word repeated in one long prompt (a pasted file's identifiers, a story's names) can
name the topic, and its vectoriser's ``min_df`` counts topics, not prompts. Here each
distinct prompt counts a word once; a word names a topic only if at least ``min_df``
prompts of the corpus, and ``min_df`` prompts of that topic (a fifth of a topic of
fewer than ``5 * min_df`` prompts), contain it; and the words are those of
:func:`features.stopwords.topic_words` (no function words of common languages, no code
keywords, no identifiers). The scores are
BERTopic's own c-TF-IDF (``ClassTfidfTransformer(reduce_frequent_words=True)``) over
these prompt counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from features.stopwords import topic_words

__all__ = ["DEFAULT_MIN_DF", "describe_topics", "topic_vectorizer"]

DEFAULT_MIN_DF = 3
"""Distinct prompts that must contain a word before it may name a topic (measured in
``bench/features/topics_real.py``, ``run_real``)."""


def topic_vectorizer(min_df: int = 1, binary: bool = False) -> Any:
    """A ``CountVectorizer`` of :func:`~features.stopwords.topic_words` (picklable)."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(analyzer=topic_words, min_df=min_df, binary=binary)


def describe_topics(
    docs: Sequence[str],
    topics: npt.ArrayLike,
    n_topics: int,
    *,
    min_df: int = DEFAULT_MIN_DF,
    top_n: int = 10,
) -> list[list[tuple[str, float]]]:
    """The top words of each topic, with their c-TF-IDF scores, best first.

    Parameters
    ----------
    docs : sequence of str
        Distinct prompts (a prompt asked many times is given once).
    topics : array of int, shape (len(docs),)
        Topic of each prompt, in ``0 .. n_topics - 1``.
    n_topics : int
        Number of topics.
    min_df : int
        Prompts of the corpus, and of the topic (at most a fifth of it, rounded up), that
        must contain a word.
    top_n : int
        Words kept per topic; fewer where fewer qualify.

    Returns
    -------
    list of list of (str, float)
        For each topic, its words and scores; an empty list for a topic with none.
    """
    from bertopic.vectorizers import ClassTfidfTransformer
    from scipy import sparse

    labels = np.asarray(topics, dtype=np.intp)
    if labels.shape != (len(docs),):
        raise ValueError(
            f"Argument 'topics' must have one entry per document ({len(docs)}), "
            f"not shape {labels.shape}."
        )
    vectorizer = topic_vectorizer(min_df=1, binary=True)
    try:
        present = vectorizer.fit_transform(list(docs)).tocsc()
    except ValueError:  # no document has a single topic word
        return [[] for _ in range(n_topics)]
    vocabulary = vectorizer.get_feature_names_out()
    kept = np.flatnonzero(np.asarray(present.sum(axis=0)).ravel() >= min(min_df, len(docs)))
    present, vocabulary = present[:, kept], vocabulary[kept]
    membership = sparse.csr_matrix(
        (np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(n_topics, len(labels))
    )
    counts = (membership @ present).toarray()  # prompts of each topic holding each word
    sizes = np.bincount(labels, minlength=n_topics)
    counts[counts < np.minimum(min_df, np.maximum(1, -(-sizes // 5)))[:, None]] = 0
    used = np.flatnonzero(counts.any(axis=0))
    if used.size == 0:
        return [[] for _ in range(n_topics)]
    counts, vocabulary = counts[:, used], vocabulary[used]
    scores = ClassTfidfTransformer(reduce_frequent_words=True).fit_transform(
        sparse.csr_matrix(counts)
    )
    scores = np.asarray(scores.toarray())
    described = []
    for topic in range(n_topics):
        row = np.where(counts[topic] > 0, scores[topic], 0.0)
        order = [i for i in np.argsort(-row, kind="stable")[:top_n] if row[i] > 0]
        described.append([(str(vocabulary[i]), float(row[i])) for i in order])
    return described
