"""The contextual model's contexts: what a vote's query is about, and what a user's are.

A context (:mod:`ranking.contextual`) is 1, what the query is about (its topic, one-hot,
then its query components: :class:`features.query_context.QueryComponents`), then the
voter's style as a member's principal components (:class:`StyleBasis`). A training vote's
comes from the fitted profiler's rows (:func:`vote_query_context`), a user's from their
profile (:func:`user_query_context`, :meth:`StyleBasis.member_contexts`). The rating
predictor's fit, its held-out evidence and its predictions all read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sklearn.decomposition import PCA

from features.profile import UserProfiler
from features.projection import pca_transform
from features.user_profiles import StyleSource, UserProfiles
from ranking.types import FloatArray

__all__ = ["StyleBasis", "query_context_width", "user_query_context", "vote_query_context"]


@dataclass(frozen=True)
class StyleBasis:
    """How a predictor reads the users' styles: which summaries, and their standardisation.

    Attributes
    ----------
    source : {"raw", "relative", "both"}
        The profile's style summaries read (``RatingPredictor.style_source``).
    center, scale : ndarray
        The training users' mean and spread of those summaries.
    """

    source: StyleSource
    center: FloatArray
    scale: FloatArray

    def standard_style(self, style: FloatArray) -> FloatArray:
        """Styles standardised on the training users' mean styles, clipped to 5 sd."""
        return np.clip((style - self.center) / self.scale, -5.0, 5.0)

    def style_part(self, style: FloatArray, components: PCA, scale: FloatArray) -> FloatArray:
        """Style as unit-variance principal components of the users' standardised styles.

        Parameters
        ----------
        style : ndarray
            ``(n, n_style)`` style summaries, as :attr:`source` selects them.
        components, scale : PCA, ndarray
            A member's principal components and their spreads
            (:class:`features.prediction.StyleMember`).
        """
        return pca_transform(components, self.standard_style(style)) / scale

    def member_contexts(
        self, profiles: UserProfiles, components: PCA, scale: FloatArray
    ) -> FloatArray:
        """The users' ``(n_users, p)`` contexts for a member of ``components`` and ``scale``.

        1, the topic shares, the query components, then the member's style components.
        """
        topics = user_query_context(profiles)
        style_part = self.style_part(profiles.style(self.source), components, scale)
        return np.hstack([np.ones((len(topics), 1)), topics, style_part])


def vote_query_context(
    profiler: UserProfiler,
    present: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.intp] | None = None,
    out: FloatArray | None = None,
) -> FloatArray:
    """What each training vote's query is about: its topic (one-hot), then its components.

    ``present`` marks the fitted rows with a prompt; the others get the population's
    topic shares and mean components. ``rows``, when given, are the positions of the
    only rows wanted, in that order. ``out``, when given, is the ``(n, width)`` array
    (:func:`query_context_width`) to write into, a view of a wider one say: at two
    million votes of 110 columns, each array saved is 1.8 GB.
    """
    fitted = np.cumsum(present) - 1  # each present row's position among the fitted queries
    if rows is None:
        rows = np.arange(len(present))
    kept = np.flatnonzero(present[rows])
    index = fitted[rows[kept]]
    k = profiler.topic_share_.size
    if out is None:
        out = np.empty((len(rows), query_context_width(profiler)))
    out[:, :k] = profiler.topic_share_
    out[kept, :k] = 0.0
    out[kept, profiler.labels_[index]] = 1.0
    if out.shape[1] > k:
        out[:, k:] = profiler.query_mean_
        for first in range(0, kept.size, _ROWS_AT_A_TIME):  # no copy of every row at once
            block = slice(first, first + _ROWS_AT_A_TIME)
            out[kept[block], k:] = profiler.query_context_[index[block]]
    return out


#: Rows of the query components copied at a time by :func:`vote_query_context`.
_ROWS_AT_A_TIME = 65_536


def query_context_width(profiler: UserProfiler) -> int:
    """Columns of :func:`vote_query_context`: the topics, and the query components where
    the profiler has them."""
    if getattr(profiler, "query_model_", None) is None:  # profilers saved before them
        return int(profiler.topic_share_.size)
    return int(profiler.topic_share_.size + profiler.query_mean_.size)


def user_query_context(profiles: UserProfiles) -> FloatArray:
    """Users' counterpart of :func:`vote_query_context`: topic shares, mean components.

    The ``topic:`` and ``query_pc:`` columns of the profiles, in their order (read off the
    array: this runs at every prediction, where a frame would cost more than the maths).
    """
    return profiles.values[:, profiles.columns("topic:", "query_pc:")]
