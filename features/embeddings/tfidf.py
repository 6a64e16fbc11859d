"""TF-IDF and truncated SVD fitted on the corpus it first embeds: the ``tfidf`` backend,
the fallback where PyTorch is not installed.

The registry of backends is :mod:`features.embeddings`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from features.embeddings.base import ProgressEmbedder
from ranking.progress import Progress, start

__all__ = ["TfidfEmbedder"]

logger = logging.getLogger(__name__)


class TfidfEmbedder(ProgressEmbedder):
    """TF-IDF and truncated SVD, fitted on the first corpus it embeds (no PyTorch needed).

    Parameters
    ----------
    dimensions : int
        Components kept by the SVD, at most: few distinct prompts get fewer, and a wider
        vocabulary (logged as a warning).
    random_state : int
        Seed of the randomised SVD.
    """

    def __init__(self, dimensions: int = 100, random_state: int = 0) -> None:
        super().__init__()
        self.dimensions = dimensions
        self.random_state = random_state
        self.pipeline: Any = None

    @property
    def name(self) -> str:
        return "tfidf"

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float64]:
        """Embed documents; the first call fits the vocabulary and the SVD on them.

        ``progress`` is told of the stage ``"embedding queries (TF-IDF)"``, in queries,
        all done at once.
        """
        advance = start(progress, "embedding queries (TF-IDF)", len(documents), "queries")
        vectors = self._embed(list(documents))
        advance(len(vectors))
        return vectors

    def _embed(self, documents: list[str]) -> npt.NDArray[np.float64]:
        if self.pipeline is None:
            self.pipeline, vectors = _fit_tfidf(documents, self.dimensions, self.random_state)
        else:
            vectors = self.pipeline.transform(documents)
        dense = vectors.toarray() if hasattr(vectors, "toarray") else vectors  # without SVD
        return np.asarray(dense, dtype=np.float64)


#: The TF-IDF vocabularies tried in turn, until one has enough terms: words of two
#: prompts or more (the usual one), of any prompt, with the stop words, then characters.
_VOCABULARIES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("words of 2 prompts or more", {"stop_words": "english", "min_df": 2}),
    ("words of any prompt", {"stop_words": "english", "min_df": 1}),
    ("words of any prompt, stop words too", {"min_df": 1}),
    ("character n-grams", {"analyzer": "char_wb", "ngram_range": (1, 3), "min_df": 1}),
)


def _fit_tfidf(documents: list[str], dimensions: int, random_state: int) -> tuple[Any, Any]:
    """A TF-IDF, SVD and unit-length pipeline sized for and fitted on ``documents``, and
    their vectors (``pipeline.fit_transform(documents)``, the corpus tokenized once).

    A vocabulary of words shared by two prompts needs many prompts: 13 distinct ones may
    share 4 words, and leave most prompts without any. So the first vocabulary of
    :data:`_VOCABULARIES` with more terms than the SVD can keep components (at most
    ``dimensions``, one a prompt) is used; the SVD keeps fewer than ``dimensions``
    components where the prompts or the terms are fewer, and is left out for a single
    prompt or term. Each reduction is logged as a warning.
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    n_docs = len(set(documents))
    wanted = min(dimensions, n_docs) + 1
    few = f"{n_docs} distinct prompt{'' if n_docs == 1 else 's'}"
    best: tuple[int, str, Any, Any] | None = None
    for name, settings in _VOCABULARIES:
        vectorizer = TfidfVectorizer(sublinear_tf=True, **settings)
        try:
            terms = vectorizer.fit_transform(documents)
        except ValueError:  # no term at all
            continue
        n_terms = terms.shape[1]
        if best is None or n_terms > best[0]:
            best = (n_terms, name, vectorizer, terms)
        if n_terms >= wanted:
            break
    if best is None:
        raise ValueError(f"The TF-IDF embedding found no word or character to embed in {few}.")
    n_terms, name, vectorizer, terms = best
    del best
    if name != _VOCABULARIES[0][0]:
        logger.warning("TF-IDF embedding: %s, so its vocabulary is %s", few, name)
    components = min(dimensions, n_terms - 1, n_docs)
    if n_docs < 2 or components < 1:  # nothing for an SVD to reduce: the terms themselves
        logger.warning("TF-IDF embedding: %s of %d terms, so no SVD", few, n_terms)
        normalizer = Normalizer()
        return make_pipeline(vectorizer, normalizer), normalizer.fit_transform(terms)
    if components < dimensions:
        logger.warning(
            "TF-IDF embedding: %s of %d terms, so %d of %d dimensions",
            few,
            n_terms,
            components,
            dimensions,
        )
    svd, normalizer = TruncatedSVD(components, random_state=random_state), Normalizer()
    vectors = normalizer.fit_transform(svd.fit_transform(terms))
    return make_pipeline(vectorizer, svd, normalizer), vectors
