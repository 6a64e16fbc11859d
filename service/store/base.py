"""The storage interface of the service: one small ABC, its result type and its error.

Two implementations follow it: :class:`service.store.embedded.EmbeddedStore` (SQLite in a
local file, the default) and :class:`service.store.redis_store.RedisStore` (a Redis server
shared by several replicas). Both keep the same four things:

* the battle log, append-only and deduplicated by ``battle_id``, in ingest order;
* the online Elo state (a ``{model: rating}`` mapping) updated in the same atomic step as
  the battles it has seen, so the two never disagree;
* per-user documents, one per ``(user_id, method)``, and the versioned published snapshot;
* a 32-byte secret shared by every process that uses the same backend;
* each user's credentials: the generation of their read token (:meth:`Store.rotate_token`)
  and the digest of their share id (:meth:`Store.put_share`), never the id itself.

The model catalogue (:meth:`Store.models`, :meth:`Store.register_models`) is the set of
models in the online Elo state: a registered model enters it at the starting rating, in
the same atomic step as an ingest, so both backends share it with every replica.

What both backends share besides this interface: how documents are written
(:mod:`service.store.documents`) and how an ingest is worked out
(:mod:`service.store.ingest_plan`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from ranking.io.text_checks import NOT_TEXT, is_text
from service.store.documents import StoredDocument, user_document_text

__all__ = ["EloUpdate", "Ingested", "Store", "StoreUnavailable"]

EloUpdate = Callable[[dict[str, float], list[dict[str, Any]]], dict[str, float]]
"""``update_elo(current_state, accepted_battles_in_order) -> new_state``; must be pure."""


class StoreUnavailable(RuntimeError):
    """The backend cannot be reached (the service answers 503); the message says which and why."""


@dataclass(frozen=True)
class Ingested:
    """What one :meth:`Store.ingest` call stored.

    Attributes
    ----------
    accepted : tuple of int
        Positions in the input sequence of the battles that were new and are now stored.
    duplicates : int
        How many were dropped because their ``battle_id`` was already stored or repeated
        earlier in the batch.
    new_users : tuple of str
        User ids (not ``None``) whose first stored battle is among the accepted, in
        first-seen order.
    elo : dict
        The online Elo state after this ingest.
    """

    accepted: tuple[int, ...]
    duplicates: int
    new_users: tuple[str, ...]
    elo: dict[str, float]


class Store(ABC):
    """Battles, the online Elo state, per-user documents, snapshots and a shared secret.

    Every method raises :class:`StoreUnavailable` when the backend cannot be reached or
    used, with a message naming the backend and its address. A store is a context manager
    that closes itself on exit.
    """

    @abstractmethod
    def ingest(self, battles: Sequence[Mapping[str, Any]], update_elo: EloUpdate) -> Ingested:
        """Append the new battles and advance the Elo state, atomically.

        Battles whose ``battle_id`` is already stored, or appears earlier in the batch, are
        dropped; the rest are appended in order and ``update_elo(current_state, accepted)``
        is stored as the new Elo state, all or nothing, also against concurrent ingests from
        other threads and processes on the same backend.

        Parameters
        ----------
        battles : sequence of mapping
            JSON-able dicts, each with a non-empty string ``battle_id`` and maybe a
            ``user_id`` (a string or ``None``).
        update_elo : callable
            ``update_elo(state, accepted_battles) -> new_state``. It may be called more than
            once (optimistic retry) and is called with an empty list when nothing is new.

        Returns
        -------
        Ingested

        Raises
        ------
        ValueError
            When a battle lacks a valid ``battle_id`` or is not JSON-able; nothing stored.
        StoreUnavailable
            When the backend cannot be reached; nothing stored.
        Exception
            Whatever ``update_elo`` raises propagates, and nothing is stored.
        """

    @abstractmethod
    def battles(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """All stored battles, or ``user_id``'s, in ingest order, equal to what was ingested."""

    @abstractmethod
    def n_battles(self) -> int:
        """How many battles are stored."""

    @abstractmethod
    def elo(self) -> dict[str, float]:
        """The online Elo state; ``{}`` before any ingest or :meth:`init_elo`."""

    @abstractmethod
    def init_elo(self, ratings: Mapping[str, float]) -> bool:
        """Set the Elo state only if none is stored yet; ``True`` if it was set."""

    def models(self) -> frozenset[str]:
        """The model catalogue: every model with an online Elo rating."""
        return frozenset(self.elo())

    def register_models(self, names: Sequence[str], rating: float = 1000.0) -> tuple[str, ...]:
        """Add models to the catalogue at the starting ``rating``, atomically.

        One :meth:`ingest` step with no battle: a model already known keeps its rating,
        and a concurrent ingest is neither lost nor applied twice.

        Parameters
        ----------
        names : sequence of str
            Non-empty model names.
        rating : float
            The online Elo rating a new model starts from.

        Returns
        -------
        tuple of str
            The names that were new, in the order given (repeats once).

        Raises
        ------
        ValueError
            When a name is not a non-empty string of Unicode text (a lone surrogate),
            naming its position and value; nothing is stored.
        """
        for position, name in enumerate(names):
            if not isinstance(name, str) or not name:
                raise ValueError(f"models[{position}] must be a non-empty string, not {name!r}")
            if not is_text(name):  # no answer could hold it: refused before anything is stored
                raise ValueError(f"models[{position}] {name!r} {NOT_TEXT}")
        added: list[tuple[str, ...]] = [()]

        def update(state: dict[str, float], battles: list[dict[str, Any]]) -> dict[str, float]:
            new = tuple(n for n in dict.fromkeys(names) if n not in state)
            added[0] = new  # the last call is the one stored (optimistic retries)
            return {**state, **dict.fromkeys(new, float(rating))}

        self.ingest([], update)
        return added[0]

    @abstractmethod
    def put_user(self, user_id: str, method: str, document: Mapping[str, Any]) -> None:
        """Store (replace) the document of ``user_id`` for ``method``."""

    @abstractmethod
    def get_user(self, user_id: str, method: str) -> dict[str, Any] | None:
        """The document of ``user_id`` for ``method``, or ``None``."""

    def get_user_raw(self, user_id: str, method: str) -> StoredDocument | None:
        """The document of ``user_id`` for ``method`` as stored (bytes and version), or ``None``."""
        document = self.get_user(user_id, method)
        if document is None:
            return None
        return StoredDocument.read(*user_document_text(document))

    async def get_user_raw_async(self, user_id: str, method: str) -> StoredDocument | None:
        """:meth:`get_user_raw` for a coroutine: never blocks the event loop on the network.

        The default calls :meth:`get_user_raw` (a local read); a networked backend
        overrides it with an asynchronous client.
        """
        return self.get_user_raw(user_id, method)

    @abstractmethod
    def publish(self, snapshot: Mapping[str, Any]) -> int:
        """Store ``snapshot`` as current with version = previous + 1, atomically; return it."""

    @abstractmethod
    def snapshot(self) -> tuple[int, dict[str, Any] | None]:
        """``(version, document)`` read consistently; ``(0, None)`` before any publish."""

    @abstractmethod
    def version(self) -> int:
        """The current snapshot version, ``0`` before any publish; cheap."""

    @abstractmethod
    def secret(self) -> bytes:
        """32 random bytes made on first call and stored; the same for every process."""

    # -- credentials (service/live/tokens.py) ----------------------------------------------------

    @abstractmethod
    def token_generation(self, user_id: str) -> int:
        """The generation of ``user_id``'s read token: 0 until it is first rotated."""

    async def token_generation_async(self, user_id: str) -> int:
        """:meth:`token_generation` for a coroutine: never blocks the event loop on the network.

        The default calls :meth:`token_generation` (a local read); a networked backend
        overrides it with an asynchronous client.
        """
        return self.token_generation(user_id)

    @abstractmethod
    def rotate_token(self, user_id: str) -> int:
        """Bump the generation of ``user_id``'s read token, atomically; return the new one.

        Every process sharing the backend refuses the old token from then on.
        """

    @abstractmethod
    def put_share(self, user_id: str, digest: str) -> None:
        """Make ``digest`` the (only) share of ``user_id``, atomically: the previous one, if
        any, stops naming the user in the same step.

        Parameters
        ----------
        user_id : str
            The user whose published board the share reads.
        digest : str
            The SHA-256 of the share id (:func:`service.live.tokens.share_digest`), in hex.
        """

    @abstractmethod
    def drop_share(self, user_id: str) -> bool:
        """Revoke the share of ``user_id``; ``True`` if there was one."""

    @abstractmethod
    def share_owner(self, digest: str) -> str | None:
        """The user whose current share has ``digest``, or ``None`` (never issued, revoked or
        replaced)."""

    @abstractmethod
    def ping(self) -> None:
        """Return when the backend answers; raise :class:`StoreUnavailable` otherwise."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection(s); later calls raise :class:`StoreUnavailable`."""

    async def aclose(self) -> None:  # noqa: B027 (a hook that most backends need not fill)
        """Release what :meth:`get_user_raw_async` opened on the running event loop.

        Call it on that loop before :meth:`close`; the default has nothing to release.
        """

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
