"""The cohort test of :func:`ranking.integrity.voters.detect_anomalous_voters`: the voters
who joined on one day tested together, as one voter, for each model.

:class:`PairSums` holds the per (user, model) evidence the brigade test computes;
:func:`cohort_brigades` sums it per cohort and flags the members of a brigading cohort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binom, norm

from ranking.integrity.fdr import benjamini_hochberg
from ranking.types import BoolArray, FloatArray, IntArray

__all__ = ["CANDIDATE_VOTES", "CohortEvidence", "PairSums", "cohort_brigades", "overdispersion"]

#: Fewest votes with one model that make a user a brigade candidate, left out of the
#: population model the brigade test compares with.
CANDIDATE_VOTES = 10
#: In a brigading cohort, how unlikely (one-sided binomial p-value) a member's own wins
#: with the model must be for the member to be flagged with it: a newcomer who happened
#: to win one of two votes with the model is not.
_MEMBER_LEVEL = 0.05


@dataclass(frozen=True)
class PairSums:
    """Per (user, model) pair, flat ``user * k + model``: the model's score in the
    user's votes, its votes, the population's expected score and that score's variance."""

    score: np.ndarray
    shown: np.ndarray
    expected: np.ndarray
    variance: np.ndarray
    n_users: int
    k: int


@dataclass(frozen=True)
class CohortEvidence:
    """Per user flagged by the cohort test: the cohort's pair evidence."""

    share: FloatArray  # (n_users,) the cohort's win share of the model
    expected: FloatArray  # (n_users,) what the population predicts for it
    p_value: FloatArray  # (n_users,)
    votes: FloatArray  # (n_users,) the cohort's votes with the model
    model: IntArray  # (n_users,) the model, -1 where not flagged
    suspects: BoolArray  # (n_users,) members of a flagged cohort-model voting it up

    def merge(self, other: CohortEvidence) -> CohortEvidence:
        """Each user's strongest evidence of the two (the smaller p-value)."""
        take = np.nan_to_num(other.p_value, nan=np.inf) < np.nan_to_num(self.p_value, nan=np.inf)
        return CohortEvidence(
            np.where(take, other.share, self.share),
            np.where(take, other.expected, self.expected),
            np.where(take, other.p_value, self.p_value),
            np.where(take, other.votes, self.votes),
            np.where(take, other.model, self.model),
            self.suspects | other.suspects,
        )


#: The median of a chi-square variable of one degree of freedom.
_CHI2_MEDIAN = 0.454936


def overdispersion(sums: PairSums) -> FloatArray:
    """``(k,)`` how much more each model's score varies between users than a binomial
    says (users' tastes differ), at least 1: the median over users of the squared excess
    over its variance, against a chi-square's; robust to a brigade's few users."""
    n_users, k = sums.n_users, sums.k
    excess = (sums.score - sums.expected).reshape(n_users, k)
    variance = sums.variance.reshape(n_users, k)
    ratio = np.divide(excess**2, variance, out=np.full_like(variance, np.nan), where=variance > 0)
    factor = np.ones(k)
    for j in range(k):
        seen = ratio[:, j][np.isfinite(ratio[:, j])]
        if seen.size:
            factor[j] = max(1.0, float(np.median(seen)) / _CHI2_MEDIAN)
    return factor


def cohort_brigades(
    sums: PairSums, cohorts: IntArray, tested_users: BoolArray, level: float, share_min: float
) -> tuple[BoolArray, CohortEvidence]:
    """The users flagged as members of a brigading cohort, and the cohorts' evidence.

    A cohort (two or more ``tested_users`` with one code) is tested for each model as one
    voter: its score against the population's expectation, the binomial variance times
    the model's overdispersion between users (:func:`overdispersion`), one-sided; then
    Benjamini-Hochberg at ``level`` over the cohort-model pairs with
    ``CANDIDATE_VOTES`` votes, and a cohort share of at least ``share_min``. The
    members who voted a flagged cohort's model up are its suspects (they leave the
    population model, as candidates do); those whose own wins with it are unlikely are
    flagged.
    """
    n_users, k = sums.n_users, sums.k
    flagged = np.zeros(n_users, dtype=bool)
    nan = np.full(n_users, np.nan)
    evidence = CohortEvidence(
        nan, nan.copy(), nan.copy(), nan.copy(), np.full(n_users, -1), np.zeros(n_users, bool)
    )
    member = tested_users & (cohorts >= 0)
    if not member.any():
        return flagged, evidence
    codes, cohort = np.unique(cohorts[member], return_inverse=True)
    size = np.bincount(cohort, minlength=codes.size)
    rows = np.flatnonzero(member)

    def total(values: FloatArray) -> FloatArray:
        per_user = values.reshape(n_users, k)[rows]
        return np.stack(
            [np.bincount(cohort, weights=per_user[:, j], minlength=codes.size) for j in range(k)],
            axis=1,
        )

    score, shown, expected = total(sums.score), total(sums.shown), total(sums.expected)
    variance = total(sums.variance) * overdispersion(sums)[None, :]
    tested = (size[:, None] >= 2) & (shown >= CANDIDATE_VOTES) & (variance > 0)
    z = np.divide(score - expected, np.sqrt(variance), out=np.zeros_like(score), where=tested)
    p = np.where(tested, norm.sf(z), 1.0)
    share = np.divide(score, shown, out=np.zeros_like(score), where=shown > 0)
    hit = np.zeros_like(tested)
    hit[tested] = benjamini_hochberg(p[tested], level)
    hit &= share >= share_min
    if not hit.any():
        return flagged, evidence
    own_score = sums.score.reshape(n_users, k)[rows]
    own_shown = sums.shown.reshape(n_users, k)[rows]
    own_expected = sums.expected.reshape(n_users, k)[rows]
    own_share = np.divide(own_score, own_shown, out=np.zeros_like(own_shown), where=own_shown > 0)
    # members of a flagged cohort-model who voted the model up themselves: their share at
    # least share_min and their own wins unlikely (MEMBER_LEVEL) under the population
    guilty = hit[cohort] & (own_share >= share_min)
    evidence.suspects[rows[guilty.any(axis=1)]] = True
    if guilty.any():
        at = np.nonzero(guilty)
        p_own = binom.sf(
            np.floor(own_score[at] + 1e-9) - 1,
            np.rint(own_shown[at]),
            own_expected[at] / own_shown[at],
        )
        guilty[at] = p_own <= _MEMBER_LEVEL
    strongest = np.argmin(np.where(guilty, p[cohort], np.inf), axis=1)
    who = guilty.any(axis=1)
    users = rows[who]
    c, m = cohort[who], strongest[who]
    flagged[users] = True
    evidence.share[users] = share[c, m]
    evidence.expected[users] = expected[c, m] / shown[c, m]
    evidence.p_value[users] = p[c, m]
    evidence.votes[users] = shown[c, m]
    evidence.model[users] = m
    return flagged, evidence
