"""Tests for anomalous voters, one of the defences of the aggregate (:mod:`ranking.integrity`).

:func:`detect_anomalous_voters` tests every user's votes, all users at once:

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

import numpy as np
from scipy.special import expit
from scipy.stats import binom

from ranking.bt import DEFAULT_ALPHA, bt_hessian, fit_bt
from ranking.consistency import (
    honest_null,
    learn_user_alpha,
    leave_one_out_logits,
    logistic_slopes,
    lower_tail,
    preference_strength,
)
from ranking.integrity.cohorts import (
    CANDIDATE_VOTES,
    PairSums,
    cohort_brigades,
)
from ranking.integrity.fdr import benjamini_hochberg
from ranking.integrity.report import FlaggedVoter, IntegrityReport, Test
from ranking.types import BoolArray, FloatArray, IntArray, PairwiseData

__all__ = ["detect_anomalous_voters"]

_NAN = float("nan")
#: How far above the model's win share among everyone's votes a user's share of it must
#: be (besides ``brigade_share``) for the user to be a brigade candidate: with a low
#: ``brigade_share`` the leader's share passes it for nearly everyone, who would then
#: all leave the population model.
_CANDIDATE_MARGIN = 0.15


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
        & (shown >= CANDIDATE_VOTES)
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
            sums = PairSums(score, shown, expected, variance, n_users, k)
            groupings = np.asarray(cohorts, dtype=np.intp).reshape(n_users, -1)
            for grouping in groupings.T:  # each grouping a family, at level / groupings
                flags, found = cohort_brigades(
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
