"""Bounded caches of per-query work by text, for serving: a repeated query is free.

:class:`CachedEmbedder` wraps an embedding backend (:mod:`features.embeddings`): the
texts it has seen are looked up, the others embedded in one call and kept, the least
recently used dropped beyond ``max_items``; the profiler's style rows are cached the
same way (:func:`features.style.cached_style_features`, which needs no embedding
backend, so a service of a fit without features never imports BERTopic). Only the
service installs the caches
(:func:`cache_embeddings`, from ``PLB_EMBEDDING_CACHE``), so a fit never depends on what
was seen before. A cached vector is the one computed when the text was first seen, in
that call's batch: at full precision within about 1e-6 of embedding it again among other
texts (a vector depends on its batch mates only through padding); with the int8
backend, whose activation scales are per batch, up to about 0.1 apart. A style row
depends on its text alone: cached or not, it is the same. The profiler's cache of each
query's topic and embedding components (``profiler_.query_cache_``) keeps what the
query's vector gave when first seen: with the default PCA and k-means topics a function
of the vector alone (the same to rounding as computing it again among other queries);
with UMAP, whose projection of new points is optimised per batch, what its first batch
gave, as for an int8 vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from features.embeddings.base import ProgressEmbedder, embed
from features.text_cache import CacheInfo, TextCache, stacked
from ranking.progress import Progress

__all__ = ["CachedEmbedder", "cache_embeddings"]


class CachedEmbedder(ProgressEmbedder):
    """``embedder`` with a least-recently-used cache of ``max_items`` vectors by text.

    Thread-safe (:class:`features.text_cache.TextCache`): the service embeds from several
    threads at once. Pickled without its vectors (a worker starts with an empty cache).

    Parameters
    ----------
    embedder : BaseEmbedder
        A backend of :mod:`features.embeddings` (its ``embed`` and ``name``).
    max_items : int
        The most vectors kept; at least 1.
    """

    def __init__(self, embedder: Any, max_items: int = 10_000) -> None:
        super().__init__()
        self.embedder = embedder
        self.cache = TextCache(max_items)

    @property
    def name(self) -> str:
        """The wrapped backend's name (what a saved topic model records)."""
        return str(self.embedder.name)

    @property
    def max_items(self) -> int:
        """The most vectors kept."""
        return self.cache.max_items

    @max_items.setter
    def max_items(self, value: int) -> None:
        self.cache.max_items = value

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embeddings of ``documents``, ``(n, d)``: cached ones looked up, the rest embedded."""

        def compute(missing: list[str]) -> npt.NDArray[np.float32]:
            return np.asarray(embed(self.embedder, missing, progress), dtype=np.float32)

        rows = self.cache.rows([str(d) for d in documents], compute)
        return stacked(rows, 0, np.float32)  # no documents: (0, 0), the width unknown

    def touch(self, documents: Sequence[str]) -> None:
        """Mark the cached ones of ``documents`` as just used (and count them found)
        without reading their vectors: what the profiler does when it found what it
        derives from them (:meth:`features.profile.UserProfiler.topics_and_context`), so
        that a query in use keeps its vector as long as its topic."""
        self.cache.touch([str(d) for d in documents])

    def cache_info(self) -> CacheInfo:
        """Texts found and embedded so far (a text repeated in one call counts each time)."""
        return self.cache.cache_info()


def cache_embeddings(
    predictor: Any, max_items: int = 10_000, *, serve: bool = True
) -> CachedEmbedder | None:
    """Give a fitted rating predictor's topic model a :class:`CachedEmbedder`, and its
    profiler a cache of each query's style statistics (``profiler_.style_cache_``) and one
    of each query's topic and embedding components (``profiler_.query_cache_``).

    Every query the predictor embeds and profiles from then on (its predictions from
    queries, the service's priors of personal boards) goes through the three caches, of
    ``max_items`` texts each: a query seen before costs no embedding, no projection and
    no clustering. Installing them again keeps them there (their size set
    anew). With ``serve``, the backend embeds as a service should from then on (its
    ``serve()``: a request's few queries in small batches, on one thread a request where
    requests run in parallel): like the cache, what serving wants, not a fit.

    Parameters
    ----------
    predictor : RatingPredictor
        Fitted; its ``profiler_.topic_model_.embedder_`` (fitted attributes) is wrapped.
    max_items : int
        The most texts each cache keeps; 0 takes the caches away.
    serve : bool
        Set the backend up for serving (a backend with a ``serve`` method), with or
        without the caches; False leaves it as fitted.

    Returns
    -------
    CachedEmbedder or None
        The cache, or None with ``max_items`` 0 or a predictor without a topic model.
    """
    profiler: Any = getattr(predictor, "profiler_", None)
    model = getattr(profiler, "topic_model_", None)
    embedder = getattr(model, "embedder_", None)
    if model is None or embedder is None:
        return None
    inner = embedder.embedder if isinstance(embedder, CachedEmbedder) else embedder
    if serve and hasattr(inner, "serve"):
        inner.serve()
    if max_items == 0:
        model.embedder_ = inner
        profiler.style_cache_ = profiler.query_cache_ = None
        return None
    for name in ("style_cache_", "query_cache_"):
        cache = getattr(profiler, name, None)
        if cache is None:
            setattr(profiler, name, TextCache(max_items))
        else:
            cache.max_items = max_items
    if isinstance(embedder, CachedEmbedder):
        embedder.max_items = max_items
        return embedder
    model.embedder_ = CachedEmbedder(inner, max_items)
    return model.embedder_
