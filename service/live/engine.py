"""The :class:`Engine`: the live service's parts over one store and fit directory, and
the few calls that take more than one part.

The routes call the parts themselves (``engine.reads.leaderboard(...)``,
``engine.writes.ingest(...)``); the parts share the store, the fit directory and one
:class:`~service.live.versions.Versions`:

* :class:`~service.live.history.BattleHistory`: the fit's battles and the store's.
* :class:`~service.live.versions.Versions`: the version served, published, polled, held.
* :class:`~service.live.reads.Reads`: boards, segments, stored user boards, recommend,
  the catalogue reads.
* :class:`~service.live.writes.Writes`: ingestion, the catalogue, personal refits.
* :class:`~service.live.refits.Refits`: refits on all battles, in the background too.
* :class:`~service.live.credentials.Credentials`: read tokens (rotatable) and share ids.
"""

from __future__ import annotations

from typing import Any

from ranking.types import Method
from service.live.context import LiveContext
from service.live.credentials import Credentials, shared_board
from service.live.errors import NotAvailable
from service.live.history import BattleHistory
from service.live.reads import Reads
from service.live.refits import Refits
from service.live.results import SharedBoard
from service.live.settings import Settings
from service.live.versions import Versions
from service.live.writes import Writes, drop_names_not_text
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.integrity import IntegrityConfig
from service.store.base import Store

__all__ = ["Engine"]


class Engine:
    """The service's model, reads and writes, over a store and a fit directory.

    Parameters
    ----------
    store, fit, settings : Store, FitArtifacts, Settings
        Those of the :class:`~service.live.context.LiveContext` every part is handed: the
        store of battles, Elo state, user documents and versions; the fit served; settings.

    Attributes
    ----------
    history, versions, reads, writes, refits, credentials
        The parts the routes call.
    """

    def __init__(self, store: Store, fit: FitArtifacts, settings: Settings) -> None:
        self.store = store
        self.fit = fit
        self.settings = settings
        drop_names_not_text(store)  # left by an older version: they would fail every ingest
        self.integrity = IntegrityConfig(
            daily_cap=settings.daily_vote_cap,
            established_days=settings.established_days,
            flag_voters=settings.flag_voters,
            level=settings.flag_level,
            min_votes=settings.flag_min_votes,
            brigade_share=settings.flag_brigade_share,
            cohort_share=settings.flag_cohort_share,
        )
        self.history = BattleHistory(fit, store)
        secret = settings.token_secret
        key = secret.get_secret_value().encode() if secret else store.secret()
        context = LiveContext(store, fit, settings, self.integrity, self.history)
        self.versions = Versions(context)
        self.credentials = Credentials(store, key)
        self.reads = Reads(context, self.versions)
        self.writes = Writes(context, self.versions, self.credentials.token)
        self.refits = Refits(context, self.versions)

    # -- what takes more than one part ----------------------------------------------------

    def user_leaderboard(
        self,
        user_id: str,
        method: Method = "bt",
        window: tuple[float | None, float | None] | None = None,
    ) -> dict[str, Any]:
        """One user's leaderboard, refitted when its version is older than the current one;
        with ``window``, the board of their votes in it (refitted, never stored).

        Raises
        ------
        NotAvailable
            When the user has no battle.
        InputError
            When the window cannot be cut or holds none of their votes.
        """
        if window is not None and window != (None, None):
            return self.writes.user_leaderboard(user_id, method, window)
        document = self.reads.stored_user_leaderboard(user_id, method)
        if document is not None:
            return document
        return self.writes.user_leaderboard(user_id, method)

    def shared_leaderboard(self, share_id: str, method: Method = "bt") -> SharedBoard:
        """The published board a share id reads, reduced to its ranking
        (:func:`~service.live.credentials.shared_board`).

        Raises
        ------
        NotAvailable
            When ``share_id`` names no share (never issued, revoked or replaced), or its
            user has no board; the message names neither the id nor the user.
        """
        user_id = self.credentials.share_owner(share_id)
        if user_id is None:
            raise NotAvailable("no board is shared with this id (it may have been revoked)")
        try:
            document = self.user_leaderboard(user_id, method)
        except NotAvailable:
            raise NotAvailable("the board shared with this id has no votes yet") from None
        return shared_board(document)

    def share(self, user_id: str) -> str:
        """A new share id of ``user_id``'s published board, replacing any earlier one.

        Raises
        ------
        NotAvailable
            When the user has no vote: there is no board to share.
        """
        self._known_voter(user_id)
        return self.credentials.share(user_id)

    def revoke_share(self, user_id: str) -> bool:
        """Revoke ``user_id``'s share id; ``True`` if there was one.

        Raises
        ------
        NotAvailable
            When the user has no vote.
        """
        self._known_voter(user_id)
        return self.credentials.revoke_share(user_id)

    def _known_voter(self, user_id: str) -> None:
        if self.history.user_battles(user_id).empty:
            raise NotAvailable(f"no battle of user {user_id!r} is known")

    def close(self) -> None:
        """Stop the background refits and close the store."""
        self.refits.stop()
        self.store.close()
