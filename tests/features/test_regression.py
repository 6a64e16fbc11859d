"""The profile regression: a model chosen by CV over users, with conformal intervals."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression

from features.regression import ProfileRegressor, default_candidates


def data(n: int, rng: int = 0) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(rng)
    x = generator.normal(size=(n, 10))
    weights = generator.normal(size=(10, 4)) * 30
    return x, 1000 + x @ weights + generator.normal(size=(n, 4)) * 10


def test_the_best_candidate_by_cross_validation_is_chosen_and_refitted() -> None:
    x, y = data(200)
    candidates = {"mean": DummyRegressor(), "linear": LinearRegression()}
    model = ProfileRegressor(candidates, folds=4).fit(x, y)
    assert model.best_ == "linear" and model.cv_mae_["linear"] < model.cv_mae_["mean"]
    assert model.predict(x[:3]).shape == (3, 4)


def test_intervals_cover_new_users_at_about_the_confidence() -> None:
    x, y = data(600)
    model = ProfileRegressor({"linear": LinearRegression()}, confidence=0.9).fit(x[:300], y[:300])
    predicted, lower, upper = model.predict_interval(x[300:])
    assert (lower < predicted).all() and (predicted < upper).all()
    coverage = ((y[300:] >= lower) & (y[300:] <= upper)).mean()
    assert 0.85 <= coverage <= 0.95


def test_every_default_candidate_fits_a_profile() -> None:
    x, y = data(60)
    model = ProfileRegressor(folds=3).fit(x, y)
    assert set(model.cv_mae_) == set(default_candidates())  # 10 features: every PLS size fits
    assert all(np.isfinite(v) for v in model.cv_mae_.values())
    # the kernel models standardise the targets: none is off by the ratings' level
    assert all(v < 200 for v in model.cv_mae_.values())


def test_bad_arguments_name_themselves() -> None:
    x, y = data(20)
    with pytest.raises(ValueError, match="'y' must be"):
        ProfileRegressor().fit(x, y[:5])
    with pytest.raises(ValueError, match="'confidence' must be between 0 and 1, not 1.5"):
        ProfileRegressor(confidence=1.5).fit(x, y)
    with pytest.raises(ValueError, match="'folds' must be between 2"):
        ProfileRegressor(folds=1).fit(x, y)


def test_low_rank_candidates_never_exceed_the_features() -> None:
    names = set(default_candidates(n_features=3))
    assert {n for n in names if n.startswith("low-rank")} == {
        "low-rank (PLS, 2)",
        "low-rank (PLS, 3)",
    }
