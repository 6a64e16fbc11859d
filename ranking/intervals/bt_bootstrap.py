"""The Bradley-Terry bootstrap: strengths fitted to multinomial bootstrap replicates."""

from __future__ import annotations

import numpy as np

from ranking.bt import DEFAULT_ALPHA, fit_bt_grouped
from ranking.progress import Progress, start
from ranking.types import FloatArray, PairwiseData, Ratings

__all__ = [
    "bootstrap_bt",
]


def bootstrap_bt(
    data: PairwiseData,
    rounds: int,
    rng: np.random.Generator,
    *,
    alpha: float = DEFAULT_ALPHA,
    initial_params: Ratings | None = None,
    progress: Progress | None = None,
) -> FloatArray:
    """Bradley-Terry strengths of ``rounds`` multinomial bootstrap replicates.

    Each replicate redraws the ``N`` votes from the rows of ``data`` (ideally collapsed)
    with probabilities proportional to their weights, which is resampling the votes with
    replacement; all replicates are then solved together as one batched fit.

    Parameters
    ----------
    data : PairwiseData
        The votes; collapse them first for speed.
    rounds : int
        Number of replicates.
    rng : numpy.random.Generator
        Source of randomness.
    alpha : float
        Prior precision, as in the point fit.
    initial_params : Ratings, optional
        Warm start, typically the point estimate.
    progress : Progress, optional
        Told of the stage ``"BT bootstrap"``, in rounds (all done at once: the
        replicates are solved together).

    Returns
    -------
    ndarray
        ``(rounds, k)`` natural-log strengths.
    """
    if rounds < 1:
        raise ValueError(f"Argument 'rounds' must be at least 1, not {rounds}.")
    advance = start(progress, "BT bootstrap", rounds, "rounds")
    total = int(round(data.n_votes))
    counts = rng.multinomial(total, data.weights / data.weights.sum(), size=rounds)
    replicate, row = np.nonzero(counts)
    initial = None if initial_params is None else np.tile(initial_params, (rounds, 1))
    strengths = fit_bt_grouped(
        data.n_models,
        data.matchups[row],
        data.outcomes[row],
        counts[replicate, row].astype(np.float64),
        groups=replicate,
        n_groups=rounds,
        alpha=alpha,
        initial_params=initial,
    )
    advance(rounds)
    return strengths
