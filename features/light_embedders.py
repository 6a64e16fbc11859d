"""The embedding backends that need no PyTorch at run time: ``static`` and ``tfidf``.

``static`` is a model2vec model distilled from all-MiniLM-L6-v2 once per machine;
``tfidf`` is TF-IDF and truncated SVD fitted on the corpus it first embeds. The registry
of backends and the MiniLM ones are in :mod:`features.embeddings`.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from features.embedder_base import ProgressEmbedder
from features.model_files import cache_dir, minilm_path, offline
from ranking.progress import Progress, start

__all__ = ["STATIC_DIMENSIONS", "StaticEmbedder", "TfidfEmbedder", "distilled_static_model"]

logger = logging.getLogger(__name__)

STATIC_DIMENSIONS = 256


class StaticEmbedder(ProgressEmbedder):
    """A model2vec static model distilled from all-MiniLM-L6-v2 (256 dimensions, unit length).

    The distillation runs once per machine (about 20 seconds on 2 cores) and is cached in
    ``cache_dir() / "static-minilm-256"``; after that, loading takes milliseconds and
    embedding tens of thousands of queries a second.
    """

    def __init__(self) -> None:
        super().__init__()
        self._model: Any = None

    @property
    def name(self) -> str:
        return "static"

    def batches(self, documents: Sequence[str]) -> list[npt.NDArray[np.intp]]:
        """Positions of ``documents`` in batches of 4,096: a static model embeds every
        document alone, so any split gives the vectors of :meth:`embed`."""
        positions = np.arange(len(documents), dtype=np.intp)
        return [positions[i : i + 4096] for i in range(0, positions.size, 4096)]

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embed documents into an ``(n, 256)`` array of unit vectors.

        With ``progress``, batch by batch (:meth:`batches`), telling it of the stage
        ``"embedding queries"``, in queries.
        """
        if self._model is None:
            self._model = _load_static()
        documents = list(documents)
        if progress is None:
            vectors = np.asarray(
                self._model.encode(documents, show_progress_bar=verbose), dtype=np.float32
            )
        else:
            advance = start(progress, "embedding queries", len(documents), "queries")
            blocks = []
            for batch in self.batches(documents):  # in order: the blocks stack up
                blocks.append(self._model.encode([documents[i] for i in batch]))
                advance(batch.size)
            vectors = np.asarray(
                np.concatenate(blocks) if blocks else self._model.encode([]), dtype=np.float32
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None
        return state


@lru_cache(maxsize=1)
def _load_static() -> Any:
    from model2vec import StaticModel

    return StaticModel.from_pretrained(str(distilled_static_model()))


def distilled_static_model(target: Path | None = None) -> Path:
    """Path of the static model distilled from all-MiniLM-L6-v2, distilling it if absent.

    Parameters
    ----------
    target : Path, optional
        Where the model lives; ``cache_dir() / "static-minilm-256"`` by default.

    Returns
    -------
    Path
        A folder that ``model2vec.StaticModel.from_pretrained`` reads.
    """
    target = target or cache_dir() / f"static-minilm-{STATIC_DIMENSIONS}"
    if (target / "config.json").exists():
        return target
    offline()
    from model2vec.distill import distill
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    logger.warning("distilling a static model from all-MiniLM-L6-v2 into %s (once)", target)
    model = distill(model_name=str(minilm_path()), pca_dims=STATIC_DIMENSIONS)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".static-", dir=target.parent))
    try:
        model.save_pretrained(str(staging))
        try:
            staging.rename(target)
        except OSError:  # another process finished first: keep theirs
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


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
