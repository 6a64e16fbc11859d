"""The :class:`Engine`: everything the routes call, over the live service's parts.

Each method hands the call to one part; the parts share the store, the fit directory
and one :class:`~service.live.versions.Versions`:

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

import pandas as pd

from ranking.types import Method
from service.live.context import LiveContext
from service.live.credentials import Credentials, shared_board
from service.live.errors import NotAvailable
from service.live.history import BattleHistory
from service.live.reads import Reads
from service.live.refits import Refits
from service.live.served import Served
from service.live.settings import Settings
from service.live.versions import Versions
from service.live.writes import Writes, drop_names_not_text
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.integrity import IntegrityConfig
from service.store import Store

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
    versions, reads, writes, refits, credentials : the parts each call is handed to.
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

    # -- versions and battles --------------------------------------------------------------

    def served(self) -> Served:
        """The current version (:meth:`Versions.served <service.live.versions.Versions.served>`)."""
        return self.versions.served()

    def all_battles(self) -> pd.DataFrame:
        """Every battle: the fit's, then those ingested since."""
        return self.history.all_battles()

    def user_battles(self, user_id: str) -> pd.DataFrame:
        """One user's battles: the fit's, then those ingested since."""
        return self.history.user_battles(user_id)

    # -- reads -----------------------------------------------------------------------------

    def leaderboard(
        self,
        method: Method = "bt",
        where: list[tuple[str, str]] | None = None,
        window: tuple[float | None, float | None] | None = None,
    ) -> dict[str, Any]:
        """The aggregate (or ``where`` segment, or time ``window``) leaderboard, plus
        ``version`` (:meth:`Reads.leaderboard <service.live.reads.Reads.leaderboard>`)."""
        return self.reads.leaderboard(method, where, window)

    def rating_history(self, unit: str | int = "auto") -> dict[str, Any]:
        """The rating history of the served version's votes, plus ``version``
        (:meth:`Reads.rating_history <service.live.reads.Reads.rating_history>`)."""
        return self.reads.rating_history(unit)

    def stored_user_leaderboard(self, user_id: str, method: Method = "bt") -> dict[str, Any] | None:
        """One user's leaderboard when the store has it for the current version, else None."""
        return self.reads.stored_user_leaderboard(user_id, method)

    async def stored_user_leaderboard_body(
        self, user_id: str, method: Method = "bt"
    ) -> bytes | None:
        """The JSON bytes of the user's stored leaderboard of the current version, else None
        (:meth:`Reads.stored_user_leaderboard_body
        <service.live.reads.Reads.stored_user_leaderboard_body>`)."""
        return await self.reads.stored_user_leaderboard_body(user_id, method)

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

    def recommend(self, queries: list[str], votes: list[Any] | None = None) -> dict[str, Any]:
        """The recommend document for a user known by ``queries`` (and maybe ``votes``)."""
        return self.reads.recommend(queries, votes)

    def correlations(self, method: Method = "bt", shrinkage: str = "cv") -> dict[str, Any]:
        """The distribution of per-user Spearman against the aggregate."""
        return self.reads.correlations(method, shrinkage)

    def models(self) -> dict[str, Any]:
        """The models of the current version with their battle counts."""
        return self.reads.models()

    def about(self) -> dict[str, Any]:
        """What the service serves (:meth:`Reads.about <service.live.reads.Reads.about>`)."""
        return self.reads.about()

    def integrity_report(self) -> dict[str, Any]:
        """Who the current version's public boards leave out, and why."""
        return self.reads.integrity_report()

    def topics(self) -> dict[str, Any]:
        """The topics of the users' queries."""
        return self.reads.topics()

    def shared_leaderboard(self, share_id: str, method: Method = "bt") -> dict[str, Any]:
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

    # -- credentials -------------------------------------------------------------------------

    def token(self, user_id: str) -> str:
        """The current read token of ``user_id``."""
        return self.credentials.token(user_id)

    def token_matches(self, user_id: str, token: str | None) -> bool:
        """Whether ``token`` is the current read token of ``user_id`` (constant time)."""
        return self.credentials.token_matches(user_id, token)

    async def token_matches_async(self, user_id: str, token: str | None) -> bool:
        """:meth:`token_matches` without blocking the event loop on the store."""
        return await self.credentials.token_matches_async(user_id, token)

    def rotate_token(self, user_id: str) -> str:
        """A new read token of ``user_id``; the old one is refused from now on."""
        return self.credentials.rotate(user_id)

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

    # -- writes ----------------------------------------------------------------------------

    def ingest(self, records: list[Any]) -> dict[str, Any]:
        """Validate, store and apply a batch of battles
        (:meth:`Writes.ingest <service.live.writes.Writes.ingest>`)."""
        return self.writes.ingest(records)

    def catalogue(self) -> frozenset[str]:
        """The models this deployment knows: the served version's and those registered."""
        return self.writes.catalogue()

    def register_models(self, names: list[str]) -> dict[str, Any]:
        """Add models to the catalogue (``POST /v1/admin/models``)."""
        return self.writes.register_models(names)

    # -- refits ----------------------------------------------------------------------------

    def refit(self) -> int:
        """Refit on all battles and publish the result; returns the new version."""
        return self.refits.refit()

    def start_background(self) -> None:
        """Refit every ``refit_interval_s`` when votes arrived since the last refit."""
        self.refits.start_background()

    def close(self) -> None:
        """Stop the background refits and close the store."""
        self.refits.stop()
        self.store.close()
