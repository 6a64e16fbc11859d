"""Held-out evaluation: the split, the scores, and the comparison of predictors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranking.evaluation import (
    clustered_se,
    evaluate_personalisation,
    latest_split,
    score_predictions,
)
from tests.conftest import RecordedProgress, simulate_users


def test_scores_known_answers() -> None:
    p = np.array([0.8, 0.8, 0.5, 0.3])
    y = np.array([1.0, 0.5, 1.0, 0.0])
    s = score_predictions(p, y)
    expected_ll = (
        -(math.log(0.8) + 0.5 * math.log(0.8) + 0.5 * math.log(0.2) + math.log(0.5) + math.log(0.7))
        / 4
    )
    assert s.log_loss == pytest.approx(expected_ll)
    # right, tie (half), 50/50 call (half), right
    assert s.accuracy == pytest.approx((1 + 0.5 + 0.5 + 1) / 4)
    assert s.brier == pytest.approx((0.04 + 0.09 + 0.25 + 0.09) / 4)
    assert s.n_votes == 4


def test_latest_split_holds_out_each_users_last_votes() -> None:
    users = np.array([0, 1, 0, 0, 1, 0, 0, 2, -1, 0])
    test = latest_split(users, 3, fraction=0.3, min_votes=3)
    # user 0 has 6 votes (positions 0,2,3,5,6,9): ceil(1.8) = 2 latest held out
    assert test.tolist() == [False, False, False, False, False, False, True, False, False, True]
    with pytest.raises(ValueError, match="'fraction'"):
        latest_split(users, 3, fraction=1.5)


def test_shrunk_per_user_beats_aggregate_and_plain() -> None:
    data, users, truth, _ = simulate_users(300, 60, 12, seed=11, deviation=0.7, tie_share=0.2)
    rows = evaluate_personalisation(data, users, 300, true_ratings=truth, methods=("bt",))
    by_name = {r.predictor: r for r in rows}
    assert set(by_name) == {"aggregate", "per-user", "shrunk"}
    shrunk, plain, aggregate = by_name["shrunk"], by_name["per-user"], by_name["aggregate"]
    assert shrunk.scores.log_loss < aggregate.scores.log_loss < plain.scores.log_loss
    assert shrunk.spearman_truth > max(plain.spearman_truth, aggregate.spearman_truth)
    assert shrunk.scores.n_votes == aggregate.scores.n_votes > 0


def test_evaluation_reports_its_fits() -> None:
    data, users, _, _ = simulate_users(40, 30, 5, seed=3)
    progress = RecordedProgress()
    told = evaluate_personalisation(data, users, 40, progress=progress)
    plain = evaluate_personalisation(data, users, 40)
    assert [(r.method, r.predictor, r.scores) for r in told] == [
        (r.method, r.predictor, r.scores) for r in plain
    ]
    assert [(s.name, s.total, s.unit) for s in progress.stages] == [
        ("held-out evaluation", 4, "fits")  # two methods, plain and shrunk each
    ]
    progress.assert_complete()


def test_clustered_se_is_the_plain_se_for_one_row_a_user_and_wider_for_clusters() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    plain = x.std(ddof=1) / np.sqrt(x.size)
    assert clustered_se(x, np.arange(200)) == pytest.approx(plain)
    # each user's rows all alike: 20 users of 10 identical rows tell what 20 rows tell
    users = np.repeat(np.arange(20), 10)
    alike = np.repeat(x[:20], 10)
    assert clustered_se(alike, users) == pytest.approx(x[:20].std(ddof=1) / np.sqrt(20))
    assert np.isnan(clustered_se(x, np.zeros(200, dtype=np.intp)))
