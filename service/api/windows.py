"""``?since=&until=``: the time window of a board, parsed at the door (422 naming the
field and the value)."""

from __future__ import annotations

from typing import Annotated

from fastapi import HTTPException, Query, status

from ranking.windows import check_window, parse_instant

__all__ = ["SinceQuery", "UntilQuery", "parse_window"]

#: ``?since=&until=``: a time window, by the votes' ``tstamp``.
SinceQuery = Annotated[
    str | None,
    Query(
        description="keep votes at or after this instant: a date (2024-05-01, UTC), a date "
        "and time (2024-05-01T12:00Z) or unix seconds; a public board's window is widened "
        "to whole periods holding the segment minimums, a user's own board's is not"
    ),
]
UntilQuery = Annotated[
    str | None,
    Query(description="keep votes before this instant (not at it); the forms of since"),
]


def parse_window(since: str | None, until: str | None) -> tuple[float | None, float | None]:
    """``?since=&until=`` in unix seconds (422 naming the field and the value)."""
    ends: dict[str, float | None] = {"since": None, "until": None}
    for name, text in (("since", since), ("until", until)):
        if text is not None:
            try:
                ends[name] = parse_instant(text)
            except ValueError as error:
                raise HTTPException(
                    status.HTTP_422_UNPROCESSABLE_CONTENT, f"{name}: {error}"
                ) from None
    try:
        check_window(ends["since"], ends["until"])
    except ValueError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"since: {error}") from None
    return ends["since"], ends["until"]
