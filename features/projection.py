"""A fitted PCA's projection without scikit-learn's input checks, for serving.

``PCA.transform`` validates its input on every call (dtype, shape, finiteness, feature
names), some 0.1-0.2 ms each, more than the projection of a few rows costs; a repeated
recommend request projects four times. :func:`pca_transform` does the same arithmetic
as scikit-learn's ``PCA._transform`` (project, then subtract the projected mean, then
whiten) on the float64 arrays the predictor passes, so its result is the same to the
bit; anything else (another dtype, a wrong width, a NaN the checks would reject) goes
through ``PCA.transform`` and its errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.decomposition import PCA

from ranking.types import FloatArray

__all__ = ["pca_transform"]


def pca_transform(pca: PCA, x: npt.ArrayLike) -> FloatArray:
    """``pca.transform(x)``, skipping the input checks where they cannot fail.

    Parameters
    ----------
    pca : sklearn.decomposition.PCA
        Fitted.
    x : array_like
        ``(n, n_features_in_)`` rows to project.

    Returns
    -------
    ndarray
        ``(n, n_components_)``, equal to the bit to ``pca.transform(x)``.
    """
    rows = np.asarray(x)
    if not _plain(pca, rows):
        return np.asarray(pca.transform(x))
    projected: FloatArray = rows @ pca.components_.T
    projected -= pca.mean_.reshape(1, -1) @ pca.components_.T
    if pca.whiten:
        scale = np.sqrt(pca.explained_variance_)
        scale[scale < np.finfo(scale.dtype).eps] = np.finfo(scale.dtype).eps
        projected /= scale
    return projected


def _plain(pca: Any, rows: npt.NDArray[Any]) -> bool:
    """Whether ``rows`` are what ``PCA.transform`` would take as they are (its checks would
    pass them unchanged): finite float64 rows, at least one, of a dense float64 fit's width."""
    components = getattr(pca, "components_", None)
    return (
        rows.dtype == np.float64
        and rows.ndim == 2
        and rows.shape[0] > 0
        and isinstance(components, np.ndarray)
        and components.dtype == np.float64
        and rows.shape[1] == getattr(pca, "n_features_in_", -1)
        and not hasattr(pca, "feature_names_in_")
        and bool(np.isfinite(rows).all())
    )
