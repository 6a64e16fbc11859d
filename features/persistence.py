"""Saving a fitted estimator into a folder: the pickled model and a readable JSON summary.

The summary carries a ``format`` string that :meth:`Folder.load` checks before it unpickles
anything, so a folder of another kind fails with a clear message. Pickles are only ever
read from folders this project wrote: never load one from an untrusted source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["Folder"]

T = TypeVar("T")


@dataclass(frozen=True)
class Folder:
    """The layout of one kind of saved model.

    Attributes
    ----------
    model_file, summary_file : str
        The pickle (joblib, compressed) and the JSON summary inside the folder.
    format : str
        The summary's ``format``, checked on loading.
    what : str
        What the folder holds, for error messages ("topic model").
    """

    model_file: str
    summary_file: str
    format: str
    what: str

    def save(self, model: object, path: str | Path, summary: dict[str, Any]) -> Path:
        """Write ``model`` and ``summary`` (its ``format`` set) into the folder ``path``."""
        import joblib

        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        joblib.dump(model, folder / self.model_file, compress=3)
        document = {"format": self.format, **summary}
        (folder / self.summary_file).write_text(
            json.dumps(document, indent=2) + "\n", encoding="utf-8"
        )
        return folder

    def load(self, cls: type[T], path: str | Path) -> T:
        """Read a model written by :meth:`save`, checking its format and class.

        Raises
        ------
        ValueError
            If the folder holds no ``what`` of this format.
        """
        import joblib

        folder = Path(path)
        try:
            summary = json.loads((folder / self.summary_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"no {self.what} in {folder}: {error}") from error
        if summary.get("format") != self.format:
            raise ValueError(
                f"{folder / self.summary_file}: format must be {self.format!r}, "
                f"not {summary.get('format')!r}"
            )
        model = joblib.load(folder / self.model_file)
        if not isinstance(model, cls):
            raise ValueError(
                f"{folder / self.model_file} holds a {type(model).__name__}, not a {self.what}"
            )
        return model
