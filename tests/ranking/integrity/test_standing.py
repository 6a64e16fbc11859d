"""Standing: a voter's votes count from their ``min_days``-th earlier day of voting."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.integrity.standing import established_mask, newcomer_days

DAY = 86_400.0


def test_earlier_days_count_distinct_days_of_the_same_voter() -> None:
    users = np.array([0, 0, 0, 1, 0, 0, 1, -1])
    received = np.array([0.0, 10.0, DAY + 5, 2 * DAY, 3 * DAY, 3 * DAY + 1, np.nan, DAY])
    days = newcomer_days(users, received)
    np.testing.assert_array_equal(days, [0, 0, 1, 0, 2, 2, -1, -1])


def test_a_burst_of_one_day_never_counts_and_is_not_counted_later() -> None:
    # a fresh voter's 300 votes in one day, then one vote on each of the next 3 days
    burst = np.arange(300) * 10.0
    later = np.array([1, 2, 3]) * DAY
    received = np.concatenate([burst, later])
    keep = established_mask(np.zeros(received.size, dtype=np.intp), received, 3)
    assert not keep[:300].any()
    np.testing.assert_array_equal(keep[300:], [False, False, True])


def test_a_trusted_log_counts_and_vouches_for_its_voters() -> None:
    users = np.array([0, 0, 1, -1, -1])
    received = np.array([np.nan, 5.0, 5.0, np.nan, 5.0])
    keep = established_mask(users, received, 3)
    # voter 0 is in the trusted log; voter 1 is new; a received vote without a user never counts
    np.testing.assert_array_equal(keep, [True, True, False, True, False])


def test_zero_days_counts_everything() -> None:
    keep = established_mask(np.array([0, -1]), np.array([1.0, 2.0]), 0)
    assert keep.all()


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_min_days_must_be_a_count(bad: object) -> None:
    with pytest.raises(ValueError, match="min_days"):
        established_mask(np.array([0]), np.array([0.0]), bad)  # type: ignore[arg-type]
