"""Every battle the live service knows: the fit directory's, then those stored since."""

from __future__ import annotations

import pandas as pd

from ranking.io.battle_frame import empty_battle_frame, to_battle_frame
from service.live.votes import battle_frame
from service.pipeline.artifacts import FitArtifacts
from service.store.base import Store

__all__ = ["BattleHistory"]


class BattleHistory:
    """The fit's battles, read once, and the store's, read on each call.

    Parameters
    ----------
    fit : FitArtifacts
        The fit directory served; its battles when it kept them, else none.
    store : Store
        Where the battles ingested since are stored.
    """

    def __init__(self, fit: FitArtifacts, store: Store) -> None:
        self.store = store
        fit_battles = fit.read_battles()
        self.fit_battles = fit_battles if fit_battles is not None else empty_battle_frame()
        ids = self.fit_battles["battle_id"].dropna()
        #: The battle ids of the fit: an ingested battle with one is a duplicate.
        self.fit_ids = frozenset(ids.astype(str))
        groups = self.fit_battles.groupby("user_id", observed=True, sort=False).indices
        self._fit_rows = {str(user): rows for user, rows in groups.items()}

    def in_fit(self, user_id: str) -> bool:
        """Whether ``user_id`` voted in the fit's battles."""
        return user_id in self._fit_rows

    def all_battles(self) -> pd.DataFrame:
        """Every battle: the fit's, then those ingested since."""
        stored = battle_frame(self.store.battles())
        if stored.empty:
            return self.fit_battles
        return to_battle_frame(pd.concat([self.fit_battles, stored], ignore_index=True))

    def user_battles(self, user_id: str) -> pd.DataFrame:
        """One user's battles: the fit's, then those ingested since."""
        rows = self._fit_rows.get(user_id)
        parts = [] if rows is None else [self.fit_battles.iloc[rows]]
        stored = self.store.battles(user_id)
        if stored:
            parts.append(battle_frame(stored))
        if not parts:
            return empty_battle_frame()
        return parts[0] if len(parts) == 1 else to_battle_frame(pd.concat(parts, ignore_index=True))
