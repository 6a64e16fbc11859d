"""The embedding backends by name, and the default one, without loading any backend.

:data:`BACKENDS` names what :func:`features.embeddings.make_embedder` builds;
:func:`default_embedding` chooses among them by what is installed. Nothing heavy is
imported here, so the command line's ``--help`` and a setting's check read the names
at once.
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "default_embedding"]

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
