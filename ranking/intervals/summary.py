"""From replicates or a covariance to intervals and ranks, for every family: normal and
percentile intervals, the point and interval of a set of replicates, interval ranks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import ndtri

from ranking.types import FloatArray, Ratings

__all__ = [
    "interval_ranks",
    "normal_intervals",
    "percentile_intervals",
    "replicate_summary",
]


def normal_intervals(
    theta: Ratings, covariance: FloatArray, confidence: float = 0.95
) -> tuple[Ratings, Ratings]:
    """``theta +- z * sd``, each model's ``sd`` from the diagonal of ``covariance``."""
    z = float(ndtri(0.5 + confidence / 2.0))
    sd = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    return theta - z * sd, theta + z * sd


def replicate_summary(
    samples: FloatArray, confidence: float = 0.95, *, center: float | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Point and interval of each model from one set of replicates.

    The point is the replicates' median (FastChat's bootstrap median), the interval
    their equal-tailed percentile interval, so the point always lies inside it. With
    ``center``, all three are shifted by one constant so that the points average
    ``center`` (medians need not average what every replicate does).

    Returns
    -------
    tuple of ndarray
        ``(point, lower, upper)``, each ``(k,)``.
    """
    point = np.median(samples, axis=0)
    lower, upper = percentile_intervals(samples, confidence)
    if center is not None:
        shift = center - float(point.mean())
        point, lower, upper = point + shift, lower + shift, upper + shift
    return point, lower, upper


def percentile_intervals(
    samples: FloatArray, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Equal-tailed percentile interval of each column of ``samples``."""
    tail = 50.0 * (1.0 - confidence)
    lower, upper = np.percentile(samples, [tail, 100.0 - tail], axis=0)
    return lower, upper


def interval_ranks(lower: FloatArray, upper: FloatArray) -> npt.NDArray[np.int64]:
    """Rank = 1 + the number of models whose lower bound is above this model's upper bound.

    Several models can share a rank; with zero-width intervals it is the ordinary
    competition rank ("1224").
    """
    lower, upper = np.asarray(lower), np.asarray(upper)
    return 1 + np.sum(lower[None, :] > upper[:, None], axis=1)
