"""Style control: Bradley-Terry with the style differences of each vote's two answers.

The model (LMArena's contextual Bradley-Terry, FastChat's ``fit_contextual_bt``)::

    P(a beats b) = sigmoid(theta_a - theta_b + x . beta)

where ``x`` holds the vote's style covariates (``model_a``'s answer against
``model_b``'s: :func:`features.answer_style.style_differences`) and ``beta`` what a unit
of each is worth. ``theta`` is then a model's strength *with the style of its answers
held equal*. A tie counts as half a win and half a loss, as on the raw board.

Two pitfalls of the arenas are avoided by construction:

* the ratings get exactly the raw board's negligible prior (``alpha``, which only keeps
  them finite and centred: :mod:`ranking.bt`) and the coefficients none beyond a
  negligible ``beta_alpha``: a real L2 penalty on both (FastChat) shrinks the ratings
  along with the coefficients;
* :func:`fit_style_leaderboard` fits the raw board beside the controlled one on the same
  votes with the same weights, prior and interval method, so the two differ by the
  control alone (arena-rank's raw and controlled boards also differ by reweighting).

Intervals are the raw board's: the moderated sandwich (:mod:`ranking.intervals`) of the
joint parameters, or a multinomial bootstrap of the votes; odds and rank ranges are read
off the same Gaussian draws or replicates (:mod:`ranking.odds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import expit, log_expit

from ranking.bt import DEFAULT_ALPHA
from ranking.bt_solver import pair_matrices
from ranking.intervals.sandwich import MODERATION_VOTES, moderate_sandwich
from ranking.intervals.summary import normal_intervals, percentile_intervals
from ranking.leaderboard import build_leaderboard, fit_leaderboard
from ranking.odds import gaussian_draws, rank_odds
from ranking.pairwise import ELO_PER_NAT, ModelCounts, model_counts, to_elo_scale
from ranking.types import FloatArray, Interval, Leaderboard, Matchups, Outcomes, PairwiseData

__all__ = [
    "BETA_ALPHA",
    "StyleCoefficient",
    "StyleControl",
    "fit_style_bt",
    "fit_style_leaderboard",
    "style_covariance",
    "style_log_loss",
]

#: Prior precision of the style coefficients: negligible, it only keeps a covariate that
#: never varies from making the problem singular (such a covariate gets no coefficient).
BETA_ALPHA = 1e-6


@dataclass(frozen=True)
class StyleCoefficient:
    """What a unit of one style covariate is worth, on the Elo scale.

    Attributes
    ----------
    feature : str
        The covariate's name (e.g. ``"length"``).
    coefficient : float
        Elo points a vote's ``model_a`` gains per unit of the covariate (for a length
        compared as ``log2`` of the ratio: points per doubling of the length).
    lower, upper : float
        Its interval, at the board's confidence.
    """

    feature: str
    coefficient: float
    lower: float
    upper: float

    def to_dict(self) -> dict[str, Any]:
        """The coefficient as a JSON object."""
        return {
            "feature": self.feature,
            "coefficient": round(self.coefficient, 2),
            "lower": round(self.lower, 2),
            "upper": round(self.upper, 2),
        }


@dataclass(frozen=True)
class StyleControl:
    """A style-controlled leaderboard with its coefficients, and the raw board beside it.

    Attributes
    ----------
    board : Leaderboard
        The ratings with style held equal (method ``"bt"``), intervals, ranks and odds as
        on any Bradley-Terry board.
    raw : Leaderboard
        The plain Bradley-Terry board of the same votes, weights, prior and intervals.
    coefficients : tuple of StyleCoefficient
        One per covariate that varies among the votes, in the order given.
    scaling : str
        How the covariates were made from the answers (recorded with the fit, so that a
        later reading compares like with like), e.g. ``"mixed"``.
    """

    board: Leaderboard
    raw: Leaderboard
    coefficients: tuple[StyleCoefficient, ...]
    scaling: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The controlled board's JSON (docs/SPEC.md section 3) with ``style_control``:
        the scaling, the coefficients, and each model's raw rating and rank."""
        document = self.board.to_dict()
        document["style_control"] = {
            "scaling": self.scaling,
            "coefficients": [c.to_dict() for c in self.coefficients],
            "raw": [
                {"model": m.model, "rating": round(m.rating, 2), "rank": m.rank}
                for m in self.raw.models
            ],
        }
        return document


def _check(
    n_models: int, matchups: Matchups, outcomes: Outcomes, differences: FloatArray, weights: Any
) -> tuple[Matchups, Outcomes, FloatArray, FloatArray]:
    m = np.asarray(matchups, dtype=np.intp)
    y = np.asarray(outcomes, dtype=np.float64)
    x = np.asarray(differences, dtype=np.float64)
    n = y.shape[0]
    if m.shape != (n, 2):
        raise ValueError(f"Argument 'matchups' must have shape ({n}, 2), not {m.shape}.")
    if x.ndim != 2 or x.shape[0] != n:
        raise ValueError(f"Argument 'differences' must have shape ({n}, p), not {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("Argument 'differences' must hold finite values only.")
    if n and (m.min() < 0 or m.max() >= n_models):
        raise ValueError(f"Argument 'matchups' must hold model indices below {n_models}.")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0):
        raise ValueError(f"Argument 'weights' must be {n} non-negative numbers.")
    return m, y, x, w


def _parts(params: FloatArray, k: int, m: Matchups, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each vote's logit, and the strengths (the design ``(e_a - e_b, x)`` stays implicit)."""
    theta, beta = params[:k], params[k:]
    return theta[m[:, 0]] - theta[m[:, 1]] + x @ beta, theta


def _second_moment(k: int, m: Matchups, x: FloatArray, v: FloatArray) -> FloatArray:
    """``sum_i v_i g_i g_i^T`` with ``g_i = (e_a - e_b, x_i)``: ``(k + p, k + p)``."""
    a, b = m[:, 0], m[:, 1]
    p = x.shape[1]
    out = np.zeros((k + p, k + p))
    out[:k, :k] = pair_matrices(k, a, b, v)[0]
    vx = v[:, None] * x
    cross = np.zeros((k, p))
    for j in range(p):
        cross[:, j] = np.bincount(a, vx[:, j], minlength=k) - np.bincount(b, vx[:, j], minlength=k)
    out[:k, k:] = cross
    out[k:, :k] = cross.T
    out[k:, k:] = x.T @ vx
    return out


def _penalty(k: int, p: int, alpha: float, beta_alpha: float) -> FloatArray:
    return np.concatenate([np.full(k, alpha), np.full(p, beta_alpha)])


def _objective(
    params: FloatArray,
    k: int,
    m: Matchups,
    y: Outcomes,
    x: FloatArray,
    w: FloatArray,
    prior: FloatArray,
) -> float:
    eta, _ = _parts(params, k, m, x)
    loss = -(w * (y * log_expit(eta) + (1.0 - y) * log_expit(-eta))).sum()
    return float(loss + 0.5 * (prior * params**2).sum())


def fit_style_bt(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    differences: FloatArray,
    weights: FloatArray | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    beta_alpha: float = BETA_ALPHA,
    initial_params: FloatArray | None = None,
    max_iter: int = 100,
    tol: float = 1e-8,
) -> tuple[FloatArray, FloatArray]:
    """Bradley-Terry strengths and style coefficients, fitted together by Newton's method.

    Minimises ``sum_i w_i logloss(y_i, theta_a - theta_b + x_i . beta)
    + alpha / 2 ||theta||^2 + beta_alpha / 2 ||beta||^2``.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups : Matchups
        ``(n, 2)`` model indices of each vote.
    outcomes : Outcomes
        ``(n,)`` 1 when ``model_a`` won, 0 when ``model_b`` won, 0.5 for a tie.
    differences : ndarray
        ``(n, p)`` style covariates of each vote, ``model_a``'s answer against
        ``model_b``'s.
    weights : ndarray, optional
        ``(n,)`` votes each row stands for (1 each by default).
    alpha : float
        Prior precision of the strengths: the raw board's (:data:`ranking.bt.DEFAULT_ALPHA`).
    beta_alpha : float
        Prior precision of the coefficients (:data:`BETA_ALPHA`).
    initial_params : ndarray, optional
        ``(n_models + p,)`` warm start, strengths then coefficients.
    max_iter : int
        Newton steps at most.
    tol : float
        Converged when the Newton decrement (half the predicted decrease) is below it.

    Returns
    -------
    theta : ndarray
        ``(n_models,)`` natural-log strengths, averaging zero.
    beta : ndarray
        ``(p,)`` coefficients, natural-log odds per unit of each covariate.

    Raises
    ------
    ValueError
        On arrays of the wrong shape, non-finite covariates or negative weights.
    RuntimeError
        When Newton's method does not converge in ``max_iter`` steps.
    """
    m, y, x, w = _check(n_models, matchups, outcomes, differences, weights)
    k, p = n_models, x.shape[1]
    prior = _penalty(k, p, alpha, beta_alpha)
    params = np.zeros(k + p) if initial_params is None else np.array(initial_params, float)
    value = _objective(params, k, m, y, x, w, prior)
    for _ in range(max_iter):
        eta, _ = _parts(params, k, m, x)
        q = expit(eta)
        r = w * (q - y)
        grad = _second_moment_vector(k, m, x, r) + prior * params
        hess = _second_moment(k, m, x, w * q * (1.0 - q)) + np.diag(prior)
        step = np.linalg.solve(hess, grad)
        decrement = 0.5 * float(grad @ step)
        if decrement < tol:
            return params[:k], params[k:]
        t = 1.0  # backtracking (Armijo) line search on the penalised objective
        while True:
            trial = params - t * step
            trial_value = _objective(trial, k, m, y, x, w, prior)
            if trial_value <= value - 0.5 * t * decrement:
                break
            t *= 0.5
            if t < 1e-10:  # no step decreases it: rounding has the last word, converged
                return params[:k], params[k:]
        params, value = trial, trial_value
    raise RuntimeError(f"Style-controlled Bradley-Terry did not converge in {max_iter} steps.")


def _second_moment_vector(k: int, m: Matchups, x: FloatArray, r: FloatArray) -> FloatArray:
    """``sum_i r_i g_i``: the likelihood's gradient when ``r`` is the weighted residual."""
    a, b = m[:, 0], m[:, 1]
    theta_part = np.bincount(a, r, minlength=k) - np.bincount(b, r, minlength=k)
    return np.concatenate([theta_part, x.T @ r])


def style_covariance(
    theta: FloatArray,
    beta: FloatArray,
    matchups: Matchups,
    outcomes: Outcomes,
    differences: FloatArray,
    weights: FloatArray | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    beta_alpha: float = BETA_ALPHA,
    prior_votes: float = MODERATION_VOTES,
) -> FloatArray:
    """The moderated sandwich covariance of strengths and coefficients together.

    As :func:`ranking.intervals.sandwich.moderated_covariance` for the raw board: the sandwich
    ``H^-1 M H^-1`` of the joint parameters, the strengths relative to their mean, each
    strength's variance moderated toward the model-based ``H^-1`` by its votes against
    ``prior_votes`` (a coefficient's by all the votes, which leaves it the sandwich's).

    Returns
    -------
    ndarray
        ``(k + p, k + p)`` covariance in natural-log units, strengths first.
    """
    m, y, x, w = _check(theta.shape[0], matchups, outcomes, differences, weights)
    k, p = theta.shape[0], x.shape[1]
    params = np.concatenate([theta, beta])
    q = expit(_parts(params, k, m, x)[0])
    hess = _second_moment(k, m, x, w * q * (1.0 - q)) + np.diag(_penalty(k, p, alpha, beta_alpha))
    meat = _second_moment(k, m, x, w * (q - y) ** 2)
    # The ones direction of the strengths has only the prior's curvature: raise it to
    # the scale of the rest before inverting, then project it out (centred_inverse).
    shift = np.zeros((k + p, k + p))
    shift[:k, :k] = max(float(np.trace(hess[:k, :k])) / k, 1e-12) / k
    centre = np.eye(k + p)
    centre[:k, :k] -= 1.0 / k
    bread = centre @ np.linalg.inv(hess + shift) @ centre
    n = np.concatenate([np.bincount(m.ravel(), np.repeat(w, 2), minlength=k), np.full(p, w.sum())])
    return moderate_sandwich(bread, meat, n, prior_votes)


def style_log_loss(
    theta: FloatArray,
    beta: FloatArray,
    matchups: Matchups,
    outcomes: Outcomes,
    differences: FloatArray,
) -> FloatArray:
    """Each vote's log-loss under a style-controlled fit (a tie scoring half each way).

    Returns
    -------
    ndarray
        ``(n,)`` natural-log loss per vote; with ``beta`` zero, the raw board's.
    """
    m, y, x, _ = _check(theta.shape[0], matchups, outcomes, differences, None)
    eta = theta[m[:, 0]] - theta[m[:, 1]] + x @ np.asarray(beta, dtype=np.float64)
    return np.asarray(-(y * log_expit(eta) + (1.0 - y) * log_expit(-eta)), dtype=np.float64)


def _bootstrap(
    k: int,
    m: Matchups,
    y: Outcomes,
    x: FloatArray,
    w: FloatArray,
    params: FloatArray,
    rounds: int,
    rng: np.random.Generator,
    alpha: float,
) -> FloatArray:
    """``(rounds, k + p)`` fits of multinomial bootstrap replicates of the votes."""
    total = int(round(w.sum()))
    counts = rng.multinomial(total, w / w.sum(), size=rounds).astype(np.float64)
    out = np.empty((rounds, params.shape[0]))
    for i in range(rounds):
        theta, beta = fit_style_bt(k, m, y, x, counts[i], alpha=alpha, initial_params=params)
        out[i] = np.concatenate([theta, beta])
    return out


def fit_style_leaderboard(
    data: PairwiseData,
    differences: FloatArray,
    features: Sequence[str],
    *,
    scaling: str = "",
    interval: Interval | None = None,
    rounds: int = 100,
    confidence: float = 0.95,
    anchor: tuple[str, float] | None = None,
    rng: np.random.Generator | int | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_votes: int | None = None,
) -> StyleControl:
    """The style-controlled Bradley-Terry leaderboard, and the raw one of the same votes.

    Parameters
    ----------
    data : PairwiseData
        One row per vote (not collapsed: each vote has its own covariates), as
        :func:`ranking.io.frames.pairwise_from_battles` makes them.
    differences : ndarray
        ``(n, p)`` style covariates of the votes, in the order of ``data``'s rows.
    features : sequence of str
        The ``p`` covariates' names. One that is zero on every vote gets no coefficient.
    scaling : str
        How the covariates were made, recorded in the result.
    interval : {"sandwich", "bootstrap", "none"}, optional
        As on the raw board; sandwich by default.
    rounds : int
        Bootstrap replicates.
    confidence : float
        Interval coverage, in (0, 1).
    anchor : (str, float), optional
        Pin this model at this rating on both boards; otherwise each averages 1000.
    rng : numpy.random.Generator or int, optional
        Randomness of the bootstraps.
    alpha : float
        Prior precision of the strengths, the raw board's.
    min_votes : int, optional
        Rank only the models with at least this many votes, on both boards
        (:func:`ranking.leaderboard.fit_leaderboard`).

    Returns
    -------
    StyleControl
        The controlled board, the raw board, the coefficients (Elo points per unit).

    Raises
    ------
    ValueError
        On an unknown interval, a bad ``confidence``, covariates whose shape does not
        match the votes or the names, or an unknown anchor model.
    """
    x_all = np.asarray(differences, dtype=np.float64)
    n = data.outcomes.shape[0]
    if x_all.ndim != 2 or x_all.shape[0] != n or x_all.shape[1] != len(features):
        raise ValueError(
            f"Argument 'differences' must have shape ({n}, {len(features)}), not {x_all.shape}."
        )
    if interval not in (None, "sandwich", "bootstrap", "none"):
        raise ValueError(
            f"Argument 'interval' must be 'sandwich', 'bootstrap' or 'none', not {interval!r}."
        )
    interval = "sandwich" if interval is None else interval
    generator = np.random.default_rng(rng)
    raw = fit_leaderboard(
        data,
        method="bt",
        interval=interval,
        rounds=rounds,
        confidence=confidence,
        anchor=anchor,
        rng=generator.spawn(1)[0],
        alpha=alpha,
        min_votes=min_votes,
    )
    names = tuple(row.model for row in raw.models)
    if not names:
        return StyleControl(raw, raw, (), scaling)
    index = np.full(data.n_models, -1, dtype=np.intp)
    ranked = np.array([data.models.index(name) for name in names], dtype=np.intp)
    index[ranked] = np.arange(ranked.size)
    among = (index[data.matchups[:, 0]] >= 0) & (index[data.matchups[:, 1]] >= 0)
    m, y, w = index[data.matchups[among]], data.outcomes[among], data.weights[among]
    varying = np.flatnonzero(np.any(x_all[among] != 0.0, axis=0))
    x = x_all[among][:, varying]
    k = ranked.size
    theta, beta = fit_style_bt(k, m, y, x, w, alpha=alpha)
    params = np.concatenate([theta, beta])
    odds = None
    if interval == "sandwich":
        covariance = style_covariance(theta, beta, m, y, x, w, alpha=alpha)
        lo, hi = normal_intervals(params, covariance, confidence)
        odds = rank_odds(gaussian_draws(theta, covariance[:k, :k]), confidence)
    elif interval == "bootstrap":
        samples = _bootstrap(k, m, y, x, w, params, rounds, generator, alpha)
        lo, hi = percentile_intervals(samples, confidence)
        odds = rank_odds(samples[:, :k], confidence)
    else:
        lo = hi = params
    point, lower, upper = to_elo_scale(theta), to_elo_scale(lo[:k]), to_elo_scale(hi[:k])
    if anchor is not None:
        shift = anchor[1] - point[names.index(anchor[0])]
        point, lower, upper = point + shift, lower + shift, upper + shift
    every = model_counts(data)
    counts = ModelCounts(
        every.battles[ranked], every.wins[ranked], every.losses[ranked], every.ties[ranked]
    )
    board = build_leaderboard(
        "bt",
        names,
        point,
        lower,
        upper,
        counts,
        n_battles=raw.n_battles,
        interval=interval,
        confidence=confidence,
        odds=odds,
    )
    board = replace(board, provisional=raw.provisional, min_votes=raw.min_votes)
    coefficients = tuple(
        StyleCoefficient(
            features[int(j)],
            float(ELO_PER_NAT * params[k + i]),
            float(ELO_PER_NAT * min(lo[k + i], params[k + i])),
            float(ELO_PER_NAT * max(hi[k + i], params[k + i])),
        )
        for i, j in enumerate(varying)
    )
    return StyleControl(board, raw, coefficients, scaling)
