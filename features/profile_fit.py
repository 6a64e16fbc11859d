"""What a user profiler's fit learns beside the topics.

:func:`check_profiler_settings` checks a :class:`features.profile.UserProfiler`'s
settings; :func:`fit_query_components` gives its embedding components (a refit's kept
ones where they still fit); :func:`topic_styles` is each topic's yardstick of style, that
``style_rel:`` measures a query against; :func:`profile_feature_names` names a profile's
columns.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from features.query_context import QueryComponents
from features.style import STYLE_FEATURES

__all__ = [
    "check_profiler_settings",
    "fit_query_components",
    "profile_feature_names",
    "topic_styles",
]

logger = logging.getLogger(__name__)


def check_profiler_settings(smoothing: Any, topic_prior: Any, query_components: Any) -> None:
    """Check a profiler's settings (:class:`features.profile.UserProfiler`).

    Raises
    ------
    ValueError
        Naming the first setting out of its range, and its value.
    """
    for name, value in (("smoothing", smoothing), ("topic_prior", topic_prior)):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"Argument {name!r} must be a non-negative number, not {value!r}.")
    k = query_components
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise ValueError(f"Argument 'query_components' must be a non-negative integer, not {k!r}.")


def fit_query_components(
    n_components: int,
    whiten: bool,
    vectors: npt.NDArray[np.floating[Any]],
    kept: QueryComponents | None = None,
) -> QueryComponents | None:
    """The query components of a fit on the distinct queries' ``vectors``.

    Parameters
    ----------
    n_components : int
        Components asked for; 0 for none.
    whiten : bool
        :class:`features.query_context.QueryComponents`' ``whiten``.
    vectors : ndarray of shape (n_distinct, d)
        The distinct training queries' embeddings.
    kept : QueryComponents, optional
        An earlier fit's components, used where they are a fit of these settings on
        vectors of this width.

    Returns
    -------
    QueryComponents or None
        ``kept``, or components fitted on ``vectors``; None for 0 components or fewer
        than 2 distinct vectors (no spread to find a direction in: a warning says so).
    """
    if not n_components:
        return None
    if len(vectors) < 2:  # no spread to find a direction in
        logger.warning("query components: 1 distinct prompt, so none, not %d", n_components)
        return None
    components = QueryComponents(int(n_components), whiten=whiten)
    reused = _kept_query_model(kept, components, vectors.shape[1])
    return reused if reused is not None else components.fit(vectors)


def _kept_query_model(
    kept: QueryComponents | None, wanted: QueryComponents, width: int
) -> QueryComponents | None:
    """``kept`` where it is a fit of ``wanted``'s settings on vectors of ``width``."""
    if kept is None or not hasattr(kept, "pca_"):
        return None
    same = (kept.n_components, kept.whiten) == (wanted.n_components, wanted.whiten)
    return kept if same and kept.pca_.n_features_in_ == width else None


def topic_styles(
    style: npt.NDArray[np.float64], topics: npt.NDArray[np.intp], n_topics: int, prior: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per topic: mean and sd of each style feature, shrunk toward all queries' by ``prior``.

    Parameters
    ----------
    style : ndarray of shape (n_queries, n_style)
        Each training query's style features.
    topics : ndarray of int
        Each query's topic.
    n_topics : int
        Number of topics.
    prior : float
        Pseudo-queries, distributed like all queries, added to each topic.

    Returns
    -------
    mean, sd : ndarray of shape (n_topics, n_style)
        A constant feature's sd is its overall spread (or 1), never 0.
    """
    counts = np.bincount(topics, minlength=n_topics).astype(float)[:, None]
    sums = np.zeros((n_topics, style.shape[1]))
    np.add.at(sums, topics, style)
    squares = np.zeros_like(sums)
    np.add.at(squares, topics, style**2)
    overall_mean = style.mean(axis=0)
    overall_var = style.var(axis=0)
    denominator = np.maximum(counts + prior, 1e-12)
    mean = (sums + prior * overall_mean) / denominator
    # squares about the topic's shrunk mean, plus the prior's spread and offset
    within = squares - 2 * mean * sums + counts * mean**2
    var = (within + prior * (overall_var + (overall_mean - mean) ** 2)) / denominator
    sd = np.sqrt(np.maximum(var, 0.0))
    floor = np.where(np.sqrt(overall_var) > 0, np.sqrt(overall_var), 1.0)
    sd = np.where(sd > 1e-9 * floor, sd, floor)  # a constant feature divides by its spread
    return mean, sd


def profile_feature_names(n_topics: int, query_names: Iterable[str] = ()) -> tuple[str, ...]:
    """A profile's column names: topics, style, then ``query_names`` (as they are) and
    ``log_votes``."""
    return (
        *(f"topic:{k}" for k in range(n_topics)),
        *(f"style_mean:{f}" for f in STYLE_FEATURES),
        *(f"style_sd:{f}" for f in STYLE_FEATURES),
        *(f"style_rel:{f}" for f in STYLE_FEATURES),
        *query_names,
        "log_votes",
    )
