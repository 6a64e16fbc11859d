"""What every part of the live service works with, given once."""

from __future__ import annotations

from dataclasses import dataclass

from service.live.history import BattleHistory
from service.live.settings import Settings
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.integrity import IntegrityConfig
from service.store.base import Store

__all__ = ["LiveContext", "LivePart"]


@dataclass(frozen=True)
class LiveContext:
    """The store, the fit served, the settings, the integrity screen, the battles.

    Attributes
    ----------
    store : Store
        Where battles, the Elo state, user documents and versions live.
    fit : FitArtifacts
        The fit directory served (``plb fit``).
    settings : Settings
    integrity : IntegrityConfig
        The screen of the public boards.
    history : BattleHistory
        The fit's battles and the store's.
    """

    store: Store
    fit: FitArtifacts
    settings: Settings
    integrity: IntegrityConfig
    history: BattleHistory


class LivePart:
    """A part of the live service: the :class:`LiveContext`'s members as attributes."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context
        self.store = context.store
        self.fit = context.fit
        self.settings = context.settings
        self.integrity = context.integrity
        self.history = context.history
