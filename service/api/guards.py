"""Request guards, as plain ASGI middleware: body size limits and rate limits.

Both answer before any route runs, with the service's JSON error shape:
413 for a body over the limit (checked on ``Content-Length`` and again while the body
streams in, for chunked uploads), 429 with ``Retry-After`` for a client over its rate.
Rate limits use the ``limits`` library's moving windows, kept in this process: each
replica counts its own requests.
"""

from __future__ import annotations

import hashlib
import json
import math
import time

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodySizeLimit", "RateLimit", "parse_rates"]

#: Routes no limit applies to: a health check must answer whatever the load.
EXEMPT = ("/healthz",)


async def _reject(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """Refuse request bodies larger than ``max_bytes`` with a 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        detail = f"the request body is larger than the {self.max_bytes:,} bytes allowed"
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    too_large = int(value) > self.max_bytes
                except ValueError:
                    await _reject(send, 400, f"Content-Length {value[:40]!r} is not a number", [])
                    return
                if too_large:
                    await _reject(send, 413, detail, [(b"connection", b"close")])
                    return
        received = 0
        refused = False

        async def counted_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # Answer now, and tell the app the client left: it stops reading, and
                    # whatever it answers after that is dropped.
                    refused = True
                    await _reject(send, 413, detail, [(b"connection", b"close")])
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counted_receive, guarded_send)


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


class RateLimit:
    """Limit requests per API key (the bearer credential) and per client address.

    A request with a bearer credential counts against that credential (kept as a hash,
    never in clear); every request also counts against its client address.
    """

    def __init__(
        self, app: ASGIApp, per_address: list[RateLimitItem], per_key: list[RateLimitItem]
    ) -> None:
        self.app = app
        self.per_address = per_address
        self.per_key = per_key
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    def _over(self, limits: list[RateLimitItem], *identity: str) -> float | None:
        """Seconds until the first exceeded limit resets, or None when all allow the hit."""
        for item in limits:
            if not self.limiter.hit(item, *identity):
                reset = self.limiter.get_window_stats(item, *identity).reset_time
                return max(reset - time.time(), 1.0)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT:
            await self.app(scope, receive, send)
            return
        wait = None
        if self.per_key:
            for name, value in scope["headers"]:
                if name == b"authorization":
                    key = hashlib.sha256(value).hexdigest()[:32]
                    wait = self._over(self.per_key, "key", key)
                    break
        if wait is None and self.per_address:
            address = scope["client"][0] if scope.get("client") else "unknown"
            wait = self._over(self.per_address, "address", address)
        if wait is not None:
            retry = str(math.ceil(wait)).encode()
            await _reject(send, 429, "too many requests: slow down", [(b"retry-after", retry)])
            return
        await self.app(scope, receive, send)
