"""Who may read a user's boards: read tokens (rotatable) and share ids (revocable).

A read token reads everything of one user (their boards, next battle, recommendations
from their votes) and is the HMAC of the user id at the generation the store keeps
(:mod:`service.live.tokens`): rotating it bumps the generation, so the old token is refused at
once by every replica. A share id reads one thing, the user's published board, reduced by
:func:`shared_board` to its ranked rows; it is random, kept only as its SHA-256, replaced
by the next one the user makes and revocable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.live.results import SharedBoard, SharedRow
from service.live.tokens import new_share_id, share_digest, user_token, verify_user_token
from service.store.base import Store

__all__ = ["MAX_SHARE_ID_CHARS", "SHARED_ROW_KEYS", "Credentials", "shared_board"]

#: The longest string looked up as a share id (they are 43 characters): a longer one is
#: refused unread, unhashed.
MAX_SHARE_ID_CHARS = 128

#: What a shared board's rows keep of a personal board's: the ranking, not the votes
#: behind it (no battle, win, loss or tie counts).
SHARED_ROW_KEYS = ("rank", "model", "rating", "lower", "upper")


class Credentials:
    """Users' read tokens and share ids over a store.

    Parameters
    ----------
    store : Store
        Keeps each user's token generation and share digest.
    secret : bytes
        The key of the read tokens.
    """

    def __init__(self, store: Store, secret: bytes) -> None:
        self.store = store
        self._secret = secret

    # -- read tokens ----------------------------------------------------------------------

    def token(self, user_id: str) -> str:
        """The current read token of ``user_id``."""
        return user_token(self._secret, user_id, self.store.token_generation(user_id))

    def token_matches(self, user_id: str, token: str | None) -> bool:
        """Whether ``token`` is the current read token of ``user_id`` (constant time)."""
        if not token:
            return False
        generation = self.store.token_generation(user_id)
        return verify_user_token(self._secret, user_id, token, generation)

    async def token_matches_async(self, user_id: str, token: str | None) -> bool:
        """:meth:`token_matches`, its store read never blocking the event loop."""
        if not token:
            return False
        generation = await self.store.token_generation_async(user_id)
        return verify_user_token(self._secret, user_id, token, generation)

    def rotate(self, user_id: str) -> str:
        """A new read token for ``user_id``; the old one is refused from now on."""
        return user_token(self._secret, user_id, self.store.rotate_token(user_id))

    # -- share ids ------------------------------------------------------------------------

    def share(self, user_id: str) -> str:
        """A new share id of ``user_id``'s published board; the previous one stops working."""
        share_id = new_share_id()
        self.store.put_share(user_id, share_digest(share_id))
        return share_id

    def revoke_share(self, user_id: str) -> bool:
        """Revoke the share id of ``user_id``; ``True`` if there was one."""
        return self.store.drop_share(user_id)

    def share_owner(self, share_id: str) -> str | None:
        """The user whose board ``share_id`` reads, or None (unknown, revoked, replaced)."""
        if not 0 < len(share_id) <= MAX_SHARE_ID_CHARS:
            return None
        return self.store.share_owner(share_digest(share_id))


def shared_board(document: Mapping[str, Any]) -> SharedBoard:
    """What a share id shows of a personal board: method, version and ranked rows only.

    Parameters
    ----------
    document : mapping
        A personal leaderboard document (``GET /v1/users/{user_id}/leaderboard``).

    Returns
    -------
    SharedBoard
        ``method``, ``version`` and ``models`` (each row's :data:`SHARED_ROW_KEYS`): no
        user id, vote counts, agreement or explanation.
    """
    rows = [SharedRow(**{key: row[key] for key in SHARED_ROW_KEYS}) for row in document["models"]]
    return SharedBoard(document["method"], document["version"], rows)
