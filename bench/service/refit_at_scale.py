"""A refit after 1% new votes at bench R's scale (issue 33): the times, step by step.

Bench Y (:mod:`bench.service.refit`) compares a refit with a full fit on 5,000 simulated users,
ratings included. At bench R's scale (100,000 users, 2,009,134 votes, 1,544,948 distinct
prompts) a full fit takes most of an hour here, so this script times the refit alone::

    PYTHONPATH=. python -m bench.service.refit_at_scale [FOLDER] [--full]

It fits all but the latest 1% of the votes (by time) into ``FOLDER/earlier`` once (kept
between runs; 3 to 8 minutes, as fast as the machine is that hour), then refits every vote
from it into ``FOLDER/refit`` as ``plb fit LOG --reuse FOLDER/earlier`` does, and prints
the refit's wall seconds, its steps and its peak memory. With ``--full`` it then fits every
vote afresh into ``FOLDER/full`` and compares each user's predicted ratings by the two
fits, beside the predictor's own cross-validation noise, and fits every vote once more
with another seed into ``FOLDER/other-seed`` to show how far a full fit is from itself, as
bench Y does on 5,000 users (:mod:`bench.service.refit`). The log is bench R's, made by
:func:`bench.service.scale._log` the first time.
"""

from __future__ import annotations

import gc
import json
import resource
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.service.refit import (
    NEW_SHARE,
    OTHER_SEED,
    _fit,
    _predicted,
    gap_text,
    rating_gaps,
)
from bench.service.scale import _log
from ranking.io.ingest import read_battles
from service.pipeline import FitConfig
from service.pipeline.reuse import Earlier

__all__ = ["main"]

USERS, PER_USER = 100_000, 20


def main(folder: str = "bench/out/refit-at-scale", full: bool = False) -> None:
    """Fit the earlier votes into ``folder`` if not there yet, then time the refit; with
    ``full``, compare its predicted ratings with a full fit's."""
    root = Path(folder)
    battles = read_battles(str(_log(USERS, PER_USER))).battles
    battles = battles.sort_values("tstamp", kind="stable").reset_index(drop=True)
    cut = int(round(len(battles) * (1 - NEW_SHARE)))
    config = FitConfig(embedding="tfidf", seed=0)
    if not (root / "earlier" / "manifest.json").exists():
        shutil.rmtree(root / "earlier", ignore_errors=True)
        seconds, _ = _fit(battles.iloc[:cut].reset_index(drop=True), config, root / "earlier")
        print(f"earlier fit of {cut:,} votes: {seconds:.1f} s", flush=True)
    from features.predictor import RatingPredictor  # noqa: F401 (imported before timing)

    started = time.perf_counter()
    earlier = Earlier.load(root / "earlier")
    loaded = time.perf_counter() - started
    shutil.rmtree(root / "refit", ignore_errors=True)
    seconds, refit = _fit(battles, config, root / "refit", earlier)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"refit of {len(battles):,} votes: {seconds + loaded:.1f} s "
        f"(reading the earlier fit {loaded:.1f} s); peak RSS {peak:,.0f} MB"
    )
    print("reuse:", json.dumps(refit.features.reuse))
    print("steps (s):", json.dumps({k: round(v, 1) for k, v in refit.timings.items()}))
    if full:
        ours = _predicted(refit)
        del refit, earlier  # one fit in memory at a time
        _compare(battles, config, root / "full", ours)


def _compare(battles: Any, config: FitConfig, out: Path, ours: np.ndarray) -> None:
    """Fit every vote afresh into ``out``; print how far the refit's predicted ratings
    (``ours``) are from its, beside its own cross-validation noise (bench Y's row); then
    fit them afresh with another seed beside it and print how far the two full fits are
    (bench Y's seed row)."""
    gc.collect()
    shutil.rmtree(out, ignore_errors=True)
    seconds, result = _fit(battles, config, out)
    difference, noise = rating_gaps(ours, result)
    print(
        f"full fit of {len(battles):,} votes: {seconds:.1f} s; predicted ratings of "
        f"{ours.shape[0]:,} users x {ours.shape[1]} models, refit vs full fit: "
        f"{gap_text(difference)}; the full fit's CV noise (its model of all users vs the "
        f"fold model without each): {gap_text(noise)}",
        flush=True,
    )
    full = _predicted(result)
    del result
    gc.collect()
    other = out.with_name("other-seed")
    shutil.rmtree(other, ignore_errors=True)
    seconds, result = _fit(battles, replace(config, seed=OTHER_SEED), other)
    print(
        f"full fit with seed {OTHER_SEED}: {seconds:.1f} s; its predicted ratings vs the "
        f"seed-0 full fit's: {gap_text(np.abs(_predicted(result) - full))}"
    )


if __name__ == "__main__":
    folders = [a for a in sys.argv[1:] if a != "--full"]
    main(folders[0] if folders else "bench/out/refit-at-scale", full="--full" in sys.argv[1:])
