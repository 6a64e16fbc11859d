"""One ingest worked out the same way by both backends, before either writes anything.

:func:`prepare_batch` checks and serialises a batch once, outside any transaction;
:func:`plan_ingest` then decides, from what the store holds, which battles are new, whose
first vote they carry and the Elo state after them (an :class:`IngestPlan`). A backend
reads what the plan asks for inside its transaction and writes what the plan says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.store.base import EloUpdate, Ingested
from service.store.documents import dumps, loads

__all__ = ["IngestPlan", "PreparedBattle", "checked_elo", "plan_ingest", "prepare_batch"]


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
