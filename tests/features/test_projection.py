"""A fitted PCA's projection without scikit-learn's input checks (:mod:`features.projection`)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from features.projection import pca_transform


@pytest.mark.parametrize("whiten", [False, True])
def test_the_projection_is_sklearns_to_the_bit(whiten: bool) -> None:
    rng = np.random.default_rng(3)
    pca = PCA(4, whiten=whiten, random_state=0).fit(rng.normal(size=(50, 9)) * np.arange(1, 10))
    fortran = np.asfortranarray(rng.normal(size=(6, 9)))  # the checks keep its order too
    for rows in (rng.normal(size=(1, 9)), rng.normal(size=(20, 9)), fortran):
        np.testing.assert_array_equal(pca_transform(pca, rows), pca.transform(rows))


def test_what_the_checks_would_change_or_refuse_goes_through_them() -> None:
    rng = np.random.default_rng(4)
    pca = PCA(3).fit(rng.normal(size=(30, 5)))
    single = rng.normal(size=(2, 5)).astype(np.float32)
    np.testing.assert_array_equal(pca_transform(pca, single), pca.transform(single))
    listed = rng.normal(size=(2, 5)).tolist()
    np.testing.assert_array_equal(pca_transform(pca, listed), pca.transform(listed))
    with pytest.raises(ValueError, match="NaN"):
        pca_transform(pca, np.full((1, 5), np.nan))
    with pytest.raises(ValueError, match="features"):
        pca_transform(pca, np.zeros((1, 4)))
    with pytest.raises(ValueError, match="sample"):
        pca_transform(pca, np.zeros((0, 5)))
