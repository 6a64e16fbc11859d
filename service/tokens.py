"""Per-user read tokens and key checks, all compared in constant time.

A user's token is the HMAC-SHA256 of their user id under a server secret, so it needs
no storage: any replica that knows the secret can check it, and it never changes.
"""

from __future__ import annotations

import base64
import hmac

__all__ = ["keys_match", "user_token", "verify_user_token"]


def user_token(secret: bytes, user_id: str) -> str:
    """The read token of ``user_id``: 43 URL-safe characters.

    Parameters
    ----------
    secret : bytes
        The server secret (at least 16 bytes).
    user_id : str
        The user's pseudonymous id.
    """
    digest = hmac.digest(secret, user_id.encode("utf-8"), "sha256")  # OpenSSL's one-shot
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verify_user_token(secret: bytes, user_id: str, token: str) -> bool:
    """Whether ``token`` is the read token of ``user_id`` (constant time)."""
    return keys_match(user_token(secret, user_id), token)


def keys_match(expected: str | None, given: str | None) -> bool:
    """Whether a presented key equals the configured one, in constant time.

    ``False`` when either is missing, so an unset key never matches anything.
    """
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))
