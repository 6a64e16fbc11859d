"""Held-out users: the split, and the three checks end to end on a small simulation."""

from __future__ import annotations

import numpy as np
import pytest

from data.simulate import simulate
from features.cold_start import REGRESSION, evaluate_cold_start, split_users
from features.later_votes import WAYS
from features.topics import TopicModel
from tests.conftest import RecordedProgress


def test_split_users_by_ids_or_fraction() -> None:
    ids = [f"u{i}" for i in range(10)]
    np.testing.assert_array_equal(
        split_users(ids, test_ids={"u1", "u3"}), np.isin(ids, ["u1", "u3"])
    )
    assert split_users(ids, fraction=0.3, rng=1).sum() == 3
    with pytest.raises(ValueError, match="both training and test users"):
        split_users(ids, test_ids={"nobody"})
    with pytest.raises(ValueError, match="'fraction' must be between 0 and 1"):
        split_users(ids, fraction=1.5)


def test_cold_start_reports_every_check() -> None:
    sim = simulate(60, 15, 6, rng=5)
    progress = RecordedProgress()
    result = evaluate_cold_start(
        sim.battles,
        fraction=0.25,
        true_ratings=sim.user_ratings,
        topic_model=TopicModel("minilm-int8", n_topics=4),
        progress=progress,
    )
    assert result.n_test_users == 15 and result.n_train_users == 45
    assert progress.named() == [
        "embedding queries",  # the training users'
        "topics",
        "rating predictor",
        "embedding queries",  # the test users'
        "new-user regressions",
    ]
    progress.assert_complete()
    rows = {(r["target"], r["method"], r["predictor"]): r for r in result.ratings}
    for target in ("shrunk", "plain"):
        mean = rows[(target, "bt", "mean of training users")]
        assert mean["improvement"] == pytest.approx(0.0)
        assert (target, "bt", "contextual BT") in rows and (
            target,
            "elo",
            "ridge on profile",
        ) in rows
    for target in ("shrunk", "plain"):
        for method in ("bt", "elo"):
            regression = rows[(target, method, REGRESSION)]
            assert regression["chosen"] in regression["cv_mae"]
            assert 0.0 <= regression["interval_coverage_fitted"] <= 1.0
    # the noise ceiling: the fit the true preferences are expected to produce
    for target, method, name in (
        ("shrunk", "bt", "expected fit"),
        ("shrunk", "elo", "expected Elo"),
        ("plain", "elo", "expected Elo"),
    ):
        ceiling = rows[(target, method, f"true ratings, {name}")]
        assert ceiling["improvement"] > 0.0
        assert (target, method, f"contextual BT, {name}") in rows
    truth = rows[("truth", "bt", "contextual BT")]
    assert 0.0 <= truth["interval_coverage_truth"] <= 1.0
    assert -1.0 <= truth["spearman_truth"] <= 1.0
    names = {(r["known"], r["way"]) for r in result.votes}
    assert names == {(n, way) for n in (5, 10, 20) for way in WAYS}
    assert all(np.isfinite(r["log_loss"]) and r["n_votes"] > 0 for r in result.votes)
    for row in result.votes:  # paired with the aggregate on the same later votes
        if row["way"] == "aggregate":
            assert row["minus_aggregate"] == 0.0
        else:
            assert np.isfinite(row["minus_aggregate_se"])
    assert result.to_dict()["n_test_users"] == 15


def test_new_users_known_by_their_first_queries_and_the_true_topic_baseline() -> None:
    sim = simulate(24, 15, 5, rng=6)
    runs = {}
    for queries, battles in ((None, sim.battles), (2, sim.battles.drop(columns="topic"))):
        progress = RecordedProgress()
        result = evaluate_cold_start(
            battles,
            fraction=0.25,
            true_ratings=sim.user_ratings,
            topic_model=TopicModel("minilm-int8", n_topics=3),
            queries=queries,
            own_votes=(5,),  # the later votes are checked above; one count is enough here
            progress=progress,
        )
        embedded = [s.total for s in progress.stages if s.name == "embedding queries"][1]
        truth = next(r for r in result.ratings if r["target"] == "truth")
        runs[queries] = (result.n_test_users, embedded, truth)
    n_test, embedded_all, truth_all = runs[None]
    assert embedded_all > 2 * n_test  # every query of the test users
    assert 0 < runs[2][1] <= 2 * n_test  # only the first two of each
    # told the true topics, the baseline is scored; without them, it is absent
    assert -1.0 <= truth_all["spearman_truth_true_topics"] <= 1.0
    assert runs[2][2]["spearman_truth_true_topics"] is None
    with pytest.raises(ValueError, match="'queries' must be a positive integer, not 0"):
        evaluate_cold_start(sim.battles, queries=0)
