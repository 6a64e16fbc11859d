"""Held-out evaluation of personalised rankings: each user's latest votes are the test.

Every predictor is fitted on the training votes only (all users' earlier votes) and
scored on each user's held-out latest votes:

* log-loss and Brier score of the predicted probability that ``model_a`` wins, where a
  tie is the outcome 0.5;
* accuracy, a tie counting half (so any prediction scores 0.5 on a tie, and a 50/50
  prediction scores 0.5 on anything);
* where the true ratings are known (the simulator), the mean Spearman between each
  user's fitted ranking of all models and their true ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from ranking.agreement import spearman_per_row
from ranking.pairwise import ELO_PER_NAT, position_in_group
from ranking.progress import Progress, start
from ranking.types import FloatArray, IntArray, Method, PairwiseData
from ranking.users import Shrinkage, aggregate_prior, fit_user_ratings

__all__ = [
    "MIN_VOTES",
    "EvaluationRow",
    "clustered_se",
    "Scores",
    "evaluate_personalisation",
    "latest_split",
    "predict",
    "score_predictions",
]

#: Users with fewer votes than this stay wholly in training by default.
MIN_VOTES = 5
#: Predicted probabilities are kept this far from 0 and 1 in the log-loss.
_EPS = 1e-6


@dataclass(frozen=True)
class Scores:
    """Held-out scores of one predictor (lower log-loss and Brier are better)."""

    log_loss: float
    accuracy: float
    brier: float
    n_votes: int


@dataclass(frozen=True)
class EvaluationRow:
    """One line of the held-out table.

    ``predictor`` is ``"aggregate"``, ``"per-user"`` (plain) or ``"shrunk"`` (per-user
    with empirical Bayes shrinkage); ``spearman_truth`` is NaN without true ratings.
    """

    method: Method
    predictor: str
    scores: Scores
    spearman_truth: float

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, NaN as None."""
        truth = None if np.isnan(self.spearman_truth) else round(self.spearman_truth, 4)
        return {
            "method": self.method,
            "predictor": self.predictor,
            "log_loss": round(self.scores.log_loss, 4),
            "accuracy": round(self.scores.accuracy, 4),
            "brier": round(self.scores.brier, 4),
            "n_votes": self.scores.n_votes,
            "spearman_truth": truth,
        }


def score_predictions(p: FloatArray, y: FloatArray) -> Scores:
    """Log-loss, accuracy (ties count half) and Brier score of probabilities ``p``.

    Parameters
    ----------
    p : ndarray
        ``(n,)`` predicted probability that ``model_a`` wins.
    y : ndarray
        ``(n,)`` outcomes 1, 0.5 or 0.
    """
    p = np.clip(np.asarray(p, dtype=np.float64), _EPS, 1.0 - _EPS)
    y = np.asarray(y, dtype=np.float64)
    if p.size == 0:
        nan = float("nan")
        return Scores(nan, nan, nan, 0)
    log_loss = -(y * np.log(p) + (1.0 - y) * np.log1p(-p))
    predicted = np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5))
    # 1 when the call is right, 0 when wrong, 0.5 for a tie or a 50/50 call.
    accuracy = 1.0 - np.abs(predicted - y)
    accuracy = np.where((y == 0.5) | (predicted == 0.5), 0.5, accuracy)
    return Scores(
        float(log_loss.mean()), float(accuracy.mean()), float(np.mean((p - y) ** 2)), int(p.size)
    )


def latest_split(
    users: IntArray, n_users: int, fraction: float = 0.2, min_votes: int = MIN_VOTES
) -> npt.NDArray[np.bool_]:
    """Mark each user's latest votes as test votes.

    Parameters
    ----------
    users : array of int
        ``(n,)`` user of each vote, votes in the order they happened; ``-1`` for none.
    n_users : int
        Number of users.
    fraction : float
        Share of each user's votes held out (rounded up, at least one).
    min_votes : int
        Users with fewer votes are left wholly in training.

    Returns
    -------
    ndarray of bool
        ``(n,)`` True for a held-out vote.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"Argument 'fraction' must be between 0 and 1, not {fraction}.")
    users = np.asarray(users, dtype=np.intp)
    known = users >= 0
    totals = np.bincount(users[known], minlength=n_users)
    position = position_in_group(users)
    n_test = np.ceil(fraction * totals).astype(np.intp)
    test = np.zeros(users.size, dtype=bool)
    u = users[known]
    test[known] = (totals[u] >= min_votes) & (position[known] >= totals[u] - n_test[u])
    return test


def clustered_se(difference: FloatArray, users: IntArray) -> float:
    """Standard error of the mean of ``difference``, the rows grouped by user.

    The sandwich estimate ``sqrt(G / (G - 1) * sum_g (sum of g's residuals)^2) / n`` over
    ``G`` users; NaN with fewer than two users.
    """
    _, groups = np.unique(users, return_inverse=True)
    n_groups = int(groups.max()) + 1 if groups.size else 0
    if n_groups < 2:
        return float("nan")
    residual = difference - difference.mean()
    sums = np.bincount(groups, weights=residual, minlength=n_groups)
    return float(np.sqrt(n_groups / (n_groups - 1) * np.sum(sums**2)) / difference.size)


def predict(
    ratings: FloatArray, matchups: npt.NDArray[np.intp], users: IntArray | None
) -> FloatArray:
    """Probability that ``model_a`` wins from Elo-scale ratings, ``(k,)`` or ``(U, k)``."""
    if ratings.ndim == 1:
        diff = ratings[matchups[:, 0]] - ratings[matchups[:, 1]]
    elif users is None:
        raise ValueError("Argument 'users' is needed with per-user ratings of shape (U, k).")
    else:
        diff = ratings[users, matchups[:, 0]] - ratings[users, matchups[:, 1]]
    return expit(diff / ELO_PER_NAT)


def evaluate_personalisation(
    data: PairwiseData,
    users: IntArray,
    n_users: int,
    *,
    fraction: float = 0.2,
    min_votes: int = MIN_VOTES,
    methods: tuple[Method, ...] = ("bt", "elo"),
    true_ratings: FloatArray | None = None,
    eval_users: npt.NDArray[np.bool_] | None = None,
    rng: np.random.Generator | int | None = 0,
    progress: Progress | None = None,
) -> list[EvaluationRow]:
    """Score aggregate, plain per-user and shrunk per-user ratings on held-out votes.

    Parameters
    ----------
    data : PairwiseData
        Votes in the order they happened.
    users : array of int
        ``(n,)`` user of each vote; ``-1`` for a vote without user (training only).
    n_users : int
        Number of users.
    fraction, min_votes
        As in :func:`latest_split`.
    methods : tuple of {"bt", "elo"}
        Rating methods to evaluate.
    true_ratings : ndarray, optional
        ``(n_users, k)`` true ratings (any scale) for the Spearman column.
    eval_users : ndarray of bool, optional
        ``(n_users,)`` users whose latest votes are held out; all by default.
    rng : numpy.random.Generator or int, optional
        Randomness of the empirical Bayes subsample.
    progress : Progress, optional
        Told of the stage ``"held-out evaluation"``, in per-user fits (two a method).

    Returns
    -------
    list of EvaluationRow
        For each method: aggregate, per-user, shrunk.
    """
    users = np.asarray(users, dtype=np.intp)
    test = latest_split(users, n_users, fraction, min_votes)
    if eval_users is not None:
        test &= np.asarray(eval_users, dtype=bool)[np.maximum(users, 0)] & (users >= 0)
    if not test.any():
        raise ValueError(
            f"No held-out votes: no user has the {min_votes} votes needed to hold some out."
        )
    train = data.select(~test)
    train_users = users[~test]
    known = train_users >= 0
    per_user_train = train.select(known)
    tested_users = np.unique(users[test])
    rows = []
    shrinkages: dict[str, Shrinkage] = {"per-user": "none", "shrunk": "cv"}
    advance = start(progress, "held-out evaluation", len(methods) * len(shrinkages), "fits")
    for method in methods:
        fits: dict[str, FloatArray] = {"aggregate": aggregate_prior(train, method)}
        for name, shrinkage in shrinkages.items():
            fits[name] = fit_user_ratings(
                per_user_train,
                train_users[known],
                n_users,
                method=method,
                shrinkage=shrinkage,
                prior=fits["aggregate"],
                rng=rng,
            ).ratings
            advance(1)
        for name, ratings in fits.items():
            p = predict(ratings, data.matchups[test], users[test])
            truth = float("nan")
            if true_ratings is not None:
                full = np.broadcast_to(ratings, (n_users, data.n_models))[tested_users]
                truth = float(np.nanmean(spearman_per_row(full, true_ratings[tested_users])))
            rows.append(
                EvaluationRow(method, name, score_predictions(p, data.outcomes[test]), truth)
            )
    return rows
