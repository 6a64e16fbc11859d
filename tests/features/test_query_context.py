"""Embedding components of queries: standardised PCA."""

from __future__ import annotations

import numpy as np
import pytest

from features.query_context import QueryComponents


def test_components_have_unit_variance_and_are_clipped() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 10)) * np.arange(1, 11)
    model = QueryComponents(4).fit(x)
    z = model.transform(x)
    assert z.shape == (200, 4) and model.n_components_ == 4
    np.testing.assert_allclose(z.std(axis=0), 1.0, rtol=0.05)
    assert np.abs(model.transform(x * 100)).max() == 5.0
    assert list(model.get_feature_names_out()) == [f"query_pc:{k}" for k in range(4)]
    assert model.transform(np.zeros((0, 10))).shape == (0, 4)


def test_unwhitened_components_keep_their_relative_spread() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 3)) * np.array([3.0, 2.0, 1.0])
    z = QueryComponents(3, whiten=False).fit(x).transform(x)
    spread = z.std(axis=0)
    assert spread[0] > spread[1] > spread[2]
    np.testing.assert_allclose(np.mean(spread**2), 1.0, rtol=0.01)  # up to clipping


def test_components_are_capped_by_the_data_and_bad_numbers_named() -> None:
    assert QueryComponents(50).fit(np.eye(6)).n_components_ == 5
    with pytest.raises(ValueError, match="'n_components' must be a positive integer, not 0"):
        QueryComponents(0).fit(np.eye(3))
    with pytest.raises(ValueError, match="'vectors' must be 2-d"):
        QueryComponents(2).fit(np.ones(3))


def test_a_component_of_rounding_errors_is_not_blown_up() -> None:
    # six prompts whose embeddings span 2 of 5 dimensions (prompts that embed alike)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 5))
    model = QueryComponents(5).fit(x)
    assert model.n_components_ == 5
    np.testing.assert_array_equal(model.scale_[2:], 1.0)
    assert np.abs(model.transform(x)[:, 2:]).max() < 1e-9
