"""Compiled Bradley-Terry loops: many groups' votes as pair counts, and Newton per group.

The votes of each group (a user, a bootstrap replicate, a fold) are first collapsed into
their sufficient statistics (:func:`collect_pairs`): one row per group and unordered pair
of models, holding the total weight of its votes and the weight won by the first model.
A group's objective, gradient and Hessian then cost one pass over its distinct pairs, not
over its votes. Only the models a group voted on enter its dense block: the prior alone
acts on the others, so their Hessian is ``alpha`` on the diagonal and their part of the
Newton step is solved directly.

Each group is solved on its own by the damped Newton iterations of
:mod:`ranking.bt_solver` (a Cholesky solve of the block, a backtracking line search):
groups are independent and the batched solver only ever stopped converged groups and
kept each group's step length, so this runs each group through the same iterates without
building a ``(G, k, k)`` array or passing over all votes at every step. Sums are taken in
another order than NumPy's ``bincount``, so results agree with the batched NumPy solver to
rounding (about ``1e-12``), not bit for bit; a group's result does not depend on which
others are solved in the same call, so ranges of groups can run in threads (the loops
release the GIL). Indices are not checked in the loops: :func:`collect_pairs` checks them.
No fast-math. The first call in a fresh
environment compiles (a few seconds); the machine code is then cached beside this module.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from ranking.pair_counts import Pairs
from ranking.types import FloatArray, IntArray

__all__ = [
    "NOT_CONVERGED",
    "NOT_POSITIVE",
    "derivative_loop",
    "newton_loop",
    "objective_loop",
    "posterior_loop",
]

#: Status of a group whose Newton iterations ran out.
NOT_CONVERGED = 1
#: Status of a group whose Hessian block lost positive definiteness to rounding.
NOT_POSITIVE = 2


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _loss(
    x: FloatArray,
    mod: IntArray,
    pairs: Pairs,
    r0: int,
    r1: int,
) -> float:  # pragma: no cover - compiled
    """The negative log-likelihood of rows ``r0:r1`` at ``x`` (no prior)."""
    first, second, wins, total = pairs[3], pairs[4], pairs[5], pairs[6]
    loss = 0.0
    for r in range(r0, r1):
        d = x[mod[first[r]]] - x[mod[second[r]]]
        # logaddexp(0, -d) and logaddexp(0, d), as log(1 + exp(-|d|)) plus a positive part
        # (log of 1 + e rather than log1p: twice as fast, and off by under 1e-16 a pair)
        loss += total[r] * math.log(1.0 + math.exp(-abs(d))) + wins[r] * max(-d, 0.0)
        loss += (total[r] - wins[r]) * max(d, 0.0)
    return loss


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _objective(
    x: FloatArray,
    mu: FloatArray,
    alpha: float,
    mod: IntArray,
    pairs: Pairs,
    r0: int,
    r1: int,
) -> float:  # pragma: no cover - compiled
    prior = 0.0
    for j in range(x.shape[0]):
        prior += (x[j] - mu[j]) ** 2
    return _loss(x, mod, pairs, r0, r1) + 0.5 * alpha * prior


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _evaluate(
    x: FloatArray,
    mu: FloatArray,
    alpha: float,
    mod: IntArray,
    pairs: Pairs,
    r0: int,
    r1: int,
    grad: FloatArray,
    block: FloatArray,
) -> float:  # pragma: no cover - compiled
    """The objective, its gradient (all ``k`` models) and the Hessian block of the models
    voted on (lower triangle), in one pass over the rows: :func:`_objective`'s value, to
    the bit."""
    first, second, wins, total = pairs[3], pairs[4], pairs[5], pairs[6]
    nm = mod.shape[0]
    prior = 0.0
    for j in range(x.shape[0]):
        prior += (x[j] - mu[j]) ** 2
        grad[j] = alpha * (x[j] - mu[j])
    for p in range(nm):  # the lower triangle only: all that the Cholesky reads
        for q in range(p):
            block[p, q] = 0.0
        block[p, p] = alpha
    loss = 0.0
    for r in range(r0, r1):
        p, q = first[r], second[r]
        d = x[mod[p]] - x[mod[q]]
        e = math.exp(-abs(d))
        loss += total[r] * math.log(1.0 + e) + wins[r] * max(-d, 0.0)
        loss += (total[r] - wins[r]) * max(d, 0.0)
        if p == q:
            continue  # a model against itself: a constant loss, no derivative
        inv = 1.0 / (1.0 + e)
        res = total[r] * (inv if d >= 0.0 else e * inv) - wins[r]
        v = total[r] * e * inv * inv
        grad[mod[p]] += res
        grad[mod[q]] -= res
        block[p, p] += v
        block[q, q] += v
        block[q, p] -= v  # p < q
    return loss + 0.5 * alpha * prior


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _cholesky(block: FloatArray, nm: int) -> bool:  # pragma: no cover - compiled
    """Lower Cholesky factor of ``block[:nm, :nm]`` in place; False if not positive."""
    for j in range(nm):
        s = block[j, j]
        for t in range(j):
            s -= block[j, t] * block[j, t]
        if not s > 0.0:
            return False
        diag = math.sqrt(s)
        block[j, j] = diag
        for i in range(j + 1, nm):
            s = block[i, j]
            for t in range(j):
                s -= block[i, t] * block[j, t]
            block[i, j] = s / diag
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _cho_solve(factor: FloatArray, nm: int, rhs: FloatArray) -> None:  # pragma: no cover
    """Solve ``L L^T x = rhs`` in place, ``L`` the factor of :func:`_cholesky`."""
    for i in range(nm):
        s = rhs[i]
        for t in range(i):
            s -= factor[i, t] * rhs[t]
        rhs[i] = s / factor[i, i]
    for i in range(nm - 1, -1, -1):
        s = rhs[i]
        for t in range(i + 1, nm):
            s -= factor[t, i] * rhs[t]
        rhs[i] = s / factor[i, i]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def newton_loop(
    pairs: Pairs,
    theta: FloatArray,
    mu: FloatArray,
    alpha: FloatArray,
    max_iter: int,
    tol: float,
    status: npt.NDArray[np.int8],
) -> None:  # pragma: no cover - compiled
    """Each group's damped Newton iterations from ``theta`` (updated in place); ``status``
    gets 0 (converged), :data:`NOT_CONVERGED` or :data:`NOT_POSITIVE`."""
    row_offsets, model_offsets, models = pairs[0], pairs[1], pairs[2]
    n_groups, k = theta.shape
    grad, step, candidate, local = np.empty(k), np.empty(k), np.empty(k), np.empty(k)
    block = np.empty((k, k))
    grad_new, block_new = np.empty(k), np.empty((k, k))
    for g in range(n_groups):
        mod = models[model_offsets[g] : model_offsets[g + 1]]
        nm, r0, r1 = mod.shape[0], row_offsets[g], row_offsets[g + 1]
        x, m_g, a_g = theta[g], mu[g], alpha[g]
        f = _evaluate(x, m_g, a_g, mod, pairs, r0, r1, grad, block)
        status[g] = NOT_CONVERGED
        for _ in range(max_iter):
            threshold = 2.0 * tol * (1.0 + abs(f))
            norm2 = 0.0
            for j in range(k):
                norm2 += grad[j] * grad[j]
            # The decrement g^T H^-1 g is at most |g|^2 / alpha (H >= alpha I): below half
            # the threshold, converged whatever the solve would give, so none is made.
            if norm2 <= 0.5 * threshold * a_g:
                status[g] = 0
                break
            if not _cholesky(block, nm):
                status[g] = NOT_POSITIVE
                break
            for j in range(k):  # the models not voted on: the prior's own step
                step[j] = grad[j] / a_g
            for p in range(nm):
                local[p] = grad[mod[p]]
            _cho_solve(block, nm, local)
            for p in range(nm):
                step[mod[p]] = local[p]
            decrement = 0.0  # Newton decrement squared, >= 0
            for j in range(k):
                decrement += grad[j] * step[j]
            if not decrement > threshold:
                status[g] = 0
                break
            noise = 1e-13 * (1.0 + abs(f))
            # The full step, with the derivatives there in the same pass: the next
            # iteration's when it is taken, as it nearly always is.
            for j in range(k):
                candidate[j] = x[j] - step[j]
            f_new = _evaluate(candidate, m_g, a_g, mod, pairs, r0, r1, grad_new, block_new)
            fresh = True
            t = 1.0
            for _ in range(59):
                if f_new <= f - 1e-4 * t * decrement + noise:
                    break
                t *= 0.5
                for j in range(k):
                    candidate[j] = x[j] - t * step[j]
                f_new = _objective(candidate, m_g, a_g, mod, pairs, r0, r1)
                fresh = False
            for j in range(k):
                x[j] = candidate[j]
            if fresh:
                grad, grad_new = grad_new, grad
                block, block_new = block_new, block
            else:
                _evaluate(x, m_g, a_g, mod, pairs, r0, r1, grad, block)
            f = min(f_new, f)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def objective_loop(
    pairs: Pairs,
    theta: FloatArray,
    mu: FloatArray,
    alpha: FloatArray,
    out: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Each group's penalised negative log-likelihood at ``theta``, into ``out``."""
    row_offsets, model_offsets, models = pairs[0], pairs[1], pairs[2]
    for g in range(theta.shape[0]):
        mod = models[model_offsets[g] : model_offsets[g + 1]]
        r0, r1 = row_offsets[g], row_offsets[g + 1]
        out[g] = _objective(theta[g], mu[g], alpha[g], mod, pairs, r0, r1)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def derivative_loop(
    pairs: Pairs,
    theta: FloatArray,
    mu: FloatArray,
    alpha: FloatArray,
    grad: FloatArray,
    hess: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Each group's gradient and full ``k x k`` Hessian (into ``hess``, zeroed here)."""
    row_offsets, model_offsets, models = pairs[0], pairs[1], pairs[2]
    k = theta.shape[1]
    block = np.empty((k, k))
    for g in range(theta.shape[0]):
        mod = models[model_offsets[g] : model_offsets[g + 1]]
        r0, r1 = row_offsets[g], row_offsets[g + 1]
        _evaluate(theta[g], mu[g], alpha[g], mod, pairs, r0, r1, grad[g], block)
        _scatter(block, mod, alpha[g], hess[g])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _scatter(
    block: FloatArray, mod: IntArray, alpha: float, out: FloatArray
) -> None:  # pragma: no cover - compiled
    """The full Hessian: the block of the models voted on, ``alpha`` on the others."""
    k = out.shape[0]
    for i in range(k):
        for j in range(k):
            out[i, j] = 0.0
        out[i, i] = alpha
    for p in range(mod.shape[0]):
        for q in range(p + 1):
            out[mod[p], mod[q]] = out[mod[q], mod[p]] = block[p, q]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def posterior_loop(
    pairs: Pairs,
    theta: FloatArray,
    mu: FloatArray,
    alpha: FloatArray,
    variances: bool,
    objective: FloatArray,
    logdet: FloatArray,
    absolute: FloatArray,
    relative: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Each group's objective and ``log det H`` at ``theta``, and with ``variances`` the
    diagonals of ``H^-1`` and of ``C H^-1 C`` (``C`` the centring; else left as given)."""
    row_offsets, model_offsets, models = pairs[0], pairs[1], pairs[2]
    n_groups, k = theta.shape
    grad, ones, column = np.empty(k), np.empty(k), np.empty(k)
    block, full = np.empty((k, k)), np.empty((k, k))
    for g in range(n_groups):
        mod = models[model_offsets[g] : model_offsets[g + 1]]
        nm, r0, r1, a_g = mod.shape[0], row_offsets[g], row_offsets[g + 1], alpha[g]
        x = theta[g]
        objective[g] = _evaluate(x, mu[g], a_g, mod, pairs, r0, r1, grad, block)
        if variances:
            _scatter(block, mod, a_g, full)
        if not _cholesky(block, nm):
            logdet[g] = np.nan
        else:
            s = (k - nm) * math.log(a_g)
            for p in range(nm):
                s += 2.0 * math.log(block[p, p])
            logdet[g] = s
        if not variances:
            continue
        # The all-ones vector is an eigenvector of H, with eigenvalue alpha. Inverting
        # H + c 11^T / k instead (c the mean diagonal) keeps every other direction and
        # avoids rounding errors of size 1 / alpha; the ones direction's part of H^-1 is
        # then added back exactly.
        c = 0.0
        for i in range(k):
            c += full[i, i]
        c = max(c / k, 1e-12)
        for i in range(k):
            for j in range(k):
                full[i, j] += c / k
        if not _cholesky(full, k):
            continue  # left NaN
        for i in range(k):  # row sums of the inverse: M x = 1
            ones[i] = 1.0
        _cho_solve(full, k, ones)
        everything = 0.0
        for i in range(k):
            everything += ones[i]
        # diag(M^-1) = the squared column norms of Z = L^-1, Z made row by row in
        # ``block`` (no longer needed): independent sums, not a chain of dependent ones.
        for i in range(k):
            column[i] = 0.0
        for j in range(k):
            for i in range(j):
                block[j, i] = 0.0
            for t in range(j):
                scale = full[j, t]
                for i in range(t + 1):
                    block[j, i] += scale * block[t, i]
            inv = 1.0 / full[j, j]
            for i in range(j):
                block[j, i] *= -inv
                column[i] += block[j, i] * block[j, i]
            block[j, j] = inv
            column[j] += inv * inv
        for i in range(k):
            absolute[g, i] = column[i] + (1.0 / a_g - 1.0 / (a_g + c)) / k
            relative[g, i] = column[i] - 2.0 * ones[i] / k + everything / (k * k)
