"""The next battle to vote on: the pair whose outcome tells most about who is best.

A person's posterior over the models' strengths ``theta`` (a Gaussian: a shrunk personal
board's Laplace posterior, or the ratings predicted from their queries) says how likely
each model is to be their best, ``p_best``. A vote between ``a`` and ``b`` has outcome
``y`` (``a`` wins with probability ``sigmoid(theta_a - theta_b)``, the Bradley-Terry
model). The pair chosen is the one with the largest expected drop in the entropy of
``p_best``:

    ``I(best; y) = H(p_best) - E_y[H(p_best | y)]``

the mutual information between the outcome and which model is best (BALD's criterion,
Houlsby et al. 2011, with the best model as the quantity of interest). It is computed
from one table of posterior draws, without refitting: by Bayes' rule, the posterior after
``y`` reweights each draw by the outcome's likelihood, so for every pair at once

    ``P(best = m, y = a) = mean over draws of [best(draw) = m] * sigmoid(draw_a - draw_b)``

and ``I = h(P(y = a)) - sum_m P(best = m) h(P(y = a | best = m))``, ``h`` the binary
entropy. A vote counted as a tie (half a win) is not a probability of the model, so the
outcome is taken as decisive. A pair of models that are both surely not the best tells
nothing; two models each likely to be best, whose order the posterior does not know,
tell most; so does a likely best against a close challenger.

``target="ranking"`` asks about the whole board instead: the information summed over the
order of every pair of models, ``sum_{m<n} I([theta_m > theta_n]; y)``, from the same
draws (the order indicators in place of ``best``). It spreads the votes over the board
where ``"best"`` spends them on the contenders. docs/evaluation.md compares the two with
random pairs on the simulator, and gives the most votes any rule could save there.

The draws come from a fixed seed, taken in a canonical order of the models (by mean, then
variance), so the answer is the same whatever order the models are listed in, and the
same on every call. Units are natural-log strengths; :func:`board_posterior` turns the
Elo-scale ratings and intervals of a board into them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ranking.odds import ODDS_SEED, gaussian_draws, interval_sd
from ranking.pairwise import ELO_PER_NAT
from ranking.types import CENTER, FloatArray, IntArray

__all__ = [
    "NEXT_BATTLE_DRAWS",
    "NextBattle",
    "board_posterior",
    "next_battle",
    "pair_information",
    "TARGETS",
    "Target",
]

Target = Literal["best", "ranking"]
#: What a vote is to tell about: which model is best, or the order of every pair.
TARGETS: tuple[Target, ...] = ("best", "ranking")

#: Posterior draws behind the expected information of each pair.
NEXT_BATTLE_DRAWS = 4000
#: Most (draw, pair) values held at once.
_CHUNK = 4_000_000


@dataclass(frozen=True)
class NextBattle:
    """The pair to vote on next, and what its vote is expected to tell.

    Attributes
    ----------
    model_a, model_b : int
        Indices of the two models; ``model_a`` is the one with the higher mean.
    information : float
        Expected drop in the entropy of ``p_best`` from the vote (or, with
        ``target="ranking"``, in the summed entropies of the pairs' orders), in bits.
    p_a : float
        Probability that ``model_a`` wins the vote, under the posterior.
    entropy : float
        Entropy of ``p_best`` now, in bits (0: the best is known; ``log2 k``: no idea),
        whatever the target.
    p_best : ndarray
        ``(k,)`` probability that each model is the best, from the same draws.
    pairs : ndarray of int
        ``(P, 2)`` every pair ``(i, j)``, ``i < j``, in the order of ``informations``.
    informations : ndarray
        ``(P,)`` expected information of each pair, in bits.
    skipped : tuple of (int, int, float), optional
        The pair to avoid (:func:`next_battle`'s ``avoid``) with its information, where
        it would have been chosen and another pair was chosen instead; None otherwise.
    """

    model_a: int
    model_b: int
    information: float
    p_a: float
    entropy: float
    p_best: FloatArray
    pairs: IntArray
    informations: FloatArray
    skipped: tuple[int, int, float] | None = None

    def ranked(self, n: int) -> list[tuple[int, int, float]]:
        """The ``n`` most informative pairs ``(a, b, bits)``, most informative first."""
        order = np.lexsort((np.arange(len(self.informations)), -self.informations))[:n]
        return [
            (int(self.pairs[i, 0]), int(self.pairs[i, 1]), float(self.informations[i]))
            for i in order
        ]


def _binary_entropy(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``h(p)`` in bits, 0 at 0 and 1."""
    q = np.clip(p, 1e-300, 1.0)
    r = np.clip(1.0 - p, 1e-300, 1.0)
    return np.asarray(-(p * np.log2(q) + (1.0 - p) * np.log2(r)))


def _entropy(p: npt.NDArray[np.float64]) -> float:
    """Entropy of a discrete distribution, in bits."""
    nz = p[p > 0]
    return float(-(nz * np.log2(nz)).sum())


def _as_covariance(covariance: npt.ArrayLike, k: int) -> FloatArray:
    cov = np.asarray(covariance, dtype=np.float64)
    if cov.shape == (k,):
        cov = np.diag(cov)
    if cov.shape != (k, k):
        raise ValueError(
            f"Argument 'covariance' must have shape ({k},) or ({k}, {k}), not {cov.shape}."
        )
    if not np.isfinite(cov).all() or (np.diag(cov) < 0).any():
        raise ValueError("Argument 'covariance' must be finite with non-negative variances.")
    return cov


def _check_mean(mean: npt.ArrayLike) -> FloatArray:
    mu = np.asarray(mean, dtype=np.float64)
    if mu.ndim != 1 or mu.shape[0] < 2:
        raise ValueError(f"Argument 'mean' must have shape (k,) with k >= 2, not {mu.shape}.")
    if not np.isfinite(mu).all():
        raise ValueError("Argument 'mean' must be finite.")
    return mu


def _canonical_order(mu: FloatArray, cov: FloatArray) -> IntArray:
    """Models by mean (highest first), then variance: an order the listing cannot change."""
    return np.lexsort((np.diag(cov), -mu)).astype(np.intp)


def _best_information(
    win: FloatArray, one_hot: FloatArray, p_best: FloatArray, p_y: FloatArray
) -> FloatArray:
    """``I(best; y)`` of each pair: ``win`` ``(P, R)``, ``one_hot`` ``(R, m)`` of the
    ``m`` models ever best, ``p_best`` ``(m,)``, ``p_y`` ``(P,)``."""
    joint = (win @ one_hot).T / win.shape[1]  # (m, P): P(best = m, first wins)
    within = (p_best[:, None] * _binary_entropy(joint / p_best[:, None])).sum(axis=0)
    return np.maximum(_binary_entropy(p_y) - within, 0.0)


def _order_information(
    win: FloatArray, orders: FloatArray, p_order: FloatArray, p_y: FloatArray
) -> FloatArray:
    """``sum_q I(order_q; y)`` of each pair: ``orders`` ``(Q, R)`` whether each pair's
    first model is above its second in each draw, ``p_order`` ``(Q,)``."""
    unsure = (p_order > 0) & (p_order < 1)
    o, p_o = orders[unsure], p_order[unsure, None]
    joint = o @ win.T / win.shape[1]  # (Q, P): P(order, first wins)
    within = p_o * _binary_entropy(joint / p_o) + (1 - p_o) * _binary_entropy(
        (p_y[None, :] - joint) / (1 - p_o)
    )
    return np.maximum(_binary_entropy(p_y)[None, :] - within, 0.0).sum(axis=0)


def pair_information(
    mean: npt.ArrayLike,
    covariance: npt.ArrayLike,
    *,
    draws: int = NEXT_BATTLE_DRAWS,
    seed: int = ODDS_SEED,
    target: Target = "best",
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """Expected information of every pair's vote about the best model (or the ranking).

    Parameters
    ----------
    mean : array_like
        ``(k,)`` posterior mean strengths, natural-log units.
    covariance : array_like
        ``(k, k)`` posterior covariance, or ``(k,)`` variances of independent strengths.
    draws : int
        Posterior draws (fixed seed ``seed``).
    seed : int
        Seed of the draws.
    target : {"best", "ranking"}
        What the vote is to tell about: which model is best (the entropy of ``p_best``)
        or the order of every pair (module docstring).

    Returns
    -------
    pairs : ndarray of int
        ``(P, 2)`` every pair ``(i, j)`` with ``i < j`` in the caller's order,
        ``P = k (k - 1) / 2``.
    information : ndarray
        ``(P,)`` expected drop in the entropy of ``p_best`` (or the summed entropies of
        the pairs' orders), bits (never negative).
    p_first : ndarray
        ``(P,)`` probability that the first model of the pair wins.
    p_best : ndarray
        ``(k,)`` probability that each model is the best.

    Raises
    ------
    ValueError
        On a bad shape, a non-finite value, a negative variance, ``draws < 1`` or an
        unknown ``target``.
    """
    mu = _check_mean(mean)
    k = mu.shape[0]
    cov = _as_covariance(covariance, k)
    if draws < 1:
        raise ValueError(f"Argument 'draws' must be at least 1, not {draws}.")
    if target not in TARGETS:
        raise ValueError(f"Argument 'target' must be one of {TARGETS}, not {target!r}.")
    order = _canonical_order(mu, cov)
    sample = np.empty((draws, k))
    sample[:, order] = gaussian_draws(mu[order], cov[np.ix_(order, order)], draws, seed)
    best = np.argmax(sample, axis=1)
    one_hot = np.zeros((draws, k))
    one_hot[np.arange(draws), best] = 1.0
    p_best = one_hot.mean(axis=0)
    seen = p_best > 0
    by_model = np.ascontiguousarray(sample.T)  # (k, R): a pair's rows gathered fast
    first, second = np.triu_indices(k, 1)
    orders, p_order = np.empty((0, draws)), np.empty(0)
    if target == "ranking":
        orders = (by_model[first] > by_model[second]).astype(np.float64)  # (Q, R)
        p_order = orders.mean(axis=1)
    pairs = np.stack([first, second], axis=1).astype(np.intp)
    information = np.zeros(len(first))
    p_first = np.empty(len(first))
    step = max(1, _CHUNK // draws)
    for start in range(0, len(first), step):
        rows = slice(start, start + step)
        win = by_model[second[rows]]  # (P, R), becomes sigmoid(first - second) in place
        win -= by_model[first[rows]]
        np.exp(win, out=win)
        win += 1.0
        np.reciprocal(win, out=win)
        p_y = win.mean(axis=1)
        if target == "best":
            information[rows] = _best_information(win, one_hot[:, seen], p_best[seen], p_y)
        else:
            information[rows] = _order_information(win, orders, p_order, p_y)
        p_first[rows] = p_y
    return pairs, information, p_first, p_best


def next_battle(
    mean: npt.ArrayLike,
    covariance: npt.ArrayLike,
    *,
    draws: int = NEXT_BATTLE_DRAWS,
    seed: int = ODDS_SEED,
    target: Target = "best",
    avoid: tuple[int, int] | None = None,
) -> NextBattle:
    """The pair whose vote is expected to tell most about which model is the best.

    Parameters
    ----------
    mean : array_like
        ``(k,)`` posterior mean strengths, natural-log units (``k >= 2``).
    covariance : array_like
        ``(k, k)`` posterior covariance, or ``(k,)`` variances (what a board's intervals
        carry: :func:`board_posterior`).
    draws : int
        Posterior draws behind the information.
    seed : int
        Seed of the draws: the same posterior always gives the same pair.
    target : {"best", "ranking"}
        Tell most about which model is best (the default) or about the order of every
        pair of models (:func:`pair_information`).
    avoid : tuple of (int, int), optional
        A pair not to suggest, in either order: the one the person has just voted on.
        The posterior already counts that vote; where the pair is still the most
        informative, asking the same question twice in a row reads as a fault, so the
        most informative *other* pair is chosen and the avoided one is reported
        (``skipped``). With two models there is no other pair, and it is chosen.

    Returns
    -------
    NextBattle
        The pair of the largest expected information (module docstring) other than
        ``avoid``; among equally informative pairs, the one of the higher-ranked models.
        Where no pair tells anything (the best is certain), the two models of highest
        mean.

    Raises
    ------
    ValueError
        On a bad shape, a non-finite value, a negative variance, ``draws < 1``, an
        unknown ``target`` or an ``avoid`` that is not two different models.
    """
    mu = _check_mean(mean)
    cov = _as_covariance(covariance, mu.shape[0])
    if avoid is not None and (
        len(avoid) != 2 or avoid[0] == avoid[1] or not all(0 <= int(m) < mu.shape[0] for m in avoid)
    ):
        raise ValueError(
            f"Argument 'avoid' must be two different model indices below {mu.shape[0]}, "
            f"not {avoid!r}."
        )
    pairs, information, p_first, p_best = pair_information(
        mu, cov, draws=draws, seed=seed, target=target
    )
    rank = np.empty(mu.shape[0], dtype=np.intp)
    rank[_canonical_order(mu, cov)] = np.arange(mu.shape[0])
    # position of each pair's models in the canonical order: ties go to the higher-ranked
    hi = np.minimum(rank[pairs[:, 0]], rank[pairs[:, 1]])
    lo = np.maximum(rank[pairs[:, 0]], rank[pairs[:, 1]])
    rounded = np.round(information, 12)
    ranked = np.lexsort((lo, hi, -rounded))
    chosen, skipped = int(ranked[0]), None
    if avoid is not None and len(ranked) > 1:
        first, second = sorted(int(m) for m in avoid)
        if (int(pairs[chosen, 0]), int(pairs[chosen, 1])) == (first, second):
            skipped = (first, second, float(information[chosen]))
            chosen = int(ranked[1])
    i, j = (int(m) for m in pairs[chosen])
    p_i = float(p_first[chosen])
    if rank[j] < rank[i]:
        i, j, p_i = j, i, 1.0 - p_i
    return NextBattle(
        model_a=i,
        model_b=j,
        information=float(information[chosen]),
        p_a=p_i,
        entropy=_entropy(p_best),
        p_best=p_best,
        pairs=pairs,
        informations=information,
        skipped=skipped,
    )


def board_posterior(
    ratings: npt.ArrayLike,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    confidence: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """The Gaussian posterior a board's Elo-scale ratings and intervals stand for.

    Parameters
    ----------
    ratings, lower, upper : array_like
        ``(k,)`` ratings and their ``confidence`` interval bounds, Elo scale.
    confidence : float
        Coverage of the intervals.

    Returns
    -------
    mean, variance : ndarray
        ``(k,)`` natural-log strengths (relative to ``CENTER``) and their variances: an
        interval is taken as ``rating +- z * sd``, models independent.

    Raises
    ------
    ValueError
        On shapes that differ, a non-finite value, an interval that does not hold its
        rating or a bad ``confidence``.
    """
    r, lo, hi = (np.asarray(x, dtype=np.float64) for x in (ratings, lower, upper))
    if r.ndim != 1 or lo.shape != r.shape or hi.shape != r.shape:
        raise ValueError(
            "Arguments 'ratings', 'lower' and 'upper' must have one shape (k,), "
            f"not {r.shape}, {lo.shape}, {hi.shape}."
        )
    if not (np.isfinite(r).all() and np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ValueError("Arguments 'ratings', 'lower' and 'upper' must be finite.")
    if (lo > r + 1e-9).any() or (hi < r - 1e-9).any():
        raise ValueError("Argument 'lower' must not exceed 'ratings', nor 'ratings' 'upper'.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    sd = interval_sd(lo, hi, confidence) / ELO_PER_NAT
    return (r - CENTER) / ELO_PER_NAT, sd**2
