"""Benchmark F (issue 5): ``plb fit`` on the 400-user simulator, and ``plb recommend`` warm.

The fit runs as the command a user types, in a fresh process (interpreter start and
imports included). The recommendation is timed in one warm process: the fitted predictor
loaded once, then 20 queries turned into a ranking (embedding, topics, style, profile,
contextual prediction), and the same with 10 of the user's votes blended in.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.common import Row, make_row
from data.simulate import simulate, write_simulation
from features.predictor import RatingPredictor
from ranking.frames import pairwise_from_battles
from service.pipeline.artifacts import load_fit

__all__ = ["run"]

FIT_GOAL_S = 180.0
RECOMMEND_GOAL_S = 0.2


def _plb(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "service.cli", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def _each(batches: list[list[str]], task: Callable[[list[str]], object]) -> list[float]:
    """Wall time of ``task`` on each batch."""
    times = []
    for batch in batches:
        start = time.perf_counter()
        task(batch)
        times.append(time.perf_counter() - start)
    return times


def _latency_row(what: str, times: list[float], quick: bool) -> Row:
    median = float(np.median(times))
    return make_row(
        what,
        "10 batches of 20 simulated prompts",
        ours=median,
        goal=f"≤ {RECOMMEND_GOAL_S * 1000:.0f} ms",
        met=None if quick else median <= RECOMMEND_GOAL_S,
        notes=f"median; slowest {max(times) * 1000:.0f} ms",
    )


def run(quick: bool = False) -> list[Row]:
    """Run benchmark F; ``quick`` uses 40 users and evaluates no goal."""
    n_users, per_user = (40, 30) if quick else (400, 60)
    with tempfile.TemporaryDirectory(prefix="plb-bench-") as tmp:
        sim = simulate(n_users, per_user, 15, rng=0)
        paths = write_simulation(sim, Path(tmp) / "sim")
        fit_dir = Path(tmp) / "fit"
        fit_s = _plb("fit", str(paths["battles"]), "--out", str(fit_dir))
        folder = load_fit(fit_dir).predictor_dir
        assert folder is not None
        predictor = RatingPredictor.load(folder)
        prompts = sim.battles["prompt"].drop_duplicates().tolist()
        batches = [prompts[i * 20 : (i + 1) * 20] for i in range(11)]
        predictor.predict_queries(batches[0])  # warm: weights loaded, caches filled
        votes = sim.battles.iloc[:10]
        data = pairwise_from_battles(votes, predictor.models_)
        users = np.zeros(len(votes), dtype=np.intp)
        times = _each(batches[1:], predictor.predict_queries)
        blend_times = _each(
            batches[1:], lambda b: predictor.blend(predictor.predict_queries(b), data, users)
        )
    label = f"simulator: {n_users} users, {len(sim.battles):,} votes, 15 models"
    return [
        make_row(
            "plb fit (aggregate, per-user, topics, style, predictor), fresh process",
            label,
            ours=fit_s,
            goal=f"< {FIT_GOAL_S:.0f} s",
            met=None if quick else fit_s < FIT_GOAL_S,
        ),
        _latency_row("recommend: 20 queries to a ranking, warm process", times, quick),
        _latency_row(
            "recommend: 20 queries and 10 votes, blended, warm process", blend_times, quick
        ),
    ]
