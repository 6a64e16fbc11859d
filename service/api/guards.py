"""Request guards, as plain ASGI middleware: body size limits and rate limits.

Both answer before any route runs, with the service's JSON error shape:
413 for a body over the limit (checked on ``Content-Length`` and again while the body
streams in, for chunked uploads), 429 with ``Retry-After`` for a client over its rate.

Rate limits use the ``limits`` library's moving windows. With a Redis URL they are kept
in Redis (lists under ``plb:limits:``, one Lua script a hit), so replicas sharing that
Redis share one budget (the windows hold each replica's clock readings: keep the clocks
in step, as NTP does); without one, in this process. When Redis cannot count (down, or
no answer within the timeout), the guard never answers 500: it logs a warning and counts
in this process instead, as a replica of the embedded store does, and tries Redis again
after :data:`REDIS_RETRY_S` seconds, with one request at a time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import time

import redis.asyncio
from limits import RateLimitItem
from limits.aio.storage import MemoryStorage, RedisStorage
from limits.aio.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter
from limits.errors import StorageError
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.store.redis_store import redact_url

__all__ = ["BodySizeLimit", "BodyTimeout", "Counter", "RateLimit"]

logger = logging.getLogger(__name__)

#: Routes no limit applies to: a health check must answer whatever the load.
EXEMPT = ("/healthz",)
#: Seconds a replica counts in its own process after Redis failed to count, before it
#: tries Redis again.
REDIS_RETRY_S = 5.0
Strategy = MovingWindowRateLimiter | FixedWindowRateLimiter

#: Prefix of the rate limits' keys in Redis, beside the store's ``plb:`` keys.
REDIS_KEY_PREFIX = "plb:limits"


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


class BodyTimeout:
    """Answer 408 to a request whose body has not all come ``timeout_s`` after its headers.

    A client that sends a body slowly (a byte now and then) would otherwise hold its
    connection and the request's task for as long as it likes. Once the body is complete
    the app's further ``receive`` (waiting for a disconnect) is not timed.
    """

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = time.monotonic() + self.timeout_s
        complete = False
        refused = False
        started = False

        async def timed_receive() -> Message:
            nonlocal complete, refused
            if refused:
                return {"type": "http.disconnect"}
            if complete:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0))
            except TimeoutError:
                refused = True
                if not started:
                    detail = f"the request body did not arrive within {self.timeout_s:g} s"
                    await _reject(send, 408, detail, [(b"connection", b"close")])
                return {"type": "http.disconnect"}
            if message["type"] != "http.request" or not message.get("more_body", False):
                complete = True
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = True
            await send(message)

        await self.app(scope, timed_receive, guarded_send)


def _async_url(url: str) -> str:
    """The ``limits`` asyncio spelling of a Redis URL (``async+redis://...``)."""
    if url.startswith("unix://"):
        return "async+redis+unix://" + url.removeprefix("unix://")
    return "async+" + url


class Counter:
    """Windows of a rate limit counted in Redis, shared by the replicas, or in this process.

    Parameters
    ----------
    redis_url : str, optional
        Count in this Redis; in this process when omitted, or while Redis cannot count.
    timeout_s : float, default 2.0
        The longest to wait for Redis to connect or to answer a hit.
    retry_s : float, default :data:`REDIS_RETRY_S`
        Seconds to count in this process after Redis failed, before trying it again.
    strategy : {MovingWindowRateLimiter, FixedWindowRateLimiter}
        The ``limits`` strategy: moving windows for requests; fixed windows for a budget
        spent in large amounts (one counter a window, whatever a hit costs).
    what : str
        What is counted, for the log.
    """

    def __init__(
        self,
        redis_url: str | None = None,
        timeout_s: float = 2.0,
        retry_s: float = REDIS_RETRY_S,
        strategy: type[Strategy] = MovingWindowRateLimiter,
        what: str = "rate limits",
    ) -> None:
        self.retry_s = retry_s
        self.strategy = strategy
        self.what = what
        self.local = strategy(MemoryStorage())
        self._redis_url = redis_url
        self._timeout_s = timeout_s
        self._where = "" if redis_url is None else redact_url(redis_url)
        # Redis connections belong to one event loop: made for the loop that runs
        # (uvicorn has one; a test client may start a new one per request).
        self._shared: tuple[asyncio.AbstractEventLoop, Strategy] | None = None
        self._pool: redis.asyncio.ConnectionPool | None = None
        self._degraded = False  # Redis failed; counting in this process
        self._retry_at = 0.0  # when to try Redis again (time.monotonic)

    def _shared_limiter(self, url: str) -> Strategy:
        """The limiter counting in Redis, with connections of the running event loop."""
        loop = asyncio.get_running_loop()
        if self._shared is not None and self._shared[0] is loop:
            return self._shared[1]
        self._pool = redis.asyncio.ConnectionPool.from_url(
            url, socket_timeout=self._timeout_s, socket_connect_timeout=self._timeout_s
        )
        storage = RedisStorage(
            _async_url(url),
            implementation="redispy",
            key_prefix=REDIS_KEY_PREFIX,
            wrap_exceptions=True,
            # a documented option of RedisStorage, whose annotation is narrower
            connection_pool=self._pool,  # type: ignore[arg-type]
        )
        limiter = self.strategy(storage)
        self._shared = (loop, limiter)
        return limiter

    def _limiter(self) -> Strategy:
        """Redis when configured and not failing (one request at a time tries it again)."""
        if self._redis_url is None:
            return self.local
        if self._degraded:
            now = time.monotonic()
            if now < self._retry_at:
                return self.local
            self._retry_at = now + self.retry_s  # this request tries; the others wait
        return self._shared_limiter(self._redis_url)

    @staticmethod
    async def _first_exceeded(
        limiter: Strategy, limits: list[RateLimitItem], identity: tuple[str, ...], cost: int
    ) -> float | None:
        for item in limits:
            if not await limiter.hit(item, *identity, cost=cost):
                reset = (await limiter.get_window_stats(item, *identity)).reset_time
                return max(reset - time.time(), 1.0)
        return None

    async def over(
        self, limits: list[RateLimitItem], *identity: str, cost: int = 1
    ) -> float | None:
        """Count a hit of ``cost``: seconds until the first exceeded limit resets, or None
        when all allow it."""
        limiter = self._limiter()
        if limiter is self.local:
            return await self._first_exceeded(limiter, limits, identity, cost)
        try:
            wait = await self._first_exceeded(limiter, limits, identity, cost)
        except (StorageError, RedisError, OSError) as error:
            cause = error.storage_error if isinstance(error, StorageError) else error
            if not self._degraded:
                logger.warning(
                    "%s: Redis at %s cannot count (%s: %s); counting in this process, "
                    "trying Redis again every %g s",
                    self.what,
                    self._where,
                    type(cause).__name__,
                    cause,
                    self.retry_s,
                )
            self._degraded = True
            self._retry_at = time.monotonic() + self.retry_s
            return await self._first_exceeded(self.local, limits, identity, cost)
        if self._degraded:
            self._degraded = False
            logger.warning("%s: Redis at %s counts again", self.what, self._where)
        return wait

    async def aclose(self) -> None:
        """Close the connections to Redis, if any."""
        if self._pool is not None:
            pool, self._pool, self._shared = self._pool, None, None
            await pool.disconnect()


class RateLimit:
    """Limit requests per API key (the bearer credential) and per client address.

    A request with a bearer credential counts against that credential (kept as a hash,
    never in clear); every request also counts against its client address.

    Parameters
    ----------
    app : ASGI app
    per_address, per_key : list of RateLimitItem
        The limits; none turns that kind off.
    redis_url : str, optional
        Count in this Redis, shared by every replica that uses it; in this process when
        omitted, or while Redis cannot count.
    timeout_s : float, default 2.0
        The longest to wait for Redis to connect or to answer a hit.
    retry_s : float, default :data:`REDIS_RETRY_S`
        Seconds to count in this process after Redis failed, before trying it again.
    closing : list of Counter, optional
        Other counters to close with this one's when the app stops (the query budget's).
    """

    def __init__(
        self,
        app: ASGIApp,
        per_address: list[RateLimitItem],
        per_key: list[RateLimitItem],
        redis_url: str | None = None,
        timeout_s: float = 2.0,
        retry_s: float = REDIS_RETRY_S,
        closing: list[Counter] | None = None,
    ) -> None:
        self.app = app
        self.per_address = per_address
        self.per_key = per_key
        self.counter = Counter(redis_url if per_address or per_key else None, timeout_s, retry_s)
        self.closing = [self.counter, *(closing or [])]

    async def _over(self, limits: list[RateLimitItem], *identity: str) -> float | None:
        """Seconds until the first exceeded limit resets, or None when all allow the hit."""
        return await self.counter.over(limits, *identity)

    async def aclose(self) -> None:
        """Close the connections to Redis, if any."""
        for counter in self.closing:
            await counter.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":

            async def closing_send(message: Message) -> None:
                if message["type"] == "lifespan.shutdown.complete":
                    await self.aclose()
                await send(message)

            await self.app(scope, receive, closing_send)
            return
        if scope["type"] != "http" or scope["path"] in EXEMPT:
            await self.app(scope, receive, send)
            return
        wait = None
        if self.per_key:
            for name, value in scope["headers"]:
                if name == b"authorization":
                    key = hashlib.sha256(value).hexdigest()[:32]
                    wait = await self._over(self.per_key, "key", key)
                    break
        if wait is None and self.per_address:
            address = scope["client"][0] if scope.get("client") else "unknown"
            wait = await self._over(self.per_address, "address", address)
        if wait is not None:
            retry = str(math.ceil(wait)).encode()
            await _reject(send, 429, "too many requests: slow down", [(b"retry-after", retry)])
            return
        await self.app(scope, receive, send)
