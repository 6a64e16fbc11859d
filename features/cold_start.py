"""Held-out users: how well queries predict a new user's ratings, and votes sharpen them.

The users are split: the predictor (:class:`features.predictor.RatingPredictor`) is
fitted on the training users' votes and queries only, then each test user is predicted
from their queries alone. Three checks:

1. **The study's metric.** MAE of the predicted ratings against the test users' own
   fitted ratings, relative to predicting the training users' mean rating; for
   Bradley-Terry (the contextual model; a ridge regression on the profile, as the study
   did; the regression chosen by cross-validation among ridge, kernel, low-rank and
   boosted models, :class:`features.regression.ProfileRegressor`, with the coverage of its
   intervals; and a ridge regression on the profile and the contextual model's
   prediction, cross-fitted for the training users) and for Elo (the same regressions).
   The targets are fitted two ways: plain per-user fits, as the study's, and our shrunk
   ones.
2. **Rankings.** Spearman of predicted against fitted rankings, and against the true
   rankings where a simulation's truth is given (with the intervals' coverage of the
   truth). When the log also carries each vote's true ``topic`` (the simulator's), a
   baseline that is told those topics scores beside it: per-topic Bradley-Terry fits of
   the training votes, averaged by the test user's shares of each topic.
3. **Cold to warm.** Every test user with a vote after their first 5, 10 or 20 gives
   those first votes (their queries and outcomes) and their later votes are held out;
   the aggregate, the user's own votes alone (shrunk toward the aggregate), the
   prediction from the given queries, the per-prompt ranking, and the blends with the
   given votes are scored by log-loss and accuracy, each with its paired difference from
   the aggregate and its standard error (:mod:`features.later_votes`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from features.later_votes import aggregate_alpha, later_votes, summarise
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.regression import ProfileRegressor, ridge_model
from features.topics import TopicModel
from ranking.agreement import spearman_per_row
from ranking.elo import expected_online_elo
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.pairwise import ELO_PER_NAT, pair_share, position_in_group
from ranking.progress import Progress, start
from ranking.types import CENTER, FloatArray, Method, PairwiseData
from ranking.users import (
    Shrinkage,
    UserRatings,
    aggregate_prior,
    expected_user_ratings,
    fit_user_ratings,
)

__all__ = [
    "ColdStart",
    "OWN_VOTES",
    "REGRESSION",
    "evaluate_cold_start",
    "expected_fit",
    "split_users",
]

OWN_VOTES: tuple[int, ...] = (5, 10, 20)
#: The row of :class:`features.regression.ProfileRegressor`, the study's model chosen by CV.
REGRESSION = "regression on profile (chosen by CV)"
MIN_HELD_OUT = 5
#: Elo points the mean predictor's MAE must reach for an improvement over it to be given.
MIN_TARGET_SPREAD = 1.0


@dataclass(frozen=True)
class ColdStart:
    """The three checks of the module docstring, ready for JSON."""

    n_train_users: int
    n_test_users: int
    ratings: list[dict[str, Any]] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_users(
    user_ids: Sequence[str],
    *,
    test_ids: Collection[str] | None = None,
    fraction: float = 0.2,
    rng: np.random.Generator | int | None = 0,
) -> npt.NDArray[np.bool_]:
    """``(n_users,)`` True for a test user: the given ids, else a random ``fraction``."""
    n = len(user_ids)
    if test_ids is not None:
        wanted = set(map(str, test_ids))
        mask = np.array([u in wanted for u in user_ids], dtype=bool)
    else:
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"Argument 'fraction' must be between 0 and 1, not {fraction}.")
        mask = np.zeros(n, dtype=bool)
        mask[np.random.default_rng(rng).permutation(n)[: max(1, round(fraction * n))]] = True
    if mask.all() or not mask.any():
        raise ValueError(
            f"held-out users must leave both training and test users; {mask.sum()} of {n} "
            "are test users"
        )
    return mask


def _ridge(x_train: FloatArray, y_train: FloatArray, x_test: FloatArray) -> FloatArray:
    model = ridge_model().fit(x_train, y_train)
    return np.asarray(model.predict(x_test), dtype=np.float64)


def _rating_row(
    method: Method,
    predictor: str,
    predicted: FloatArray,
    fitted: FloatArray,
    mean: FloatArray,
    truth: FloatArray | None,
) -> dict[str, Any]:
    mae = float(np.mean(np.abs(predicted - fitted)))
    mae_mean = float(np.mean(np.abs(mean - fitted)))
    row = {
        "method": method,
        "predictor": predictor,
        "mae": mae,
        "mae_mean_predictor": mae_mean,
        # targets that barely differ between users (every shrunk fit at the prior) give
        # no scale for an improvement: a share of nearly 0 is no figure to read
        "improvement": 1.0 - mae / mae_mean if mae_mean >= MIN_TARGET_SPREAD else None,
        "spearman_fitted": float(np.nanmean(spearman_per_row(predicted, fitted))),
        "spearman_truth": None,
    }
    if truth is not None:
        row["spearman_truth"] = float(np.nanmean(spearman_per_row(predicted, truth)))
    return row


def evaluate_cold_start(
    battles: pd.DataFrame,
    *,
    test_ids: Collection[str] | None = None,
    fraction: float = 0.2,
    true_ratings: pd.DataFrame | None = None,
    own_votes: Sequence[int] = OWN_VOTES,
    topic_model: TopicModel | None = None,
    queries: int | None = None,
    rng: int = 0,
    progress: Progress | None = None,
) -> ColdStart:
    """Run the three checks of the module docstring.

    Parameters
    ----------
    battles : DataFrame
        A battle log with ``user_id`` and ``prompt``.
    test_ids : collection of str, optional
        The held-out users; else a random ``fraction`` of users.
    true_ratings : DataFrame, optional
        Index ``user_id``, one column per model: true ratings (a simulation's truth).
    own_votes : sequence of int
        Numbers of a test user's first votes given to the blend.
    topic_model : TopicModel, optional
        Unfitted topic model for the predictor; the default one when omitted.
    queries : int, optional
        Each test user is known by the queries of their first ``queries`` votes (in vote
        order); by all of them when omitted. Their fitted targets use all their votes.
    rng : int
        Seed of the split and of every learnt step.
    progress : Progress, optional
        Told of the predictor's stages (:meth:`RatingPredictor.fit`), of embedding the
        test users' queries, and of ``"new-user regressions"``, in targets.
    """
    battles = battles.iloc[vote_order(battles)]
    battles = battles[battles["user_id"].notna()]
    data = pairwise_from_battles(battles)
    users, names = user_codes(battles)
    n_users = len(names)
    test_user = split_users(names, test_ids=test_ids, fraction=fraction, rng=rng)
    test_vote = test_user[users]
    train = data.select(~test_vote)
    predictor = RatingPredictor(UserProfiler(topic_model), random_state=rng)
    if queries is not None and (isinstance(queries, bool) or queries < 1):
        raise ValueError(f"Argument 'queries' must be a positive integer, not {queries!r}.")
    known = test_vote & (position_in_group(users) < (queries or len(users)))
    predictor.fit(battles[~test_vote], models=data.models, progress=progress)
    train_profiles = predictor.training_profiles_
    test_profiles = predictor.profiler_.transform(battles[known], progress=progress)
    tested = np.flatnonzero(test_user)  # sorted, as the profiles' rows
    trained = np.flatnonzero(~test_user)
    truth = None
    if true_ratings is not None:
        truth = true_ratings.reindex(index=list(names), columns=list(data.models)).to_numpy()
        truth = truth[tested]

    prediction = predictor.predict(test_profiles)
    rows = []
    methods: tuple[Method, ...] = ("bt", "elo")
    aggregates = {method: aggregate_prior(train, method) for method in methods}
    targets: tuple[tuple[str, Shrinkage], ...] = (("shrunk", "cv"), ("plain", "none"))
    advance = start(progress, "new-user regressions", len(methods) * len(targets), "targets")
    for method, aggregate in aggregates.items():
        for target, shrinkage in targets:
            fitted = fit_user_ratings(
                data, users, n_users, method=method, shrinkage=shrinkage, prior=aggregate, rng=rng
            )
            y_train, y_test = fitted.ratings[trained], fitted.ratings[tested]
            mean = np.broadcast_to(y_train.mean(axis=0), y_test.shape)
            ridge = _ridge(train_profiles.values, y_train, test_profiles.values)
            regression = ProfileRegressor(random_state=rng).fit(train_profiles.values, y_train)
            regressed, lower, upper = regression.predict_interval(test_profiles.values)
            chosen = {
                "chosen": regression.best_,
                "cv_mae": regression.cv_mae_,
                "interval_coverage_fitted": float(((y_test >= lower) & (y_test <= upper)).mean()),
                "confidence": regression.confidence,
            }
            stacked = _ridge(
                np.hstack([train_profiles.values, predictor.training_predictions_]),
                y_train,
                np.hstack([test_profiles.values, prediction.ratings]),
            )
            found = [
                ("mean of training users", mean),
                ("ridge on profile", ridge),
                (REGRESSION, regressed),
                ("ridge on profile + contextual BT", stacked),
            ]
            if method == "bt":
                found.append(("contextual BT", prediction.ratings))
            reached = expected_fit(method, shrinkage, fitted, tested, pair_share(train), aggregate)
            if reached is not None:
                found.append((f"contextual BT, {reached[0]}", reached[1](prediction.ratings)))
                if truth is not None and np.isfinite(truth).all():  # about the best possible
                    found.append((f"true ratings, {reached[0]}", reached[1](truth)))
            for name, predicted in found:
                row = _rating_row(method, name, predicted, y_test, mean, truth)
                rows.append({"target": target, **row, **(chosen if name == REGRESSION else {})})
            advance(1)
    if truth is not None:
        centred = truth - truth.mean(axis=1, keepdims=True) + CENTER
        inside = (centred >= prediction.lower) & (centred <= prediction.upper)
        aggregate_bt = np.broadcast_to(aggregates["bt"], truth.shape)
        rows.append(
            {
                "target": "truth",
                "method": "bt",
                "predictor": "contextual BT",
                "spearman_truth": float(np.nanmean(spearman_per_row(prediction.ratings, truth))),
                "spearman_truth_aggregate": float(
                    np.nanmean(spearman_per_row(aggregate_bt, truth))
                ),
                "interval_coverage_truth": float(inside.mean()),
                "confidence": predictor.confidence,
                "spearman_truth_true_topics": _true_topic_spearman(
                    battles, train, test_vote, known, users, tested, truth
                ),
            }
        )
    return ColdStart(
        n_train_users=int(trained.size),
        n_test_users=int(tested.size),
        ratings=rows,
        votes=_cold_to_warm(
            predictor, battles, data, users, test_user, train, aggregates["bt"], own_votes, rng
        ),
    )


def _true_topic_spearman(
    battles: pd.DataFrame,
    train: PairwiseData,
    test_vote: npt.NDArray[np.bool_],
    known: npt.NDArray[np.bool_],
    users: npt.NDArray[np.intp],
    tested: npt.NDArray[np.intp],
    truth: FloatArray,
) -> float | None:
    """Mean Spearman of the true-topic baseline (module docstring); None without topics."""
    if "topic" not in battles.columns or battles["topic"].isna().any():
        return None
    topics, names = pd.factorize(battles["topic"])
    aggregate = aggregate_prior(train, "bt")
    per_topic = fit_user_ratings(
        train, topics[~test_vote], len(names), shrinkage="none", prior=aggregate
    ).ratings
    shares = np.zeros((int(users.max()) + 1, len(names)))
    np.add.at(shares, (users[known], topics[known]), 1.0)
    shares = shares[tested] / shares[tested].sum(axis=1, keepdims=True)
    return float(np.nanmean(spearman_per_row(shares @ per_topic, truth)))


def expected_fit(
    method: Method,
    shrinkage: Shrinkage,
    fitted: UserRatings,
    tested: npt.NDArray[np.intp],
    share: FloatArray,
    aggregate: FloatArray,
) -> tuple[str, Callable[[FloatArray], FloatArray]] | None:
    """What the test users' fit is expected to be, given the preferences their votes follow.

    The targets are fits to a few votes, not preferences: a shrunk BT fit lies between
    the prior and the preferences, and online Elo drifts from its start in proportion to
    the number of votes. This maps preferences to the fit they are expected to produce
    (:func:`ranking.users.expected_user_ratings`, :func:`ranking.elo.expected_online_elo`).

    Parameters
    ----------
    method : {"bt", "elo"}
        The fit.
    shrinkage : str
        ``"none"`` for a plain fit, else the shrinkage it was fitted with.
    fitted : UserRatings
        The fit of every user (:func:`ranking.users.fit_user_ratings`).
    tested : array of int
        The rows of ``fitted`` to map.
    share : ndarray
        ``(k, k)`` share of votes on each ordered pair.
    aggregate : ndarray
        ``(k,)`` the prior (shrunk fits) or the start (shrunk Elo).

    Returns
    -------
    (str, callable) or None
        A name for reports and a map from ``(len(tested), k)`` Elo-scale preferences to
        the expected fit; None for plain BT, whose fit estimates the preferences.
    """
    n_votes = fitted.n_battles[tested]
    if method == "elo":
        start = CENTER if shrinkage == "none" else aggregate
        return "expected Elo", lambda p: expected_online_elo(p, n_votes, share, initial=start)
    if shrinkage == "none" or not fitted.prior_sd:
        return None
    alpha = (ELO_PER_NAT / fitted.prior_sd) ** 2
    return "expected fit", lambda p: expected_user_ratings(
        p, n_votes, share, prior=aggregate, alpha=alpha
    )


def _cold_to_warm(
    predictor: RatingPredictor,
    battles: pd.DataFrame,
    data: PairwiseData,
    users: npt.NDArray[np.intp],
    test_user: npt.NDArray[np.bool_],
    train: PairwiseData,
    aggregate: FloatArray,
    own_votes: Sequence[int],
    rng: int,
) -> list[dict[str, Any]]:
    """Held-out later votes after each test user's first ``n`` votes, every way
    (:func:`features.later_votes.later_votes`), for each ``n`` of ``own_votes``."""
    prior_alpha = aggregate_alpha(train, aggregate, users[~test_user[users]], test_user.size, rng)
    rows: list[dict[str, Any]] = []
    for n in own_votes:
        scored = later_votes(predictor, battles, data, users, test_user, aggregate, prior_alpha, n)
        rows += summarise([] if scored is None else [scored])
    return rows
