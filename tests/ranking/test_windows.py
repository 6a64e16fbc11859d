"""Time windows and period grids of a vote log."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.windows import (
    check_window,
    coarsen_grid,
    format_instant,
    parse_instant,
    parse_unit,
    period_grid,
    snap_window,
    window_mask,
)

MAY_1 = 1714521600.0  # 2024-05-01T00:00:00Z (a Wednesday)


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01",
        "2024-05-01T00:00",
        "2024-05-01T00:00:00Z",
        "2024-05-01T02:00+02:00",
        "1714521600",
        " 1714521600.0 ",
    ],
)
def test_instants(text: str) -> None:
    assert parse_instant(text) == MAY_1


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("yesterday", "'yesterday'"),
        ("2024-13-01", "'2024-13-01'"),
        ("9" * 400, "'999999999999...9999 (400 digits)'"),
        ("99999999999", "'99999999999'"),
        ("", "''"),
    ],
)
def test_bad_instants_name_the_value(text: str, shown: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_instant(text)
    assert shown in str(error.value)
    assert len(str(error.value)) < 200


def test_window_is_half_open_and_skips_undated_votes() -> None:
    t = np.array([MAY_1 - 1, MAY_1, MAY_1 + 10, np.nan])
    assert window_mask(t, MAY_1, MAY_1 + 10).tolist() == [False, True, False, False]
    assert window_mask(t, None, MAY_1).tolist() == [True, False, False, False]
    assert window_mask(t).tolist() == [True, True, True, False]
    check_window(MAY_1, MAY_1 + 1)
    with pytest.raises(ValueError, match="must come before"):
        check_window(MAY_1, MAY_1)
    assert format_instant(MAY_1) == "2024-05-01T00:00:00Z"


def test_calendar_periods() -> None:
    day = 86_400.0
    t = np.array([MAY_1, MAY_1 + 5.5 * day, MAY_1 + 31 * day, np.nan])
    months = period_grid(t, "month")
    assert months.labels == ("2024-05", "2024-06")
    assert months.codes.tolist() == [0, 0, 1, -1]
    assert months.starts[1] == MAY_1 + 31 * day and months.ends[1] == MAY_1 + 61 * day
    weeks = period_grid(t, "week")  # Monday 2024-04-29 to Monday 2024-05-06
    assert weeks.labels == ("2024-W18", "2024-W19", "2024-W22")
    assert weeks.starts[0] == MAY_1 - 2 * day and weeks.ends[0] == MAY_1 + 5 * day
    days = period_grid(t, "day")
    assert days.labels == ("2024-05-01", "2024-05-06", "2024-06-01")


def test_auto_and_equal_periods() -> None:
    day = 86_400.0
    t = MAY_1 + day * np.arange(0, 200, 7.0)  # 29 weeks, 7 months
    assert period_grid(t).unit == "month"
    assert period_grid(t[:8]).unit == "week"
    short = MAY_1 + np.arange(10.0) * 60
    grid = period_grid(short)
    assert grid.unit == "equal" and grid.n_periods == 4
    assert grid.codes.tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]
    assert period_grid(short, 1).codes.tolist() == [0] * 10


def test_units() -> None:
    assert parse_unit("Month") == "month"
    assert parse_unit("12") == 12
    for bad in ("0", "year", "1001", "9" * 400):
        with pytest.raises(ValueError, match="not 'auto'"):
            parse_unit(bad)


def test_coarsened_periods_hold_the_minimums() -> None:
    day = 86_400.0
    # days 0-4: 3, 1, 1, 4, 1 votes; users by vote
    t = MAY_1 + day * np.array([0, 0, 0, 1, 2, 3, 3, 3, 3, 4, np.nan])
    users = np.array([0, 1, 1, 2, 2, 3, 3, 3, 4, 5, 6])
    grid = period_grid(t, "day")
    cells = coarsen_grid(grid, users, min_votes=3, min_users=2)
    assert cells is not None
    assert cells.labels == ("2024-05-01", "2024-05-02/2024-05-05")
    assert cells.codes.tolist() == [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, -1]  # the rest joins the last
    assert cells.starts.tolist() == [MAY_1, MAY_1 + day]
    assert cells.ends.tolist() == [MAY_1 + day, MAY_1 + 5 * day]
    assert coarsen_grid(grid, users, min_votes=11, min_users=1) is None
    assert coarsen_grid(grid, np.full(11, -1), min_votes=1, min_users=1) is None


def test_snapped_windows_are_whole_periods() -> None:
    day = 86_400.0
    grid = period_grid(MAY_1 + day * np.array([0.5, 2.5, 3.5]), "day")
    assert snap_window(grid, MAY_1 + 2.7 * day, None) == (MAY_1 + 2 * day, MAY_1 + 4 * day)
    assert snap_window(grid, None, MAY_1 + 0.1 * day) == (MAY_1, MAY_1 + day)
    assert snap_window(grid, MAY_1 + day, MAY_1 + 2 * day) is None  # a day without votes
