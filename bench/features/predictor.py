"""Benchmark F (issues 5, 16): ``plb fit`` on the 400-user simulator, and recommend warm.

The fit runs as the command a user types, in a fresh process (interpreter start and
imports included). The recommendation is timed in one warm process: the fitted predictor
loaded once, then 20 queries turned into a ranking (embedding, topics, style, profile,
contextual prediction), and the same with 10 of the user's votes blended in. Both are
measured on the template simulator and, where ``../shared/data/real-prompts/`` is
present, on users who write the 500 real Arena prompts (``plb simulate --prompts``):
real prompts are longer, and the embedding reads up to 64 word pieces of each.
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
from data.real_prompts import default_real_prompts_path
from data.simulate import simulate
from data.simulation_files import write_simulation
from features.predictor import RatingPredictor
from ranking.io.frames import pairwise_from_battles
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


def _latency_row(what: str, label: str, times: list[float], quick: bool) -> Row:
    median = float(np.median(times))
    return make_row(
        what,
        label,
        ours=median,
        goal=f"≤ {RECOMMEND_GOAL_S * 1000:.0f} ms",
        met=None if quick else median <= RECOMMEND_GOAL_S,
        notes=f"median; slowest {max(times) * 1000:.0f} ms",
    )


def _world(n_users: int, per_user: int, prompts: Path | None, quick: bool) -> list[Row]:
    """Fit one simulated world with ``plb fit`` and time recommend warm on its prompts."""
    with tempfile.TemporaryDirectory(prefix="plb-bench-") as tmp:
        sim = simulate(n_users, per_user, 15, rng=0, prompts=prompts)
        paths = write_simulation(sim, Path(tmp) / "sim")
        fit_dir = Path(tmp) / "fit"
        fit_s = _plb("fit", str(paths["battles"]), "--out", str(fit_dir))
        folder = load_fit(fit_dir).predictor_dir
        assert folder is not None
        predictor = RatingPredictor.load(folder)
        distinct = sim.battles["prompt"].drop_duplicates().tolist()
        order = np.random.default_rng(1).permutation(len(distinct))
        prompts_drawn = [distinct[i] for i in order]
        batches = [prompts_drawn[i * 20 : (i + 1) * 20] for i in range(11)]
        predictor.predict_queries(batches[0])  # warm: weights loaded, caches filled
        votes = sim.battles.iloc[:10]
        data = pairwise_from_battles(votes, predictor.models_)
        users = np.zeros(len(votes), dtype=np.intp)
        times = _each(batches[1:], predictor.predict_queries)
        blend_times = _each(
            batches[1:], lambda b: predictor.blend(predictor.predict_queries(b), data, users)
        )
    text = "simulated prompts" if prompts is None else "real Arena prompts"
    label = f"simulator, {text}: {n_users} users, {len(sim.battles):,} votes, 15 models"
    batch = f"10 batches of 20 {text}"
    return [
        make_row(
            "plb fit (aggregate, per-user, topics, style, predictor), fresh process",
            label,
            ours=fit_s,
            goal=f"< {FIT_GOAL_S:.0f} s",
            met=None if quick else fit_s < FIT_GOAL_S,
        ),
        _latency_row("recommend: 20 queries to a ranking, warm process", batch, times, quick),
        _latency_row(
            "recommend: 20 queries and 10 votes, blended, warm process", batch, blend_times, quick
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    """Run benchmark F; ``quick`` uses 40 users, the template world only, and evaluates no
    goal."""
    n_users, per_user = (40, 30) if quick else (400, 60)
    rows = _world(n_users, per_user, None, quick)
    real = None if quick else default_real_prompts_path()
    if real is not None:
        rows += _world(n_users, per_user, real, quick)
    return rows
