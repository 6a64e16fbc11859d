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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.decomposition import PCA

from features.contexts import StyleBasis, query_context_width, vote_query_context
from features.fit_start import EarlierFit, PredictorSettings
from features.prediction import StyleMember
from features.profile import UserProfiler
from features.style import style_features
from features.user_profiles import UserProfiles
from ranking.contextual import (
    ALPHA_GRID,
    ContextualBT,
    fit_with_folds,
    search_alpha,
)
from ranking.pair_votes import pair_order
from ranking.progress import Advance, Progress, start
from ranking.types import FloatArray, PairwiseData

__all__ = [
    "SEARCH_VOTES",
    "STYLE_COMPONENTS",
    "FittedMembers",
    "fit_members",
]

#: Numbers of style components of the models :class:`RatingPredictor` averages.
STYLE_COMPONENTS: tuple[int, ...] = (4, 8, 16)

#: Spread (in the standardised style's units) below which a style component is left out.
MIN_STYLE_SPREAD = 1e-6

#: Votes the penalty search fits at most: past it, the votes of users drawn at random.
SEARCH_VOTES = 200_000


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
    fold_votes : int
        Votes the fold models were fitted on: this fit's, or the earlier fit's where
        they were kept.
    """

    members: list[StyleMember]
    crossed: FloatArray
    fold_models: list[dict[int, ContextualBT]]
    fold_of_user: npt.NDArray[np.intp]
    fold_votes: int


def fit_members(
    predictor: PredictorSettings,
    basis: StyleBasis,
    profiler: UserProfiler,
    battles: pd.DataFrame,
    data: PairwiseData,
    users: npt.NDArray[np.intp],
    profiles: UserProfiles,
    progress: Progress | None = None,
    earlier: EarlierFit | None = None,
) -> FittedMembers:
    """Fit the members the predictor averages, one per number of style components.

    Parameters
    ----------
    predictor : PredictorSettings
        The settings of the predictor being fitted.
    basis : StyleBasis
        How it reads the users' styles (its style standardisation).
    profiler : UserProfiler
        Its profiler, fitted on ``battles``.
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
    earlier : EarlierFit, optional
        What an earlier fit lends (a refit's): penalties, starting points, and with
        ``bases`` its style components, folds and fold models. The optima are those of
        a fit on these bases without it; only the penalty search is skipped, and the
        fold models are kept as they are while few votes are newer than them
        (:meth:`EarlierFit.keeps_folds`).

    Returns
    -------
    FittedMembers
    """
    earlier = earlier if earlier is not None else EarlierFit()
    n_users = len(profiles.user_ids)
    rng = np.random.default_rng(predictor.random_state)
    fold_of_user = _folds(profiles.user_ids, predictor.folds, rng, earlier.fold_of_user)
    # the votes in the order the fits keep them (by model pair): their contexts are
    # written in it, and no fit moves 1.8 GB of them again
    order = pair_order(data.matchups, data.n_models)
    matchups, outcomes, users = data.matchups[order], data.outcomes[order], users[order]
    fold = fold_of_user[users]
    user_style = basis.standard_style(profiles.style(basis.source))
    sizes = (predictor.style_components,) if predictor.style_components else STYLE_COMPONENTS
    searched_rows = _search_rows(users, n_users, rng)
    search_folds = np.unique(fold if searched_rows is None else fold[searched_rows])
    before_by_size = {int(m.components.n_components_): m for m in earlier.members}
    # each member's fold models beside it, keyed as before_by_size (the last of a size)
    folds_by_size = {
        int(m.components.n_components_): folds
        for m, folds in zip(earlier.members, earlier.fold_models, strict=False)
    }
    searched = len(ALPHA_GRID) * len(search_folds) if predictor.alpha is None else 0
    kept = [_kept(before_by_size, n, user_style) is not None for n in sizes]
    keep_folds = earlier.keeps_folds(len(data.outcomes))
    fits = sum(
        (0 if k else searched) + 1 + (0 if k and keep_folds else predictor.folds) for k in kept
    )
    advance = start(progress, "rating predictor", fits, "fits")
    members = []
    all_fold_models = []
    fold_votes = len(data.outcomes)  # of the oldest fold models kept, if any
    crossed = np.zeros((n_users, data.n_models))
    for components in sizes:
        n = max(1, min(components, *user_style.shape))
        member = before_by_size.get(n)  # the same bounded size as _kept's
        if earlier.bases and member is not None:
            pca, scale = member.components, member.scale
        else:
            pca, scale = _style_components(predictor, user_style, n)
        user_contexts = basis.member_contexts(profiles, pca, scale)
        contexts = _vote_contexts(
            predictor, basis, profiler, battles, order, users, user_contexts, pca, scale
        )
        before = None if member is None else member.model
        if before is not None and predictor.alpha is None:
            alpha, fold_models = before.alpha, dict[int, ContextualBT]()
        else:
            alpha, fold_models = _penalty(
                predictor,
                matchups,
                outcomes,
                data.n_models,
                contexts,
                fold,
                searched_rows,
                advance,
            )
        shape = (data.n_models, contexts.shape[1])
        first = before if before is not None and before.coef.shape == shape else None
        earlier_folds = folds_by_size.get(n)  # only an earlier fit on these bases lends them
        if (
            keep_folds
            and earlier_folds is not None
            and _fits_all(earlier_folds, predictor.folds, shape)
        ):
            fold_models = dict(earlier_folds)
            fold_votes = min(fold_votes, earlier.fold_votes or fold_votes)
        elif fold_models:  # the search's fold fits at the penalty are reused
            advance(len(fold_models))
        left = [f for f in range(predictor.folds) if f not in fold_models]
        # the contexts are in the fits' order already: they are kept, not copied
        model, more = fit_with_folds(
            matchups,
            outcomes,
            contexts,
            data.n_models,
            fold,
            left,
            alpha=alpha,
            start=first,
            fold_starts=earlier_folds,
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
    return FittedMembers(members, crossed, all_fold_models, fold_of_user, fold_votes)


def _fits_all(models: Mapping[int, ContextualBT], folds: int, shape: tuple[int, int]) -> bool:
    """Whether ``models`` hold a model of ``shape`` for each of ``folds`` folds."""
    return all(f in models and models[f].coef.shape == shape for f in range(folds))


def _folds(
    user_ids: npt.ArrayLike,
    folds: int,
    rng: np.random.Generator,
    earlier: pd.Series | None,
) -> npt.NDArray[np.intp]:
    """Each user's fold: the users shuffled, then dealt out in turn, so that the folds
    are as even as they can be. With ``earlier`` (user id to fold), a user it holds
    keeps their fold, and only the others are dealt: a refit's fold models start from
    the earlier fit's of the same users."""
    ids = np.asarray(user_ids)
    if earlier is None:
        return rng.permutation(len(ids)) % folds
    known = pd.Series(earlier).reindex(pd.Index(ids))
    known = known.where((known >= 0) & (known < folds))
    fold = known.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    new = np.flatnonzero(np.isnan(fold))
    fold[new] = rng.permutation(new.size) % folds
    return fold.astype(np.intp)


def _style_components(
    predictor: PredictorSettings, user_style: FloatArray, n: int
) -> tuple[PCA, FloatArray]:
    """``n`` principal components of the users' standardised styles, and their scale."""
    with np.errstate(invalid="ignore", divide="ignore"):  # styles that never vary
        pca = PCA(n, random_state=predictor.random_state).fit(user_style)
    spread = pca.transform(user_style).std(axis=0)
    # a direction along which the training users do not differ (every voter judged
    # the same prompts, say) is left out: scaled to unit variance, a rounding error
    # of 1e-12 would become a new user's style of a billion standard deviations
    return pca, np.where(spread > MIN_STYLE_SPREAD, spread, np.inf)


def _kept(
    earlier: dict[int, StyleMember], components: int, user_style: FloatArray
) -> StyleMember | None:
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
    predictor: PredictorSettings,
    matchups: npt.NDArray[np.intp],
    outcomes: FloatArray,
    n_models: int,
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
        search = search_alpha(matchups, outcomes, contexts, n_models, fold, advance=advance)
        return search.alpha, dict(search.fold_models)
    search = search_alpha(
        matchups[rows], outcomes[rows], contexts[rows], n_models, fold[rows], advance=advance
    )
    return search.alpha, {}


def _vote_contexts(
    predictor: PredictorSettings,
    basis: StyleBasis,
    p: UserProfiler,
    battles: pd.DataFrame,
    rows: npt.NDArray[np.intp],
    users: npt.NDArray[np.intp],
    user_contexts: FloatArray,
    components: PCA,
    scale: FloatArray,
) -> FloatArray:
    """The context of each vote of ``rows`` (positions in ``battles``), in that order:
    1, its query's topic (one-hot) and components, and style. ``users`` are the rows'.

    The style part is the voter's standardised mean style (``style_context="user"``),
    or the query's own (``"query"``). A preference for a style belongs to the person,
    and one query is a noisy measure of how they write: fitted on per-query style,
    the style effects come out attenuated.
    """
    present = battles["prompt"].notna().to_numpy()
    width = query_context_width(p)
    out = np.empty((len(rows), 1 + width + components.n_components_))
    out[:, 0] = 1.0
    vote_query_context(p, present, rows, out=out[:, 1 : 1 + width])  # written in place
    style = out[:, 1 + width :]
    if predictor.style_context == "user":
        style[:] = user_contexts[users, 1 + width :]
    else:
        style[:] = 0.0
        asked = present[rows]
        prompts = battles["prompt"].to_numpy()[rows[asked]]
        labels = p.labels_[(np.cumsum(present) - 1)[rows[asked]]]  # of the fitted queries
        raw = style_features([str(q) for q in prompts])
        parts = {"raw": [raw], "relative": [p.relative_style(raw, labels)]}
        parts["both"] = parts["raw"] + parts["relative"]
        style[asked] = basis.style_part(np.hstack(parts[predictor.style_source]), components, scale)
    return out
