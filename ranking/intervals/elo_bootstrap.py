"""The Elo bootstrap (FastChat's method): online Elo ratings of bootstrap replicates, in
batches that each draw from their own generator."""

from __future__ import annotations

import numpy as np

from ranking.elo import INITIAL, K_FACTOR
from ranking.elo_kernel import bootstrap_elo_rows
from ranking.progress import Advance, Progress, start
from ranking.types import FloatArray, Matchups, Outcomes

__all__ = [
    "bootstrap_elo",
    "bootstrap_elo_batch",
    "elo_bootstrap_plan",
]

#: Most (replicate, vote) pairs in one batch of an Elo bootstrap (one generator a batch).
_MAX_ELO_BOOTSTRAP_ROWS = 20_000_000


def bootstrap_elo(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    rounds: int,
    rng: np.random.Generator,
    *,
    k: float = K_FACTOR,
    progress: Progress | None = None,
) -> FloatArray:
    """Online Elo ratings of ``rounds`` bootstrap replicates (FastChat's method).

    Each replicate draws the ``n`` votes with replacement, in random order, and runs
    online Elo over them, replicate after replicate (:func:`bootstrap_elo_batch`), in the
    batches of :func:`elo_bootstrap_plan`, one after another. Each batch draws from its
    own generator, so running the batches elsewhere (``service.scale`` maps them over a
    Dask cluster) gives the same replicates. ``progress`` is told of the stage
    ``"Elo bootstrap"``, in rounds.

    Returns
    -------
    ndarray
        ``(rounds, n_models)`` Elo-scale ratings.
    """
    plan = elo_bootstrap_plan(len(outcomes), rounds, rng)
    advance = start(progress, "Elo bootstrap", rounds, "rounds")
    return np.concatenate(
        [
            bootstrap_elo_batch(n_models, matchups, outcomes, size, child, k=k, advance=advance)
            for size, child in plan
        ],
        axis=0,
    )


def elo_bootstrap_plan(
    n_votes: int, rounds: int, rng: np.random.Generator
) -> list[tuple[int, np.random.Generator]]:
    """The batches of an Elo bootstrap: each batch's replicates and its own generator.

    A batch holds as many replicates as fit in :data:`_MAX_ELO_BOOTSTRAP_ROWS` resampled
    votes. Its generator is a child of ``rng`` (:meth:`numpy.random.Generator.spawn`),
    so batches are independent of each other and of the order they run in; ``rng``'s own
    stream is not advanced.

    Parameters
    ----------
    n_votes : int
        Votes resampled by every replicate.
    rounds : int
        Replicates in all.
    rng : numpy.random.Generator
        Parent of the batches' generators.

    Returns
    -------
    list of (int, numpy.random.Generator)
        ``(replicates, generator)`` of each batch, in order.
    """
    if rounds < 1:
        raise ValueError(f"Argument 'rounds' must be at least 1, not {rounds}.")
    per_batch = max(1, _MAX_ELO_BOOTSTRAP_ROWS // max(n_votes, 1))
    sizes = [min(per_batch, rounds - start) for start in range(0, rounds, per_batch)]
    return list(zip(sizes, rng.spawn(len(sizes)), strict=True))


def bootstrap_elo_batch(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    size: int,
    rng: np.random.Generator,
    *,
    k: float = K_FACTOR,
    advance: Advance | None = None,
) -> FloatArray:
    """``size`` Elo bootstrap replicates drawn with ``rng``: one batch of :func:`bootstrap_elo`.

    Replicate ``r`` runs online Elo over the rows ``rng.integers(0, n, size=(size, n))[r]``
    of the votes, in that order, from ``INITIAL``; the replicates run one after another in
    a compiled loop that draws as it goes (:func:`ranking.elo_kernel.bootstrap_elo_rows`),
    so the drawn rows are never all held at once. ``advance``, if given, is told ``1``
    after each replicate, ``size`` in all.

    Returns
    -------
    ndarray
        ``(size, n_models)`` Elo-scale ratings.
    """
    ratings = np.full((size, n_models), INITIAL)
    if size > 0 and len(outcomes) > 0:  # no votes: nothing drawn, every rating INITIAL
        bootstrap_elo_rows(matchups, outcomes, ratings, rng, k=k, advance=advance)
    return ratings
