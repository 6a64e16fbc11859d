"""How the stores write documents: compact JSON, and a user's document as the bytes served.

Documents are stored as compact JSON text (:func:`dumps`); a stored battle reads back as a
dict equal to the one ingested. A user's document is stored as the bytes the service answers
(:func:`encode_document`: UTF-8, not ``\\u`` escapes), with the version it is stamped with
kept beside it, so that :meth:`~service.store.base.Store.get_user_raw` hands the service
those bytes and that version without parsing the JSON (:class:`StoredDocument`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["StoredDocument", "dumps", "encode_document", "loads", "user_document_text"]


def dumps(document: Any) -> str:
    """Serialise ``document`` as compact JSON; ``NaN`` and infinities are refused.

    Raises
    ------
    ValueError
        When ``document`` holds a non-finite float or something JSON cannot encode.
    """
    try:
        return json.dumps(document, allow_nan=False, separators=(",", ":"))
    except TypeError as exc:
        raise ValueError(f"document is not JSON-serialisable: {exc}") from exc


def loads(text: str | bytes) -> Any:
    """Parse JSON text written by :func:`dumps`."""
    return json.loads(text)


def encode_document(document: Any) -> bytes:
    """``document`` as the service answers it: the bytes Starlette's ``JSONResponse`` renders.

    Compact JSON, non-ASCII characters as UTF-8 rather than ``\\u`` escapes, ``NaN`` and
    infinities refused.

    Raises
    ------
    ValueError
        When ``document`` holds a non-finite float, something JSON cannot encode, or text
        UTF-8 cannot encode (a lone surrogate).
    """
    try:
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except TypeError as exc:
        raise ValueError(f"document is not JSON-serialisable: {exc}") from exc
    return text.encode("utf-8")


def user_document_text(document: Mapping[str, Any]) -> tuple[str, int | None]:
    """The stored text of a user's document, and the version it is stamped with.

    The text is :func:`encode_document`'s, or :func:`dumps`'s where UTF-8 cannot encode it
    (then :class:`StoredDocument` re-encodes it on every read, as the service always did).
    """
    document = dict(document)
    try:
        text = encode_document(document).decode("utf-8")
    except UnicodeEncodeError:
        text = dumps(document)
    version = document.get("version")
    return text, version if type(version) is int else None


@dataclass(frozen=True)
class StoredDocument:
    """A user's document as stored, ready to answer.

    Attributes
    ----------
    body : bytes
        Its JSON, byte for byte what ``JSONResponse(document)`` renders.
    version : int or None
        The ``version`` the document is stamped with; ``None`` when it has none.
    """

    body: bytes
    version: int | None

    @classmethod
    def read(cls, body: str | bytes, version: object = None) -> StoredDocument:
        """From what a backend read: the stored text, and the version kept beside it.

        A document stored before bytes were kept (``\\u`` escapes, maybe no version
        beside it) is parsed and re-encoded, so the bytes are always the answer's.

        Raises
        ------
        ValueError
            When the stored text cannot be encoded as the service answers it.
        """
        raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        if version is None or b"\\u" in raw:
            document = loads(raw)
            if b"\\u" in raw:
                raw = encode_document(document)
            if version is None and isinstance(document, dict):
                version = document.get("version")
        if isinstance(version, bytes | str) and version.isdigit():
            version = int(version)
        return cls(raw, version if type(version) is int else None)
