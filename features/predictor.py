"""Predict a user's ratings from their queries, and sharpen the prediction with their votes.

:class:`RatingPredictor` fits a contextual Bradley-Terry model
(:mod:`ranking.contextual`) on every training vote, with a context of: the constant 1, the
topic of the vote's query (one-hot) and the principal components of its embedding
(:mod:`features.query_context`, where the profiler has them), and the voter's writing
style (a few principal components of the standardised mean style of their queries, raw
and relative to each query's topic: :attr:`RatingPredictor.style_source`). A user's
predicted strength of each model is the model's strength at the user's mean context,
that is at their profile's smoothed topic shares, mean embedding components and style.

How many style components to keep is a bias-variance choice that held-out users' votes
barely settle, so the prediction averages one model for each candidate number
(:data:`~features.predictor_fit.STYLE_COMPONENTS`), each with its own penalty chosen by
those votes. On four simulated arenas the average raised new users' Spearman against
their true rankings by 0.003 to 0.017 (0.008 on average) over the single model chosen by
cross-validation.

How far a prediction may move from the aggregate is learnt too: a person's earlier
queries need not say what they will ask and prefer next, so the move is scaled by a
weight chosen on training users' *later* votes (:mod:`features.evidence`); at 0 the
prediction is the aggregate board.

How far a user strays from their prediction is learnt from held-out users: the training
users are split into folds, each fold predicted by a model fitted on the others, and the
prior precision of a user's departure from that prediction (``blend_alpha_``) is the one
whose blend of each user's first votes best predicts their later votes, in the same
time-ordered split as the weights (:meth:`features.evidence.TimeSplit.blend_alpha`). Its
standard deviation, :attr:`RatingPredictor.prior_sd`, sets the width of a prediction's
interval; :meth:`RatingPredictor.blend` fits the user's own Bradley-Terry ratings with the
prediction as the prior mean, so a few votes move it and many votes dominate.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from features.contexts import StyleBasis
from features.evidence import learn_weights, time_split
from features.fit_start import EarlierFit, check_settings
from features.persistence import Folder
from features.prediction import Prediction, StyleMember
from features.predictor_fit import fit_members
from features.profile import UserProfiler
from features.user_profiles import StyleSource, UserProfiles
from ranking.bt import fit_bt
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.odds import z_value
from ranking.pairwise import ELO_PER_NAT, to_elo_scale
from ranking.progress import Progress
from ranking.shrinkage import learn_alpha
from ranking.types import FloatArray, PairwiseData
from ranking.users import fit_user_ratings

__all__ = ["RatingPredictor"]

_FOLDER = Folder("predictor.joblib", "predictor.json", "plb-rating-predictor/2", "rating predictor")


class RatingPredictor(BaseEstimator):
    """From a user's queries to their model ratings; from their votes to a sharper one.

    Parameters
    ----------
    profiler : UserProfiler, optional
        Profiles of users' queries (fitted by :meth:`fit` unless already fitted).
    alpha : float, optional
        L2 penalty of the contextual model; chosen by user-grouped cross-validation when
        omitted.
    style_context : {"user", "query"}
        Style part of a vote's context: the voter's mean style (default) or the query's.
    style_source : {"raw", "relative", "both"}
        Which style summaries of the profile enter: the raw means (``style_mean:``), the
        means relative to each query's topic (``style_rel:``, see
        :mod:`features.profile`), or both (default). On real-prompt simulations (issue
        16, 460 users, 12 models) both raised new users' Spearman against the truth from
        0.603 to 0.604 and from 0.649 to 0.662 (seeds 0, 1) over the raw means, and
        cost 0.003 on the template simulator (seed 0); the relative ones alone lost.
    style_components : int, optional
        The style enters as this many principal components of the training users' mean
        styles: a few directions, each with one coefficient per model, instead of one
        coefficient per model and style feature. When omitted, one model is fitted for
        each number in :data:`~features.predictor_fit.STYLE_COMPONENTS` and their
        strengths are averaged.
    folds : int
        Folds over training users, for the penalty, the intervals and the blend.
    confidence : float
        Coverage of the intervals.
    random_state : int
        Seed of the folds.

    Attributes
    ----------
    profiler_ : UserProfiler
    members_ : list of StyleMember
        The averaged contextual models, one per number of style components.
    models_ : tuple of str
    training_predictions_ : ndarray
        ``(n_users, n_models)`` Elo-scale predictions of the training users, each by a
        model fitted without that user's fold (not saved).
    aggregate_ : ndarray
        ``(n_models,)`` Bradley-Terry strengths (natural-log units) of the training
        votes: where every prediction starts.
    evidence_ : EvidenceWeights
        How much of the queries' move from the aggregate a prediction keeps, learnt on
        training users' later votes (:mod:`features.evidence`).
    blend_alpha_ : float
        Prior precision (natural-log units) of a user's departure from their prediction.
    fold_models_ : list of dict of int to ContextualBT
        Each member's models without each fold's users: where a refit's start.
    fold_users_ : pandas.Series
        Each training user's fold, by id: a refit keeps it.
    fold_votes_ : int
        Votes the fold models were fitted on (a refit keeps them while few votes are
        newer: :data:`features.fit_start.STALE_FOLD_SHARE`).
    """

    def __init__(
        self,
        profiler: UserProfiler | None = None,
        alpha: float | None = None,
        style_context: Literal["user", "query"] = "user",
        style_source: StyleSource = "both",
        style_components: int | None = None,
        folds: int = 3,
        confidence: float = 0.95,
        random_state: int = 0,
    ) -> None:
        self.profiler = profiler
        self.alpha = alpha
        self.style_context = style_context
        self.style_source = style_source
        self.style_components = style_components
        self.folds = folds
        self.confidence = confidence
        self.random_state = random_state

    # -- fitting ---------------------------------------------------------------------------

    def fit(
        self,
        battles: pd.DataFrame,
        models: tuple[str, ...] | None = None,
        embeddings: Mapping[str, npt.ArrayLike] | None = None,
        progress: Progress | None = None,
        start: RatingPredictor | None = None,
    ) -> RatingPredictor:
        """Fit on the votes and queries of the training users.

        Parameters
        ----------
        battles : DataFrame
            A battle frame (docs/SPEC.md section 1) with ``user_id`` and ``prompt``; votes without
            a user are left out.
        models : tuple of str, optional
            Model order of the ratings; the models present, sorted, by default.
        embeddings : mapping of str to vector, optional
            Precomputed embeddings of the prompts by text, from the topic model's
            backend (:meth:`features.topics.TopicModel.fit`); used, not kept.
        progress : Progress, optional
            Told of the profiler's stages (:meth:`features.profile.UserProfiler.fit`),
            then of ``"rating predictor"``, in contextual Bradley-Terry fits.
        start : RatingPredictor, optional
            An earlier fit over the same models (a refit's): each member keeps its
            penalty, so no penalty is searched, and its solver starts from the earlier
            coefficients. Ignored when its models differ from these votes'.
        """
        check_settings(self)
        battles = battles.iloc[vote_order(battles)]
        battles = battles[battles["user_id"].notna()]
        data = pairwise_from_battles(battles, models)
        users, user_ids = user_codes(battles)
        profiler = self.profiler if self.profiler is not None else UserProfiler()
        earlier = EarlierFit.of(start, data, self, profiler)
        profiles = profiler.fit_transform(battles, embeddings, progress, earlier.query_model)
        if tuple(profiles.user_ids) != user_ids:  # both sorted: a mismatch is a bug
            raise RuntimeError("profiles and votes disagree on the users")
        self.profiler_ = profiler
        self.models_ = data.models
        self.training_profiles_ = profiles  # not saved: see __getstate__
        if earlier.style_center is not None and earlier.style_scale is not None:
            # the earlier fit's standardisation, as its kept members read it
            self.style_center_, self.style_scale_ = earlier.style_center, earlier.style_scale
        else:
            style = profiles.style(self.style_source)
            self.style_center_ = style.mean(axis=0)
            spread = style.std(axis=0)  # one prompt for all: a spread of rounding errors
            shared = spread <= 1e-9 * np.maximum(np.abs(self.style_center_), 1.0)
            self.style_scale_ = np.where(shared, 1.0, spread)
        fitted = fit_members(
            self, self.style_basis, profiler, battles, data, users, profiles, progress, earlier
        )
        self.members_: list[StyleMember] = fitted.members
        self.fold_models_ = fitted.fold_models
        self.fold_votes_ = fitted.fold_votes
        self.fold_users_ = pd.Series(fitted.fold_of_user.astype(np.int8), index=user_ids)
        self.aggregate_ = fit_bt(data.n_models, data.matchups, data.outcomes)
        split = time_split(
            profiler,
            self.style_basis,
            self.folds,
            battles,
            data,
            users,
            profiles,
            fitted,
            self.random_state,
        )
        self.evidence_ = learn_weights(split.held)
        crossed = self.weigh(fitted.crossed)
        self.training_predictions_ = to_elo_scale(crossed)  # not saved: see __getstate__
        alpha = split.blend_alpha(data, self.query_weight)
        if alpha is None:  # no user votes enough to split: every vote's fold decides
            alpha = learn_alpha(
                data.n_models,
                data.matchups,
                data.outcomes,
                users,
                len(profiles.user_ids),
                crossed,
                rng=self.random_state,
            )
        self.blend_alpha_ = alpha
        return self

    @property
    def query_weight(self) -> float:
        """How much of the queries' move from the aggregate a person's ranking keeps.

        ``w_person`` of :mod:`features.evidence`, in ``[0, 1]``: 0 when training users'
        earlier queries did not predict their later votes better than the aggregate
        (the ranking is then the aggregate's), 1 for predictors fitted before it.
        """
        check_is_fitted(self, "members_")
        evidence = getattr(self, "evidence_", None)
        return 1.0 if evidence is None else evidence.person

    @property
    def prompt_weight(self) -> float:
        """How much of one prompt's move from the person a per-prompt ranking keeps.

        ``w_prompt`` of :mod:`features.evidence`, in ``[0, 1]`` (1 for predictors
        fitted before it).
        """
        check_is_fitted(self, "members_")
        evidence = getattr(self, "evidence_", None)
        return 1.0 if evidence is None else evidence.prompt

    def weigh(self, strengths: FloatArray) -> FloatArray:
        """Contextual strengths moved from the aggregate by :attr:`query_weight` only.

        ``aggregate + w_person * (strengths - aggregate)``, natural-log units; the
        strengths as they are for predictors fitted before the weights.
        """
        aggregate = getattr(self, "aggregate_", None)
        if aggregate is None:
            return strengths
        return aggregate + self.query_weight * (strengths - aggregate)

    def strengths(
        self, profiles: UserProfiles, contexts: list[FloatArray] | None = None
    ) -> FloatArray:
        """``(n_users, n_models)`` the members' mean strengths at the users' contexts.

        Natural-log units, before any weight: what the contextual model alone says.
        """
        if contexts is None:
            contexts = self.contexts(profiles)
        strengths = [m.model.strengths(c) for m, c in zip(self.members_, contexts, strict=True)]
        return np.asarray(np.mean(strengths, axis=0), dtype=np.float64)

    @property
    def style_basis(self) -> StyleBasis:
        """How the fitted predictor reads styles: :attr:`style_source`, standardised on
        the training users' mean styles (:class:`features.contexts.StyleBasis`)."""
        check_is_fitted(self, "style_scale_")
        return StyleBasis(self.style_source, self.style_center_, self.style_scale_)

    # -- predicting ------------------------------------------------------------------------

    def contexts(self, profiles: UserProfiles) -> list[FloatArray]:
        """Each member's ``(n_users, p)`` contexts of the users, in :attr:`members_` order.

        A context is 1, the topic shares, the query components, then the member's style
        components (:meth:`StyleMember.summary` names them); :meth:`predict` averages
        each member's ``model.strengths`` of its contexts.
        """
        check_is_fitted(self, "members_")
        basis = self.style_basis
        return [basis.member_contexts(profiles, m.components, m.scale) for m in self.members_]

    def predict(
        self, profiles: UserProfiles, contexts: list[FloatArray] | None = None
    ) -> Prediction:
        """Ratings predicted from the users' query profiles alone.

        The aggregate moved by the queries as far as :attr:`query_weight` lets them
        (:meth:`weigh`). ``contexts``, when given, are :meth:`contexts` of ``profiles``
        computed already (a caller that explains the prediction needs them too).
        """
        ratings = to_elo_scale(self.weigh(self.strengths(profiles, contexts)))
        half = self.interval_half_width
        return Prediction(
            "predicted", profiles.user_ids, self.models_, ratings, ratings - half, ratings + half
        )

    def predict_users(
        self,
        battles: pd.DataFrame,
        embeddings: Mapping[str, npt.ArrayLike] | None = None,
    ) -> Prediction:
        """Ratings of each user of ``battles`` predicted from their queries alone.

        Parameters
        ----------
        battles : DataFrame
            ``user_id`` (on every row) and ``prompt`` columns: a battle frame, or just
            the queries.
        embeddings : mapping of str to vector, optional
            Precomputed embeddings of the prompts by text, from the topic model's backend.

        Returns
        -------
        Prediction
            One row per user, sorted by id.
        """
        check_is_fitted(self, "members_")
        return self.predict(self.profiler_.transform(battles, embeddings))

    def predict_queries(self, queries: list[str], user_id: str = "you") -> Prediction:
        """Ratings of one user known only by ``queries``."""
        check_is_fitted(self, "members_")
        return self.predict(self.profiler_.transform_queries(queries, user_id))

    def blend(
        self, prediction: Prediction, data: PairwiseData, users: npt.NDArray[np.intp]
    ) -> Prediction:
        """Sharpen predictions with the users' own votes.

        Parameters
        ----------
        prediction : Prediction
            The users' predictions, whose rows ``users`` index.
        data : PairwiseData
            Their votes, with the same models in the same order.
        users : array of int
            ``(n,)`` row of ``prediction`` of each vote.
        """
        check_is_fitted(self, "members_")
        if data.models != self.models_:
            missing = sorted(set(data.models) - set(self.models_))
            raise ValueError(
                "votes name models the predictor does not know: " + ", ".join(missing[:5])
                if missing
                else "votes must list the predictor's models in its order"
            )
        fit = fit_user_ratings(
            data,
            users,
            len(prediction.user_ids),
            prior=prediction.ratings,
            alpha=self.blend_alpha_,
            confidence=self.confidence,
        )
        return Prediction(
            "blended", prediction.user_ids, self.models_, fit.ratings, fit.lower, fit.upper
        )

    # -- persistence -----------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Save into the folder ``path``: the model, and ``predictor.json`` to read."""
        check_is_fitted(self, "members_")
        query_names = [n for n in self.profiler_.feature_names_ if n.startswith("query_pc:")]
        n_topics = int(self.profiler_.topic_share_.size)
        evidence = getattr(self, "evidence_", None)
        summary = {
            "models": list(self.models_),
            "prior_sd": self.prior_sd,
            "evidence": None if evidence is None else evidence.to_dict(),
            "n_topics": n_topics,
            "members": [m.summary(n_topics, query_names) for m in self.members_],
        }
        return _FOLDER.save(self, path, summary)

    @classmethod
    def load(cls, path: str | Path) -> RatingPredictor:
        """Load a predictor written by :meth:`save`.

        Raises
        ------
        ValueError
            If ``path`` holds no predictor of this format.
        """
        return _FOLDER.load(cls, path)

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("style_source", "raw")  # predictors saved before style_rel
        super().__setstate__(state)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("training_profiles_", None)
        state.pop("training_predictions_", None)
        return state

    def _z(self) -> float:
        return z_value(self.confidence)

    @property
    def interval_half_width(self) -> float:
        """Half the width of a prediction's interval from queries alone, Elo points."""
        return self._z() * self.prior_sd

    @property
    def prior_sd(self) -> float:
        """How far, in Elo points, a user's ratings are expected to stray from prediction."""
        check_is_fitted(self, "members_")
        return ELO_PER_NAT / float(np.sqrt(self.blend_alpha_))
