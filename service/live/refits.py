"""Refits on all battles, published as the next version; periodic in a background thread.

A refit fits the aggregate Bradley-Terry, per-user agreement and shrinkage (and, if the
settings ask, the rating predictor) on all battles with the pipeline's steps
(:func:`service.pipeline.snapshot.refit_snapshot`); flagged voters are found again.
Reads go on meanwhile, on the version held.
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
from service.live.versions import Versions
from service.pipeline import build_predictor
from service.pipeline.snapshot import Snapshot, refit_snapshot
from service.served import Served

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
        """Fit the pipeline's rating predictor afresh on ``battles``, with the topic
        settings and seed the served fit records; saved beside it, its folder returned."""
        if served.predictor is None:
            return None
        predictor, _ = build_predictor(self.fit.config)
        predictor.fit(battles, models=tuple(sorted(served.models)))
        root = self.settings.state_dir or (self.fit.root or Path(".")).parent
        path = Path(root) / f"predictor-{uuid.uuid4().hex[:12]}"
        predictor.save(path)
        return str(path)

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
