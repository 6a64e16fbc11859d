"""The Redis store's reads on the event loop: an asynchronous client, and coalesced reads.

:class:`~service.store.redis_store.RedisStore` makes one :func:`async_client` per event
loop (its connections belong to that loop), with the timeouts and the retry of its
synchronous client; the ``HMGET`` calls awaited in one turn of the loop go out together
through a :class:`Coalescer`, in one round trip on one of the client's connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio
import redis.asyncio.retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError

__all__ = ["Coalescer", "async_client", "round_trip"]


def async_client(url: str, timeout_s: float) -> redis.asyncio.Redis:
    """A ``redis.asyncio`` client of ``url`` for the running event loop.

    Parameters
    ----------
    url : str
        The Redis URL, as the synchronous client's.
    timeout_s : float
        The longest to wait for a connection, and for each reply.

    Returns
    -------
    redis.asyncio.Redis
        Retrying once, quickly, on a dropped connection (never on a timeout), as the
        synchronous client does.
    """
    return redis.asyncio.Redis.from_url(
        url,
        socket_connect_timeout=timeout_s,
        socket_timeout=timeout_s,
        retry=redis.asyncio.retry.Retry(
            ExponentialBackoff(cap=0.1, base=0.025), 1, (RedisConnectionError,)
        ),
    )


class Coalescer:
    """``HMGET`` calls awaited in one turn of the event loop, sent in one round trip.

    The first call of a turn schedules a flush for the next; the flush writes every call
    made until then at once on a connection of the client's pool, reads a reply each
    (:func:`round_trip`), and hands each call its own answer or error. Flushes overlap:
    calls made while one is in flight go in the next, on another connection. A dropped
    connection is retried as the client retries its commands (its ``retry``).

    This is what a non-transactional pipeline does, without building one a flush: one
    read at a time, redis-py's ``Pipeline`` cost 130-155 µs of CPU a read here against
    110 µs for the same round trip on a pooled connection.
    """

    def __init__(self, client: redis.asyncio.Redis, loop: asyncio.AbstractEventLoop) -> None:
        self.client = client
        self.loop = loop
        self.pending: list[tuple[str, list[str | bytes], asyncio.Future[Any]]] = []
        self.tasks: set[asyncio.Task[None]] = set()

    async def hmget(self, key: str, fields: list[str | bytes]) -> Any:
        future: asyncio.Future[Any] = self.loop.create_future()
        if not self.pending:
            self.loop.call_soon(self._flush)
        self.pending.append((key, fields, future))
        return await future

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        task = self.loop.create_task(self._send(batch))
        self.tasks.add(task)  # held until done: the loop keeps weak references only
        task.add_done_callback(self.tasks.discard)

    async def _send(self, batch: list[tuple[str, list[str | bytes], asyncio.Future[Any]]]) -> None:
        commands = [("HMGET", key, *fields) for key, fields, _ in batch]
        pool = self.client.connection_pool
        try:
            connection = await pool.get_connection()
            try:
                answers = await connection.retry.call_with_retry(
                    lambda: round_trip(connection, commands), lambda _: connection.disconnect()
                )
            except BaseException:  # a reply may be left unread: never reuse the socket
                await connection.disconnect(nowait=True)
                raise
            finally:
                await pool.release(connection)
        except BaseException as exc:  # the round trip failed: every call of it fails
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else RedisError(exc))
            if not isinstance(exc, Exception):
                raise
            return
        for (_, _, future), answer in zip(batch, answers, strict=True):
            if future.done():  # the caller gave up (its request was cancelled)
                continue
            if isinstance(answer, Exception):
                future.set_exception(answer)
            else:
                future.set_result(answer)


async def round_trip(connection: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    """Write ``commands`` at once on ``connection`` and read a reply each, in order.

    An error reply is kept as its :class:`~redis.exceptions.ResponseError`, in its place,
    and the replies after it are still read, so that the connection stays in step.

    Parameters
    ----------
    connection : redis.asyncio.Connection
        A connection of the client's pool, held for the round trip.
    commands : list of tuple
        Each command's name and arguments, as ``execute_command`` takes them.

    Returns
    -------
    list
        One reply (or error) a command.
    """
    await connection.send_packed_command(connection.pack_commands(commands))
    replies: list[Any] = []
    for _ in commands:
        try:
            replies.append(await connection.read_response())
        except ResponseError as error:
            replies.append(error)
    return replies
