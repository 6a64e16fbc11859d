"""Which votes count into the aggregate: the daily cap and the flagged voters, on frames.

The maths is :mod:`ranking.integrity`; this module applies it to battle frames, as the
service's refits, segments and live Elo board need it:

* :func:`screen_battles` runs the defences on every battle (at a refit): it holds back
  the votes of voters not yet established (:mod:`ranking.integrity.standing`), caps each user's
  votes per UTC day, tests the users against everyone else, and returns which votes
  count with the evidence, as a JSON-able document for the snapshot.
* :func:`counted_mask` applies the same rules with a given set of flagged users (from
  the published version): for segments and for the votes that arrive between refits.

Time is the server's: a vote ingested over REST carries ``received`` (:data:`RECEIVED`),
the unix time the service stored it, and the cap and the standing count that, never the
client's ``tstamp`` (which a client may leave out or back-date). Votes of a log read
from a file (the fit's own) have no receive time; the cap counts their ``tstamp``.

A flagged user's votes stay stored and in that user's own leaderboard; they only leave
the boards everyone sees, as do the held-back votes of a voter not yet established.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ranking.integrity.daily_cap import daily_cap_mask
from ranking.integrity.standing import established_mask
from ranking.integrity.voters import detect_anomalous_voters
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.types import BoolArray, FloatArray, IntArray

__all__ = ["RECEIVED", "IntegrityConfig", "counted_mask", "screen_battles"]

#: The column of the unix time at which the service received a vote (server time).
RECEIVED = "received"
_DAY_S = 86_400.0


@dataclass(frozen=True)
class IntegrityConfig:
    """How the aggregate is defended.

    Attributes
    ----------
    daily_cap : int
        Most votes of one user counted per UTC day (by ``received``, else ``tstamp``);
        0 counts all.
    established_days : int
        Distinct earlier UTC days (server time) a voter must have voted on for a received
        vote to count (:func:`ranking.integrity.standing.established_mask`); 0 counts all.
    flag_voters : bool
        Whether anomalous voters (random clickers, brigaders) are tested for and left out.
    level : float
        Benjamini-Hochberg level of each test.
    min_votes : int
        Fewest votes of a user for the random-clicker test.
    brigade_share : float
        Least win share of one model in a user's votes for the brigade test to flag.
    cohort_share : float
        Least win share of one model in the votes of the voters who joined together (the
        same day, week or month), and in a member's, for the cohort test to flag.
    """

    daily_cap: int = 50
    established_days: int = 0
    flag_voters: bool = True
    level: float = 0.01
    min_votes: int = 20
    brigade_share: float = 0.9
    cohort_share: float = 0.5


def _finite(value: Any) -> Any:
    """``value``, or None for a float that JSON cannot hold (NaN, infinity)."""
    if isinstance(value, float | np.floating) and not np.isfinite(value):
        return None
    return value


def _column(battles: pd.DataFrame, name: str) -> FloatArray:
    """Column ``name`` as float unix times, NaN where absent or not a number."""
    if name not in battles.columns:
        return np.full(len(battles), np.nan)
    values = pd.to_numeric(battles[name], errors="coerce")
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def _vote_times(battles: pd.DataFrame) -> FloatArray:
    """``(n,)`` each vote's time for the cap: received by the server, else its ``tstamp``."""
    received = _column(battles, RECEIVED)
    return np.where(np.isfinite(received), received, _column(battles, "tstamp"))


def _cap_in_frame_order(battles: pd.DataFrame, cap: int) -> BoolArray:
    """``(n,)`` true, in the frame's row order, for the votes within the daily cap."""
    keep = np.ones(len(battles), dtype=bool)
    if cap <= 0 or "user_id" not in battles.columns or battles["user_id"].isna().all():
        return keep
    order = vote_order(battles)
    codes, _ = user_codes(battles)
    keep[order] = daily_cap_mask(codes, _vote_times(battles)[order], cap)
    return keep


def _established_in_frame_order(battles: pd.DataFrame, min_days: int) -> BoolArray:
    """``(n,)`` true, in the frame's row order, for the votes of established voters."""
    if min_days <= 0 or RECEIVED not in battles.columns:
        return np.ones(len(battles), dtype=bool)
    if "user_id" in battles.columns:
        users = battles["user_id"].astype("string")
        codes = pd.factorize(users, use_na_sentinel=True)[0]
    else:
        codes = np.full(len(battles), -1)
    return established_mask(codes, _column(battles, RECEIVED), min_days)


def counted_mask(
    battles: pd.DataFrame, flagged_users: Collection[str], config: IntegrityConfig
) -> BoolArray:
    """Which votes count into the aggregate, given the users flagged.

    Parameters
    ----------
    battles : pandas.DataFrame
        Canonical battle frame; for the cap and the standing to be right it must hold
        every vote of each of its users up to the days it covers.
    flagged_users : collection of str
        Users whose votes leave the aggregate.
    config : IntegrityConfig
        The daily cap and the days a voter needs to be established.

    Returns
    -------
    ndarray of bool
        ``(n,)`` in the frame's row order.
    """
    established = _established_in_frame_order(battles, config.established_days)
    keep = established & _cap_in_frame_order(battles, config.daily_cap)
    if flagged_users and "user_id" in battles.columns:
        keep &= ~battles["user_id"].astype("string").isin(list(flagged_users)).to_numpy(bool)
    return keep


def join_days(battles: pd.DataFrame, users: Sequence[str]) -> IntArray:
    """``(len(users),)`` the UTC day (server time) of each user's first received vote;
    -1 for a user with a vote of a trusted log (no receive time) or none received."""
    days = np.full(len(users), -1, dtype=np.intp)
    if RECEIVED not in battles.columns or "user_id" not in battles.columns:
        return days
    codes = pd.Index(list(users)).get_indexer(pd.Index(battles["user_id"].astype("string")))
    received = _column(battles, RECEIVED)
    known, trusted = codes >= 0, ~np.isfinite(received)
    first = np.full(len(users), np.inf)
    np.minimum.at(first, codes[known & ~trusted], received[known & ~trusted])
    vouched = np.zeros(len(users), dtype=bool)
    vouched[codes[known & trusted]] = True
    joined = np.isfinite(first) & ~vouched
    days[joined] = np.floor(first[joined] / _DAY_S).astype(np.intp)
    return days


#: The cohorts voters are tested in, by the days since the epoch they joined on: the same
#: day, week, month (made-up voters spread over more days hide among more newcomers).
COHORT_DAYS = (1, 7, 30)


def join_cohorts(days: IntArray) -> IntArray:
    """``(n_users, 3)`` each user's cohort of :data:`COHORT_DAYS`: the day, the week and
    the month (30 days) they joined; -1 where ``days`` is -1."""
    return np.stack([np.where(days >= 0, days // span, -1) for span in COHORT_DAYS], axis=1)


def screen_battles(
    battles: pd.DataFrame, config: IntegrityConfig
) -> tuple[BoolArray, dict[str, Any]]:
    """Hold back, cap, test and flag: which votes count into the aggregate, and why the
    others not.

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
        The evidence: the settings, ``n_votes``, ``n_newcomer`` (votes held back because
        their voter was not yet established), ``n_capped`` (established votes over the
        daily cap), ``n_flagged_votes`` (the other votes of flagged users), ``n_counted``,
        ``honest_slope`` (``[centre, spread]`` of the honest users' agreement slopes, or
        null) and ``flagged``: one entry a flagged user (``user_id``, ``test``,
        ``statistic``, ``expected``, ``p_value``, ``n_votes``, ``model``).
    """
    established = _established_in_frame_order(battles, config.established_days)
    capped = _cap_in_frame_order(battles, config.daily_cap)
    counted = established & capped
    flagged: list[dict[str, Any]] = []
    honest: list[float] | None = None
    has_users = "user_id" in battles.columns and battles["user_id"].notna().any()
    if config.flag_voters and has_users and capped.any():
        # a newcomer's votes are tested too: what a voter does before counting is evidence
        within = battles[capped]
        codes, names = user_codes(within)
        report = detect_anomalous_voters(
            pairwise_from_battles(within),
            codes,
            names,
            level=config.level,
            min_votes=config.min_votes,
            brigade_share=config.brigade_share,
            cohorts=join_cohorts(join_days(within, names)),
            cohort_share=config.cohort_share,
        )
        flagged = [
            {k: _finite(v) for k, v in asdict(f).items() if k != "user"} for f in report.flagged
        ]
        honest = [_finite(float(x)) for x in report.honest_slope]
        counted = counted_mask(battles, {f["user_id"] for f in flagged}, config)
    n_newcomer = int((~established).sum())
    n_capped = int((established & ~capped).sum())
    return counted, {
        **asdict(config),
        "n_votes": len(battles),
        "n_newcomer": n_newcomer,
        "n_capped": n_capped,
        "n_flagged_votes": int(len(battles) - n_newcomer - n_capped - counted.sum()),
        "n_counted": int(counted.sum()),
        "honest_slope": honest,
        "flagged": flagged,
    }
