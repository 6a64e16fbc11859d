"""A simulated arena whose drift is known: one model's strength moves on a given day.

Benchmark AE (:mod:`bench.ranking.drift`) measures the drift flags of
:func:`ranking.history.fit_history` on these arenas; the tests of ``plb history`` and of
the report's history read them as a log whose truth is known.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ranking.types import PairwiseData

__all__ = ["CHANGE_DAY", "DAYS", "N_MODELS", "START", "drift_arena"]

#: 2024-01-01T00:00:00Z; the arenas last 120 days, the drift comes on day 60 (March 1).
START = 1_704_067_200.0
DAYS = 120
CHANGE_DAY = 60
N_MODELS = 10


def drift_arena(
    seed: int, drift: float, n_votes: int, n_models: int = N_MODELS
) -> tuple[PairwiseData, npt.NDArray[np.float64]]:
    """A simulated arena where model 0's strength moves by ``drift`` Elo points on day 60.

    Returns
    -------
    PairwiseData, ndarray
        The votes in time order and their unix seconds.
    """
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(START, START + DAYS * 86_400.0, n_votes))
    strength = np.tile(rng.normal(0.0, 1.0, n_models), (n_votes, 1))
    strength[t >= START + CHANGE_DAY * 86_400.0, 0] += drift * math.log(10.0) / 400.0
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    rows = np.arange(n_votes)
    p = 1.0 / (1.0 + np.exp(strength[rows, b] - strength[rows, a]))
    outcomes = (rng.random(n_votes) < p).astype(float)
    models = tuple(f"m{i}" for i in range(n_models))
    return PairwiseData(models, np.stack([a, b], axis=1), outcomes, np.ones(n_votes)), t
