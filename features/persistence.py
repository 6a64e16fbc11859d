"""Saving a fitted estimator into a folder: the pickled model and a readable JSON summary.

The summary carries a ``format`` string that :meth:`Folder.load` checks before it unpickles
anything, so a folder of another kind fails with a clear message. Pickles are only ever
read from folders this project wrote: never load one from an untrusted source.

A pickle names each class by its module and name. Where a class that saved models hold
has moved to another module, the folders saved before still load, as pandas keeps old
pickles loading (``pandas.compat.pickle_compat``): :data:`MOVED_CLASSES` maps where a
class was to where it is, and :meth:`Folder.load` reads the pickle with an unpickler
whose ``find_class`` looks a moved class up where it is now. joblib has no argument for
an unpickler, so its own (``joblib.numpy_pickle.NumpyUnpickler``, which reads the
arrays it stores beside the pickle) is swapped for one that maps the classes while
:meth:`Folder.load` reads, one reader at a time. A folder saved after a move names the
class where it is; a class moved again gets its entry changed to its new place, and a
new entry for the place it leaves.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["MOVED_CLASSES", "Folder"]

T = TypeVar("T")

#: Where a class that saved models pickle lives now, by where it lived when they were
#: saved: ``(module, name)`` to ``(module, name)``. The embedding backends became the
#: package :mod:`features.embeddings` (issue 35), one module a backend.
MOVED_CLASSES: dict[tuple[str, str], tuple[str, str]] = {
    ("features.embeddings", "MiniLMEmbedder"): ("features.embeddings.minilm", "MiniLMEmbedder"),
    ("features.onnx_minilm", "OnnxMiniLMEmbedder"): (
        "features.embeddings.minilm_onnx",
        "OnnxMiniLMEmbedder",
    ),
    ("features.light_embedders", "StaticEmbedder"): (
        "features.embeddings.static",
        "StaticEmbedder",
    ),
    ("features.light_embedders", "TfidfEmbedder"): ("features.embeddings.tfidf", "TfidfEmbedder"),
    ("features.embedding_cache", "CachedEmbedder"): ("features.embeddings.cache", "CachedEmbedder"),
}

_READING = threading.Lock()


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
        with _moved_classes():
            model = joblib.load(folder / self.model_file)
        if not isinstance(model, cls):
            raise ValueError(
                f"{folder / self.model_file} holds a {type(model).__name__}, not a {self.what}"
            )
        return model


@contextmanager
def _moved_classes() -> Iterator[None]:
    """Let ``joblib.load`` find each class of :data:`MOVED_CLASSES` where it is now.

    joblib's unpickler is swapped for a subclass whose ``find_class`` maps a moved class,
    and put back at the end; one reader at a time, so that two never swap it at once.
    """
    from joblib import numpy_pickle

    with _READING:
        unpickler = numpy_pickle.NumpyUnpickler

        class MovedClassesUnpickler(unpickler):  # type: ignore[misc,valid-type]
            def find_class(self, module: str, name: str) -> Any:
                return super().find_class(*MOVED_CLASSES.get((module, name), (module, name)))

        numpy_pickle.NumpyUnpickler = MovedClassesUnpickler
        try:
            yield
        finally:
            numpy_pickle.NumpyUnpickler = unpickler
