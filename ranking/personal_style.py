"""A person's taste in answers: per-user style coefficients shrunk toward the aggregate's.

Style control (:mod:`ranking.style_control`) fits one coefficient vector ``beta`` for
everyone: a vote's log-odds are ``theta_a - theta_b + x . beta``, with ``x`` the vote's
style covariates (model_a's answer against model_b's: longer, more headers, ...). Here
each user ``u`` has their own::

    logit P(a beats b | u) = offset + x . beta_u,   beta_u ~ N(beta, I / alpha)

``offset`` is whatever the ratings say of the pair (the style-controlled aggregate's
``theta_a - theta_b``, or the user's own ratings), ``beta`` the aggregate's coefficients
and ``1 / sqrt(alpha)`` the typical size of a user's departure from them. As for the
per-user ratings (:mod:`ranking.shrinkage`), ``alpha`` is one scalar learnt from all users'
votes by held-out log-loss (``folds``-fold over every user's votes, the default of the
ratings), by the summed Laplace evidence, or by how well each user's earlier votes predict
their later ones (``"later"``), and searched by
:func:`ranking.shrinkage.search_log_alpha` over the same range: a user with 10 votes stays
near the aggregate, one with 300 mostly speaks for themself. Ties count half a win each
way, as everywhere.

Each user's fit is a ``p``-dimensional ridge logistic regression (``p`` the style
features, a handful), solved for all users at once by damped Newton steps on the ``(U, p,
p)`` Hessians; its Laplace posterior gives each coefficient's interval, and whether the
user's taste is distinguishable from the aggregate's (the interval of ``beta_u - beta``,
which adds the aggregate's own variance where it is given, excludes zero).

**The fallback rule.** Per-user taste is worth showing only where it predicts held-out
votes better than the aggregate's coefficients. :func:`fit_user_style` scores both on the
same held-out votes (the folds, or with ``"later"`` each user's later votes: the learnt
``alpha`` against ``beta_u = beta``), and where the per-user coefficients do not win by
at least :data:`MIN_GAIN_SE` standard errors of the paired difference (clustered by
user), every user is given the aggregate's coefficients and ``personal`` is False: the
product then says that everyone's taste is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.special import expit, log_expit
from scipy.stats import norm

from ranking.pairwise import ELO_PER_NAT
from ranking.shrinkage import ALPHA_BOUNDS, search_log_alpha
from ranking.types import BoolArray, FloatArray, IntArray, Outcomes

__all__ = [
    "MIN_GAIN_SE",
    "STYLE_ALPHA_METHODS",
    "HeldOutGain",
    "StyleAlphaMethod",
    "StylePrior",
    "UserStyle",
    "earlier_votes",
    "fit_user_style",
    "fit_user_style_posterior",
    "style_log_loss",
    "style_under_prior",
    "style_win_probability",
    "taste_strengths",
    "user_style_alpha",
]

StyleAlphaMethod = Literal["cv", "evidence", "later"]
#: The ways :func:`user_style_alpha` learns the prior precision: those of the ratings
#: (:data:`ranking.shrinkage.ALPHA_METHODS`), and each user's earlier votes judged by
#: their later ones (as :func:`ranking.shrinkage.later_votes_alpha`).
STYLE_ALPHA_METHODS: tuple[StyleAlphaMethod, ...] = ("cv", "evidence", "later")
#: Standard errors by which the per-user coefficients must beat the aggregate's on
#: held-out votes to be used (the fallback rule of the module docstring).
MIN_GAIN_SE = 2.0
#: The Newton solver's limits.
_MAX_ITER, _TOL = 100, 1e-9


@dataclass(frozen=True)
class HeldOutGain:
    """Held-out log-loss of per-user style against the aggregate's, on the same votes.

    Attributes
    ----------
    per_user, aggregate : float
        Mean log-loss per held-out vote (natural log, ties as 0.5).
    gain : float
        ``aggregate - per_user``: positive where the per-user coefficients predict better.
    se : float
        Standard error of ``gain``, clustered by user.
    n_votes : int
        Votes scored.
    """

    per_user: float
    aggregate: float
    gain: float
    se: float
    n_votes: int


@dataclass(frozen=True)
class UserStyle:
    """Every user's style coefficients, natural-log units per unit of each covariate.

    Attributes
    ----------
    features : tuple of str
        The covariates' names, the column order.
    coefficients : ndarray
        ``(U, p)`` each user's coefficients: the posterior mean, or the aggregate's where
        ``personal`` is False.
    lower, upper : ndarray
        ``(U, p)`` the posterior's ``confidence`` interval of each coefficient.
    aggregate : ndarray
        ``(p,)`` the aggregate's coefficients every user is shrunk toward.
    distinct : ndarray of bool
        ``(U, p)`` whether the interval of the user's departure from the aggregate
        excludes zero (never where ``personal`` is False).
    n_battles : ndarray of int
        ``(U,)`` votes of each user.
    alpha : float
        The prior precision used.
    personal : bool
        Whether per-user coefficients are used (the fallback rule).
    held_out : HeldOutGain or None
        What decided ``personal``; None where ``alpha`` was given rather than learnt.
    confidence : float
        Coverage of the intervals.
    """

    features: tuple[str, ...]
    coefficients: FloatArray
    lower: FloatArray
    upper: FloatArray
    aggregate: FloatArray
    distinct: BoolArray
    n_battles: npt.NDArray[np.int64]
    alpha: float
    personal: bool
    held_out: HeldOutGain | None
    confidence: float = 0.95

    @property
    def prior_sd(self) -> float:
        """Learnt standard deviation of a user's departure from the aggregate, natural-log
        units per unit of covariate."""
        return 1.0 / math.sqrt(self.alpha)

    def prior(
        self,
        covariance: npt.ArrayLike | None = None,
        scaling: str = "",
        models: tuple[str, ...] = (),
        typical: npt.ArrayLike | None = None,
    ) -> StylePrior:
        """The :class:`StylePrior` that fits one more user as these users were fitted;
        ``covariance`` is the aggregate's (zeros where not given), ``scaling`` how the
        covariates were made, ``typical`` the ``models``' typical answers where the taste
        was fitted on departures from them."""
        p = self.aggregate.size
        cov = np.zeros((p, p)) if covariance is None else np.asarray(covariance, dtype=np.float64)
        usual = None if typical is None else np.asarray(typical, dtype=np.float64).reshape(-1, p)
        return StylePrior(
            self.features,
            self.aggregate,
            cov.reshape(p, p),
            self.alpha,
            self.personal,
            scaling,
            models,
            usual,
        )

    def points(self, per_unit: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Coefficients and intervals in Elo points for a move of ``per_unit`` covariate
        units (``(p,)``, e.g. the covariate of an answer twice as long): ``(U, p)`` each."""
        unit = np.asarray(per_unit, dtype=np.float64) * ELO_PER_NAT
        return self.coefficients * unit, self.lower * unit, self.upper * unit


@dataclass(frozen=True)
class StylePrior:
    """What a fit of all users learnt, to fit one more user's taste later (a personal
    board refitted after a vote) the same way.

    Attributes
    ----------
    features : tuple of str
        The covariates' names.
    aggregate : ndarray
        ``(p,)`` the aggregate's coefficients, natural log per covariate unit.
    covariance : ndarray
        ``(p, p)`` their covariance.
    alpha : float
        The learnt prior precision of a user's departure.
    personal : bool
        Whether per-user taste is used at all (the fallback rule).
    scaling : str
        How the covariates were made from the answers (the aggregate fit's, e.g.
        ``"mixed"``: :func:`features.answer_style.style_differences`); empty where not
        recorded.
    models : tuple of str
        The models of ``typical``.
    typical : ndarray or None
        ``(len(models), p)`` each model's typical answer against the average answer, where
        the users' taste was fitted on their votes' departures from the two models'
        typical answers (None: on the covariates themselves).
    """

    features: tuple[str, ...]
    aggregate: FloatArray
    covariance: FloatArray
    alpha: float
    personal: bool
    scaling: str = ""
    models: tuple[str, ...] = ()
    typical: FloatArray | None = None

    def typical_of(self, models: Sequence[str]) -> FloatArray:
        """``(len(models), p)`` the typical answers of ``models``, by name (zeros for a
        model this prior lacks, or everywhere without ``typical``)."""
        out = np.zeros((len(models), self.aggregate.size))
        if self.typical is not None:
            row = {m: j for j, m in enumerate(self.models)}
            for i, model in enumerate(models):
                if model in row:
                    out[i] = self.typical[row[model]]
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, for a fit directory."""
        return {
            "features": list(self.features),
            "aggregate": self.aggregate.tolist(),
            "covariance": self.covariance.tolist(),
            "alpha": self.alpha,
            "personal": self.personal,
            "scaling": self.scaling,
            "models": list(self.models),
            "typical": None if self.typical is None else self.typical.tolist(),
        }

    @classmethod
    def from_dict(cls, document: dict[str, object]) -> StylePrior:
        """The prior :meth:`to_dict` wrote."""
        features = tuple(str(f) for f in document["features"])  # type: ignore[attr-defined]
        p = len(features)
        return cls(
            features,
            np.asarray(document["aggregate"], dtype=np.float64).reshape(p),
            np.asarray(document["covariance"], dtype=np.float64).reshape(p, p),
            float(document["alpha"]),  # type: ignore[arg-type]
            bool(document["personal"]),
            str(document.get("scaling", "")),
            tuple(str(m) for m in document.get("models", ())),  # type: ignore[attr-defined]
            None
            if document.get("typical") is None
            else np.asarray(document["typical"], dtype=np.float64).reshape(-1, p),
        )


def _check(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
) -> tuple[FloatArray, Outcomes, FloatArray, IntArray, FloatArray]:
    """The arrays as floats and ints, their shapes checked against each other."""
    x = np.asarray(differences, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"Argument 'differences' must be (n, p), not of shape {x.shape}.")
    n, p = x.shape
    y = np.asarray(outcomes, dtype=np.float64).reshape(-1)
    off = np.asarray(offsets, dtype=np.float64).reshape(-1)
    groups = np.asarray(users, dtype=np.intp).reshape(-1)
    mu = np.asarray(aggregate, dtype=np.float64).reshape(-1)
    for name, array in (("outcomes", y), ("offsets", off), ("users", groups)):
        if array.size != n:
            raise ValueError(f"Argument '{name}' must have {n} entries, not {array.size}.")
    if mu.size != p:
        raise ValueError(f"Argument 'aggregate' must have {p} entries, not {mu.size}.")
    if n and (groups.min() < 0 or groups.max() >= n_users):
        raise ValueError(f"Argument 'users' must lie in [0, {n_users}), not {groups.max()}.")
    if not (np.isfinite(x).all() and np.isfinite(off).all()):
        raise ValueError("Arguments 'differences' and 'offsets' must be finite.")
    return x, y, off, groups, mu


def _sums(x: FloatArray, values: FloatArray, groups: IntArray, n_groups: int) -> FloatArray:
    """``(G, p)``: ``sum_i values_i x_i`` per group."""
    out = np.empty((n_groups, x.shape[1]))
    for j in range(x.shape[1]):
        out[:, j] = np.bincount(groups, weights=values * x[:, j], minlength=n_groups)
    return out


def _outer_sums(x: FloatArray, values: FloatArray, groups: IntArray, n_groups: int) -> FloatArray:
    """``(G, p, p)``: ``sum_i values_i x_i x_i^T`` per group."""
    p = x.shape[1]
    out = np.empty((n_groups, p, p))
    for j in range(p):
        for k in range(j, p):
            out[:, j, k] = out[:, k, j] = np.bincount(
                groups, weights=values * x[:, j] * x[:, k], minlength=n_groups
            )
    return out


def _losses(eta: FloatArray, y: Outcomes) -> FloatArray:
    """Per-vote log-loss of log-odds ``eta`` with outcome ``y`` (ties as 0.5)."""
    return -(y * log_expit(eta) + (1.0 - y) * log_expit(-eta))


def _objective(
    beta: FloatArray,
    fit: tuple[FloatArray, Outcomes, FloatArray, IntArray],
    mu: FloatArray,
    alpha: FloatArray,
) -> FloatArray:
    """``(G,)`` penalised negative log-likelihood of each group."""
    x, y, off, groups = fit
    eta = off + np.einsum("ij,ij->i", x, beta[groups])
    data = np.bincount(groups, weights=_losses(eta, y), minlength=beta.shape[0])
    return data + 0.5 * alpha * ((beta - mu) ** 2).sum(axis=1)


def _newton(
    fit: tuple[FloatArray, Outcomes, FloatArray, IntArray],
    mu: FloatArray,
    alpha: FloatArray,
    start: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Every group's posterior mode and Hessian there, by damped Newton steps."""
    x, y, off, groups = fit
    n_groups, p = mu.shape
    beta = start.copy()
    eye = np.eye(p)
    current = _objective(beta, fit, mu, alpha)
    for _ in range(_MAX_ITER):
        prob = expit(off + np.einsum("ij,ij->i", x, beta[groups]))
        gradient = _sums(x, prob - y, groups, n_groups) + alpha[:, None] * (beta - mu)
        hessian = _outer_sums(x, prob * (1.0 - prob), groups, n_groups)
        hessian += alpha[:, None, None] * eye
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        if np.abs(step).max(initial=0.0) < _TOL:
            return beta, hessian
        size = np.ones(n_groups)
        for _ in range(40):  # halve each group's step until its objective does not rise
            trial = beta - size[:, None] * step
            value = _objective(trial, fit, mu, alpha)
            worse = value > current + 1e-12 * np.abs(current)
            if not worse.any():
                break
            size[worse] *= 0.5
        beta, current = trial, value
    raise RuntimeError(f"Per-user style fits did not converge in {_MAX_ITER} Newton steps.")


def fit_user_style_posterior(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """Each user's posterior mode and covariance under the prior ``N(aggregate, I / alpha)``.

    Parameters
    ----------
    differences : array_like
        ``(n, p)`` style covariates of each vote (model_a's answer against model_b's).
    outcomes : array_like
        ``(n,)`` 1 where model_a won, 0 where model_b did, 0.5 for a tie.
    offsets : array_like
        ``(n,)`` log-odds of model_a winning before style: ``theta_a - theta_b``, natural
        log.
    users : array_like of int
        ``(n,)`` user of each vote, below ``n_users``.
    n_users : int
        Number of users.
    aggregate : array_like
        ``(p,)`` the prior mean: the aggregate's style coefficients.
    alpha : float
        Prior precision.

    Returns
    -------
    coefficients : ndarray
        ``(U, p)`` posterior modes (the aggregate for a user with no vote).
    covariance : ndarray
        ``(U, p, p)`` the Laplace posterior's covariance.
    """
    if not alpha > 0:
        raise ValueError(f"Argument 'alpha' must be positive, not {alpha}.")
    x, y, off, groups, mu = _check(differences, outcomes, offsets, users, n_users, aggregate)
    prior = np.tile(mu, (n_users, 1))
    beta, hessian = _newton((x, y, off, groups), prior, np.full(n_users, alpha), prior)
    covariance = np.asarray(np.linalg.inv(hessian), dtype=np.float64)
    return beta, covariance


def _folds(
    x: FloatArray,
    y: Outcomes,
    off: FloatArray,
    groups: IntArray,
    n_users: int,
    folds: int,
    rng: np.random.Generator | int | None,
) -> tuple[tuple[FloatArray, Outcomes, FloatArray, IntArray], IntArray]:
    """All folds as one problem: fold ``f``'s training votes of user ``g`` are group
    ``f * U + g`` (as :func:`ranking.shrinkage.cross_validated_alpha` does). Returns the
    training problem and each vote's held-out group."""
    fold = np.random.default_rng(rng).integers(0, folds, size=y.size)
    train = [np.flatnonzero(fold != f) for f in range(folds)]
    rows = np.concatenate(train)
    fit_groups = np.concatenate([groups[r] + f * n_users for f, r in enumerate(train)])
    return (x[rows], y[rows], off[rows], fit_groups), fold * n_users + groups


def _held_out_losses(
    x: FloatArray,
    y: Outcomes,
    off: FloatArray,
    held_group: IntArray,
    beta: FloatArray,
) -> FloatArray:
    """Per-vote log-loss of each vote under its held-out fold's coefficients."""
    return _losses(off + np.einsum("ij,ij->i", x, beta[held_group]), y)


def user_style_alpha(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
    *,
    method: StyleAlphaMethod = "cv",
    earlier: npt.ArrayLike | None = None,
    bounds: tuple[float, float] = ALPHA_BOUNDS,
    folds: int = 5,
    rng: np.random.Generator | int | None = 0,
) -> tuple[float, HeldOutGain]:
    """Learn the prior precision of the users' style coefficients, and score it.

    Parameters
    ----------
    differences, outcomes, offsets, users, n_users, aggregate
        As :func:`fit_user_style_posterior`.
    method : {"cv", "evidence", "later"}
        Held-out log-loss over ``folds`` folds of every user's votes, the summed Laplace
        evidence (which over-shrinks with many ties, as for the ratings), or the log-loss
        of each user's later votes under the fit of their ``earlier`` ones (what a
        person's first votes say of their next: where taste drifts, or later votes are
        on other prompts, it shrinks harder than ``"cv"``).
    earlier : array_like of bool, optional
        ``(n,)`` True for a vote fitted, False for one judged: needed by ``"later"``.
    bounds : (float, float)
        Search range of ``alpha``: :data:`ranking.shrinkage.ALPHA_BOUNDS` by default.
    folds : int
        Folds of the cross-validation, and of the held-out comparison returned (not
        used by ``"later"``).
    rng : numpy.random.Generator or int, optional
        Chooses the folds.

    Returns
    -------
    alpha : float
        The learnt prior precision (at the upper bound where users do not differ
        detectably from the aggregate).
    held_out : HeldOutGain
        The per-user coefficients at ``alpha`` against the aggregate's, on the same
        held-out votes (the folds, or the later votes for ``"later"``).
    """
    if method not in STYLE_ALPHA_METHODS:
        raise ValueError(f"Argument 'method' must be one of {STYLE_ALPHA_METHODS}, not {method!r}.")
    if folds < 2:
        raise ValueError(f"Argument 'folds' must be at least 2, not {folds}.")
    x, y, off, groups, mu = _check(differences, outcomes, offsets, users, n_users, aggregate)
    if y.size == 0:
        raise ValueError("Argument 'outcomes' must hold some votes to learn from.")
    if method == "later":
        if earlier is None:
            raise ValueError("Argument 'earlier' is needed by method 'later'.")
        fitted = np.asarray(earlier, dtype=bool).reshape(-1)
        if fitted.size != y.size:
            raise ValueError(f"Argument 'earlier' must have {y.size} entries, not {fitted.size}.")
        held = np.flatnonzero(~fitted)
        if held.size == 0:
            raise ValueError("Argument 'earlier' must leave some votes to judge.")
        fit = (x[fitted], y[fitted], off[fitted], groups[fitted])
        held_group, size = groups[held], n_users
    else:
        fit, held_group = _folds(x, y, off, groups, n_users, folds, rng)
        held, size = np.arange(y.size), folds * n_users
    prior = np.tile(mu, (size, 1))
    warm = prior

    def held_out(log_alpha: float) -> FloatArray:
        nonlocal warm
        warm, _ = _newton(fit, prior, np.full(size, math.exp(log_alpha)), warm)
        return _held_out_losses(x[held], y[held], off[held], held_group, warm)

    if method == "evidence":
        alpha = _evidence_alpha((x, y, off, groups), np.tile(mu, (n_users, 1)), bounds)
    else:
        alpha = search_log_alpha(lambda a: float(held_out(a).mean()), bounds)
    per_user = held_out(math.log(alpha))
    baseline = _losses(off[held] + x[held] @ mu, y[held])
    return alpha, _gain(per_user, baseline, groups[held], n_users)


def _evidence_alpha(
    fit: tuple[FloatArray, Outcomes, FloatArray, IntArray],
    prior: FloatArray,
    bounds: tuple[float, float],
) -> float:
    """The ``alpha`` that maximises the users' summed Laplace evidence."""
    n_users, p = prior.shape
    warm = prior

    def negative_evidence(log_alpha: float) -> float:
        nonlocal warm
        alpha = np.full(n_users, math.exp(log_alpha))
        warm, hessian = _newton(fit, prior, alpha, warm)
        _, logdet = np.linalg.slogdet(hessian)
        value = _objective(warm, fit, prior, alpha) + 0.5 * logdet - 0.5 * p * np.log(alpha)
        return float(value.sum())

    return search_log_alpha(negative_evidence, bounds)


def _gain(
    per_user: FloatArray, baseline: FloatArray, groups: IntArray, n_users: int
) -> HeldOutGain:
    """The paired held-out difference, its standard error clustered by user."""
    n = per_user.size
    difference = baseline - per_user
    gain = float(difference.mean())
    # the ratio estimator's clustered variance: per-user sums of the centred differences
    clusters = np.bincount(groups, weights=difference - gain, minlength=n_users)
    voted = np.bincount(groups, minlength=n_users) > 0
    m = int(voted.sum())
    se = math.sqrt(m / max(m - 1, 1) * float((clusters[voted] ** 2).sum())) / n if n else math.nan
    return HeldOutGain(float(per_user.mean()), float(baseline.mean()), gain, se, n)


def fit_user_style(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
    *,
    features: tuple[str, ...] | None = None,
    aggregate_covariance: npt.ArrayLike | None = None,
    alpha: float | None = None,
    personal: bool = True,
    method: StyleAlphaMethod = "cv",
    earlier: npt.ArrayLike | None = None,
    folds: int = 5,
    min_gain_se: float = MIN_GAIN_SE,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = 0,
) -> UserStyle:
    """Every user's style coefficients, shrunk toward the aggregate's, with intervals.

    Parameters
    ----------
    differences : array_like
        ``(n, p)`` style covariates of each vote, in the aggregate fit's scaling
        (:func:`features.answer_style.style_differences`).
    outcomes : array_like
        ``(n,)`` 1, 0 or 0.5 (tie) for model_a.
    offsets : array_like
        ``(n,)`` log-odds of model_a before style (natural log): the style-controlled
        aggregate's ``theta_a - theta_b``, or the user's own ratings'.
    users : array_like of int
        ``(n,)`` user of each vote, below ``n_users``.
    n_users : int
        Number of users.
    aggregate : array_like
        ``(p,)`` the aggregate's style coefficients (natural log per covariate unit).
    features : tuple of str, optional
        The covariates' names; ``style0, style1, ...`` by default.
    aggregate_covariance : array_like, optional
        ``(p, p)`` covariance of ``aggregate``: added to a user's own when telling
        whether they differ from it (``distinct``).
    alpha : float, optional
        Fix the prior precision instead of learning it (then ``held_out`` is None).
    personal : bool
        With ``alpha`` given, whether to use the per-user coefficients (as a fit of all
        users decided: :class:`StylePrior`); ignored when ``alpha`` is learnt, where the
        fallback rule decides.
    method : {"cv", "evidence", "later"}
        How ``alpha`` is learnt (:func:`user_style_alpha`).
    earlier : array_like of bool, optional
        For ``"later"``: ``(n,)`` True for each user's earlier votes, fitted to judge the
        later ones (the coefficients returned are fitted on all votes).
    folds : int
        Folds of the cross-validation and of the held-out comparison.
    min_gain_se : float
        Standard errors by which the per-user coefficients must beat the aggregate's on
        held-out votes to be used (the fallback rule); 0 keeps them whenever they win.
    confidence : float
        Coverage of the intervals.
    rng : numpy.random.Generator or int, optional
        Chooses the folds.

    Returns
    -------
    UserStyle
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    x, y, off, groups, mu = _check(differences, outcomes, offsets, users, n_users, aggregate)
    p = mu.size
    names = tuple(features) if features is not None else tuple(f"style{j}" for j in range(p))
    if len(names) != p:
        raise ValueError(f"Argument 'features' must name {p} covariates, not {len(names)}.")
    held_out: HeldOutGain | None = None
    if alpha is None:
        alpha, held_out = user_style_alpha(
            x, y, off, groups, n_users, mu, method=method, earlier=earlier, folds=folds, rng=rng
        )
        personal = held_out.gain > 0 and held_out.gain >= min_gain_se * held_out.se
    beta, covariance = fit_user_style_posterior(x, y, off, groups, n_users, mu, alpha)
    sd = np.sqrt(np.diagonal(covariance, axis1=1, axis2=2))
    z = float(norm.ppf(0.5 + confidence / 2.0))
    extra = (
        np.zeros(p)
        if aggregate_covariance is None
        else np.diagonal(np.asarray(aggregate_covariance, dtype=np.float64).reshape(p, p))
    )
    distinct = np.abs(beta - mu) > z * np.sqrt(sd**2 + extra)
    if not personal:
        beta = np.tile(mu, (n_users, 1))
        distinct = np.zeros_like(distinct)
    n_battles = np.bincount(groups, minlength=n_users).astype(np.int64)
    return UserStyle(
        names,
        beta,
        beta - z * sd,
        beta + z * sd,
        mu,
        distinct,
        n_battles,
        float(alpha),
        bool(personal),
        held_out,
        confidence,
    )


def style_under_prior(
    prior: StylePrior,
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike | None = None,
    n_users: int = 1,
    *,
    confidence: float = 0.95,
) -> UserStyle:
    """Users' taste fitted under what a fit of all users learnt (its aggregate, its
    ``alpha``, its fallback decision): one person's board refitted after a vote.

    Parameters
    ----------
    prior : StylePrior
        From :meth:`UserStyle.prior` of the fit of all users.
    differences, outcomes, offsets
        As :func:`fit_user_style`.
    users : array_like of int, optional
        ``(n,)`` user of each vote; one user by default.
    n_users : int
        Number of users.
    confidence : float
        Coverage of the intervals.
    """
    x = np.asarray(differences, dtype=np.float64).reshape(-1, prior.aggregate.size)
    groups = np.zeros(x.shape[0], dtype=np.intp) if users is None else users
    return fit_user_style(
        x, outcomes, offsets, groups, n_users, prior.aggregate, features=prior.features,
        aggregate_covariance=prior.covariance, alpha=prior.alpha, personal=prior.personal,
        confidence=confidence,
    )  # fmt: skip


def earlier_votes(users: npt.ArrayLike, n_users: int) -> BoolArray:
    """True for each user's first half of their votes (rounded up), in the order given:
    the ``earlier`` of ``method="later"``.

    Parameters
    ----------
    users : array_like of int
        ``(n,)`` user of each vote, in vote order, below ``n_users``.
    n_users : int
        Number of users.
    """
    codes = np.asarray(users, dtype=np.intp).reshape(-1)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n_users)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.empty(codes.size, dtype=np.intp)
    position[order] = np.arange(codes.size) - np.repeat(starts, counts)
    return np.asarray(position < np.ceil(counts[codes] / 2.0), dtype=bool)


def style_win_probability(
    offsets: npt.ArrayLike,
    differences: npt.ArrayLike,
    coefficients: npt.ArrayLike,
) -> FloatArray:
    """``P(model_a wins)`` of each vote under a person's style coefficients.

    Parameters
    ----------
    offsets : array_like
        ``(n,)`` log-odds before style (``theta_a - theta_b``, natural log).
    differences : array_like
        ``(n, p)`` the votes' style covariates.
    coefficients : array_like
        ``(p,)`` one person's coefficients, or ``(n, p)`` each vote's voter's.
    """
    x = np.asarray(differences, dtype=np.float64)
    beta = np.broadcast_to(np.asarray(coefficients, dtype=np.float64), x.shape)
    return expit(np.asarray(offsets, dtype=np.float64) + np.einsum("ij,ij->i", x, beta))


def taste_strengths(
    theta: npt.ArrayLike, model_covariates: npt.ArrayLike, coefficients: npt.ArrayLike
) -> FloatArray:
    """Models' strengths for people with these tastes, before any answer is seen.

    Where a vote's answers are not known yet (a board, a recommendation), each model's
    typical answer stands in for its answer: ``model_covariates[m]`` is model ``m``'s
    typical answer against the average answer (for the log-ratio covariate of length,
    exactly the difference of a vote's two models'), so a person ``u`` sees model ``m``
    at ``theta_m + model_covariates[m] . beta_u``.

    Parameters
    ----------
    theta : array_like
        ``(k,)`` style-controlled strengths, natural log.
    model_covariates : array_like
        ``(k, p)`` each model's typical answer's covariates against the average answer.
    coefficients : array_like
        ``(p,)`` one person's coefficients, or ``(U, p)`` several people's.

    Returns
    -------
    ndarray
        ``(k,)`` or ``(U, k)`` strengths, natural log, centred over the models.
    """
    beta = np.asarray(coefficients, dtype=np.float64)
    strengths = (
        np.asarray(theta, dtype=np.float64)
        + beta @ np.asarray(model_covariates, dtype=np.float64).T
    )
    centred: FloatArray = strengths - strengths.mean(axis=-1, keepdims=True)
    return centred


def style_log_loss(
    offsets: npt.ArrayLike,
    differences: npt.ArrayLike,
    coefficients: npt.ArrayLike,
    outcomes: npt.ArrayLike,
) -> FloatArray:
    """Per-vote log-loss (natural log, ties as 0.5) under the coefficients given, as
    :func:`style_win_probability` takes them."""
    x = np.asarray(differences, dtype=np.float64)
    beta = np.broadcast_to(np.asarray(coefficients, dtype=np.float64), x.shape)
    eta = np.asarray(offsets, dtype=np.float64) + np.einsum("ij,ij->i", x, beta)
    return _losses(eta, np.asarray(outcomes, dtype=np.float64))
