"""Confidence intervals for ratings: sandwich (robust) and bootstrap, and interval ranks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import expit, ndtri

from ranking.bt import DEFAULT_ALPHA, bt_hessian, fit_bt_grouped
from ranking.bt_solver import pair_matrices
from ranking.elo import INITIAL, K_FACTOR
from ranking.elo_kernel import bootstrap_elo_rows
from ranking.progress import Advance, Progress, start
from ranking.types import FloatArray, Matchups, Outcomes, PairwiseData, Ratings, Weights

__all__ = [
    "MODERATION_VOTES",
    "bootstrap_bt",
    "bootstrap_elo",
    "bootstrap_elo_batch",
    "centred_inverse",
    "elo_bootstrap_plan",
    "interval_ranks",
    "moderate_sandwich",
    "moderated_covariance",
    "normal_intervals",
    "percentile_intervals",
    "replicate_summary",
    "sandwich_covariance",
    "sandwich_intervals",
]

#: Most (replicate, vote) pairs in one batch of an Elo bootstrap (one generator a batch).
_MAX_ELO_BOOTSTRAP_ROWS = 20_000_000
#: Votes a model needs before its sandwich variance outweighs the model-based one.
MODERATION_VOTES = 20.0


def sandwich_covariance(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> FloatArray:
    """Robust (sandwich) covariance ``H^-1 M H^-1`` of Bradley-Terry strengths.

    ``H`` is the Hessian of the penalised negative log-likelihood and
    ``M = sum_i w_i (p_i - y_i)^2 x_i x_i^T`` the outer product of per-vote scores (a
    collapsed row of weight ``w`` stands for ``w`` identical votes). Unlike ``H^-1`` it
    stays valid when ties or heterogeneous voters make the Bernoulli variance wrong.

    Parameters
    ----------
    theta : Ratings
        ``(k,)`` fitted natural-log strengths.
    matchups, outcomes, weights
        The votes ``theta`` was fitted on.
    alpha : float
        The prior precision used in the fit.

    Returns
    -------
    ndarray
        ``(k, k)`` covariance in natural-log units. Every vote's score is orthogonal to
        a common shift, so the covariance describes ratings relative to their mean.
    """
    bread, meat = _bread_and_meat(theta, matchups, outcomes, weights, alpha)
    cov: FloatArray = bread @ meat @ bread
    return 0.5 * (cov + cov.T)


def _bread_and_meat(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """``C H^-1 C`` and ``M`` of the sandwich, each computed once."""
    matchups = np.asarray(matchups, dtype=np.intp)
    w = np.ones(len(outcomes)) if weights is None else np.asarray(weights, dtype=np.float64)
    a, b = matchups[:, 0], matchups[:, 1]
    r2 = w * (expit(theta[a] - theta[b]) - outcomes) ** 2
    meat = pair_matrices(theta.shape[0], a, b, r2)[0]
    bread = centred_inverse(bt_hessian(theta, matchups, outcomes, w, alpha))
    return bread, meat


def centred_inverse(hessian: FloatArray) -> FloatArray:
    """``C H^-1 C``, the inverse Hessian of ratings relative to their mean (``C = I - J``).

    A Bradley-Terry Hessian has the all-ones vector as an eigenvector whose eigenvalue is
    only the prior precision ``alpha``: inverted as it is, that direction carries
    ``1 / alpha``, and rounding errors of that size swamp everything else when ``alpha``
    is tiny. Raising that one eigenvalue to the scale of the rest (``H + c J``) before
    inverting changes nothing else, and the centring then removes it exactly.
    """
    k = hessian.shape[0]
    shift = np.full((k, k), max(float(np.trace(hessian)) / k, 1e-12) / k)
    centre = np.eye(k) - 1.0 / k
    inverse: FloatArray = centre @ np.linalg.inv(hessian + shift) @ centre
    return inverse


def sandwich_intervals(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = 0.95,
    prior_votes: float = MODERATION_VOTES,
) -> tuple[Ratings, Ratings]:
    """Normal intervals ``theta +- z * sd`` from a moderated sandwich variance.

    The sandwich variance of a model estimates its uncertainty from that model's own
    residuals, which is right with many votes and wrong with a handful: two ties with an
    evenly matched opponent leave residuals near zero, and a sandwich interval of a few
    points. Each model's variance is therefore moderated toward the model-based
    (Bernoulli) variance ``H^-1``, weighing the sandwich by the model's ``n`` votes
    against ``prior_votes``::

        var = (n * sandwich + prior_votes * model_based) / (n + prior_votes)

    With thousands of votes this is the sandwich; with two it is the model-based
    variance, which does not depend on the residuals. Natural-log units.
    """
    covariance = moderated_covariance(
        theta, matchups, outcomes, weights, alpha=alpha, prior_votes=prior_votes
    )
    return normal_intervals(theta, covariance, confidence)


def normal_intervals(
    theta: Ratings, covariance: FloatArray, confidence: float = 0.95
) -> tuple[Ratings, Ratings]:
    """``theta +- z * sd``, each model's ``sd`` from the diagonal of ``covariance``."""
    z = float(ndtri(0.5 + confidence / 2.0))
    sd = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    return theta - z * sd, theta + z * sd


def moderated_covariance(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    prior_votes: float = MODERATION_VOTES,
) -> FloatArray:
    """The covariance behind :func:`sandwich_intervals`: moderated variances, sandwich
    correlations.

    Its diagonal is the moderated variance of :func:`sandwich_intervals`; the
    correlations between models are the sandwich's. It is what the leaderboard's
    ``p_best`` and rank range draw from (a Gaussian approximation with these moments).
    Natural-log units, ``(k, k)``.
    """
    bread, meat = _bread_and_meat(theta, matchups, outcomes, weights, alpha)
    w = np.ones(len(outcomes)) if weights is None else np.asarray(weights, dtype=np.float64)
    n = np.bincount(np.ravel(matchups), weights=np.repeat(w, 2), minlength=theta.shape[0])
    return moderate_sandwich(bread, meat, n, prior_votes)


def moderate_sandwich(
    bread: FloatArray, meat: FloatArray, votes: npt.ArrayLike, prior_votes: float
) -> FloatArray:
    """The sandwich ``bread @ meat @ bread`` with each variance moderated toward the
    model-based ``bread``'s by the parameter's ``votes`` against ``prior_votes``, and the
    sandwich's correlations kept.

    A parameter whose sandwich variance is zero keeps its moderated variance,
    uncorrelated. Shared by the raw board (:func:`moderated_covariance`) and the
    style-controlled one (:mod:`ranking.style_control`).
    """
    votes = np.asarray(votes, dtype=np.float64)
    sandwich = bread @ meat @ bread
    sandwich = 0.5 * (sandwich + sandwich.T)
    s_var, b_var = np.clip(np.diag(sandwich), 0.0, None), np.clip(np.diag(bread), 0.0, None)
    variance = (votes * s_var + prior_votes * b_var) / (votes + prior_votes)
    s_sd = np.sqrt(s_var)
    scale = np.divide(np.sqrt(variance), s_sd, out=np.zeros_like(s_sd), where=s_sd > 0)
    covariance: FloatArray = sandwich * scale[:, None] * scale[None, :]
    alone = s_sd <= 0
    covariance[alone, alone] = variance[alone]
    return covariance


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
