"""The storage interface of the service: one small ABC, its result type and its error.

Two implementations follow it: :class:`service.store.embedded.EmbeddedStore` (SQLite in a
local file, the default) and :class:`service.store.redis_store.RedisStore` (a Redis server
shared by several replicas). Both keep the same four things:

* the battle log, append-only and deduplicated by ``battle_id``, in ingest order;
* the online Elo state (a ``{model: rating}`` mapping) updated in the same atomic step as
  the battles it has seen, so the two never disagree;
* per-user documents, one per ``(user_id, method)``, and the versioned published snapshot;
* a 32-byte secret shared by every process that uses the same backend.

The model catalogue (:meth:`Store.models`, :meth:`Store.register_models`) is the set of
models in the online Elo state: a registered model enters it at the starting rating, in
the same atomic step as an ingest, so both backends share it with every replica.

Documents are stored as compact JSON text (:func:`dumps`); a stored battle reads back as a
dict equal to the one ingested. A user's document is stored as the bytes the service answers
(:func:`encode_document`: UTF-8, not ``\\u`` escapes), with the version it is stamped with
kept beside it, so that :meth:`Store.get_user_raw` hands the service those bytes and that
version without parsing the JSON.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

__all__ = [
    "EloUpdate",
    "IngestPlan",
    "Ingested",
    "Store",
    "StoreUnavailable",
    "StoredDocument",
    "dumps",
    "encode_document",
    "loads",
    "plan_ingest",
    "prepare_batch",
]

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


@dataclass(frozen=True)
class PreparedBattle:
    """One battle of a batch, checked and serialised once before a transaction starts."""

    position: int
    battle_id: str
    user_id: str | None
    doc: str
    battle: dict[str, Any]


def prepare_batch(battles: Sequence[Mapping[str, Any]]) -> list[PreparedBattle]:
    """Check every battle's ``battle_id`` and ``user_id`` and serialise it.

    Raises
    ------
    ValueError
        Naming the position and the bad value when ``battle_id`` is not a non-empty string,
        ``user_id`` is neither a string nor ``None``, or the battle is not JSON-able.
    """
    prepared = []
    for position, battle in enumerate(battles):
        if not isinstance(battle, Mapping):
            raise ValueError(f"battle {position} must be a mapping, not {type(battle).__name__}")
        battle_id = battle.get("battle_id")
        if not isinstance(battle_id, str) or not battle_id:
            raise ValueError(
                f"battle {position}: 'battle_id' must be a non-empty string, not {battle_id!r}"
            )
        user_id = battle.get("user_id")
        if user_id is not None and not isinstance(user_id, str):
            raise ValueError(
                f"battle {position}: 'user_id' must be a string or None, not {user_id!r}"
            )
        as_dict = dict(battle)
        try:
            doc = dumps(as_dict)
        except ValueError as exc:
            raise ValueError(f"battle {position} ({battle_id!r}): {exc}") from exc
        prepared.append(PreparedBattle(position, battle_id, user_id, doc, as_dict))
    return prepared


def select_new(
    batch: Sequence[PreparedBattle], stored_ids: Iterable[str]
) -> tuple[list[PreparedBattle], int]:
    """The battles whose id is neither stored nor seen earlier in ``batch``; the others' count."""
    seen = set(stored_ids)
    accepted = []
    for item in batch:
        if item.battle_id not in seen:
            seen.add(item.battle_id)
            accepted.append(item)
    return accepted, len(batch) - len(accepted)


def first_seen_users(accepted: Sequence[PreparedBattle], known_users: Iterable[str]) -> list[str]:
    """User ids among ``accepted`` that are not in ``known_users``, in first-seen order."""
    seen = set(known_users)
    new = []
    for item in accepted:
        if item.user_id is not None and item.user_id not in seen:
            seen.add(item.user_id)
            new.append(item.user_id)
    return new


def checked_elo(state: Any) -> dict[str, float]:
    """Check what ``update_elo`` returned: a mapping of model name to a finite number."""
    if not isinstance(state, Mapping):
        raise TypeError(f"update_elo must return a mapping, not {type(state).__name__}")
    return {str(model): float(rating) for model, rating in state.items()}


@dataclass(frozen=True)
class IngestPlan:
    """What one ingest writes, worked out the same way by both backends (:func:`plan_ingest`).

    Attributes
    ----------
    accepted : list of PreparedBattle
        The new battles, in input order.
    duplicates : int
        How many were dropped as already stored or repeated earlier in the batch.
    new_users : list of str
        User ids whose first stored battle is among ``accepted``, in first-seen order.
    elo, elo_doc : dict, str
        The online Elo state after the ingest, and its JSON text (:func:`dumps`).
    raw_elo : str, bytes or None
        The stored Elo document before the ingest (``None`` when there was none).
    """

    accepted: list[PreparedBattle]
    duplicates: int
    new_users: list[str]
    elo: dict[str, float]
    elo_doc: str
    raw_elo: str | bytes | None

    @property
    def elo_changed(self) -> bool:
        """Whether the Elo document to store differs, byte for byte, from the stored one."""
        doc = self.elo_doc if isinstance(self.raw_elo, str) else self.elo_doc.encode()
        return self.raw_elo != doc

    def result(self) -> Ingested:
        """The :class:`Ingested` that :meth:`Store.ingest` returns once this is written."""
        return Ingested(
            accepted=tuple(b.position for b in self.accepted),
            duplicates=self.duplicates,
            new_users=tuple(self.new_users),
            elo=self.elo,
        )


def plan_ingest(
    batch: Sequence[PreparedBattle],
    stored_ids: Iterable[str],
    known_users: Callable[[list[str]], Iterable[str]],
    read_elo: Callable[[], str | bytes | None],
    update_elo: EloUpdate,
) -> IngestPlan:
    """Work out one ingest from what the store holds, read in this order.

    Parameters
    ----------
    batch : sequence of PreparedBattle
        The battles of :func:`prepare_batch`.
    stored_ids : iterable of str
        Those of the batch's ``battle_id`` values already stored.
    known_users : callable
        Given the distinct user ids of the new battles (first-seen order, possibly
        empty), returns those already stored.
    read_elo : callable
        Returns the stored Elo document, or ``None``.
    update_elo : EloUpdate
        The pure Elo update, given the stored state and the new battles in order.
    """
    accepted, duplicates = select_new(batch, stored_ids)
    users = [u for u in dict.fromkeys(b.user_id for b in accepted) if u is not None]
    new_users = first_seen_users(accepted, known_users(users))
    raw = read_elo()
    state = {} if raw is None else loads(raw)
    elo = checked_elo(update_elo(state, [dict(b.battle) for b in accepted]))
    return IngestPlan(accepted, duplicates, new_users, elo, dumps(elo), raw)


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
            When a name is not a non-empty string, naming its position and value.
        """
        for position, name in enumerate(names):
            if not isinstance(name, str) or not name:
                raise ValueError(f"models[{position}] must be a non-empty string, not {name!r}")
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
