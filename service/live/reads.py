"""What readers ask of the served version: boards, segments, user boards and the rest.

Public boards rank only the models with ``min_model_votes`` votes; the others are listed
as ``provisional`` (:func:`ranking.leaderboard.split_provisional`). They count only the
votes the integrity screen keeps (:mod:`service.pipeline.integrity`). Between refits the live Elo
board applies the served version's flags, the standing and the daily cap to each new vote.

A segment (``?where=``) is fitted on the published version's votes only, never on the
votes stored since: read before and after one voter's votes, it would show exactly them.
A segment too small to answer is refused without its size. A time window
(``?since=&until=``) is a filter of the same kind, on the same votes and with the same
minimums: it is widened to whole days, merged until each holds them
(:func:`service.pipeline.history.window_battles`), and the rating history
(``GET /v1/leaderboard/history``) has periods of the same kind.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pandas as pd

from ranking.io.battle_frame import to_battle_frame
from ranking.io.frames import check_segment_size, filter_battles, pairwise_from_battles
from ranking.io.validation import battles_from_records
from ranking.leaderboard import fit_leaderboard
from ranking.types import Method
from ranking.windows import format_instant
from service.live.context import LiveContext, LivePart
from service.live.errors import InputError, NotAvailable
from service.live.recommendation import recommendation, unknown_models
from service.live.results import (
    SCREEN_FIELDS,
    About,
    AboutIntegrity,
    Correlations,
    IntegrityReport,
    ModelCount,
    ModelCounts,
    Topics,
)
from service.live.served import LiveWindow, Served, live_elo_leaderboard, live_window
from service.live.versions import Versions
from service.pipeline.history import NotDated, battle_history, window_battles
from service.pipeline.integrity import counted_mask

__all__ = ["Reads"]

#: Segment leaderboards (``?where=``) kept per process.
SEGMENTS_KEPT = 32

#: A time window: its ``since`` and ``until`` in unix seconds, either None (open).
TimeWindow = tuple[float | None, float | None]


class Reads(LivePart):
    """The read side of the engine, each answer of the current version.

    Parameters
    ----------
    context : LiveContext
    versions : Versions
    """

    def __init__(self, context: LiveContext, versions: Versions) -> None:
        super().__init__(context)
        self.versions = versions
        self._segments: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._live: tuple[tuple[int, int], LiveWindow] | None = None

    def leaderboard(
        self,
        method: Method = "bt",
        where: list[tuple[str, str]] | None = None,
        window: TimeWindow | None = None,
    ) -> dict[str, Any]:
        """The aggregate leaderboard document (docs/SPEC.md section 3), plus ``version``.

        Bradley-Terry is the published version's; Elo is live, moved by every vote
        counted since (in the ratings, in each model's counts and in ``n_battles``: the
        votes the version's screen counts, as its next refit will), within the intervals
        of the version, each ranked row with its odds
        (:func:`service.live.served.live_elo_leaderboard`). ``where`` fits a segment
        leaderboard on all battles whose label columns match, ``window`` one of the votes
        of a time window (``window`` in the answer: widened to whole periods that hold
        the segment minimums). Only models with ``min_model_votes`` votes are ranked;
        the others are listed under ``provisional``. Rows are listed by rank, then
        rating.
        """
        served = self.versions.served()
        if window is not None and window == (None, None):
            window = None
        if where or window:
            document = self._segment(served, method, where or [], window)
        elif method == "elo":
            document = live_elo_leaderboard(served, self._live_window(served))
        else:
            document = dict((served.boards or {})[method])
        return {**document, "version": served.version}

    def _live_window(self, served: Served) -> LiveWindow:
        """The votes counted since ``served`` was published; kept until the next vote or
        version."""
        n_stored = self.store.n_battles()
        key = (served.version, n_stored)
        if self._live is not None and self._live[0] == key:
            return self._live[1]
        first = served.snapshot.counted_battles
        since = self.store.battles()[first:] if n_stored > first else []
        window = live_window(served, self._counted(served, since), self.store.models())
        self._live = (key, window)
        return window

    def _counted(self, served: Served, battles: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The stored ``battles`` the aggregate counts: not a flagged voter's, of a voter
        established when it arrived, and within the daily cap among each voter's
        battles."""
        config = self.integrity
        if not battles or (
            config.daily_cap <= 0 and not config.established_days and not served.flagged
        ):
            return battles
        voters = dict.fromkeys(b["user_id"] for b in battles if b.get("user_id") is not None)
        if not voters:
            return battles
        histories = [self.history.user_battles(str(u)) for u in voters]
        history = to_battle_frame(pd.concat(histories, ignore_index=True))
        kept = counted_mask(history, served.flagged, config)
        ids = frozenset(history["battle_id"][kept].dropna().astype(str))
        return [b for b in battles if b.get("user_id") is None or b["battle_id"] in ids]

    def _published(self, served: Served) -> pd.DataFrame:
        """The votes the served version counts: the fit's and those of its refits."""
        published = self.history.all_battles()
        published = published.iloc[
            : len(self.history.fit_battles) + served.snapshot.counted_battles
        ]
        return published[counted_mask(published, served.flagged, self.integrity)]

    def _segment(
        self,
        served: Served,
        method: Method,
        where: list[tuple[str, str]],
        window: TimeWindow | None = None,
    ) -> dict[str, Any]:
        """A segment leaderboard, fitted on the votes the served version counts; the last
        few are kept."""
        key: tuple[Any, ...] = (served.version, method, tuple(where), window)
        if key in self._segments:
            return self._segments[key]
        named = " and ".join(f"{c}={v}" for c, v in where)
        counted = self._published(served)
        try:
            battles = filter_battles(counted, where)
        except ValueError as error:  # not a label column, or a value of the wrong type
            raise InputError(f"where: {error}") from None
        if battles.empty:
            raise InputError(f"no battle matches {named}")
        min_votes, min_users = self.settings.segment_min_votes, self.settings.segment_min_users
        span = None
        if window is not None:
            battles, span = self._window(battles, window, named, min_votes, min_users)
            # windows widened to the same periods are one answer, fitted once
            snapped = (served.version, method, tuple(where), tuple(span.values()))
            if snapped in self._segments:
                self._segments[key] = self._segments[snapped]
                return self._segments[key]
            key = snapped
        try:
            check_segment_size(battles, min_votes=min_votes, min_users=min_users)
        except ValueError:
            # how many votes a refused segment holds is itself what the minimums protect
            raise InputError(
                f"where {named}: the published version holds too few votes there to answer; "
                f"a segment answers only with at least {min_votes:,} votes from "
                f"{min_users:,} distinct users, so that none narrows to a few people"
            ) from None
        data = pairwise_from_battles(battles)
        board = fit_leaderboard(data, method=method, min_votes=self.settings.min_model_votes)
        document = board.to_dict()
        if span is not None:
            document["window"] = span
        self._segments[key] = document
        while len(self._segments) > SEGMENTS_KEPT:
            self._segments.popitem(last=False)
        return document

    def _window(
        self,
        battles: pd.DataFrame,
        window: TimeWindow,
        named: str,
        min_votes: int,
        min_users: int,
    ) -> tuple[pd.DataFrame, dict[str, str]]:
        """The votes of ``window`` among ``battles``, widened to whole periods holding the
        minimums, and the window answered (ISO ``since`` and ``until``)."""
        option = "since" if window[0] is not None else "until"
        try:
            found = window_battles(battles, *window, min_votes=min_votes, min_users=min_users)
        except NotDated:
            raise InputError(
                f"{option}: the votes of this service carry no tstamp, so they cannot be windowed"
            ) from None
        if found is None:
            raise InputError(
                f"{option}: no vote{' where ' + named if named else ''} falls in that "
                f"window, in periods of at "
                f"least {min_votes:,} votes from {min_users:,} distinct users (a window is "
                "widened to whole such periods, so that none narrows to a few people)"
            )
        kept, span = found
        return kept, {"since": format_instant(span.since), "until": format_instant(span.until)}

    def rating_history(self, unit: str | int = "auto") -> dict[str, Any]:
        """The rating history of the votes the served version counts
        (``GET /v1/leaderboard/history``), plus ``version``; the last few are kept.

        Periods of ``unit`` are merged until each holds the segment minimums; each
        period's board ranks the models with ``min_model_votes`` votes in it.

        Raises
        ------
        InputError
            When the votes carry no ``tstamp``, or too few to make one period.
        """
        served = self.versions.served()
        key = (served.version, "history", unit)
        if key not in self._segments:
            min_votes, min_users = (
                self.settings.segment_min_votes,
                self.settings.segment_min_users,
            )
            try:
                history = battle_history(
                    self._published(served),
                    unit=unit,
                    min_votes=min_votes,
                    min_users=min_users,
                    model_min_votes=self.settings.min_model_votes,
                )
            except NotDated:
                raise InputError(
                    "the votes of this service carry no tstamp: there is no history"
                ) from None
            if history is None:
                raise InputError(
                    "the published version holds too few votes for a history: a period "
                    f"answers only with at least {min_votes:,} votes from {min_users:,} "
                    "distinct users"
                )
            self._segments[key] = history.to_dict()
            while len(self._segments) > SEGMENTS_KEPT:
                self._segments.popitem(last=False)
        return {**self._segments[key], "version": served.version}

    def stored_user_leaderboard(self, user_id: str, method: Method = "bt") -> dict[str, Any] | None:
        """One user's leaderboard when the store has it for the current version, else None.

        One store read: the fast path of a user's board.
        """
        document = self.store.get_user(user_id, method)
        if document is not None and document.get("version") == self.versions.served().version:
            return document
        return None

    async def stored_user_leaderboard_body(
        self, user_id: str, method: Method = "bt"
    ) -> bytes | None:
        """The JSON bytes of :meth:`stored_user_leaderboard`, as stored, or None.

        One store read that never blocks the event loop on the network, and no JSON
        parsed or encoded: the store keeps the document's version beside its bytes.
        """
        stored = await self.store.get_user_raw_async(user_id, method)
        if stored is not None and stored.version == self.versions.served().version:
            return stored.body
        return None

    def recommend(self, queries: list[str], votes: list[Any] | None = None) -> dict[str, Any]:
        """The recommend document for a user known by ``queries`` (and maybe ``votes``).

        Raises
        ------
        NotAvailable
            When the fit has no rating predictor.
        InputError
            When a vote is malformed or names a model the predictor does not know.
        """
        served = self.versions.served()
        if served.predictor is None:
            raise NotAvailable(
                "this service's fit has no rating predictor (it was fitted without prompts)"
            )
        frame = None
        if votes:
            frame, errors, _ = battles_from_records(votes, strict_text=True)
            if errors:
                raise InputError(f"votes[{errors[0].index}]: {errors[0].message}")
            unknown = unknown_models(frame, served.predictor.models_)
            if unknown:
                raise InputError(f"votes name model {unknown[0]!r}, which this fit does not know")
        board = served.public_rows("bt")
        document = recommendation(served.predictor, queries, frame, board=board)
        return {**document, "version": served.version}

    def correlations(self, method: Method = "bt", shrinkage: str = "cv") -> Correlations:
        """The distribution of per-user Spearman against the aggregate.

        Raises
        ------
        NotAvailable
            When the version has no per-user agreement of ``method`` and ``shrinkage``.
        """
        served = self.versions.served()
        key = f"{method}/{shrinkage}"
        document = served.snapshot.correlations.get(key)
        if document is None:
            raise NotAvailable(f"no per-user agreement for {key} (the log has no user ids)")
        return Correlations(
            method=document["method"],
            shrinkage=document["shrinkage"],
            min_battles=document["min_battles"],
            summary=document["summary"],
            histogram=document["histogram"],
            version=served.version,
        )

    def models(self) -> ModelCounts:
        """The models of the current version with their battle counts, most first."""
        served = self.versions.served()
        rows = served.snapshot.board("bt").models
        models = [ModelCount(model=m.model, battles=m.battles) for m in rows]
        return ModelCounts(sorted(models, key=lambda m: -m.battles), served.version)

    def about(self) -> About:
        """What the service serves: whether its fit is of a simulated arena, when it was
        made, how many votes and voters its public boards leave out, and whether it has a
        style-controlled board."""
        served = self.versions.served()
        evidence = served.snapshot.integrity
        integrity = None
        if evidence is not None:
            integrity = AboutIntegrity(
                daily_cap=evidence["daily_cap"],
                established_days=evidence.get("established_days", 0),
                votes_counted=evidence["n_counted"],
                votes_newcomer=evidence.get("n_newcomer", 0),
                votes_over_cap=evidence["n_capped"],
                voters_flagged=len(evidence["flagged"]),
            )
        return About(
            simulated=self.fit.simulated,
            fit_created=self.fit.manifest.get("created"),
            integrity=integrity,
            style_control=self.fit.style_control is not None,
            version=served.version,
        )

    def integrity_report(self) -> IntegrityReport:
        """Who the current version's public boards leave out, and why
        (``GET /v1/admin/integrity``): the version's integrity evidence
        (:func:`service.pipeline.integrity.screen_battles`; None fields when the version
        was published without a screen), the live Elo of every stored vote with the
        defence off (``elo_every_vote``) and ``version``."""
        served = self.versions.served()
        evidence = served.snapshot.integrity
        screen = evidence or {}
        return IntegrityReport(
            screened=evidence is not None,
            flagged=screen.get("flagged", []),
            elo_every_vote=self.store.elo(),
            version=served.version,
            **{name: screen.get(name) for name in SCREEN_FIELDS},
        )

    def topics(self) -> Topics:
        """The topics of the users' queries.

        Raises
        ------
        NotAvailable
            When the fit has no topic model.
        """
        served = self.versions.served()
        topics = served.snapshot.topics
        if topics is None:
            raise NotAvailable("this service's fit has no topic model (no prompts in the log)")
        return Topics(topics, served.version)
