"""Held-out users' later votes: does a personal answer beat the public board?

The question a person asks of a personal ranking is whether it predicts what *they* will
prefer next better than the public board does. Each held-out user (whose votes the
predictor never saw) gives their first ``k`` votes, in vote order: the queries of those
votes, and their outcomes. Their *later* votes are the test, each predicted six ways:

``aggregate``
    the Bradley-Terry board of the training votes: the public board;
``votes, shrunk to aggregate``
    the person's own ``k`` votes, shrunk toward the aggregate (empirical Bayes);
``predicted from queries``
    the person's ranking from the ``k`` queries alone
    (:meth:`features.predictor.RatingPredictor.predict`);
``per prompt``
    the same person at each test vote's own prompt (:mod:`features.per_prompt`);
``blend of queries and votes``
    the prediction sharpened by the ``k`` votes (:meth:`RatingPredictor.blend`);
``per prompt, blended``
    the per-prompt ranking shifted by what the votes said.

Each way is scored by log-loss (a tie is the outcome 0.5) and accuracy (a tie counts
half), and by the mean of its vote-by-vote log-loss difference from the aggregate with
a standard error clustered by user (a person's votes are not independent). Every test
user with at least one vote after their first ``k`` is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from features.per_prompt import person_deviation, predict_prompts
from ranking.evaluation import clustered_se, predict
from ranking.pairwise import ELO_PER_NAT, position_in_group
from ranking.shrinkage import learn_alpha
from ranking.types import CENTER, FloatArray, IntArray, PairwiseData
from ranking.users import fit_user_ratings

if TYPE_CHECKING:
    from features.predictor import RatingPredictor

__all__ = ["WAYS", "LaterVotes", "aggregate_alpha", "later_votes", "summarise"]

#: The ways a later vote is predicted, in the tables' order.
WAYS: tuple[str, ...] = (
    "aggregate",
    "votes, shrunk to aggregate",
    "predicted from queries",
    "per prompt",
    "blend of queries and votes",
    "per prompt, blended",
)
_EPS = 1e-6


@dataclass(frozen=True)
class LaterVotes:
    """The later votes of held-out users after their first ``known`` votes, scored.

    Attributes
    ----------
    known : int
        Votes each user gave first (their queries and outcomes).
    losses : dict of str to ndarray
        Way (:data:`WAYS`) to the ``(n,)`` log-loss of each later vote.
    hits : dict of str to ndarray
        Way to the ``(n,)`` accuracy of each later vote: 1, 0, or 0.5 for a tie.
    users : ndarray of int
        ``(n,)`` the user of each later vote.
    """

    known: int
    losses: dict[str, FloatArray]
    hits: dict[str, FloatArray]
    users: IntArray


def aggregate_alpha(
    train: PairwiseData,
    aggregate: FloatArray,
    train_users: IntArray,
    n_users: int,
    rng: int,
) -> float:
    """How strongly a user's own votes are shrunk toward the Elo-scale ``aggregate``,
    learnt on the training votes (:func:`ranking.shrinkage.learn_alpha`): the strength of
    the ``votes, shrunk to aggregate`` way."""
    mu = (aggregate - CENTER) / ELO_PER_NAT
    return learn_alpha(
        train.n_models, train.matchups, train.outcomes, train_users, n_users, mu, rng=rng
    )


def later_votes(
    predictor: RatingPredictor,
    battles: pd.DataFrame,
    data: PairwiseData,
    users: IntArray,
    test_user: npt.NDArray[np.bool_],
    aggregate: FloatArray,
    aggregate_alpha: float,
    known: int,
) -> LaterVotes | None:
    """Score the later votes of the test users after their first ``known`` votes.

    Parameters
    ----------
    predictor : RatingPredictor
        Fitted on the training users' votes only.
    battles : DataFrame
        Every vote in vote order, with ``user_id`` and ``prompt``, rows as ``data``.
    data : PairwiseData
        The same votes, on the predictor's models.
    users : array of int
        ``(n,)`` user of each vote.
    test_user : array of bool
        ``(n_users,)`` True for a held-out user.
    aggregate : ndarray
        ``(n_models,)`` Elo-scale Bradley-Terry board of the training votes.
    aggregate_alpha : float
        Prior precision of a user's departure from the aggregate (natural-log units).
    known : int
        Votes each test user gives before their later votes are predicted.

    Returns
    -------
    LaterVotes or None
        None when no test user has a vote after their first ``known``.
    """
    position = position_in_group(users)
    totals = np.bincount(users, minlength=test_user.size)
    eligible = test_user & (totals > known)
    if not eligible.any():
        return None
    given = eligible[users] & (position < known)
    held = eligible[users] & (position >= known)
    row_of = np.full(test_user.size, -1, dtype=np.intp)
    row_of[np.flatnonzero(eligible)] = np.arange(int(eligible.sum()))
    n_people = int(eligible.sum())
    people = predictor.profiler_.transform(battles[given])  # rows: eligible users, sorted
    predicted = predictor.predict(people)
    own, own_rows = data.select(given), row_of[users[given]]
    blended = predictor.blend(predicted, own, own_rows)
    alone = fit_user_ratings(own, own_rows, n_people, prior=aggregate, alpha=aggregate_alpha)
    held_rows = row_of[users[held]]
    prompts = battles.loc[held, "prompt"].fillna("").astype(str).tolist()
    # the prompts' contexts once: embedding them is the cost, and both ways read them
    context = predictor.profiler_.prompt_profiles(
        prompts, people, held_rows, predictor.style_context
    )
    per_prompt, _ = predict_prompts(
        predictor, prompts, people, held_rows, predicted, context=context
    )
    shift = person_deviation(predicted, blended)
    per_prompt_blended, _ = predict_prompts(
        predictor, prompts, people, held_rows, blended, shift, context=context
    )
    test = data.select(held)
    each = np.arange(len(prompts), dtype=np.intp)
    probabilities = {
        WAYS[0]: predict(aggregate, test.matchups, None),
        WAYS[1]: predict(alone.ratings, test.matchups, held_rows),
        WAYS[2]: predict(predicted.ratings, test.matchups, held_rows),
        WAYS[3]: predict(per_prompt.ratings, test.matchups, each),
        WAYS[4]: predict(blended.ratings, test.matchups, held_rows),
        WAYS[5]: predict(per_prompt_blended.ratings, test.matchups, each),
    }
    y = test.outcomes
    losses, hits = {}, {}
    for way, p in probabilities.items():
        q = np.clip(p, _EPS, 1.0 - _EPS)
        losses[way] = -(y * np.log(q) + (1.0 - y) * np.log1p(-q))
        hits[way] = np.where(y == 0.5, 0.5, ((p > 0.5) == (y == 1.0)).astype(np.float64))
    return LaterVotes(known, losses, hits, np.asarray(users[held], dtype=np.intp))


def summarise(scored: Sequence[LaterVotes]) -> list[dict[str, Any]]:
    """One row per way, pooled over ``scored`` (splits of one ``known``, say).

    Users of different entries count as different users in the standard errors.

    Returns
    -------
    list of dict
        ``known``, ``way``, ``log_loss``, ``accuracy``, ``minus_aggregate`` (mean
        log-loss less the aggregate's; negative is better) and ``minus_aggregate_se``,
        ``n_votes``, ``users``.
    """
    if not scored:
        return []
    offset, owners = 0, []
    for entry in scored:
        owners.append(entry.users + offset)
        offset += int(entry.users.max()) + 1
    users = np.concatenate(owners)
    base = np.concatenate([entry.losses[WAYS[0]] for entry in scored])
    rows = []
    for way in WAYS:
        losses = np.concatenate([entry.losses[way] for entry in scored])
        hits = np.concatenate([entry.hits[way] for entry in scored])
        rows.append(
            {
                "known": scored[0].known,
                "way": way,
                "log_loss": float(losses.mean()),
                "accuracy": float(hits.mean()),
                "minus_aggregate": float((losses - base).mean()),
                "minus_aggregate_se": clustered_se(losses - base, users),
                "n_votes": int(losses.size),
                "users": int(np.unique(users).size),
            }
        )
    return rows
