"""Online Elo, battle by battle, with FastChat's constants and semantics.

``compute_elo`` of FastChat's ``elo_analysis.py``: every model starts at ``INITIAL``; for a
vote with outcome ``s`` for ``model_a`` (1, 0.5 or 0), the expected score is
``e = 1 / (1 + BASE ** ((r_b - r_a) / SCALE))`` and both ratings move by
``K * (s - e)``, in opposite directions. The sum of ratings never changes, so the ratings
of the models seen average ``INITIAL``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ranking.elo_kernel import online_elo_rows
from ranking.progress import Advance
from ranking.types import BASE, CENTER, SCALE, Matchups, Outcomes, Ratings

__all__ = ["INITIAL", "K_FACTOR", "expected_online_elo", "online_elo", "online_elo_grouped"]

K_FACTOR = 4.0
INITIAL = CENTER


def online_elo(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    *,
    k: float = K_FACTOR,
    initial: float | npt.ArrayLike = INITIAL,
) -> Ratings:
    """Run online Elo over votes in the order given.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups : Matchups
        ``(n, 2)`` model indices, in the order the votes happened.
    outcomes : Outcomes
        ``(n,)`` outcome for the first model: 1, 0.5 (tie) or 0.
    k : float
        The K-factor.
    initial : float or array_like
        Every model's starting rating, or ``(n_models,)`` starting ratings (to continue
        from an earlier run).

    Returns
    -------
    Ratings
        ``(n_models,)`` ratings on the Elo scale after the last vote.
    """
    rating = np.broadcast_to(np.asarray(initial, dtype=np.float64), (n_models,)).tolist()
    # A plain loop over Python floats: the update is sequential by nature, and scalar
    # numpy indexing would be several times slower.
    for a, b, s in zip(
        np.asarray(matchups[:, 0]).tolist(),
        np.asarray(matchups[:, 1]).tolist(),
        np.asarray(outcomes).tolist(),
        strict=True,
    ):
        ra, rb = rating[a], rating[b]
        delta = k * (s - 1.0 / (1.0 + BASE ** ((rb - ra) / SCALE)))
        rating[a] = ra + delta
        rating[b] = rb - delta
    return np.array(rating)


def online_elo_grouped(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    n_groups: int,
    *,
    k: float = K_FACTOR,
    initial: float | npt.ArrayLike = INITIAL,
    advance: Advance | None = None,
) -> npt.NDArray[np.float64]:
    """Run online Elo independently within each group, all groups in step.

    Each group's votes are taken in the order they appear in the arrays. Groups are
    independent, so one compiled pass over the votes in array order
    (:func:`ranking.elo_kernel.online_elo_rows`) gives what running every group in step
    would; a step is the ``s``-th vote of every group, and there are as many steps as
    votes in the largest group.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups : Matchups
        ``(n, 2)`` model indices.
    outcomes : Outcomes
        ``(n,)`` outcome for the first model.
    groups : array of int
        ``(n,)`` group of each vote (a user, or a bootstrap replicate).
    n_groups : int
        Number of groups.
    k : float
        As in :func:`online_elo`.
    initial : float or array_like
        Starting ratings: one value, one per model ``(n_models,)``, or one per group and
        model ``(n_groups, n_models)`` (for example the aggregate ratings, so that a sparse
        group starts from what is known).
    advance : callable, optional
        Told, about a hundred times in all, how many more steps are done; there are as
        many steps as votes in the largest group.

    Returns
    -------
    ndarray
        ``(n_groups, n_models)`` ratings; a model a group never saw keeps its initial
        rating.
    """
    groups = np.asarray(groups, dtype=np.intp)
    ratings = np.empty((n_groups, n_models))
    ratings[:] = np.asarray(initial, dtype=np.float64)
    n = groups.shape[0]
    if advance is None or n == 0:
        online_elo_rows(matchups, outcomes, groups, ratings, k=k)
        return ratings
    # About a hundred chunks of votes, each told as its share of the steps.
    n_steps = int(np.bincount(groups).max())
    bounds = np.linspace(0, n, min(100, n) + 1).astype(np.intp)
    reported = 0
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        online_elo_rows(matchups[lo:hi], outcomes[lo:hi], groups[lo:hi], ratings, k=k)
        done = n_steps * int(hi) // n
        if done > reported:
            advance(done - reported)
            reported = done
    return ratings


def expected_online_elo(
    preference: npt.ArrayLike,
    n_votes: npt.ArrayLike,
    pair_share: npt.ArrayLike,
    *,
    k: float = K_FACTOR,
    initial: float | npt.ArrayLike = INITIAL,
) -> npt.NDArray[np.float64]:
    """The online Elo ratings a user is expected to reach, given how they choose.

    Online Elo depends on how many votes a user gave and on which pairs, not only on
    their preferences: a user with 200 votes drifts four times as far from the start as
    one with 50. This runs the expected (mean-field) update: at each step every pair
    ``(a, b)`` moves the ratings by ``k * share[a, b] * (p_ab - e_ab)``, where ``p_ab``
    is the probability that the user prefers ``a`` (from ``preference``, a tie counting
    half) and ``e_ab`` Elo's expected score at the current ratings.

    Parameters
    ----------
    preference : array_like
        ``(U, k)`` ratings on the Elo scale that the users' votes follow (for example a
        Bradley-Terry prediction).
    n_votes : array_like
        ``(U,)`` votes each user gives.
    pair_share : array_like
        ``(k, k)`` share of votes on each ordered pair; sums to 1, zero diagonal.
    k : float
        The K-factor.
    initial : float or array_like
        Starting ratings: one value, ``(k,)`` or ``(U, k)``.

    Returns
    -------
    ndarray
        ``(U, k)`` expected ratings after each user's votes.
    """
    pref = np.asarray(preference, dtype=np.float64)
    n_users, n_models = pref.shape
    votes = np.asarray(n_votes, dtype=np.int64)
    share = np.asarray(pair_share, dtype=np.float64)
    share = (share + share.T) / 2.0  # each unordered pair half one way, half the other
    ratings = np.empty((n_users, n_models))
    ratings[:] = np.asarray(initial, dtype=np.float64)
    p = 1.0 / (1.0 + np.power(BASE, (pref[:, None, :] - pref[:, :, None]) / SCALE))
    for step in range(int(votes.max(initial=0))):
        active = votes > step
        r = ratings[active]
        e = 1.0 / (1.0 + np.power(BASE, (r[:, None, :] - r[:, :, None]) / SCALE))
        # Row a, column b: a's surprise against b, weighted by how often they meet.
        drift = (share[None] * (p[active] - e)).sum(axis=2)
        ratings[active] = r + 2.0 * k * drift
    return ratings
