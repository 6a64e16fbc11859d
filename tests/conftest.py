"""Fixtures shared by every test module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ranking.types import PairwiseData

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ARENA_140K = SHARED / "data" / "arena-140k" / "battles.csv.gz"


@pytest.fixture(scope="session")
def arena_path() -> Path:
    """The shared real Chatbot Arena log; tests that need it skip where it is absent."""
    if not ARENA_140K.exists():
        pytest.skip(f"the shared real battle log is absent (looked for {ARENA_140K})")
    return ARENA_140K


def simulate_votes(
    n_models: int, n_votes: int, seed: int, tie_share: float = 0.2, spread: float = 1.0
) -> tuple[PairwiseData, np.ndarray]:
    """Votes drawn from a known Bradley-Terry model with ties; returns them and the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(scale=spread, size=n_models)
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    p = 1.0 / (1.0 + np.exp(truth[b] - truth[a]))
    y = (rng.random(n_votes) < p).astype(float)
    y[rng.random(n_votes) < tie_share] = 0.5
    models = tuple(f"m{j}" for j in range(n_models))
    data = PairwiseData(models, np.stack([a, b], axis=1), y, np.ones(n_votes))
    return data, truth - truth.mean()
