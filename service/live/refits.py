"""Refits on all battles, published as the next version; periodic in a background thread.

A refit fits the aggregate Bradley-Terry, per-user agreement and shrinkage (and, if the
settings ask, the rating predictor) on all battles with the pipeline's steps
(:func:`service.pipeline.snapshot.refit_snapshot`); flagged voters are found again.
The rating predictor is refitted as ``plb fit --reuse`` refits it
(:func:`service.pipeline.steps.fit_query_features` from an earlier fit): from the
predictor served, with its topic model, embedding only the prompts neither the fit
directory's ``texts/`` nor this process's earlier refits hold. Reads go on meanwhile, on
the version held.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pandas as pd

from service.live.context import LiveContext, LivePart
from service.live.served import Served
from service.live.versions import Versions
from service.pipeline.reuse import Earlier
from service.pipeline.snapshot import Snapshot, refit_snapshot
from service.pipeline.steps import fit_query_features
from service.pipeline.text_store import Shelf

__all__ = ["Refits"]

log = logging.getLogger(__name__)


class Refits(LivePart):
    """The refits of one process: one at a time, on demand or every ``refit_interval_s``.

    Parameters
    ----------
    context : LiveContext
        Its fit is the fit served: its seed and its predictor's configuration are the
        refits'.
    versions : Versions
        Where a refit's version is installed.
    """

    def __init__(self, context: LiveContext, versions: Versions) -> None:
        super().__init__(context)
        self.versions = versions
        self._refit_lock = threading.Lock()  # one refit at a time in this process
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shelves: tuple[Shelf, ...] = ()  # the prompts' rows, as the last refit left them

    def refit(self) -> int:
        """Refit on all battles and publish the result; returns the new version.

        Only one refit runs at a time in a process; reads go on meanwhile.
        """
        with self._refit_lock:
            served = self.versions.served()
            n_stored = self.store.n_battles()
            battles = self.history.all_battles()
            started = time.monotonic()
            document = refit_snapshot(
                battles,
                served.snapshot.to_dict(),
                rng=self.fit.config.seed,
                min_votes=self.settings.min_model_votes,
                integrity=self.integrity,
                repeat_cap=self.fit.config.repeat_cap,
            )
            snapshot = replace(Snapshot.from_dict(document), store_battles=n_stored)
            if self.settings.refit_predictor and "prompt" in battles.columns:
                snapshot = replace(snapshot, predictor_dir=self.refit_predictor(battles, served))
            version = self.store.publish(snapshot.to_dict())
            self.versions.install(self.versions.load(version, snapshot))
            log.info(
                "refit on %d battles published version %d in %.1f s",
                len(battles),
                version,
                time.monotonic() - started,
            )
            return version

    def refit_predictor(self, battles: pd.DataFrame, served: Served) -> str | None:
        """Refit the pipeline's rating predictor on ``battles`` from the one served, with
        the topic settings and seed the served fit records; saved beside the fit, its
        folder returned (None when nothing is served to refit or the votes have no
        prompts)."""
        if served.predictor is None:
            return None
        features = fit_query_features(
            battles,
            tuple(sorted(served.models)),
            self.fit.config,
            earlier=self._earlier(served),
        )
        if features is None:
            return None
        self._shelves = features.shelves
        root = self.settings.state_dir or (self.fit.root or Path(".")).parent
        path = Path(root) / f"predictor-{uuid.uuid4().hex[:12]}"
        features.predictor.save(path)
        return str(path)

    def _earlier(self, served: Served) -> Earlier:
        """What a refit starts from: the predictor served, read again from its folder
        (the served one stays the readers'), with its topic model; and the prompts' rows
        as this process's last refit left them, or as the fit directory keeps them."""
        folder = served.snapshot.predictor_dir
        predictor = None
        if folder is not None:
            from features.predictor import RatingPredictor  # heavy: only when refitting

            predictor = RatingPredictor.load(folder)
        topic_model = None if predictor is None else predictor.profiler_.topic_model_
        return Earlier(self.fit.root, topic_model, predictor, self._shelves)

    def start_background(self) -> None:
        """Refit every ``refit_interval_s`` when votes arrived since the last refit."""
        if self.settings.refit_interval_s <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._refit_loop, name="plb-refit", daemon=True)
        self._thread.start()

    def _refit_loop(self) -> None:
        while not self._stop.wait(self.settings.refit_interval_s):
            try:
                stored = self.versions.served().snapshot.counted_battles
                if self.store.n_battles() != stored:
                    self.refit()
            except Exception:  # a failed refit keeps the current version; try again later
                log.exception("background refit failed")

    def stop(self) -> None:
        """Stop the background refits (waits a few seconds for one under way)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
