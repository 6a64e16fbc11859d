"""Benchmark Y (issue 33): a refit after 1% new votes beside a full fit of the same votes.

A simulated arena's votes, all but the latest 1% (by time; their prompts are mostly new),
are fitted once: the earlier fit. Then all the votes are fitted twice in the same
process: afresh (the reference: what ``plb fit LOG --out DIR`` does), and from the
earlier fit (``plb fit LOG --out DIR --reuse EARLIER``: only prompts the earlier fit has
not seen embedded and measured, its topic model kept, the rating predictor started from
the earlier one). Each fit is the pipeline's ``fit_all`` and ``write_result``, timed with
its steps.

The refit's ratings are compared with the full fit's: every training user's predicted
ratings (Elo points) by each, their largest and median absolute difference, beside the
predictor's own cross-validation noise, measured on the full fit: how far each user's
prediction by the model of all users is from their prediction by the fold model fitted
without them (``training_predictions_``). A third fit of every vote, afresh with another
seed, shows how far the full fit is from itself: the seed draws the topic model's k-means
starts (and its sample of prompts, at scale), which the cross-validation noise holds
fixed.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.common import Row, make_row
from data.simulate import simulate
from features.topic_sample import MAX_FIT_DOCUMENTS
from service.pipeline import FitConfig, fit_all, manifest_document, write_result
from service.pipeline.reuse import Earlier

__all__ = ["OTHER_SEED", "gap_text", "rating_gaps", "run"]

logger = logging.getLogger("bench")

NEW_SHARE = 0.01
REFIT_GOAL_S = 120.0
#: The seed of the second full fit, beside the first's 0.
OTHER_SEED = 1


def _log(users: int, per_user: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All the votes of a simulated arena, and all but the latest :data:`NEW_SHARE`."""
    battles = simulate(users, per_user, 15, rng=0).battles
    battles = battles.sort_values("tstamp", kind="stable").reset_index(drop=True)
    cut = int(round(len(battles) * (1 - NEW_SHARE)))
    return battles, battles.iloc[:cut].reset_index(drop=True)


def _fit(
    battles: pd.DataFrame, config: FitConfig, out: Path, earlier: Earlier | None = None
) -> tuple[float, Any]:
    """One fit written to ``out``: its wall seconds and its result."""
    started = time.perf_counter()
    result = fit_all(battles, config, earlier=earlier)
    write_result(out, result, manifest_document(result, config, ["bench"]))
    return time.perf_counter() - started, result


def _steps(timings: dict[str, float]) -> str:
    """The query features' parts, in seconds, for the notes."""
    parts = {
        k.split(" / ", 1)[1]: v for k, v in timings.items() if k.startswith("query features /")
    }
    whole = timings.get("query features", 0.0)
    listed = ", ".join(f"{name} {seconds:.1f}" for name, seconds in parts.items())
    return f"query features {whole:.1f} s ({listed})"


def _predicted(result: Any) -> np.ndarray:
    """Every training user's predicted ratings (Elo), by the model of all users."""
    predictor = result.predictor
    return np.asarray(predictor.predict(predictor.training_profiles_).ratings)


def rating_gaps(ours: np.ndarray, full: Any) -> tuple[np.ndarray, np.ndarray]:
    """How far a refit's predicted ratings (``ours``, :func:`_predicted`) are from the
    full fit's (``full``, its result), and the full fit's own cross-validation noise: its
    model of all users against the fold model fitted without each. Both in Elo points,
    ``(n_users, n_models)``."""
    reference = _predicted(full)
    return np.abs(ours - reference), np.abs(reference - full.predictor.training_predictions_)


def gap_text(gaps: np.ndarray) -> str:
    """``gaps`` (:func:`rating_gaps`) in words: their largest and median."""
    return f"max {gaps.max():.1f}, median {np.median(gaps):.2f} Elo"


def run(quick: bool = False) -> list[Row]:
    """A refit after 1% new votes beside a full fit: time, and the ratings' agreement."""
    # quick: 3,000 votes, 30 of them new; the refit still embeds new prompts, keeps the
    # topics and starts the predictor warm (the full fit's predictor is most of the cost)
    users, per_user = (150, 20) if quick else (5_000, 20)
    battles, earlier_votes = _log(users, per_user)
    seen = set(earlier_votes["prompt"])
    new_prompts = len(set(battles["prompt"]) - seen)
    label = (
        f"simulated, {users:,} users, {len(battles):,} votes, "
        f"{battles['prompt'].nunique():,} distinct prompts; the latest "
        f"{len(battles) - len(earlier_votes):,} votes new, {new_prompts:,} new prompts"
    )
    config = FitConfig(embedding="tfidf", seed=0)
    with tempfile.TemporaryDirectory(prefix="plb-bench-refit-") as folder:
        root = Path(folder)
        first_s, _ = _fit(earlier_votes, config, root / "earlier")
        logger.info("refit bench: the earlier fit took %.1f s", first_s)
        full_s, full = _fit(battles, config, root / "full")
        logger.info("refit bench: the full fit took %.1f s", full_s)
        started = time.perf_counter()
        earlier = Earlier.load(root / "earlier")
        load_s = time.perf_counter() - started
        refit_s, refit = _fit(battles, config, root / "refit", earlier)
        refit_s += load_s
        _, other = _fit(battles, replace(config, seed=OTHER_SEED), root / "other seed")
    reuse = refit.features.reuse
    ours = _predicted(refit)
    difference, noise = rating_gaps(ours, full)
    seeds = np.abs(_predicted(other) - _predicted(full))
    load = os.getloadavg()[0]
    return [
        make_row(
            "plb fit --reuse after 1% new votes (TF-IDF) vs a full fit",
            label,
            ours=refit_s,
            reference=full_s,
            goal=f"≤ {REFIT_GOAL_S:.0f} s at bench R's scale",
            notes=(
                f"refit: embedded {reuse['embeddings']['computed']:,} of "
                f"{sum(reuse['embeddings'].values()):,} prompts, style rows of "
                f"{reuse['style']['computed']:,}, topics {reuse['topics']}, predictor "
                f"{reuse['predictor']}, reading the earlier fit {load_s:.1f} s; "
                f"{_steps(refit.timings)}. Full fit: {_steps(full.timings)}. "
                f"Load average {load:.1f}"
            ),
        ),
        make_row(
            "predicted ratings: refit vs full fit, beside the predictor's CV noise",
            label,
            ours=gap_text(difference),
            reference=gap_text(noise),
            goal="refit within the full fit's CV noise",
            met=None if quick else bool(np.median(difference) <= np.median(noise)),
            notes=(
                f"{ours.shape[0]:,} users × {ours.shape[1]} models, each user's predicted "
                "ratings by the refit and by the full fit (ours), and by the full fit's "
                "model of all users and its fold model fitted without them (reference)"
            ),
        ),
        make_row(
            f"predicted ratings: full fit with seed {OTHER_SEED} vs seed 0",
            label,
            ours=gap_text(seeds),
            reference=gap_text(noise),
            goal="—",
            notes=(
                "how far the full fit is from itself: every vote fitted afresh twice, the "
                "seed drawing the topic model's k-means starts (and its sample, above "
                f"{MAX_FIT_DOCUMENTS:,} distinct prompts) (ours), beside the predictor's CV "
                "noise (reference), which holds the topic model fixed; "
                f"the refit above is {gap_text(difference)} from the seed-0 fit"
            ),
        ),
    ]
