"""Where a rating predictor's fit starts: its settings, checked, and what an earlier fit
of the same models lends a refit (:class:`EarlierFit`).

A refit over the earlier fit's own topic model keeps the bases its coefficients were
fitted on (query components, style standardisation and components, each user's fold),
starts each model from its earlier one, and keeps the earlier models without each fold
as they are while few of its votes are newer than them (:data:`STALE_FOLD_SHARE`).
:func:`features.predictor_fit.fit_members` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from features.prediction import StyleMember
from features.profile import UserProfiler
from features.query_context import QueryComponents
from features.user_profiles import STYLE_SOURCES, StyleSource
from ranking.contextual import ContextualBT
from ranking.types import FloatArray, PairwiseData

__all__ = ["STALE_FOLD_SHARE", "EarlierFit", "PredictorSettings", "check_settings"]

#: Share of a refit's votes that may be newer than its earlier fold models: up to it, a
#: refit keeps them as they are (their users keep their folds, so each still predicts
#: only users it never saw); past it, each fold's model is fitted again.
STALE_FOLD_SHARE = 0.05


class PredictorSettings(Protocol):
    """The settings of a :class:`~features.predictor.RatingPredictor` its fit reads."""

    alpha: float | None
    style_context: str
    style_source: StyleSource
    style_components: int | None
    folds: int
    random_state: int


def check_settings(predictor: PredictorSettings) -> None:
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
class EarlierFit:
    """What a refit takes from an earlier fit of the same models.

    Attributes
    ----------
    members : sequence of StyleMember
        Its members, in order: each member of the same number of style components keeps
        its penalty (no search) and starts its solver from their coefficients where
        their shape is this fit's.
    fold_models : sequence of mapping of int to ContextualBT
        Each member's models without each fold, where each fold's fit starts (with
        ``bases`` only).
    fold_of_user : pandas.Series or None
        Each earlier user's fold, by user id: a user keeps it (with ``bases`` only).
    bases : bool
        Whether each member keeps its style components and their scale, so that its
        coefficients mean the same in this fit (the predictor keeps its query components
        and style standardisation too).
    query_model : QueryComponents or None
        The query components to keep (with ``bases``).
    style_center, style_scale : ndarray or None
        The style standardisation to keep (with ``bases``).
    fold_votes : int or None
        Votes its fold models were fitted on (None where not known: a predictor saved
        before it was kept). With ``bases``, and no more than :data:`STALE_FOLD_SHARE`
        of this fit's votes newer than them, the fold models are kept as they are.
    """

    members: Sequence[StyleMember] = ()
    fold_models: Sequence[Mapping[int, ContextualBT]] = ()
    fold_of_user: pd.Series | None = None
    bases: bool = False
    query_model: QueryComponents | None = None
    style_center: FloatArray | None = None
    style_scale: FloatArray | None = None
    fold_votes: int | None = None

    def keeps_folds(self, n_votes: int) -> bool:
        """Whether a fit of ``n_votes`` votes keeps these fold models as they are: none
        of their votes gone (a fit of fewer votes than they saw fits them again), and no
        more than :data:`STALE_FOLD_SHARE` of its votes newer than them."""
        if not self.bases or self.fold_votes is None or self.fold_votes > n_votes:
            return False
        return self.fold_votes >= (1.0 - STALE_FOLD_SHARE) * n_votes

    @classmethod
    def of(
        cls,
        start: Any,
        data: PairwiseData,
        settings: PredictorSettings,
        profiler: UserProfiler,
    ) -> EarlierFit:
        """What ``start`` (a fitted ``RatingPredictor``, or None) lends the fit
        ``settings`` makes of ``data`` with ``profiler``.

        Nothing unless ``start`` is a fitted predictor of the same models in the same
        order. Its bases too where it was fitted over the same topic model (hence the
        same embedding) as ``profiler``'s, and read with the same settings.
        """
        if start is None or not hasattr(start, "members_"):
            return cls()
        if tuple(start.models_) != tuple(data.models):
            return cls()
        same = (
            hasattr(start, "fold_models_")
            and start.profiler_.topic_model_ is profiler.topic_model
            and (start.style_source, start.style_context, start.folds)
            == (settings.style_source, settings.style_context, settings.folds)
        )
        if not same:
            return cls(start.members_)
        return cls(
            start.members_,
            start.fold_models_,
            start.fold_users_,
            bases=True,
            query_model=start.profiler_.query_model_,
            style_center=start.style_center_,
            style_scale=start.style_scale_,
            fold_votes=getattr(start, "fold_votes_", None),
        )
