"""The topic model at scale: the sample it is fitted on, and the batches it predicts in."""

from __future__ import annotations

import numpy as np
import pytest

from features.topic_sample import MAX_FIT_DOCUMENTS, fit_sample, predict_in_batches
from tests.conftest import RecordedProgress


def test_no_sample_up_to_the_limit_or_without_one() -> None:
    assert fit_sample(10, 10, seed=0) is None
    assert fit_sample(3, 10, seed=0) is None
    assert fit_sample(10**7, None, seed=0) is None
    assert fit_sample(MAX_FIT_DOCUMENTS, MAX_FIT_DOCUMENTS, seed=0) is None


def test_the_sample_is_sorted_distinct_seeded_and_the_size_asked() -> None:
    chosen = fit_sample(1_000, 100, seed=3)
    assert chosen is not None and chosen.size == 100
    assert np.all(np.diff(chosen) > 0)  # sorted, no repeat
    assert chosen.min() >= 0 and chosen.max() < 1_000
    np.testing.assert_array_equal(chosen, fit_sample(1_000, 100, seed=3))
    other = fit_sample(1_000, 100, seed=4)
    assert other is not None and not np.array_equal(chosen, other)
    # spread over the whole range, not the first rows
    assert chosen.max() > 500


def test_batches_give_what_one_call_gives_and_count_the_prompts() -> None:
    docs = [f"prompt {i}" for i in range(25)]
    vectors = np.arange(50, dtype=np.float64).reshape(25, 2)
    calls: list[int] = []

    def predict(texts: list[str], rows: np.ndarray) -> np.ndarray:
        calls.append(len(texts))
        assert [int(t.split()[1]) for t in texts] == (rows[:, 0] // 2).astype(int).tolist()
        return (rows[:, 0] // 2).astype(np.intp) % 7

    rows = np.array([1, 4, 5, 9, 12, 13, 20, 24], dtype=np.intp)
    progress = RecordedProgress()
    topics = predict_in_batches(predict, docs, vectors, rows, progress, batch=3)
    np.testing.assert_array_equal(topics, rows % 7)
    assert calls == [3, 3, 2]
    (stage,) = progress.stages
    assert (stage.name, stage.total, stage.unit) == ("topics of the other prompts", 8, "prompts")
    assert stage.done == 8 and stage.calls == 3


def test_no_rows_no_call() -> None:
    def predict(texts: list[str], rows: np.ndarray) -> np.ndarray:
        pytest.fail("called with nothing to predict")

    empty = np.zeros(0, dtype=np.intp)
    assert predict_in_batches(predict, [], np.zeros((0, 2)), empty).size == 0
