"""The version a process serves: published from the fit, polled from the store, held.

Reads see one :class:`~service.live.served.Served` version (a published snapshot, its
aggregate ratings and its predictor), swapped whole when a newer one is published, by
this process or (polled every ``version_poll_s``) by another replica sharing the store.
While the store cannot be reached the version held is served.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ranking.io.frames import pairwise_from_battles
from ranking.io.repeat_codes import cap_battles
from ranking.leaderboard import fit_leaderboard
from ranking.types import Leaderboard
from service.live.context import LiveContext, LivePart
from service.live.served import Served, served_version
from service.pipeline.integrity import screen_battles
from service.pipeline.snapshot import Snapshot, snapshot_from_fit
from service.pipeline.steps import fit_aggregates
from service.store.base import StoreUnavailable

__all__ = ["Versions"]

log = logging.getLogger(__name__)


class Versions(LivePart):
    """The :class:`Served` version of this process, and the fit published as one.

    Made, it publishes the fit directory unless the store already serves it, and loads
    the store's version (with its predictor, warmed up).

    Parameters
    ----------
    context : LiveContext
        Its integrity screen is applied to the fit's battles when the fit is published.
    """

    def __init__(self, context: LiveContext) -> None:
        super().__init__(context)
        self._predictors: dict[str, Any] = {}
        self._lock = threading.Lock()  # guards swapping self._served
        self._checked = 0.0
        self._publish_fit_if_new()
        self._served = self.load(*self.store.snapshot())
        if self._served.predictor is not None:  # load the embedding model now, not on a request
            self._served.predictor.predict_queries(["warm-up"])

    def _publish_fit_if_new(self) -> None:
        """Publish the fit as a version unless the store already serves this fit."""
        _, document = self.store.snapshot()
        if document is None or document.get("fit_created") != self.fit.manifest.get("created"):
            snapshot = Snapshot.from_dict(snapshot_from_fit(self.fit))
            snapshot = self._counted_only(snapshot)
            version = self.store.publish(snapshot.to_dict())
            log.info("published the fit directory as version %d", version)
        self.store.init_elo(Leaderboard.from_dict(self.fit.leaderboards["elo"]).ratings)

    def _counted_only(self, snapshot: Snapshot) -> Snapshot:
        """The fit's snapshot counting only the votes the integrity screen keeps, with the
        public Bradley-Terry board and the evidence, as a refit would publish it.

        When the screen leaves votes out (over the daily cap, before a voter is
        established, a flagged voter's), both aggregate boards are fitted again on the
        votes kept (:func:`service.pipeline.steps.fit_aggregates`, the fit's seed), so
        that every board of the version counts one number of votes: Elo included, which
        was served as fitted (every vote) until the first refit (issue 32). The public
        board is fitted again without the votes of models below ``min_model_votes`` when
        there are such models (else it is None: the aggregate board is split as it is).
        The fit's battles unknown, the snapshot is as fitted.
        """
        battles = self.history.fit_battles
        if battles.empty:
            return snapshot
        least = self.settings.min_model_votes
        counted, evidence = screen_battles(battles, self.integrity)
        config = self.fit.config  # the fit's cap on a prompt's votes, as it fitted them
        kept, _ = cap_battles(battles[counted], config.repeat_cap, rng=config.seed)
        data = pairwise_from_battles(kept, models=list(snapshot.models))
        leaderboards = dict(snapshot.leaderboards)
        if not counted.all():
            boards = fit_aggregates(data, rng=self.fit.config.seed)
            leaderboards = {method: board.to_dict() for method, board in boards.items()}
        public = None
        if not counted.all() or any(m.battles < least for m in snapshot.board("bt").models):
            public = {"bt": fit_leaderboard(data, method="bt", min_votes=least).to_dict()}
        return replace(snapshot, leaderboards=leaderboards, public=public, integrity=evidence)

    def _predictor(self, path: str | None) -> Any | None:
        if path is None:
            return None
        if path not in self._predictors:
            from features.embeddings.cache import cache_embeddings
            from features.predictor import RatingPredictor  # heavy: only when served

            predictor = RatingPredictor.load(path)
            cache_embeddings(predictor, self.settings.embedding_cache)
            self._predictors[path] = predictor
        return self._predictors[path]

    def load(self, version: int, document: Snapshot | Mapping[str, Any] | None) -> Served:
        """The :class:`Served` of a published version, with its predictor (loaded once).

        Raises
        ------
        RuntimeError
            When there is no published version (``document`` is None).
        """
        if document is None:
            raise RuntimeError("the store holds no published model version")
        snapshot = document if isinstance(document, Snapshot) else Snapshot.from_dict(document)
        predictor = self._predictor(snapshot.predictor_dir)
        return served_version(version, snapshot, predictor, self.settings.min_model_votes)

    def install(self, served: Served) -> None:
        """Serve ``served`` from now on, unless a newer version is served already."""
        with self._lock:
            if served.version > self._served.version:
                self._served = served

    def served(self) -> Served:
        """The current version; checks the store for a newer one every ``version_poll_s``.

        While the store cannot be reached the version held is served: reads of the
        published version keep answering, and the check is made again after the next
        ``version_poll_s``.
        """
        now = time.monotonic()
        if now - self._checked >= self.settings.version_poll_s:
            self._checked = now
            try:
                newer = self.store.version() != self._served.version
                served = self.load(*self.store.snapshot()) if newer else None
            except StoreUnavailable as error:
                held = self._served.version
                log.warning("serving version %d: the store is unavailable (%s)", held, error)
                served = None
            if served is not None:
                self.install(served)
        return self._served
