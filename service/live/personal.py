"""One user's leaderboard, refitted from that user's votes (a small problem).

The service calls :func:`personal_leaderboard` right after a vote is ingested, so the
user's page changes on the next read, and again lazily after each new model version.

Where the user's votes carry the two answers (``answer_a``, ``answer_b``) and the fit
learnt how people's taste in answers varies (a :class:`ranking.personal_style.results.StylePrior`),
the explanation also gives the user's taste in answers
(:func:`features.explanation.answer_taste`), refitted from their answered votes under that
prior: the same shrinkage the fit of all users used, and its fallback to everyone's taste.
A taste is what the answers do beyond the user's own ratings of the two models: each
vote's odds start from the board's ratings, and its covariates are the answers'
departures from the two models' typical answers (:func:`typical_answer_style`), so that a
liking for a model is not read as a liking for its usual length.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import norm

from features.answer_style import (
    ANSWER_STYLE_FEATURES,
    DEFAULT_SCALING,
    SCALINGS,
    Scaling,
    answer_style,
    style_differences,
)
from features.explanation import answer_taste, explain
from features.explanation_parts import QueryParts, Taste
from ranking.agreement import spearman_per_row
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.leaderboard import build_leaderboard
from ranking.pairwise import ELO_PER_NAT, model_counts
from ranking.personal_style.fit import earlier_votes, fit_user_style, style_under_prior
from ranking.personal_style.results import StyleAlphaMethod, StylePrior
from ranking.types import CENTER, FloatArray, Method, PairwiseData
from ranking.users import fit_user_ratings, user_board_odds

__all__ = [
    "Source",
    "fit_taste_prior",
    "personal_leaderboard",
    "typical_answer_style",
]

#: ``fitted``: the user's votes shrunk toward the aggregate; ``blended``: toward the
#: prediction from the user's queries.
Source = Literal["fitted", "blended"]


def _known_votes(battles: pd.DataFrame, models: tuple[str, ...]) -> pd.DataFrame:
    """The votes between two models of the current version (others wait for a refit)."""
    known = battles["model_a"].isin(models) & battles["model_b"].isin(models)
    return battles.loc[known]


def personal_leaderboard(
    user_id: str,
    battles: pd.DataFrame,
    models: tuple[str, ...],
    aggregate: npt.ArrayLike,
    *,
    method: Method = "bt",
    prior: npt.ArrayLike | None = None,
    alpha: float | None = None,
    confidence: float = 0.95,
    queries: QueryParts | None = None,
    taste_prior: StylePrior | None = None,
) -> dict[str, Any]:
    """The leaderboard document of one user (docs/SPEC.md section 4).

    Parameters
    ----------
    user_id : str
        The user, echoed in the document.
    battles : pandas.DataFrame
        That user's votes, a canonical battle frame.
    models : tuple of str
        The models of the current model version, in the order of ``aggregate``.
    aggregate : array_like
        ``(k,)`` aggregate ratings of ``method``: the reference of the agreement, and
        the prior when no ``prior`` is given.
    method : {"bt", "elo"}
        Shrunk Bradley-Terry, or online Elo started from the prior.
    prior : array_like, optional
        ``(k,)`` prior ratings predicted from the user's queries (``source: blended``).
    alpha : float, optional
        Prior precision of the user's deviation (Bradley-Terry), learnt from all users;
        learnt from this user alone when missing.
    confidence : float
        Coverage of the intervals.
    queries : QueryParts, optional
        What the user's queries say and how they moved ``prior``
        (:func:`features.explanation.query_parts`), for the explanation.
    taste_prior : StylePrior, optional
        What the fit of all users learnt of their taste in answers
        (:func:`fit_taste_prior`): with it, the votes of ``battles`` that carry both
        answers give the user's taste in the explanation, fitted beyond the ratings of
        this board.

    Returns
    -------
    dict
        The leaderboard JSON of docs/SPEC.md section 3 for this user, plus ``user_id``,
        ``source``, ``spearman`` (against the aggregate, over the models the user voted
        on; None where undefined), ``n_battles`` and ``explanation``
        (:func:`features.explanation.explain`: what moved the top models from the
        aggregate).
    """
    reference = np.asarray(aggregate, dtype=np.float64)
    source: Source = "fitted" if prior is None else "blended"
    votes = _known_votes(battles, models)
    data = pairwise_from_battles(votes, models=models)
    fit = fit_user_ratings(
        data,
        np.zeros(len(data.outcomes), dtype=np.intp),
        1,
        method=method,
        shrinkage="cv",
        prior=reference if prior is None else prior,
        alpha=alpha if method == "bt" else None,
        confidence=confidence,
    )
    board = build_leaderboard(
        method,
        models,
        fit.ratings[0],
        fit.lower[0],
        fit.upper[0],
        model_counts(data),
        n_battles=len(data.outcomes),
        interval="laplace" if method == "bt" else "none",
        confidence=confidence,
        odds=user_board_odds(fit),
    )
    rho = float(spearman_per_row(fit.ratings, reference, fit.seen)[0])
    start = reference if prior is None else np.asarray(prior, dtype=np.float64)
    explanation = explain(
        models,
        fit.ratings[0],
        reference,
        start,
        queries,
        from_prediction=prior is not None and queries is not None,
        note=_note(method, prior is not None, queries is not None),
        taste=_taste(votes, models, taste_prior, fit.ratings[0], confidence),
    )
    return {
        **board.to_dict(),
        "user_id": user_id,
        "source": source,
        "spearman": round(rho, 4) if np.isfinite(rho) else None,
        "explanation": explanation.to_dict(),
    }


def _answered(
    votes: pd.DataFrame, models: tuple[str, ...], features: tuple[str, ...], scaling: str
) -> tuple[pd.DataFrame, PairwiseData, FloatArray, FloatArray, FloatArray]:
    """The votes with both answers, in vote order; their arrays over ``models``; their
    style covariates (``scaling``, the columns of ``features``); and the two answers'
    measures (:func:`features.answer_style.answer_style`)."""
    if not {"answer_a", "answer_b"} <= set(votes.columns):
        answered = votes.iloc[:0]
    else:
        both = votes["answer_a"].map(lambda a: isinstance(a, str)) & votes["answer_b"].map(
            lambda b: isinstance(b, str)
        )
        answered = votes.loc[both.astype(bool)]
    answered = answered.iloc[vote_order(answered)]
    data = pairwise_from_battles(answered, models=models)
    style_a = answer_style(answered["answer_a"].tolist() if len(answered) else [])
    style_b = answer_style(answered["answer_b"].tolist() if len(answered) else [])
    differences = style_differences(style_a, style_b, scaling=_scaling(scaling))
    # by name: a fit gives no coefficient to a covariate that never varied
    columns = [ANSWER_STYLE_FEATURES.index(f) for f in features]
    return answered, data, differences[:, columns], style_a, style_b


def _scaling(scaling: str) -> Scaling:
    return cast(Scaling, scaling if scaling in SCALINGS else DEFAULT_SCALING)


def typical_answer_style(
    style_a: FloatArray,
    style_b: FloatArray,
    matchups: npt.ArrayLike,
    n_models: int,
    *,
    scaling: str = DEFAULT_SCALING,
) -> FloatArray:
    """Each model's typical answer against the average answer, in covariate units.

    Parameters
    ----------
    style_a, style_b : ndarray
        ``(n, k)`` the measures of each vote's two answers
        (:func:`features.answer_style.answer_style`).
    matchups : array_like of int
        ``(n, 2)`` the vote's two models.
    n_models : int
        Number of models.
    scaling : str
        How measures become covariates (:func:`features.answer_style.style_differences`).

    Returns
    -------
    ndarray
        ``(n_models, k)``: the mean covariate of the model's answers against the mean
        answer of all (for length, a log ratio, exactly the model's mean log length less
        everyone's); zeros for a model without an answer.
    """
    pairs = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    models = np.concatenate([pairs[:, 0], pairs[:, 1]])
    measures = np.concatenate([style_a, style_b])
    if not len(measures):
        return np.zeros((n_models, len(ANSWER_STYLE_FEATURES)))
    mean = np.tile(measures.mean(axis=0), (len(measures), 1))
    against = style_differences(measures, mean, scaling=_scaling(scaling))
    # centred on the answers' mean, so that the average answer sits at zero (the mean of
    # log ratios against the mean measure is not zero): only differences are used
    against -= against.mean(axis=0)
    counts = np.bincount(models, minlength=n_models)
    sums = np.stack(
        [np.bincount(models, against[:, j], minlength=n_models) for j in range(against.shape[1])],
        axis=1,
    )
    typical: FloatArray = sums / np.maximum(counts, 1)[:, None]
    return typical


def _offsets(data: PairwiseData, ratings: npt.ArrayLike) -> FloatArray:
    """Each vote's log-odds before its answers: ``theta_a - theta_b`` of Elo ``ratings``
    (``(k,)`` over ``data.models``, or ``(n, k)`` each vote's voter's)."""
    elo = np.asarray(ratings, dtype=np.float64)
    theta = (np.where(np.isfinite(elo), elo, CENTER) - CENTER) / ELO_PER_NAT
    a, b = data.matchups[:, 0], data.matchups[:, 1]
    rows = np.arange(a.size)
    offsets: FloatArray = (
        theta[a] - theta[b] if theta.ndim == 1 else theta[rows, a] - theta[rows, b]
    )
    return offsets


def _taste(
    votes: pd.DataFrame,
    models: tuple[str, ...],
    prior: StylePrior | None,
    ratings: npt.ArrayLike,
    confidence: float,
) -> Taste | None:
    """The user's taste in answers: how their votes' answers, against the two models'
    typical ones, move them beyond their own ratings of the models; None without a prior
    or without answer fields."""
    if prior is None or not {"answer_a", "answer_b"} <= set(votes.columns):
        return None
    _, data, differences, _, _ = _answered(votes, models, prior.features, prior.scaling)
    typical = prior.typical_of(models)
    departure = differences - (typical[data.matchups[:, 0]] - typical[data.matchups[:, 1]])
    offsets = _offsets(data, ratings)
    style = style_under_prior(prior, departure, data.outcomes, offsets, confidence=confidence)
    return answer_taste(style)


def fit_taste_prior(
    battles: pd.DataFrame,
    style_document: Mapping[str, Any] | None,
    *,
    method: StyleAlphaMethod = "cv",
    rng: np.random.Generator | int | None = 0,
) -> StylePrior | None:
    """What all users' votes say of how taste in answers varies: the prior each user's
    taste is refitted under (:func:`personal_leaderboard`'s ``taste_prior``).

    A person's taste is what their votes' answers do beyond their own ratings of the two
    models: each vote's odds start from the user's shrunk ratings
    (:func:`ranking.users.fit_user_ratings`), and its covariates are the two answers'
    departures from the two models' typical answers (:func:`typical_answer_style`), so a
    liking for a model is not read as a liking for its usual length. Every user's
    coefficients are fitted at once (:func:`ranking.personal_style.fit.fit_user_style`),
    shrunk toward the style-controlled board's (their variance from its intervals), with
    the spread of tastes and the fallback rule learnt from the users.

    Parameters
    ----------
    battles : pandas.DataFrame
        The fit's battle frame; the votes with a user and both answers are used.
    style_document : mapping or None
        The fit's style-controlled board (``style_control.json``).
    method : {"cv", "evidence", "later"}
        How the spread of tastes is learnt (``"later"``: each user's first half of
        votes judged by the second).
    rng : numpy.random.Generator or int, optional
        Chooses the folds.

    Returns
    -------
    StylePrior or None
        None without a style-controlled board, user ids or a vote with both answers.
    """
    if style_document is None or "user_id" not in battles.columns:
        return None
    control = style_document["style_control"]
    coefficients = control["coefficients"]
    if not coefficients:
        return None
    features = tuple(str(c["feature"]) for c in coefficients)
    scaling = str(control["scaling"])
    voted = battles.loc[battles["user_id"].notna()]
    models = tuple(sorted(set(voted["model_a"].astype(str)) | set(voted["model_b"].astype(str))))
    answered, data, differences, style_a, style_b = _answered(voted, models, features, scaling)
    if not len(data.outcomes):
        return None
    codes, names = user_codes(answered)
    boards = fit_user_ratings(data, codes, len(names), rng=rng).ratings  # (U, k), Elo
    columns = [ANSWER_STYLE_FEATURES.index(f) for f in features]
    typical = typical_answer_style(style_a, style_b, data.matchups, data.n_models, scaling=scaling)[
        :, columns
    ]
    departure = differences - (typical[data.matchups[:, 0]] - typical[data.matchups[:, 1]])
    offsets = _offsets(data, boards[codes])
    z = float(norm.ppf(0.5 + float(style_document.get("confidence", 0.95)) / 2.0))
    beta = np.array([float(c["coefficient"]) for c in coefficients]) / ELO_PER_NAT
    width = np.array([float(c["upper"]) - float(c["lower"]) for c in coefficients])
    covariance = np.diag((width / (2.0 * z * ELO_PER_NAT)) ** 2)
    earlier = earlier_votes(codes, len(names)) if method == "later" else None
    style = fit_user_style(
        departure, data.outcomes, offsets, codes, len(names), beta, features=features,
        aggregate_covariance=covariance, method=method, earlier=earlier, rng=rng,
    )  # fmt: skip
    return style.prior(covariance, scaling, models, typical)


def _note(method: Method, predicted: bool, queries: bool) -> str | None:
    """What an explanation of a board that does not start from a prediction says."""
    if predicted:
        return None
    if method == "elo":
        return "This Elo board starts from everyone's Elo ratings, so only your votes moved it."
    if queries:
        return "This board starts from everyone's ratings, so only your votes moved it."
    return (
        "There is no prediction from your queries (this service has no rating predictor, "
        "or none of your votes has a prompt), so this board starts from everyone's "
        "ratings and only your votes moved it."
    )
