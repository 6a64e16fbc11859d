"""Voter integrity: a daily cap on each user's votes, and tests for anomalous voters.

Two defences of the aggregate, as Chatbot Arena uses for its own board:

* :func:`daily_cap_mask` keeps at most ``cap`` votes per user and calendar day (UTC),
  the earliest ones, like FastChat's ``limit_user_votes``; votes without a user or a
  timestamp are kept (:mod:`ranking.daily_cap`, re-exported here).
* :func:`detect_anomalous_voters` tests every user's votes, all users at once:

  - **random clickers**, for self-consistency: do a user's votes agree with each other,
    on whatever order of the models? Nothing here compares a user with the crowd, so a
    taste far from everyone else's, even the crowd's order reversed, is never evidence.
    Two tests, each against the honest users' values ``N(m, tau^2)`` estimated robustly
    across users (median, and the MAD of the users with the most votes less their noise),
    with the lower-tail p-value ``Phi((s_u - m) / sqrt(tau^2 + se_u^2))``:

    * the *slope* of a per-user logistic regression of the outcomes on the user's own
      leave-one-vote-out log-odds: a shrunk personal Bradley-Terry fit (prior mean zero,
      its precision learnt by cross-validation, :func:`ranking.shrinkage.learn_alpha`),
      each vote predicted from the user's other votes to first order from the user's
      Hessian (:mod:`ranking.consistency`). An honest user's other votes predict the
      vote (slope near ``m``), a coin flipper's do not (slope near 0);
    * the *preference strength* per vote, the Rao score statistic of "all models equal"
      less its degrees of freedom, over the votes: a coin flipper's tends to 0 as the
      votes grow, where the slope's standard error stops shrinking (a coin flipper's
      own fit flattens with their votes).

    The smaller p-value, doubled (Bonferroni), is the user's. A user with few votes has
    large standard errors and is never flagged for noise; power grows with the votes,
    and it is weak wherever honest users' votes hardly predict each other.
  - **brigaders**: for each user and model, the model's score in that user's votes
    (a tie counting half) against a binomial with the population's mean win probability
    of the model in those votes (leave-that-user-out, to first order; conservative next
    to the exact Poisson-binomial), and a win share of at least ``brigade_share``.

  - **cohorts of brigaders**, each under every threshold of one voter (a few votes each,
    many made-up names): the voters who joined on the same day (``cohorts``, the day of
    their first vote by the server's clock) are tested together, as one voter, for each
    model: the cohort's score against the population's expectation, its variance the
    binomial one times how much more users' scores of the model vary than a binomial
    says (their tastes differ; a median over all users), and a cohort share of at
    least ``cohort_share`` (0.5: lower than one voter's, since one voter may have any
    taste, even the crowd's reversed, but a crowd of newcomers who all vote one model up
    may not). In a flagged cohort and model, the members whose own share of the model is
    at least ``cohort_share``, their wins with it unlikely on their own (one-sided
    binomial p-value at most 0.05), are flagged. A patient attacker must then
    spread made-up voters over many days, each day's under what that day's honest
    newcomers hide.

  Each family of p-values is controlled by Benjamini-Hochberg at ``level`` over the users
  (user-model pairs, cohort-model pairs) tested. So that a brigade does not hide inside
  the model it bent, the population model leaves out the brigade candidates (a win share of at least
  ``brigade_share``, and 0.15 above the model's share among everyone's votes, with one
  model in 10 or more votes) and is refitted without the users flagged so far, for
  ``rounds`` rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import expit
from scipy.stats import binom, norm

from ranking.bt import DEFAULT_ALPHA, bt_hessian, fit_bt
from ranking.consistency import (
    honest_null,
    learn_user_alpha,
    leave_one_out_logits,
    logistic_slopes,
    lower_tail,
    preference_strength,
)
from ranking.daily_cap import daily_cap_mask
from ranking.types import BoolArray, FloatArray, IntArray, PairwiseData

__all__ = [
    "FlaggedVoter",
    "IntegrityReport",
    "benjamini_hochberg",
    "daily_cap_mask",
    "detect_anomalous_voters",
]

Test = Literal["random", "brigade", "cohort"]

_NAN = float("nan")
#: Fewest votes with one model that make a user a brigade candidate, left out of the
#: population model the brigade test compares with.
_CANDIDATE_VOTES = 10
#: How far above the model's win share among everyone's votes a user's share of it must
#: be (besides ``brigade_share``) for the user to be a brigade candidate: with a low
#: ``brigade_share`` the leader's share passes it for nearly everyone, who would then
#: all leave the population model.
_CANDIDATE_MARGIN = 0.15
#: In a brigading cohort, how unlikely (one-sided binomial p-value) a member's own wins
#: with the model must be for the member to be flagged with it: a newcomer who happened
#: to win one of two votes with the model is not.
_MEMBER_LEVEL = 0.05


@dataclass(frozen=True)
class FlaggedVoter:
    """One flagged user and the evidence against them.

    Attributes
    ----------
    user : int
        Index of the user (into the ``users`` codes and ``user_names``).
    user_id : str
        The user's name.
    test : {"random", "brigade", "cohort"}
        Which test flagged them (the stronger one, when several did).
    statistic : float
        For ``random``: the user's self-consistency slope (``m`` is typical, 0 is coin
        flipping; see also ``strength``). For ``brigade``: the model's win share in the
        user's votes; for ``cohort``: in the votes of the user's cohort.
    expected : float
        For ``random``: the honest users' typical slope ``m``. For ``brigade`` (and
        ``cohort``): the win share the population predicts for that model in the user's
        (the cohort's) votes.
    p_value : float
        The test's p-value (before the multiple-testing control; for ``random``, the
        smaller of the slope's and the strength's, doubled).
    n_votes : int
        The user's votes (for ``brigade``: the user's votes with that model; for
        ``cohort``: the cohort's votes with that model).
    model : str or None
        The model voted up, for ``brigade``.
    strength, expected_strength : float
        For ``random``: the user's preference strength per vote and the honest users'
        typical one (NaN for ``brigade``).
    """

    user: int
    user_id: str
    test: Test
    statistic: float
    expected: float
    p_value: float
    n_votes: int
    model: str | None = None
    strength: float = _NAN
    expected_strength: float = _NAN


@dataclass(frozen=True)
class IntegrityReport:
    """What :func:`detect_anomalous_voters` found.

    Attributes
    ----------
    flagged : tuple of FlaggedVoter
        One per flagged user, by user index.
    flagged_users : ndarray of bool
        ``(n_users,)`` true for a flagged user.
    slope, slope_se : ndarray
        ``(n_users,)`` each user's self-consistency slope (outcomes on their own
        leave-one-vote-out log-odds) and its standard error (NaN without votes).
    honest_slope : tuple of float
        ``(m, tau)``: centre and spread of the honest users' slopes.
    level : float
        The Benjamini-Hochberg level of each test family.
    user_alpha : float
        Prior precision of the personal fits (natural-log units; NaN when not fitted).
    strength, strength_se : ndarray or None
        ``(n_users,)`` each user's preference strength per vote
        (:func:`ranking.consistency.preference_strength`) and its standard error.
    honest_strength : tuple of float
        Centre and spread of the honest users' preference strengths.
    random_p : ndarray or None
        ``(n_users,)`` each user's p-value of the random test (1 where not tested).
    """

    flagged: tuple[FlaggedVoter, ...]
    flagged_users: BoolArray
    slope: FloatArray
    slope_se: FloatArray
    honest_slope: tuple[float, float]
    level: float
    user_alpha: float = float("nan")
    strength: FloatArray | None = None
    strength_se: FloatArray | None = None
    honest_strength: tuple[float, float] = (float("nan"), float("nan"))
    random_p: FloatArray | None = None

    def vote_mask(self, users: IntArray) -> BoolArray:
        """``(n,)`` true for the votes to count in the aggregate (not a flagged user's)."""
        users = np.asarray(users, dtype=np.intp)
        keep = np.ones(users.shape, dtype=bool)
        known = users >= 0
        keep[known] = ~self.flagged_users[users[known]]
        return keep


def benjamini_hochberg(p_values: FloatArray, level: float) -> BoolArray:
    """Which hypotheses Benjamini-Hochberg rejects at false-discovery rate ``level``."""
    p = np.asarray(p_values, dtype=np.float64)
    reject = np.zeros(p.shape, dtype=bool)
    if p.size == 0:
        return reject
    order = np.argsort(p, kind="stable")
    passed = np.flatnonzero(p[order] <= level * np.arange(1, p.size + 1) / p.size)
    if passed.size:
        reject[order[: passed[-1] + 1]] = True
    return reject


def _population(
    data: PairwiseData, users: IntArray, n_users: int, fitted: BoolArray, alpha: float
) -> FloatArray:
    """Leave-that-user-out strengths of every user, ``(n_users, k)``, to first order.

    The aggregate is fitted on the votes where ``fitted`` is true; a user whose votes
    are in it gets ``theta + H^+ g_u`` (``g_u`` the gradient of their own loss), the
    Newton step of the fit without them.
    """
    k = data.n_models
    m, y, w = data.matchups[fitted], data.outcomes[fitted], data.weights[fitted]
    theta = fit_bt(k, m, y, w, alpha=alpha)
    hessian = bt_hessian(theta, m, y, w, alpha=alpha)
    r = w * (expit(theta[m[:, 0]] - theta[m[:, 1]]) - y)
    u = users[fitted]
    grad = np.zeros((n_users, k))
    np.add.at(grad, (u, m[:, 0]), r)
    np.add.at(grad, (u, m[:, 1]), -r)
    loo = theta[None, :] + grad @ np.linalg.pinv(hessian, hermitian=True)
    return loo


@dataclass(frozen=True)
class _PairSums:
    """Per (user, model) pair, flat ``user * k + model``: the model's score in the
    user's votes, its votes, the population's expected score and that score's variance."""

    score: np.ndarray
    shown: np.ndarray
    expected: np.ndarray
    variance: np.ndarray
    n_users: int
    k: int


@dataclass(frozen=True)
class _CohortEvidence:
    """Per user flagged by the cohort test: the cohort's pair evidence."""

    share: FloatArray  # (n_users,) the cohort's win share of the model
    expected: FloatArray  # (n_users,) what the population predicts for it
    p_value: FloatArray  # (n_users,)
    votes: FloatArray  # (n_users,) the cohort's votes with the model
    model: IntArray  # (n_users,) the model, -1 where not flagged
    suspects: BoolArray  # (n_users,) members of a flagged cohort-model voting it up

    def merge(self, other: _CohortEvidence) -> _CohortEvidence:
        """Each user's strongest evidence of the two (the smaller p-value)."""
        take = np.nan_to_num(other.p_value, nan=np.inf) < np.nan_to_num(self.p_value, nan=np.inf)
        return _CohortEvidence(
            np.where(take, other.share, self.share),
            np.where(take, other.expected, self.expected),
            np.where(take, other.p_value, self.p_value),
            np.where(take, other.votes, self.votes),
            np.where(take, other.model, self.model),
            self.suspects | other.suspects,
        )


#: The median of a chi-square variable of one degree of freedom.
_CHI2_MEDIAN = 0.454936


def _overdispersion(sums: _PairSums) -> FloatArray:
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


def _cohort_brigades(
    sums: _PairSums, cohorts: IntArray, tested_users: BoolArray, level: float, share_min: float
) -> tuple[BoolArray, _CohortEvidence]:
    """The users flagged as members of a brigading cohort, and the cohorts' evidence.

    A cohort (two or more ``tested_users`` with one code) is tested for each model as one
    voter: its score against the population's expectation, the binomial variance times
    the model's overdispersion between users (:func:`_overdispersion`), one-sided; then
    Benjamini-Hochberg at ``level`` over the cohort-model pairs with
    ``_CANDIDATE_VOTES`` votes, and a cohort share of at least ``share_min``. The
    members who voted a flagged cohort's model up are its suspects (they leave the
    population model, as candidates do); those whose own wins with it are unlikely are
    flagged.
    """
    n_users, k = sums.n_users, sums.k
    flagged = np.zeros(n_users, dtype=bool)
    nan = np.full(n_users, np.nan)
    evidence = _CohortEvidence(
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
    variance = total(sums.variance) * _overdispersion(sums)[None, :]
    tested = (size[:, None] >= 2) & (shown >= _CANDIDATE_VOTES) & (variance > 0)
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


def detect_anomalous_voters(
    data: PairwiseData,
    users: IntArray,
    user_names: Sequence[str],
    *,
    level: float = 0.01,
    min_votes: int = 20,
    brigade_share: float = 0.9,
    rounds: int = 3,
    alpha: float = DEFAULT_ALPHA,
    user_alpha: float | None = None,
    cohorts: IntArray | None = None,
    cohort_share: float = 0.5,
) -> IntegrityReport:
    """Flag random clickers (votes that do not predict each other) and brigaders.

    Parameters
    ----------
    data : PairwiseData
        Votes (rows may be weighted).
    users : array of int
        ``(n,)`` user of each row, below ``len(user_names)``; negative rows (no user)
        count in the population model and are never tested.
    user_names : sequence of str
        Names of the users.
    level : float
        Benjamini-Hochberg level of each test (random, brigade), in (0, 1).
    min_votes : int
        Fewest votes of a user for the random-clicker test.
    brigade_share : float
        Least win share of a model in a user's votes for the brigade test to flag.
    rounds : int
        Rounds of refitting the population without the users flagged so far.
    alpha : float
        Prior precision of the population's Bradley-Terry fit.
    user_alpha : float, optional
        Prior precision of each user's strengths (around zero) in the personal fits of
        the random test; learnt by cross-validation on the users' votes when not given.
    cohorts : array of int, optional
        ``(n_users,)`` or ``(n_users, g)``: the cohort of each user in each of ``g``
        groupings (the day they joined, the week, the month), negative for a user in
        none; cohorts of two or more users are tested together, each grouping a family
        at ``level / g``.
    cohort_share : float
        Least win share of a model in a cohort's votes (and in a member's) for the
        cohort test to flag; lower than ``brigade_share``: one voter may have any taste,
        a crowd of newcomers who all vote one model up may not.

    Returns
    -------
    IntegrityReport
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"Argument 'level' must lie in (0, 1), not {level!r}.")
    for name, bound in (("brigade_share", brigade_share), ("cohort_share", cohort_share)):
        if not 0.0 < bound <= 1.0:
            raise ValueError(f"Argument {name!r} must lie in (0, 1], not {bound!r}.")
    if user_alpha is not None and not 0.0 < user_alpha < np.inf:
        raise ValueError(f"Argument 'user_alpha' must be positive and finite, not {user_alpha!r}.")
    for name, value in (("min_votes", min_votes), ("rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"Argument {name!r} must be an integer >= 1, not {value!r}.")
    users = np.asarray(users, dtype=np.intp)
    n_users, k = len(user_names), data.n_models
    if users.shape != data.outcomes.shape or (users.size and users.max() >= n_users):
        raise ValueError(f"Argument 'users' must hold one user index below {n_users} a row.")
    known = users >= 0
    a, b = data.matchups[known, 0], data.matchups[known, 1]
    y, w, u = data.outcomes[known], data.weights[known], users[known]
    n_votes = np.bincount(u, weights=w, minlength=n_users)
    # the brigade counts: each (user, model) pair's votes and the model's score
    pair_a, pair_b = u * k + a, u * k + b
    shown = np.bincount(np.r_[pair_a, pair_b], weights=np.r_[w, w], minlength=n_users * k)
    score = np.bincount(
        np.r_[pair_a, pair_b], weights=np.r_[w * y, w * (1 - y)], minlength=n_users * k
    )

    # the random test looks at each user's votes alone: it needs no population model
    matchups, zero = data.matchups[known], np.zeros(k)
    if user_alpha is None:
        user_alpha = learn_user_alpha(k, matchups, y, w, u, n_users, zero)
    _, d_self = leave_one_out_logits(k, matchups, y, w, u, n_users, zero, user_alpha)
    slope, se = logistic_slopes(d_self, y, w, u, n_users)
    strength, strength_se = preference_strength(k, matchups, y, w, u, n_users)
    testable = (n_votes >= min_votes) & np.isfinite(slope) & np.isfinite(strength)
    # Brigade candidates (one model's win share at least brigade_share, and well above
    # its share among everyone's votes, in enough votes) stay out of the population model
    # the brigade test compares with: a brigade large enough to bend that model would
    # otherwise hide inside it.
    share = np.divide(score, shown, out=np.zeros_like(shown), where=shown > 0)
    overall = score.reshape(n_users, k).sum(axis=0) / np.maximum(
        shown.reshape(n_users, k).sum(axis=0), 1e-12
    )
    candidate_pair = (
        (share >= brigade_share)
        & (share >= np.tile(overall, n_users) + _CANDIDATE_MARGIN)
        & (shown >= _CANDIDATE_VOTES)
    )
    candidate = np.asarray(candidate_pair.reshape(n_users, k).any(axis=1), dtype=bool)
    flagged = np.zeros(n_users, dtype=bool)
    for _ in range(rounds):
        fitted = ~(known & (flagged | candidate)[np.maximum(users, 0)])
        # rows without a user go to a dummy user n_users, whose step is ignored
        loo = _population(data, np.where(known, users, n_users), n_users + 1, fitted, alpha)
        d = loo[u, a] - loo[u, b]
        honest = testable & ~flagged
        centre, spread = honest_null(slope[honest], se[honest], n_votes[honest])
        null_strength = honest_null(strength[honest], strength_se[honest], n_votes[honest])
        p_slope = lower_tail(slope, se, (centre, spread))
        p_strength = lower_tail(strength, strength_se, null_strength)
        # either test may find a clicker: the smaller p-value, Bonferroni-corrected for two
        p_random = np.where(testable, np.minimum(1.0, 2.0 * np.minimum(p_slope, p_strength)), 1.0)
        random_flag = np.zeros(n_users, dtype=bool)
        random_flag[testable] = benjamini_hochberg(p_random[testable], level)

        p_win = expit(d)
        expected = np.bincount(
            np.r_[pair_a, pair_b], weights=np.r_[w * p_win, w * (1 - p_win)], minlength=n_users * k
        )
        pbar = np.divide(expected, shown, out=np.zeros_like(shown), where=shown > 0)
        tested = np.flatnonzero(shown > 0)
        wins = np.floor(score[tested] + 1e-9)
        p_brigade = np.ones(n_users * k)
        p_brigade[tested] = binom.sf(wins - 1, np.rint(shown[tested]), pbar[tested])
        brigade_pair = np.zeros(n_users * k, dtype=bool)
        brigade_pair[tested] = benjamini_hochberg(p_brigade[tested], level)
        brigade_pair &= share >= brigade_share
        brigade_flag = np.asarray(brigade_pair.reshape(n_users, k).any(axis=1), dtype=bool)
        cohort_flag, cohort_evidence = np.zeros(n_users, dtype=bool), None
        if cohorts is not None:
            vote_variance = w * p_win * (1 - p_win)
            variance = np.bincount(
                np.r_[pair_a, pair_b],
                weights=np.r_[vote_variance, vote_variance],
                minlength=n_users * k,
            )
            sums = _PairSums(score, shown, expected, variance, n_users, k)
            groupings = np.asarray(cohorts, dtype=np.intp).reshape(n_users, -1)
            for grouping in groupings.T:  # each grouping a family, at level / groupings
                flags, found = _cohort_brigades(
                    sums,
                    grouping,
                    ~(random_flag | brigade_flag),
                    level / groupings.shape[1],
                    cohort_share,
                )
                cohort_flag |= flags
                cohort_evidence = found if cohort_evidence is None else cohort_evidence.merge(found)
        new = random_flag | brigade_flag | cohort_flag
        suspects = candidate
        if cohort_evidence is not None:  # a brigade of small voters bends the population too
            suspects = candidate | cohort_evidence.suspects
        if np.array_equal(new, flagged) and np.array_equal(suspects, candidate):
            break
        flagged, candidate = new, suspects

    records: list[FlaggedVoter] = []
    p_pairs = np.where(brigade_pair, p_brigade, np.inf).reshape(n_users, k)
    for user in np.flatnonzero(flagged).tolist():
        best_model = int(np.argmin(p_pairs[user]))
        p_b = float(p_pairs[user, best_model])
        test: Test
        model: str | None
        if brigade_flag[user] and (not random_flag[user] or p_b <= p_random[user]):
            pair = user * k + best_model
            test, statistic, typical, p = "brigade", share[pair], pbar[pair], p_b
            votes, model, own, own_typical = shown[pair], data.models[best_model], _NAN, _NAN
        elif cohort_evidence is not None and not random_flag[user] and cohort_flag[user]:
            c = cohort_evidence
            test, statistic, typical, p = "cohort", c.share[user], c.expected[user], c.p_value[user]
            votes, model = c.votes[user], data.models[int(c.model[user])]
            own, own_typical = _NAN, _NAN
        else:
            test, statistic, typical, p = "random", slope[user], centre, p_random[user]
            votes, model, own, own_typical = n_votes[user], None, strength[user], null_strength[0]
        evidence = (float(statistic), float(typical), float(p), int(round(votes)))
        name = str(user_names[user])
        records.append(FlaggedVoter(user, name, test, *evidence, model, float(own), own_typical))
    return IntegrityReport(
        tuple(records),
        flagged,
        slope,
        se,
        (centre, spread),
        level,
        user_alpha,
        strength,
        strength_se,
        null_strength,
        p_random,
    )
