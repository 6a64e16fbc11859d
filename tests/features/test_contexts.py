"""The contextual model's contexts (:mod:`features.contexts`)."""

from types import SimpleNamespace

import numpy as np

from features import contexts
from features.contexts import query_context_width, vote_query_context


def test_vote_contexts_written_in_place_equal_the_one_hot_and_components() -> None:
    """Into a view of a wider array (as the predictor builds its contexts), the same
    numbers as a fresh array: topic one-hot and components where a vote has a prompt,
    the population's shares and means where it has none."""
    rng = np.random.default_rng(3)
    profiler = SimpleNamespace(
        topic_share_=np.array([0.5, 0.3, 0.2]),
        labels_=np.array([2, 0, 1, 2]),
        query_model_=object(),
        query_mean_=np.array([0.1, -0.2]),
        query_context_=rng.normal(size=(4, 2)),
    )
    present = np.array([True, False, True, True, True])
    expected = np.array(
        [
            [0, 0, 1, *profiler.query_context_[0]],
            [0.5, 0.3, 0.2, 0.1, -0.2],
            [1, 0, 0, *profiler.query_context_[1]],
            [0, 1, 0, *profiler.query_context_[2]],
            [0, 0, 1, *profiler.query_context_[3]],
        ]
    )
    assert query_context_width(profiler) == 5  # type: ignore[arg-type]
    np.testing.assert_array_equal(vote_query_context(profiler, present), expected)  # type: ignore[arg-type]
    wider = np.full((5, 7), 9.0)
    contexts._ROWS_AT_A_TIME = 2  # several blocks
    try:
        vote_query_context(profiler, present, out=wider[:, 1:6])  # type: ignore[arg-type]
    finally:
        contexts._ROWS_AT_A_TIME = 65_536
    np.testing.assert_array_equal(wider[:, 1:6], expected)
    assert (wider[:, [0, 6]] == 9.0).all()
    rows = np.array([4, 1])
    np.testing.assert_array_equal(
        vote_query_context(profiler, present, rows),  # type: ignore[arg-type]
        expected[rows],
    )
