"""The profiles a :class:`features.profile.UserProfiler` makes: one row per user.

A profile is what the study found predicts a user's model preferences:

``topic:<k>``
    Share of the user's queries in topic *k*, smoothed toward the share of all users:
    ``(count_k + s * share_k) / (n + s)`` with ``s`` the profiler's ``smoothing``, so
    that a user with two queries is not said to care only about two topics.
``style_mean:<f>``, ``style_sd:<f>``
    Mean (smoothed the same way toward the population's mean) and standard deviation of
    each writing-style feature of :mod:`features.style` over the user's queries.
``style_rel:<f>``
    Mean, smoothed toward 0, of each style feature of the user's queries *relative to
    its topic*: less the feature's mean and over its standard deviation among the
    training queries of the query's topic (each shrunk toward the overall mean and
    deviation by the profiler's ``topic_prior`` pseudo-queries, clipped to 5 sd). A code
    paste is long because it is code and a proof formal because it is maths: this says
    how the user writes for what the topic asks.
``query_pc:<k>``
    Mean, smoothed toward all training queries' mean, of the user's queries' standardised
    principal embedding components (:mod:`features.query_context`; the profiler's
    ``query_components`` of them, none when 0): where in the embedding their queries
    sit, beyond the topics.
``log_votes``
    ``log(1 + number of votes)``: how much of the user the rest is based on.

:class:`UserProfiles` holds the rows and the columns' names; :meth:`UserProfiles.style`
reads the style columns of a source (:data:`STYLE_SOURCES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["STYLE_SOURCES", "StyleSource", "UserProfiles"]

StyleSource = Literal["raw", "relative", "both"]
#: The style columns of :meth:`UserProfiles.style` for each source.
STYLE_SOURCES: dict[str, tuple[str, ...]] = {
    "raw": ("style_mean:",),
    "relative": ("style_rel:",),
    "both": ("style_mean:", "style_rel:"),
}


@dataclass(frozen=True)
class UserProfiles:
    """Profiles of some users: one row per user, one column per named feature.

    Attributes
    ----------
    user_ids : ndarray of object
        The users, in row order (sorted).
    values : ndarray of shape (n_users, n_features)
        The profile vectors.
    feature_names : tuple of str
        Column names.
    """

    user_ids: npt.NDArray[np.object_]
    values: npt.NDArray[np.float64]
    feature_names: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        """The profiles as a frame indexed by ``user_id``."""
        index = pd.Index(self.user_ids, name="user_id")
        return pd.DataFrame(self.values, index=index, columns=list(self.feature_names))

    def columns(self, *prefixes: str) -> npt.NDArray[np.intp]:
        """The positions of the columns whose names start with one of ``prefixes``, those
        of the first prefix first, each in the columns' order (looked up once for one
        profiler's names: this runs at every prediction)."""
        return np.asarray(_prefixed(self.feature_names, prefixes), dtype=np.intp)

    def style(self, source: StyleSource = "raw") -> npt.NDArray[np.float64]:
        """``(n_users, n)`` style summaries: raw means, relative to topic, or both."""
        return self.values[:, list(_style_columns(self.feature_names, source))]

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> UserProfiles:
        """Inverse of :meth:`to_frame`."""
        return cls(
            user_ids=frame.index.to_numpy(dtype=object),
            values=frame.to_numpy(dtype=np.float64),
            feature_names=tuple(str(c) for c in frame.columns),
        )


@lru_cache(maxsize=64)
def _style_columns(names: tuple[str, ...], source: StyleSource) -> tuple[int, ...]:
    """The columns of ``source`` among ``names`` (one profiler's names, looked up once)."""
    prefixes = STYLE_SOURCES[source]
    if "style_rel:" in prefixes and not any(n.startswith("style_rel:") for n in names):
        raise ValueError(
            f"style source {source!r} needs 'style_rel:' columns, which profiles of a "
            "profiler fitted before them lack; refit the predictor"
        )
    return _prefixed(names, prefixes)


@lru_cache(maxsize=256)
def _prefixed(names: tuple[str, ...], prefixes: tuple[str, ...]) -> tuple[int, ...]:
    """The positions among ``names`` of those that start with each of ``prefixes``."""
    return tuple(i for prefix in prefixes for i, n in enumerate(names) if n.startswith(prefix))
