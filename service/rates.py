"""The rate-limit notation of the settings and the request guards.

Neutral ground: :mod:`service.settings` validates ``PLB_RATE_LIMIT_*`` with it and
:mod:`service.api.guards` enforces the limits it parses, so neither imports the other.
"""

from __future__ import annotations

from limits import RateLimitItem, parse_many

__all__ = ["parse_rates"]


def parse_rates(text: str | None) -> list[RateLimitItem]:
    """Rate limits in the ``limits`` notation (``"50/second;1000/minute"``); none if empty.

    Raises
    ------
    ValueError
        When the text is not in that notation.
    """
    if text is None or not text.strip() or text.strip().lower() == "off":
        return []
    return list(parse_many(text))
