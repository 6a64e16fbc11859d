"""Saving a fitted estimator into a folder: the pickled model and a readable JSON summary.

The summary carries a ``format`` string that :func:`load_folder` checks before it
unpickles anything, so a folder of another kind fails with a clear message. Pickles are
only ever read from folders this project wrote: never load one from an untrusted source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["load_folder", "save_folder"]

T = TypeVar("T")


def save_folder(
    model: object, path: str | Path, *, model_file: str, summary_file: str, summary: dict[str, Any]
) -> Path:
    """Write ``model`` (joblib, compressed) and ``summary`` (JSON) into the folder ``path``."""
    import joblib

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    joblib.dump(model, folder / model_file, compress=3)
    (folder / summary_file).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return folder


def load_folder(
    cls: type[T], path: str | Path, *, model_file: str, summary_file: str, format: str, what: str
) -> T:
    """Read a model written by :func:`save_folder`, checking its format and class.

    Raises
    ------
    ValueError
        If the folder holds no ``what`` of this format.
    """
    import joblib

    folder = Path(path)
    try:
        summary = json.loads((folder / summary_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"no {what} in {folder}: {error}") from error
    if summary.get("format") != format:
        raise ValueError(
            f"{folder / summary_file}: format must be {format!r}, not {summary.get('format')!r}"
        )
    model = joblib.load(folder / model_file)
    if not isinstance(model, cls):
        raise ValueError(f"{folder / model_file} holds a {type(model).__name__}, not a {what}")
    return model
