"""The budget of text a request without a credential may have embedded.

Embedding text is the dearest work anyone can ask of the service without a key: about
1 s of CPU per million characters (200 queries of 20,000 characters took 4.5 s). So a
request to ``POST /v1/recommend`` or ``POST /v1/next-battle`` that carries no credential
(neither the admin or ingest key, nor a ``user_id`` with that user's token) may send at
most ``PLB_ANONYMOUS_QUERY_CHARS`` characters of text in all (queries, prompt and the
votes' prompts; 413 above it), and each client address at most
``PLB_ANONYMOUS_QUERY_CHARS_PER_ADDRESS`` of them (429 with ``Retry-After`` above it),
counted in fixed windows beside the rate limits (in Redis when the service has one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import anyio.from_thread
from fastapi import HTTPException, Request, status
from limits import RateLimitItem

from service.api.guards import Counter
from service.live.settings import Settings
from service.live.tokens import keys_match

__all__ = ["QueryBudget", "charge_queries", "text_chars"]


class QueryBudget:
    """What anonymous requests may send: per request, and per address over time.

    Parameters
    ----------
    per_request : int
        The most characters of one request.
    per_address : list of RateLimitItem
        Characters per client address, in fixed windows; none: no such budget.
    counter : Counter
        Where the windows are counted (fixed windows, in Redis or this process).
    """

    def __init__(self, per_request: int, per_address: list[RateLimitItem], counter: Counter):
        self.per_request = per_request
        self.per_address = per_address
        self.counter = counter

    def charge(self, address: str, chars: int) -> None:
        """Spend ``chars`` characters of ``address``'s budget, from a worker thread.

        Raises
        ------
        HTTPException
            413 when one request holds more than ``per_request`` characters, 429 (with
            ``Retry-After``) when the address has spent its budget; the detail names the
            field, the count and the limit.
        """
        if chars > self.per_request:
            raise HTTPException(
                status.HTTP_413_CONTENT_TOO_LARGE,
                f"queries: {chars:,} characters of text (queries, prompt and the votes' "
                f"prompts), more than the {self.per_request:,} a request without a "
                "credential may send (PLB_ANONYMOUS_QUERY_CHARS)",
            )
        if not self.per_address or chars == 0:
            return
        wait = anyio.from_thread.run(
            lambda: self.counter.over(self.per_address, "chars", address, cost=chars)
        )
        if wait is not None:
            limits = "; ".join(str(item) for item in self.per_address)
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"queries: this address has sent its characters of text allowed without a "
                f"credential ({limits}, PLB_ANONYMOUS_QUERY_CHARS_PER_ADDRESS); "
                f"{chars:,} more must wait",
                headers={"Retry-After": str(math.ceil(wait))},
            )


def text_chars(
    queries: Iterable[str], prompt: str | None, votes: Iterable[Mapping[str, Any]] | None
) -> int:
    """Characters of the text a recommend request has embedded: queries, prompt and the
    votes' prompts (the ``prompt`` or ``question`` of each vote that is text)."""
    chars = sum(len(query) for query in queries) + len(prompt or "")
    for vote in votes or ():
        for field in ("prompt", "question"):
            text = vote.get(field) if isinstance(vote, Mapping) else None
            if isinstance(text, str):
                chars += len(text)
    return chars


def charge_queries(
    request: Request, settings: Settings, bearer: str | None, user_id: str | None, chars: int
) -> None:
    """Charge ``chars`` to the client's budget, unless the request carries a credential:
    the admin or ingest key, or a ``user_id`` whose token was already checked."""
    if user_id is not None:
        return
    for key in (settings.admin_key, settings.ingest_key):
        if key is not None and keys_match(key.get_secret_value(), bearer):
            return
    budget: QueryBudget | None = getattr(request.app.state, "query_budget", None)
    if budget is None:
        return
    address = request.client.host if request.client else "unknown"
    budget.charge(address, chars)
