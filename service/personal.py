"""One user's leaderboard, refitted from that user's votes (a small problem).

The service calls :func:`personal_leaderboard` right after a vote is ingested, so the
user's page changes on the next read, and again lazily after each new model version.

Where the user's votes carry the two answers (``answer_a``, ``answer_b``) and the fit
learnt how people's taste in answers varies (a :class:`ranking.personal_style.StylePrior`),
the explanation also gives the user's taste in answers
(:func:`features.explanation.answer_taste`), refitted from their answered votes under that
prior: the same shrinkage the fit of all users used, and its fallback to everyone's taste.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from features.explanation import QueryParts, Taste, answer_taste, explain
from ranking.agreement import spearman_per_row
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.leaderboard import build_leaderboard
from ranking.pairwise import ELO_PER_NAT, model_counts
from ranking.personal_style import (
    StyleAlphaMethod,
    StylePrior,
    earlier_votes,
    fit_user_style,
    style_under_prior,
)
from ranking.types import CENTER, FloatArray, Method, PairwiseData
from ranking.users import fit_user_ratings, user_board_odds

__all__ = [
    "Source",
    "controlled_ratings",
    "fit_taste_prior",
    "personal_leaderboard",
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
    controlled: npt.ArrayLike | None = None,
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
        What the fit of all users learnt of their taste in answers: with it, the votes
        of ``battles`` that carry both answers give the user's taste in the explanation.
    controlled : array_like, optional
        ``(k,)`` the style-controlled aggregate's ratings (Elo scale, NaN where it has
        none), each taste vote's odds before style; ``aggregate`` where not given.

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
        taste=_taste(
            votes, models, taste_prior, reference if controlled is None else controlled,
            confidence,
        ),
    )  # fmt: skip
    return {
        **board.to_dict(),
        "user_id": user_id,
        "source": source,
        "spearman": round(rho, 4) if np.isfinite(rho) else None,
        "explanation": explanation.to_dict(),
    }


def _answered(
    votes: pd.DataFrame, models: tuple[str, ...], features: tuple[str, ...], scaling: str
) -> tuple[pd.DataFrame, PairwiseData, FloatArray]:
    """The votes with both answers in vote order, their arrays over ``models``, and their
    style covariates (``scaling``, the columns of ``features``)."""
    if not {"answer_a", "answer_b"} <= set(votes.columns):
        answered = votes.iloc[:0]
    else:
        both = votes["answer_a"].map(lambda a: isinstance(a, str)) & votes["answer_b"].map(
            lambda b: isinstance(b, str)
        )
        answered = votes.loc[both.astype(bool)]
    answered = answered.iloc[vote_order(answered)]
    data = pairwise_from_battles(answered, models=models)
    rule = cast(Scaling, scaling if scaling in SCALINGS else DEFAULT_SCALING)
    texts_a = answered["answer_a"].tolist() if len(answered) else []
    texts_b = answered["answer_b"].tolist() if len(answered) else []
    differences = style_differences(answer_style(texts_a), answer_style(texts_b), scaling=rule)
    # by name: a fit gives no coefficient to a covariate that never varied
    columns = [ANSWER_STYLE_FEATURES.index(f) for f in features]
    return answered, data, differences[:, columns]


def _offsets(data: PairwiseData, ratings: npt.ArrayLike) -> FloatArray:
    """Each vote's log-odds before style: ``theta_a - theta_b`` of Elo ``ratings`` over
    ``data.models`` (a model they lack at the centre)."""
    elo = np.asarray(ratings, dtype=np.float64)
    theta = (np.where(np.isfinite(elo), elo, CENTER) - CENTER) / ELO_PER_NAT
    offsets: FloatArray = theta[data.matchups[:, 0]] - theta[data.matchups[:, 1]]
    return offsets


def _taste(
    votes: pd.DataFrame,
    models: tuple[str, ...],
    prior: StylePrior | None,
    controlled: npt.ArrayLike,
    confidence: float,
) -> Taste | None:
    """The user's taste in answers from their votes with both answers; None without a
    prior or without answer fields."""
    if prior is None or not {"answer_a", "answer_b"} <= set(votes.columns):
        return None
    _, data, differences = _answered(votes, models, prior.features, prior.scaling)
    offsets = _offsets(data, controlled)
    style = style_under_prior(prior, differences, data.outcomes, offsets, confidence=confidence)
    return answer_taste(style)


def controlled_ratings(
    style_document: Mapping[str, Any] | None, models: Sequence[str]
) -> FloatArray | None:
    """The style-controlled board's ratings of ``models`` (NaN where it has none), as
    :func:`personal_leaderboard` takes them (``controlled``); None without a board.

    Parameters
    ----------
    style_document : mapping or None
        The fit's style-controlled board (``style_control.json``:
        :meth:`ranking.style_control.StyleControl.to_dict`).
    models : sequence of str
        The models, in the order wanted.
    """
    if style_document is None:
        return None
    rating = {str(row["model"]): float(row["rating"]) for row in style_document["models"]}
    return np.array([rating.get(str(m), np.nan) for m in models], dtype=np.float64)


def fit_taste_prior(
    battles: pd.DataFrame,
    style_document: Mapping[str, Any] | None,
    *,
    method: StyleAlphaMethod = "cv",
    rng: np.random.Generator | int | None = 0,
) -> StylePrior | None:
    """What all users' votes say of how taste in answers varies: the prior each user's
    taste is refitted under (:func:`personal_leaderboard`'s ``taste_prior``).

    Every user's coefficients are fitted at once (:func:`ranking.personal_style.
    fit_user_style`), each vote's odds before style from the style-controlled board, the
    prior mean its coefficients (their variance from its intervals), and the spread of
    tastes and the fallback rule learnt from the users.

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
    voted = battles.loc[battles["user_id"].notna()]
    models = tuple(sorted(set(voted["model_a"].astype(str)) | set(voted["model_b"].astype(str))))
    answered, data, differences = _answered(voted, models, features, str(control["scaling"]))
    if not len(answered):
        return None
    codes, names = user_codes(answered)
    controlled = controlled_ratings(style_document, models)
    offsets = _offsets(data, np.full(len(models), np.nan) if controlled is None else controlled)
    z = float(norm.ppf(0.5 + float(style_document.get("confidence", 0.95)) / 2.0))
    beta = np.array([float(c["coefficient"]) for c in coefficients]) / ELO_PER_NAT
    width = np.array([float(c["upper"]) - float(c["lower"]) for c in coefficients])
    covariance = np.diag((width / (2.0 * z * ELO_PER_NAT)) ** 2)
    earlier = earlier_votes(codes, len(names)) if method == "later" else None
    style = fit_user_style(
        differences, data.outcomes, offsets, codes, len(names), beta, features=features,
        aggregate_covariance=covariance, method=method, earlier=earlier, rng=rng,
    )  # fmt: skip
    return style.prior(covariance, str(control["scaling"]))


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
