"""Which votes count into the aggregate: the daily cap and the flagged voters, on frames.

The maths is :mod:`ranking.integrity`; this module applies it to battle frames, as the
service's refits, segments and live Elo board need it:

* :func:`screen_battles` runs both defences on every battle (at a refit): it caps each
  user's votes per UTC day, tests the users against everyone else, and returns which
  votes count with the evidence, as a JSON-able document for the snapshot.
* :func:`counted_mask` applies the same rules with a given set of flagged users (from
  the published version): for segments and for the votes that arrive between refits.

A flagged user's votes stay stored and in that user's own leaderboard; they only leave
the boards everyone sees.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ranking.integrity import daily_cap_mask, detect_anomalous_voters
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.types import BoolArray

__all__ = ["IntegrityConfig", "counted_mask", "screen_battles"]


@dataclass(frozen=True)
class IntegrityConfig:
    """How the aggregate is defended.

    Attributes
    ----------
    daily_cap : int
        Most votes of one user counted per UTC day (by ``tstamp``); 0 counts all.
    flag_voters : bool
        Whether anomalous voters (random clickers, brigaders) are tested for and left out.
    level : float
        Benjamini-Hochberg level of each test.
    min_votes : int
        Fewest votes of a user for the random-clicker test.
    brigade_share : float
        Least win share of one model in a user's votes for the brigade test to flag.
    """

    daily_cap: int = 50
    flag_voters: bool = True
    level: float = 0.01
    min_votes: int = 20
    brigade_share: float = 0.9


def _finite(value: Any) -> Any:
    """``value``, or None for a float that JSON cannot hold (NaN, infinity)."""
    if isinstance(value, float | np.floating) and not np.isfinite(value):
        return None
    return value


def _cap_in_frame_order(battles: pd.DataFrame, cap: int) -> BoolArray:
    """``(n,)`` true, in the frame's row order, for the votes within the daily cap."""
    keep = np.ones(len(battles), dtype=bool)
    if cap <= 0 or "user_id" not in battles.columns or battles["user_id"].isna().all():
        return keep
    if "tstamp" not in battles.columns:
        return keep
    order = vote_order(battles)
    codes, _ = user_codes(battles)
    stamps = battles["tstamp"].to_numpy(dtype=np.float64, na_value=np.nan)[order]
    keep[order] = daily_cap_mask(codes, stamps, cap)
    return keep


def counted_mask(
    battles: pd.DataFrame, flagged_users: Collection[str], daily_cap: int
) -> BoolArray:
    """Which votes count into the aggregate, given the users flagged.

    Parameters
    ----------
    battles : pandas.DataFrame
        Canonical battle frame; for the cap to be right it must hold every vote of each
        of its users on the days it covers.
    flagged_users : collection of str
        Users whose votes leave the aggregate.
    daily_cap : int
        Most votes of one user counted per UTC day; 0 counts all.

    Returns
    -------
    ndarray of bool
        ``(n,)`` in the frame's row order.
    """
    keep = _cap_in_frame_order(battles, daily_cap)
    if flagged_users and "user_id" in battles.columns:
        keep &= ~battles["user_id"].astype("string").isin(list(flagged_users)).to_numpy(bool)
    return keep


def screen_battles(
    battles: pd.DataFrame, config: IntegrityConfig
) -> tuple[BoolArray, dict[str, Any]]:
    """Cap, test and flag: which votes count into the aggregate, and why the others not.

    Parameters
    ----------
    battles : pandas.DataFrame
        Every battle, as a canonical battle frame.
    config : IntegrityConfig

    Returns
    -------
    counted : ndarray of bool
        ``(n,)`` in the frame's row order, true for the votes the aggregate counts.
    document : dict
        The evidence: the settings, ``n_votes``, ``n_capped`` (votes over the daily cap),
        ``n_flagged_votes`` (votes of flagged users within the cap), ``n_counted``,
        ``honest_slope`` (``[centre, spread]`` of the honest users' agreement slopes, or
        null) and ``flagged``: one entry a flagged user (``user_id``, ``test``,
        ``statistic``, ``expected``, ``p_value``, ``n_votes``, ``model``).
    """
    capped = _cap_in_frame_order(battles, config.daily_cap)
    counted = capped.copy()
    flagged: list[dict[str, Any]] = []
    honest: list[float] | None = None
    has_users = "user_id" in battles.columns and battles["user_id"].notna().any()
    if config.flag_voters and has_users and capped.any():
        within = battles[capped]
        codes, names = user_codes(within)
        report = detect_anomalous_voters(
            pairwise_from_battles(within),
            codes,
            names,
            level=config.level,
            min_votes=config.min_votes,
            brigade_share=config.brigade_share,
        )
        flagged = [
            {k: _finite(v) for k, v in asdict(f).items() if k != "user"} for f in report.flagged
        ]
        honest = [_finite(float(x)) for x in report.honest_slope]
        counted = counted_mask(battles, {f["user_id"] for f in flagged}, config.daily_cap)
    n_capped = int((~capped).sum())
    return counted, {
        **asdict(config),
        "n_votes": len(battles),
        "n_capped": n_capped,
        "n_flagged_votes": int(len(battles) - n_capped - counted.sum()),
        "n_counted": int(counted.sum()),
        "honest_slope": honest,
        "flagged": flagged,
    }
