"""Contextual Bradley-Terry: design rows, known answers, invariances, penalty choice."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import contextual
from ranking.bt import fit_bt
from ranking.contextual import (
    ALPHA_GRID,
    contextual_design,
    fit_contextual_bt,
    fit_folds,
    held_out_log_loss,
    search_alpha,
)
from tests.conftest import simulate_votes


def test_design_row_is_the_kronecker_product_of_pair_and_context() -> None:
    x = contextual_design(np.array([[2, 0]]), np.array([[1.0, 0.5, -2.0]]), n_models=3).toarray()
    expected = np.zeros((1, 9))
    expected[0, 6:9] = [1.0, 0.5, -2.0]
    expected[0, 0:3] = [-1.0, -0.5, 2.0]
    np.testing.assert_allclose(x, expected)


def _design_case(seed: int = 7) -> tuple[np.ndarray, np.ndarray, int]:
    """Votes of 6 models whose contexts hold a one-hot part (mostly zero) and a dense one."""
    rng = np.random.default_rng(seed)
    n, k = 500, 6
    first = rng.integers(0, k, n)
    second = (first + rng.integers(1, k, n)) % k  # either order, never the same model
    one_hot = np.eye(3)[rng.integers(0, 3, n)]
    contexts = np.hstack([np.ones((n, 1)), one_hot, rng.normal(size=(n, 2))])
    contexts[rng.random(n) < 0.1, 1:] = 0.0  # some rows with nothing but the constant
    return np.column_stack([first, second]), contexts, k


@pytest.mark.parametrize("block_entries", [1 << 22, 50, 1])
def test_design_is_the_canonical_csr_of_its_nonzero_entries(
    block_entries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built a block of rows at a time (of one row, of several, or all at once), the
    design holds exactly the nonzero entries (and their order) of the COO matrix of
    ``+c`` at the first model's block and ``-c`` at the second's, made canonical."""
    from scipy import sparse

    monkeypatch.setattr(contextual, "_DESIGN_CHUNK_ENTRIES", block_entries)
    matchups, contexts, k = _design_case()
    (n, p), (first, second) = contexts.shape, matchups.T
    rows = np.repeat(np.arange(n), 2 * p)
    blocks = [first[:, None] * p + np.arange(p), second[:, None] * p + np.arange(p)]
    columns = np.concatenate(blocks, axis=1).ravel()
    values = np.concatenate([contexts, -contexts], axis=1).ravel()
    expected = sparse.coo_matrix((values, (rows, columns)), shape=(n, k * p)).tocsr()
    expected.sort_indices()
    expected.eliminate_zeros()
    x = contextual_design(matchups, contexts, k)
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(x, name), getattr(expected, name))
    assert x.has_sorted_indices and x.shape == expected.shape
    assert x.nnz < 2 * n * p  # the zeros were left out


def test_building_a_design_takes_little_more_memory_than_the_design(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A block of rows at a time: no index arrays over all of its entries at once."""
    import tracemalloc

    monkeypatch.setattr(contextual, "_DESIGN_CHUNK_ENTRIES", 1 << 14)
    rng = np.random.default_rng(5)
    n, p, k = 20_000, 40, 8
    first = rng.integers(0, k, n)
    matchups = np.column_stack([first, (first + rng.integers(1, k, n)) % k])
    contexts = rng.normal(size=(n, p))
    tracemalloc.start()
    try:
        x = contextual_design(matchups, contexts, k)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    stored = x.data.nbytes + x.indices.nbytes + x.indptr.nbytes
    assert peak < 1.15 * stored + (2 << 20), (peak, stored)


def test_zero_entries_left_out_change_no_bit_of_the_fit() -> None:
    """The logistic regression's products add the same terms in the same order without
    the stored zeros, so its coefficients are the same to the last bit."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    matchups, contexts, k = _design_case(seed=3)
    y = (np.random.default_rng(4).random(len(matchups)) < 0.6).astype(np.int8)
    sparse_design = contextual_design(matchups, contexts, k)
    width = sparse_design.shape[1]
    every_entry = sparse.csr_matrix(  # each row stores all its columns, zeros included
        (
            sparse_design.toarray().ravel(),
            np.tile(np.arange(width), len(y)),
            np.arange(0, width * (len(y) + 1), width),
        ),
        shape=sparse_design.shape,
    )
    assert every_entry.nnz > 2 * sparse_design.nnz
    fits = [
        LogisticRegression(fit_intercept=False, tol=1e-6, max_iter=500).fit(x, y).coef_
        for x in (sparse_design, every_entry)
    ]
    np.testing.assert_array_equal(fits[0], fits[1])


def test_a_constant_context_is_plain_bradley_terry_with_the_same_prior() -> None:
    data, _ = simulate_votes(n_models=6, n_votes=3000, seed=1, tie_share=0.2)
    ones = np.ones((len(data.outcomes), 1))
    contextual = fit_contextual_bt(data.matchups, data.outcomes, ones, 6, alpha=0.5)
    plain = fit_bt(6, data.matchups, data.outcomes, data.weights, alpha=0.5)
    np.testing.assert_allclose(contextual.coef[:, 0], plain - plain.mean(), atol=2e-3)


def test_known_context_effects_are_recovered() -> None:
    rng = np.random.default_rng(4)
    n, k = 20_000, 5
    truth = rng.normal(size=(k, 3))
    truth -= truth.mean(axis=0)
    contexts = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n)])
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    matchups = np.stack([a, b], axis=1)
    s = contexts @ truth.T
    p = 1 / (1 + np.exp(-(s[np.arange(n), a] - s[np.arange(n), b])))
    outcomes = (rng.random(n) < p).astype(float)
    model = fit_contextual_bt(matchups, outcomes, contexts, k, alpha=0.1)
    np.testing.assert_allclose(model.coef, truth, atol=0.15)
    assert model.strengths(contexts[:4]).shape == (4, k)


def test_swapping_sides_with_the_outcome_changes_nothing() -> None:
    data, _ = simulate_votes(n_models=4, n_votes=800, seed=2)
    contexts = np.column_stack([np.ones(800), np.random.default_rng(0).normal(size=800)])
    one = fit_contextual_bt(data.matchups, data.outcomes, contexts, 4, alpha=1.0)
    other = fit_contextual_bt(data.matchups[:, ::-1], 1 - data.outcomes, contexts, 4, alpha=1.0)
    np.testing.assert_allclose(one.coef, other.coef, atol=1e-4)


def test_the_chosen_penalty_is_from_the_grid_and_beats_the_extremes() -> None:
    data, _ = simulate_votes(n_models=5, n_votes=2000, seed=3)
    contexts = np.ones((2000, 1))
    folds = np.arange(2000) % 3
    alpha = search_alpha(data.matchups, data.outcomes, contexts, 5, folds).alpha
    assert alpha in ALPHA_GRID
    model = fit_contextual_bt(data.matchups, data.outcomes, contexts, 5, alpha=alpha)
    assert held_out_log_loss(model, data.matchups, data.outcomes, contexts) < np.log(2)


def test_the_search_tells_each_fit() -> None:
    data, _ = simulate_votes(n_models=4, n_votes=300, seed=8)
    contexts, folds = np.ones((300, 1)), np.arange(300) % 3
    fits: list[int] = []
    told = search_alpha(
        data.matchups, data.outcomes, contexts, 4, folds, advance=fits.append
    ).losses
    np.testing.assert_array_equal(
        told, search_alpha(data.matchups, data.outcomes, contexts, 4, folds).losses
    )
    assert sum(fits) == len(ALPHA_GRID) * 3  # the fits skipped by stopping early told too
    assert fits[: 3 * np.isfinite(told).sum()] == [1] * (3 * np.isfinite(told).sum())


def test_the_search_stops_after_two_rises_and_matches_cold_fits() -> None:
    rng = np.random.default_rng(5)
    n, k = 3000, 5
    contexts = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    truth = rng.normal(size=(k, 4))
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    s = contexts @ truth.T
    p = 1 / (1 + np.exp(-(s[np.arange(n), a] - s[np.arange(n), b])))
    outcomes = (rng.random(n) < p).astype(float)
    matchups, folds = np.stack([a, b], axis=1), rng.integers(0, 3, n)
    search = search_alpha(matchups, outcomes, contexts, k, folds)
    reached = np.isfinite(search.losses)
    assert search.alpha == ALPHA_GRID[int(np.argmin(search.losses))]
    assert 0 < reached.sum() <= len(ALPHA_GRID)
    # reached from the strongest penalty down, stopping two rises after the best
    assert reached[-reached.sum() :].all()
    if not reached.all():
        losses = search.losses[reached][::-1]
        assert np.argmin(losses) == len(losses) - 3 and (losses[-2:] >= losses[-3]).all()
    for f, model in search.fold_models.items():  # warm-started fits equal cold ones
        train = folds != f
        cold = fit_contextual_bt(
            matchups[train], outcomes[train], contexts[train], k, alpha=search.alpha
        )
        np.testing.assert_allclose(model.coef, cold.coef, atol=1e-4)


def test_fold_fits_started_from_the_model_of_all_votes_equal_cold_fits() -> None:
    """Each fold's model is the fit of the other folds' votes whatever it starts from
    (the start only saves iterations); a fold no vote has gets the model of all votes."""
    data, _ = simulate_votes(5, 2500, seed=11)
    rng = np.random.default_rng(11)
    contexts = np.column_stack([np.ones(2500), rng.normal(size=(2500, 2))])
    folds = rng.integers(0, 3, 2500)
    whole = fit_contextual_bt(data.matchups, data.outcomes, contexts, 5, alpha=0.5)
    told: list[int] = []
    models = fit_folds(
        data.matchups,
        data.outcomes,
        contexts,
        5,
        folds,
        [0, 2, 7],
        alpha=0.5,
        start=whole,
        advance=told.append,
    )
    assert sorted(models) == [0, 2, 7] and told == [1, 1, 1]
    for f in (0, 2):
        train = folds != f
        cold = fit_contextual_bt(
            data.matchups[train], data.outcomes[train], contexts[train], 5, alpha=0.5
        )
        np.testing.assert_allclose(models[f].coef, cold.coef, atol=1e-4)
        assert np.abs(models[f].coef - whole.coef).max() > 1e-3  # a fit, not the start
    np.testing.assert_allclose(models[7].coef, whole.coef, atol=1e-4)


def test_a_start_of_another_shape_is_refused() -> None:
    start = contextual.ContextualBT(np.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match=r"'start' must have coefficients of shape \(3, 1\)"):
        fit_contextual_bt(
            np.array([[0, 1], [1, 2]]), np.array([1.0, 0.0]), np.ones((2, 1)), 3, start=start
        )


def test_one_class_and_bad_arguments() -> None:
    matchups = np.array([[0, 1], [1, 2]])
    flat = fit_contextual_bt(matchups, np.array([1.0, 1.0]), np.ones((2, 1)), 3)
    assert flat.coef.shape == (3, 1)
    with pytest.raises(ValueError, match="'alpha' must be a positive number, not 0"):
        fit_contextual_bt(matchups, np.array([1.0, 0.0]), np.ones((2, 1)), 3, alpha=0)
    with pytest.raises(ValueError, match="one row per vote"):
        fit_contextual_bt(matchups, np.array([1.0, 0.0]), np.ones((3, 1)), 3)
    with pytest.raises(ValueError, match="must have 1 columns, not 2"):
        flat.strengths(np.ones((1, 2)))


def test_the_model_and_its_folds_on_one_copy_equal_separate_fits() -> None:
    """:func:`fit_with_folds` sorts the caller's contexts in place and fits what
    :func:`fit_contextual_bt` and :func:`fit_folds` fit."""
    from ranking.contextual import fit_with_folds

    data, _ = simulate_votes(5, 2000, seed=12)
    rng = np.random.default_rng(12)
    contexts = np.column_stack([np.ones(2000), rng.normal(size=(2000, 2))])
    folds = rng.integers(0, 3, 2000)
    whole = fit_contextual_bt(data.matchups, data.outcomes, contexts, 5, alpha=0.7)
    separate = fit_folds(
        data.matchups, data.outcomes, contexts, 5, folds, [0, 1, 2], alpha=0.7, start=whole
    )
    told: list[int] = []
    mine = contexts.copy()
    model, models = fit_with_folds(
        data.matchups, data.outcomes, mine, 5, folds, [0, 1, 2], alpha=0.7, advance=told.append
    )
    assert told == [1, 1, 1, 1]
    np.testing.assert_allclose(model.coef, whole.coef, atol=1e-7)
    for f in (0, 1, 2):
        np.testing.assert_allclose(models[f].coef, separate[f].coef, atol=1e-7)
    assert not np.array_equal(mine, contexts)  # sorted in place: the caller lets it go
    np.testing.assert_array_equal(np.sort(mine, axis=0), np.sort(contexts, axis=0))


def test_a_refit_from_earlier_fold_models_reaches_the_same_models() -> None:
    """Started from a fit of fewer votes (a refit's), the model of all votes and each
    fold's model from the earlier fold's are the fits of these votes: the starts and the
    Hessian they lend change the path, not the optimum."""
    from ranking.contextual import fit_with_folds

    data, _ = simulate_votes(5, 2400, seed=13)
    rng = np.random.default_rng(13)
    contexts = np.column_stack([np.ones(2400), rng.normal(size=(2400, 2))])
    folds = rng.integers(0, 3, 2400)
    before = slice(0, 2000)
    earlier, earlier_folds = fit_with_folds(
        data.matchups[before],
        data.outcomes[before],
        contexts[before].copy(),
        5,
        folds[before],
        [0, 1, 2],
        alpha=0.7,
    )
    fresh, fresh_folds = fit_with_folds(
        data.matchups, data.outcomes, contexts.copy(), 5, folds, [0, 1, 2], alpha=0.7
    )
    model, models = fit_with_folds(
        data.matchups,
        data.outcomes,
        contexts.copy(),
        5,
        folds,
        [0, 1, 2],
        alpha=0.7,
        start=earlier,
        fold_starts=earlier_folds,
    )
    np.testing.assert_allclose(model.coef, fresh.coef, atol=1e-7)
    for f in (0, 1, 2):
        assert np.abs(earlier_folds[f].coef - fresh_folds[f].coef).max() > 1e-3
        np.testing.assert_allclose(models[f].coef, fresh_folds[f].coef, atol=1e-7)
