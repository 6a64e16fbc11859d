"""Per-user read tokens, share ids and key checks, all compared in constant time.

A user's read token is the HMAC-SHA256 of their user id and its *generation* under a
server secret: it needs no storage beyond the generation, a small integer (0 until the
user first rotates it, when the token is that of the user id alone, as before
generations existed). Rotating it (:meth:`~service.store.base.Store.rotate_token`) bumps
the generation, which invalidates the old token at once on every replica.

A share id is a random token (:func:`new_share_id`) that reads one user's published
board and nothing else; the store keeps only its SHA-256 (:func:`share_digest`), so a
copy of the store reveals no share id.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = [
    "SHARE_ID_BYTES",
    "keys_match",
    "new_share_id",
    "share_digest",
    "user_token",
    "verify_user_token",
]

#: Random bytes of a share id: 32, i.e. 43 URL-safe characters, 256 bits to guess.
SHARE_ID_BYTES = 32


def user_token(secret: bytes, user_id: str, generation: int = 0) -> str:
    """The read token of ``user_id`` at ``generation``: 43 URL-safe characters.

    Parameters
    ----------
    secret : bytes
        The server secret (at least 16 bytes).
    user_id : str
        The user's pseudonymous id.
    generation : int, default 0
        How many times the user's token was rotated; 0 gives the token of the user id
        alone (that of versions before rotation existed).
    """
    message = user_id.encode("utf-8", "surrogatepass")
    if generation:  # no UTF-8 holds a 0xff byte: no id of generation 0 reads as this
        message = b"\xff" + str(generation).encode("ascii") + b"\x00" + message
    digest = hmac.digest(secret, message, "sha256")  # OpenSSL's one-shot
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verify_user_token(secret: bytes, user_id: str, token: str, generation: int = 0) -> bool:
    """Whether ``token`` is the read token of ``user_id`` at ``generation`` (constant time)."""
    return keys_match(user_token(secret, user_id, generation), token)


def new_share_id() -> str:
    """A fresh share id: :data:`SHARE_ID_BYTES` random bytes, URL-safe (``secrets``)."""
    return secrets.token_urlsafe(SHARE_ID_BYTES)


def share_digest(share_id: str) -> str:
    """The SHA-256 of ``share_id`` in hex: what the store keeps instead of the id."""
    return hashlib.sha256(share_id.encode("utf-8", "surrogatepass")).hexdigest()


def keys_match(expected: str | None, given: str | None) -> bool:
    """Whether a presented key equals the configured one, in constant time.

    ``False`` when either is missing, so an unset key never matches anything.
    """
    if not expected or not given:
        return False
    return hmac.compare_digest(
        expected.encode("utf-8", "surrogatepass"), given.encode("utf-8", "surrogatepass")
    )
