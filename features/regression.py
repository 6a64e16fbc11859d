"""The study's regression: from a user's query profile to their per-model ratings.

:class:`ProfileRegressor` is a scikit-learn multi-output regressor that picks its model by
cross-validation over users: ridge (the baseline, as the study), kernel ridge, a low-rank
model (partial least squares: a few directions of the profile predict all ratings), and
gradient-boosted trees. Each candidate is scored by the study's metric, the MAE of its
out-of-fold predictions, and the best is refitted on every user.

Its intervals are split-conformal ones built on those same out-of-fold predictions: for
each model (output), the interval is the prediction plus or minus the ``confidence``
quantile of the absolute out-of-fold errors, so they cover a new user's fitted rating at
about that rate whatever the chosen model.

In this project the vote-level model (:class:`features.predictor.RatingPredictor`) is
what serves predictions; ``plb evaluate`` scores this regression beside it, as the study
did, on the same held-out users.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import TransformedTargetRegressor
from sklearn.cross_decomposition import PLSRegression
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ranking.types import FloatArray

__all__ = ["ProfileRegressor", "default_candidates", "ridge_model"]


def ridge_model() -> Any:
    """Ridge on the standardised profile, its penalty chosen by leave-one-out: the baseline."""
    return make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 4, 13)))


def default_candidates(random_state: int = 0, n_features: int | None = None) -> dict[str, Any]:
    """The models :class:`ProfileRegressor` chooses from, by name.

    Each standardises the profile first. Ridge chooses its own penalty (efficient
    leave-one-out); the others come in a few fixed sizes, the low-rank ones no larger
    than ``n_features``.
    """
    candidates: dict[str, Any] = {"ridge": ridge_model()}
    sizes = (2, 4, 8) if n_features is None else sorted({min(k, n_features) for k in (2, 4, 8)})
    for components in sizes:
        candidates[f"low-rank (PLS, {components})"] = make_pipeline(
            StandardScaler(), PLSRegression(components, scale=False)
        )
    for alpha in (1.0, 10.0):  # no intercept of its own: the targets are standardised
        kernel = KernelRidge(alpha=alpha, kernel="rbf")
        candidates[f"kernel ridge (rbf, alpha {alpha:g})"] = make_pipeline(
            StandardScaler(), TransformedTargetRegressor(kernel, transformer=StandardScaler())
        )
    boosted = HistGradientBoostingRegressor(  # small: a few hundred users, one per row
        max_iter=30, learning_rate=0.1, max_leaf_nodes=8, max_bins=32, random_state=random_state
    )
    candidates["boosted trees"] = make_pipeline(StandardScaler(), MultiOutputRegressor(boosted))
    return candidates


class ProfileRegressor(RegressorMixin, BaseEstimator):
    """Multi-output regression from profiles to ratings, its model chosen by CV over users.

    Parameters
    ----------
    candidates : mapping of str to estimator, optional
        The models to choose from; :func:`default_candidates` when omitted.
    folds : int
        Folds over users (rows) of the cross-validation.
    confidence : float
        Coverage of :meth:`predict_interval`.
    random_state : int
        Seed of the folds and of the randomised candidates.

    Attributes
    ----------
    cv_mae_ : dict of str to float
        Out-of-fold MAE of every candidate.
    best_ : str
        The candidate chosen (the lowest ``cv_mae_``).
    estimator_ : estimator
        The chosen candidate, refitted on every row.
    half_width_ : ndarray
        ``(n_outputs,)`` half-widths of the intervals.
    """

    def __init__(
        self,
        candidates: Mapping[str, Any] | None = None,
        folds: int = 5,
        confidence: float = 0.95,
        random_state: int = 0,
    ) -> None:
        self.candidates = candidates
        self.folds = folds
        self.confidence = confidence
        self.random_state = random_state

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> ProfileRegressor:
        """Score each candidate out of fold, keep the best, refit it on every row.

        Parameters
        ----------
        X : array_like
            ``(n_users, n_features)`` profiles.
        y : array_like
            ``(n_users, n_models)`` ratings.
        """
        x = np.asarray(X, dtype=np.float64)
        targets = np.asarray(y, dtype=np.float64)
        if targets.ndim != 2 or len(targets) != len(x):
            raise ValueError(
                f"Argument 'y' must be (n_users, n_models) with {len(x)} rows, "
                f"not shape {targets.shape}."
            )
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(
                f"Argument 'confidence' must be between 0 and 1, not {self.confidence!r}."
            )
        if not 2 <= self.folds <= len(x):
            raise ValueError(
                f"Argument 'folds' must be between 2 and the number of users ({len(x)}), "
                f"not {self.folds!r}."
            )
        candidates = dict(self.candidates or default_candidates(self.random_state, x.shape[1]))
        splitter = KFold(self.folds, shuffle=True, random_state=self.random_state)
        out_of_fold: dict[str, FloatArray] = {}
        # One user per row, a few hundred rows: thread pools cost more than they save
        # (boosting is twice as fast on one thread at this size).
        with threadpool_limits(1):
            for name, model in candidates.items():
                predicted = cross_val_predict(clone(model), x, targets, cv=splitter)
                out_of_fold[name] = np.asarray(predicted, dtype=np.float64).reshape(targets.shape)
            self.cv_mae_ = {
                name: float(np.mean(np.abs(p - targets))) for name, p in out_of_fold.items()
            }
            self.best_ = min(self.cv_mae_, key=self.cv_mae_.__getitem__)
            self.estimator_ = clone(candidates[self.best_]).fit(x, targets)
        errors = np.abs(out_of_fold[self.best_] - targets)
        n = len(errors)
        level = min(1.0, np.ceil((n + 1) * self.confidence) / n)  # split-conformal rank
        self.half_width_ = np.quantile(errors, level, axis=0, method="higher")
        return self

    def predict(self, X: npt.ArrayLike) -> FloatArray:
        """``(n, n_models)`` predicted ratings."""
        check_is_fitted(self, "estimator_")
        predicted = self.estimator_.predict(np.asarray(X, dtype=np.float64))
        return np.asarray(predicted, dtype=np.float64).reshape(-1, self.half_width_.size)

    def predict_interval(self, X: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Predicted ratings with their lower and upper bounds, each ``(n, n_models)``."""
        predicted = self.predict(X)
        return predicted, predicted - self.half_width_, predicted + self.half_width_
