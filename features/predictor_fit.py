"""How a :class:`~features.predictor.RatingPredictor` is fitted: its averaged members.

Each member keeps a number of style components (:data:`STYLE_COMPONENTS`); its penalty is
chosen by held-out users' votes (:func:`ranking.contextual.search_alpha`), it is fitted on
every training vote, and each training user is predicted by a model fitted without their
fold, so that the predictor can learn how far users stray from their prediction. The
predictor's own module holds the settings, the predictions and the persistence; this one
only what :meth:`~features.predictor.RatingPredictor.fit` needs.

Past :data:`SEARCH_VOTES` votes, the penalty is searched on the votes of a random sample
of users instead of all of them. The penalty is on the sum of the votes' losses, so its
weight against the data shrinks as votes grow, while the search costs up to
``len(ALPHA_GRID) * folds`` fits a member (at two million votes, hours). The model of all
votes is then fitted once at the chosen penalty, and each fold's model starts from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.decomposition import PCA

from features.prediction import StyleMember
from features.profile import STYLE_SOURCES, UserProfiles
from features.query_context import query_context_width, vote_query_context
from features.style import style_features
from ranking.contextual import (
    ALPHA_GRID,
    ContextualBT,
    fit_with_folds,
    search_alpha,
)
from ranking.progress import Advance, Progress, start
from ranking.types import FloatArray, PairwiseData

if TYPE_CHECKING:
    from features.predictor import RatingPredictor

__all__ = ["SEARCH_VOTES", "STYLE_COMPONENTS", "FittedMembers", "check_settings", "fit_members"]

#: Numbers of style components of the models :class:`RatingPredictor` averages.
STYLE_COMPONENTS: tuple[int, ...] = (4, 8, 16)

#: Spread (in the standardised style's units) below which a style component is left out.
MIN_STYLE_SPREAD = 1e-6

#: Votes the penalty search fits at most: past it, the votes of users drawn at random.
SEARCH_VOTES = 200_000


def check_settings(predictor: RatingPredictor) -> None:
    """Check the predictor's parameters before a fit.

    Raises
    ------
    ValueError
        Naming the parameter and its value: ``folds`` under 2, ``style_components`` not
        a positive integer, an unknown ``style_context`` or ``style_source``.
    """
    if predictor.folds < 2:
        raise ValueError(f"Argument 'folds' must be at least 2, not {predictor.folds}.")
    k = predictor.style_components
    if k is not None and (isinstance(k, bool) or not (isinstance(k, int) and k >= 1)):
        raise ValueError(
            "Argument 'style_components' must be a positive integer, "
            f"not {predictor.style_components!r}."
        )
    if predictor.style_context not in ("user", "query"):
        raise ValueError(
            f"Argument 'style_context' must be 'user' or 'query', not {predictor.style_context!r}."
        )
    if predictor.style_source not in STYLE_SOURCES:
        raise ValueError(
            "Argument 'style_source' must be 'raw', 'relative' or 'both', "
            f"not {predictor.style_source!r}."
        )


@dataclass(frozen=True)
class FittedMembers:
    """What :func:`fit_members` fitted: the members, and their models without each fold.

    Attributes
    ----------
    members : list of StyleMember
        The models the predictor averages, each fitted on every training vote.
    crossed : ndarray
        ``(n_users, n_models)`` strengths (natural-log units) of each training user,
        averaged over the members, each predicted by a model fitted without their fold.
    fold_models : list of dict of int to ContextualBT
        For each member, its model fitted without each fold's users.
    fold_of_user : ndarray of int
        ``(n_users,)`` fold of each training user.
    """

    members: list[StyleMember]
    crossed: FloatArray
    fold_models: list[dict[int, ContextualBT]]
    fold_of_user: npt.NDArray[np.intp]


def fit_members(
    predictor: RatingPredictor,
    battles: pd.DataFrame,
    data: PairwiseData,
    users: npt.NDArray[np.intp],
    profiles: UserProfiles,
    progress: Progress | None = None,
    earlier: Sequence[StyleMember] = (),
) -> FittedMembers:
    """Fit the members the predictor averages, one per number of style components.

    Parameters
    ----------
    predictor : RatingPredictor
        Its settings, its fitted profiler and its style standardisation
        (``style_center_``, ``style_scale_``) are read.
    battles : DataFrame
        The training votes, in vote order, each with a user.
    data : PairwiseData
        The same votes as pairwise data.
    users : array of int
        ``(n_votes,)`` row of ``profiles`` of each vote's user.
    profiles : UserProfiles
        The training users' profiles.
    progress : Progress, optional
        Told of ``"rating predictor"``, in contextual Bradley-Terry fits.
    earlier : sequence of StyleMember, optional
        The members of an earlier fit, in order (a refit's): each member of the same
        number of style components keeps its penalty (no search) and starts its solver
        from its coefficients where their shape is this fit's. The optimum is the same
        as without them; only the penalty search is skipped.

    Returns
    -------
    FittedMembers
    """
    n_users = len(profiles.user_ids)
    rng = np.random.default_rng(predictor.random_state)
    fold_of_user = rng.permutation(n_users) % predictor.folds
    fold = fold_of_user[users]
    user_style = predictor.standard_style(profiles.style(predictor.style_source))
    sizes = (predictor.style_components,) if predictor.style_components else STYLE_COMPONENTS
    searched_rows = _search_rows(users, n_users, rng)
    search_folds = np.unique(fold if searched_rows is None else fold[searched_rows])
    before_by_size = {int(m.components.n_components_): m.model for m in earlier}
    searched = len(ALPHA_GRID) * len(search_folds) if predictor.alpha is None else 0
    kept = [_kept(before_by_size, n, user_style) is not None for n in sizes]
    fits = sum((0 if k else searched) + 1 + predictor.folds for k in kept)
    advance = start(progress, "rating predictor", fits, "fits")
    members = []
    all_fold_models = []
    crossed = np.zeros((n_users, data.n_models))
    for components in sizes:
        n = max(1, min(components, *user_style.shape))
        with np.errstate(invalid="ignore", divide="ignore"):  # styles that never vary
            pca = PCA(n, random_state=predictor.random_state).fit(user_style)
        spread = pca.transform(user_style).std(axis=0)
        # a direction along which the training users do not differ (every voter judged
        # the same prompts, say) is left out: scaled to unit variance, a rounding error
        # of 1e-12 would become a new user's style of a billion standard deviations
        scale = np.where(spread > MIN_STYLE_SPREAD, spread, np.inf)
        user_contexts = predictor.member_contexts(profiles, pca, scale)
        contexts = _vote_contexts(predictor, battles, users, user_contexts, pca, scale)
        before = before_by_size.get(n)  # the same bounded size as _kept's
        if before is not None and predictor.alpha is None:
            alpha, fold_models = before.alpha, dict[int, ContextualBT]()
        else:
            alpha, fold_models = _penalty(predictor, data, contexts, fold, searched_rows, advance)
        shape = (data.n_models, contexts.shape[1])
        first = before if before is not None and before.coef.shape == shape else None
        if fold_models:  # the search's fold fits at the penalty are reused
            advance(len(fold_models))
        left = [f for f in range(predictor.folds) if f not in fold_models]
        # the votes' contexts, sorted in place by pair: the fits keep no second copy
        model, more = fit_with_folds(
            data.matchups,
            data.outcomes,
            contexts,
            data.n_models,
            fold,
            left,
            alpha=alpha,
            start=first,
            advance=advance,
        )
        fold_models |= more
        del contexts
        member_crossed = np.zeros((n_users, data.n_models))
        for f in range(predictor.folds):
            held = fold_of_user == f
            member_crossed[held] = fold_models[f].strengths(user_contexts[held])
        members.append(StyleMember(pca, scale, model))
        all_fold_models.append(fold_models)
        crossed += member_crossed / len(sizes)
    return FittedMembers(members, crossed, all_fold_models, fold_of_user)


def _kept(
    earlier: dict[int, ContextualBT], components: int, user_style: FloatArray
) -> ContextualBT | None:
    """The earlier fit's model of a member of ``components`` style components, if any
    (the number a member keeps is bounded by the users' style, as in :func:`fit_members`)."""
    return earlier.get(max(1, min(components, *user_style.shape)))


def _search_rows(
    users: npt.NDArray[np.intp], n_users: int, rng: np.random.Generator
) -> npt.NDArray[np.intp] | None:
    """The votes the penalty search fits: ``None`` (all of them) up to
    :data:`SEARCH_VOTES`, else those of users drawn at random until the next user's
    would pass it (at least one user's). Whole users are drawn, so that the search still
    scores the prediction of users it has not seen."""
    if len(users) <= SEARCH_VOTES:
        return None
    order = rng.permutation(n_users)
    per_user = np.bincount(users, minlength=n_users)[order]
    drawn = max(1, int(np.searchsorted(np.cumsum(per_user), SEARCH_VOTES, side="right")))
    chosen = np.zeros(n_users, dtype=bool)
    chosen[order[:drawn]] = True
    return np.flatnonzero(chosen[users])


def _penalty(
    predictor: RatingPredictor,
    data: PairwiseData,
    contexts: FloatArray,
    fold: npt.NDArray[np.intp],
    rows: npt.NDArray[np.intp] | None,
    advance: Advance,
) -> tuple[float, dict[int, ContextualBT]]:
    """A member's penalty, with the fold models fitted on the way that can be reused.

    The predictor's own ``alpha`` if set; else the search's choice, by held-out users'
    votes of all of ``rows`` (all votes if ``None``). Only a search of all votes has fold
    models to give back: a sample's are models of too few votes.
    """
    if predictor.alpha is not None:
        return predictor.alpha, {}
    if rows is None:
        search = search_alpha(
            data.matchups, data.outcomes, contexts, data.n_models, fold, advance=advance
        )
        return search.alpha, dict(search.fold_models)
    search = search_alpha(
        data.matchups[rows],
        data.outcomes[rows],
        contexts[rows],
        data.n_models,
        fold[rows],
        advance=advance,
    )
    return search.alpha, {}


def _vote_contexts(
    predictor: RatingPredictor,
    battles: pd.DataFrame,
    users: npt.NDArray[np.intp],
    user_contexts: FloatArray,
    components: PCA,
    scale: FloatArray,
) -> FloatArray:
    """Each vote's context: 1, its query's topic (one-hot) and components, and style.

    The style part is the voter's standardised mean style (``style_context="user"``),
    or the query's own (``"query"``). A preference for a style belongs to the person,
    and one query is a noisy measure of how they write: fitted on per-query style,
    the style effects come out attenuated.
    """
    p = predictor.profiler_
    present = battles["prompt"].notna().to_numpy()
    width = query_context_width(p)
    out = np.empty((len(battles), 1 + width + components.n_components_))
    out[:, 0] = 1.0
    vote_query_context(p, present, out=out[:, 1 : 1 + width])  # written in place
    style = out[:, 1 + width :]
    if predictor.style_context == "user":
        style[:] = user_contexts[users, 1 + width :]
    else:
        style[:] = 0.0
        raw = style_features(battles["prompt"][present].astype(str).tolist())
        parts = {"raw": [raw], "relative": [p.relative_style(raw, p.labels_)]}
        parts["both"] = parts["raw"] + parts["relative"]
        style[present] = predictor.style_part(
            np.hstack(parts[predictor.style_source]), components, scale
        )
    return out
