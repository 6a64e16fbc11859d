"""Synthetic data for the benchmarks: an Arena-like battle log and a per-user vote set.

Both are drawn from a Bradley-Terry model with ties, from a seeded
``numpy.random.Generator``; nothing here is timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ranking.types import PairwiseData

__all__ = ["UserVotes", "simulate_user_votes", "write_battle_csv"]

#: Winner values and their shares among ties, as in the real Arena log
#: (21,532 ``tie`` and 15,754 ``both_bad`` of 135,634 votes).
_TIE_KINDS = ("tie", "both_bad")
_BOTH_BAD_SHARE = 15_754 / (15_754 + 21_532)
_WORDS = (
    "write explain code python story poem email summary bug fix list compare why how "
    "best recipe travel plan essay translate french sql query function math proof "
    "history physics joke resume letter marketing idea game rust error async api"
).split()


def _model_names(n_models: int) -> list[str]:
    return [f"model-{j:02d}" for j in range(n_models)]


def _draw_pairs(
    rng: np.random.Generator, n: int, popularity: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Two different models per vote, each drawn by popularity."""
    k = popularity.size
    a = rng.choice(k, size=n, p=popularity)
    b = rng.choice(k, size=n, p=popularity)
    same = a == b
    while same.any():  # redraw the second model of self-battles
        b[same] = rng.choice(k, size=int(same.sum()), p=popularity)
        same = a == b
    return a.astype(np.intp), b.astype(np.intp)


def _outcomes(
    rng: np.random.Generator, strength_diff: npt.NDArray[np.float64], tie_share: float
) -> npt.NDArray[np.float64]:
    """1, 0 or 0.5 for the first model: a tie with ``tie_share``, else a Bradley-Terry draw."""
    won = rng.random(strength_diff.size) < 1.0 / (1.0 + np.exp(-strength_diff))
    y = won.astype(np.float64)
    y[rng.random(strength_diff.size) < tie_share] = 0.5
    return y


def write_battle_csv(
    path: str | Path,
    n_votes: int,
    *,
    n_models: int = 50,
    n_users: int = 100_000,
    tie_share: float = 0.27,
    seed: int = 0,
) -> Path:
    """Write an Arena-like battle log as plain CSV.

    Columns ``battle_id`` (16 hex digits), ``user_id``, ``model_a``, ``model_b``,
    ``winner`` (``model_a``, ``model_b``, ``tie`` or ``both_bad``), ``tstamp`` (unix seconds,
    increasing) and a short ``prompt``. Model popularity is Zipf-like, strengths are
    ``N(0, 0.5^2)`` nats, user activity is lognormal.

    Parameters
    ----------
    path : str or Path
        Where to write the file (suffix ``.csv``).
    n_votes : int
        Number of rows.
    n_models : int
        Number of models.
    n_users : int
        Number of distinct voters to draw from.
    tie_share : float
        Share of votes that are ties (both kinds together).
    seed : int
        Seed of the generator.

    Returns
    -------
    Path
        ``path``.
    """
    rng = np.random.default_rng(seed)
    popularity = np.asarray(1.0 / np.arange(1, n_models + 1) ** 0.6, dtype=np.float64)
    popularity /= popularity.sum()
    strength = rng.normal(scale=0.5, size=n_models)
    a, b = _draw_pairs(rng, n_votes, popularity)
    y = _outcomes(rng, strength[a] - strength[b], tie_share)
    winner = np.where(y == 1.0, "model_a", "model_b").astype(object)
    tie = y == 0.5
    winner[tie] = np.where(rng.random(int(tie.sum())) < _BOTH_BAD_SHARE, *_TIE_KINDS)
    activity = rng.lognormal(sigma=1.0, size=n_users)
    user = rng.choice(n_users, size=n_votes, p=activity / activity.sum())
    prompts = np.array(
        [" ".join(rng.choice(_WORDS, size=rng.integers(3, 12))) for _ in range(5_000)],
        dtype=object,
    )
    names = np.array(_model_names(n_models), dtype=object)
    start = 1_700_000_000.0
    table = pa.table(
        {
            "battle_id": pd.Series(rng.integers(0, 2**63, n_votes)).map("{:016x}".format),
            "user_id": pd.Series(user).map("u{:06d}".format),
            "model_a": names[a],
            "model_b": names[b],
            "winner": winner,
            "tstamp": start + np.cumsum(rng.exponential(1.5, n_votes)).round(3),
            "prompt": prompts[rng.integers(0, prompts.size, n_votes)],
        }
    )
    pacsv.write_csv(table, path)
    return Path(path)


@dataclass(frozen=True)
class UserVotes:
    """Votes of many users drawn from known per-user strengths.

    Attributes
    ----------
    data : PairwiseData
        Unweighted votes, users interleaved as in a real log.
    users : ndarray of int
        ``(n,)`` user of each vote.
    n_users : int
        Number of users (every one has at least one vote).
    truth : ndarray
        ``(n_users, k)`` true natural-log strengths.
    """

    data: PairwiseData
    users: npt.NDArray[np.intp]
    n_users: int
    truth: npt.NDArray[np.float64]


def simulate_user_votes(
    n_users: int,
    *,
    n_models: int = 15,
    mean_votes: float = 20.0,
    tie_share: float = 0.2,
    deviation: float = 0.4,
    seed: int = 0,
) -> UserVotes:
    """Per-user votes: strengths are a population vector plus a Gaussian deviation.

    Parameters
    ----------
    n_users : int
        Number of users.
    n_models : int
        Number of models.
    mean_votes : float
        Mean votes per user; counts are lognormal (``sigma = 1``), at least one.
    tie_share : float
        Share of votes that are ties.
    deviation : float
        Standard deviation of a user's departure from the population (nats).
    seed : int
        Seed of the generator.

    Returns
    -------
    UserVotes
    """
    rng = np.random.default_rng(seed)
    population = rng.normal(scale=0.6, size=n_models)
    truth = population + rng.normal(scale=deviation, size=(n_users, n_models))
    sigma = 1.0
    drawn = rng.lognormal(np.log(mean_votes) - sigma**2 / 2, sigma, size=n_users)
    counts = np.maximum(1, np.rint(drawn)).astype(np.intp)
    users = rng.permutation(np.repeat(np.arange(n_users, dtype=np.intp), counts))
    a, b = _draw_pairs(rng, users.size, np.full(n_models, 1.0 / n_models))
    y = _outcomes(rng, truth[users, a] - truth[users, b], tie_share)
    data = PairwiseData(tuple(_model_names(n_models)), np.stack([a, b], axis=1), y, np.ones(y.size))
    return UserVotes(data, users, n_users, truth)
