"""The shared store: one Redis server behind several service replicas.

Key layout
----------
Every key starts with the namespace (``plb`` by default); documents are compact JSON::

    plb:battles               list    every accepted battle, in ingest order
    plb:ids                   set     every stored battle_id (the deduplication index)
    plb:users                 set     every user_id that has a stored battle
    plb:user:{id}:battles     list    that user's battles, in ingest order
    plb:user:{id}:docs        hash    method -> that user's document for the method, and
                                      "\\xffversion:" + method -> the version it is stamped with
    plb:user:{id}:credentials hash    "token_generation" -> the read token's generation
                                      (HINCRBY), "share" -> the digest of the share id
    plb:share:{digest}        string  the user a share id's SHA-256 (hex) reads
    plb:elo                   string  the online Elo state, {model: rating}
    plb:snapshot              string  the published snapshot
    plb:version               string  its version, an integer (INCR)
    plb:secret                string  32 random bytes (SET NX)
    plb:limits:...            list    the rate limits' moving windows (service/api/guards.py)

The per-user battle list, document hash and credentials hash end in different suffixes,
so no user id (colons included) can make two families collide; a share's key ends in a
digest (hex). A share is replaced or revoked in one ``WATCH``/``MULTI`` step that updates
the user's hash and the share keys together. A version field starts with the byte
``0xff``, which no UTF-8 method name holds, so it never collides with a document; both are
written by one ``HSET`` and read by one ``HMGET``, so they always match.

Reads on the event loop
-----------------------
:meth:`RedisStore.get_user_raw_async`, the service's most frequent read, uses
``redis.asyncio`` (a client per event loop, the same timeouts, retry and errors as the
synchronous one), so that a user's board never blocks the loop on a round trip to Redis.
The reads awaited in one turn of the loop go out together, pipelined on one pooled
connection (no ``MULTI``: each ``HMGET`` is atomic by itself) in one round trip
(:class:`~service.store.redis_async.Coalescer`): under load that is one write and one read
of a socket for many requests instead of one each, and each read's answer or error is its
own.

Atomicity
---------
:meth:`RedisStore.ingest` is an optimistic transaction: ``WATCH plb:ids plb:elo``, read
which ids and users already exist (``SMISMEMBER``) and the Elo state, call ``update_elo``,
then queue ``SADD``/``RPUSH``/``SET`` in one ``MULTI``/``EXEC`` sent in one round trip. If
another client touched a watched key meanwhile, ``EXEC`` fails and the whole step is redone
from fresh reads (so ``update_elo`` must be pure). :meth:`~RedisStore.publish` increments the
version and writes the snapshot in one ``MULTI``; :meth:`~RedisStore.snapshot` reads both in
one ``MULTI``, so they always match.

Persistence: run Redis with AOF
-------------------------------
Run the server with ``appendonly yes``. Redis writes every ``EXEC`` to the append-only file
as one unit, and on restart replays it, dropping a torn transaction at the end of the file
(``aof-load-truncated yes``), so a restart never shows half an ingest. What an
*acknowledged* vote can lose depends on ``appendfsync``:

* ``appendfsync always``: the file is fsynced before the reply, so an acknowledged ingest
  survives a crash of Redis, and of the machine; each write costs one fsync.
* ``appendfsync everysec`` (Redis's default): fsynced once a second; a crash of the Redis
  *process* loses nothing (the data is in the kernel's page cache), but a power loss or
  kernel crash can lose about the last second (up to two) of acknowledged ingests.
* ``appendfsync no`` or RDB snapshots only: minutes of acknowledged votes can be lost.

Deduplication by ``battle_id`` makes re-sending a batch harmless, so a client that never
saw its acknowledgement can simply retry.

Availability
------------
The client waits at most ``timeout_s`` (2 s by default; the service's
``PLB_REDIS_TIMEOUT_S``) to connect and for each reply, and retries once, quickly, on a
dropped connection (never on a timeout); every failure surfaces as
:class:`~service.store.base.StoreUnavailable` (the service answers 503) naming the URL,
password hidden. A server that accepts connections but never answers (``SIGSTOP``) thus
fails a call after ``timeout_s``, and every call of the next ``timeout_s`` at once, so
that a request making several calls waits one timeout, not one per call. The
connection pool reconnects by itself once Redis is back; no restart of the service is
needed.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from service.store.base import EloUpdate, Ingested, Store, StoreUnavailable
from service.store.documents import StoredDocument, dumps, loads, user_document_text
from service.store.ingest_plan import checked_elo, plan_ingest, prepare_batch
from service.store.redis_async import Coalescer, async_client

__all__ = ["RedisStore", "redact_url"]

logger = logging.getLogger(__name__)

TIMEOUT_S = 2.0  # connect, and wait for each reply
MAX_ATTEMPTS = 1000  # optimistic retries of one ingest before giving up


def redact_url(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***``."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.netloc.rsplit("@", 1)[1]
        netloc = f"{parts.username or ''}:***@{host}"
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "<unparsable URL>"


def _version_field(method: str) -> bytes:
    """The hash field beside ``method``'s document holding its version (never UTF-8)."""
    return b"\xffversion:" + method.encode("utf-8")


def _members(client: Any, key: str, values: list[str]) -> list[str]:
    """Those of ``values`` in the set at ``key``: one SMISMEMBER, none for no values."""
    hits = client.smismember(key, values) if values else []
    return [v for v, hit in zip(values, hits, strict=True) if hit]


class RedisStore(Store):
    """A :class:`~service.store.base.Store` on a Redis server; see the module notes.

    Parameters
    ----------
    url : str
        ``redis://[[user]:password@]host[:port][/db]``, ``rediss://...`` or
        ``unix://path``. Nothing is contacted until the first call.
    namespace : str, default "plb"
        Prefix of every key, so several stores can share one database.
    timeout_s : float, default 2.0
        The longest to wait for a connection, and for each reply.

    Raises
    ------
    ValueError
        When ``url`` is not a Redis URL, ``namespace`` is empty or ``timeout_s`` is not
        a positive number.
    """

    def __init__(self, url: str, namespace: str = "plb", timeout_s: float = TIMEOUT_S) -> None:
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"Argument 'namespace' must be a non-empty string, not {namespace!r}")
        if not isinstance(timeout_s, int | float) or not timeout_s > 0:
            raise ValueError(f"Argument 'timeout_s' must be a positive number, not {timeout_s!r}")
        self.url = url
        self.namespace = namespace
        self._where = redact_url(url)
        try:
            self._client = redis.Redis.from_url(
                url,
                socket_connect_timeout=timeout_s,
                socket_timeout=timeout_s,
                retry=Retry(ExponentialBackoff(cap=0.1, base=0.025), 1, (RedisConnectionError,)),
            )
        except ValueError as exc:
            raise ValueError(
                f"Argument 'redis_url' is not a Redis URL ({self._where}): {exc}"
            ) from exc
        self._timeout_s = timeout_s
        # redis.asyncio connections belong to one event loop: made for the loop that runs
        # (uvicorn has one; a test client may start another)
        self._async: tuple[asyncio.AbstractEventLoop, redis.asyncio.Redis, Coalescer] | None = None
        self._closed = False
        self._hung_until = 0.0  # time.monotonic() until which calls fail at once

    def __repr__(self) -> str:
        return f"RedisStore({self._where!r}, namespace={self.namespace!r})"

    # -- plumbing -------------------------------------------------------------------------

    def _key(self, *parts: str) -> str:
        return ":".join((self.namespace, *parts))

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        if self._closed:
            raise StoreUnavailable(f"Redis at {self._where} cannot serve {what}: store closed")
        if time.monotonic() < self._hung_until:
            # a call timed out a moment ago: fail at once, so that a request making several
            # calls waits one timeout, not one per call (issue 31: a segment waited three)
            raise StoreUnavailable(
                f"Redis at {self._where} is unreachable: no answer within {self._timeout_s:g} s"
            )
        try:
            yield
        except RedisTimeoutError as exc:
            self._hung_until = time.monotonic() + self._timeout_s
            raise StoreUnavailable(f"Redis at {self._where} is unreachable: {exc}") from exc
        except RedisConnectionError as exc:
            raise StoreUnavailable(f"Redis at {self._where} is unreachable: {exc}") from exc
        except RedisError as exc:
            raise StoreUnavailable(f"Redis at {self._where} failed on {what}: {exc}") from exc

    def _async_reads(self) -> Coalescer:
        """The coalesced asynchronous reads of the running event loop."""
        loop = asyncio.get_running_loop()
        if self._async is not None and self._async[0] is loop:
            return self._async[2]
        client = async_client(self.url, self._timeout_s)
        reads = Coalescer(client, loop)
        self._async = (loop, client, reads)
        return reads

    # -- the interface --------------------------------------------------------------------

    def ingest(self, battles: Sequence[Mapping[str, Any]], update_elo: EloUpdate) -> Ingested:
        batch = prepare_batch(battles)
        ids = list(dict.fromkeys(b.battle_id for b in batch))
        k_ids, k_elo, k_users = self._key("ids"), self._key("elo"), self._key("users")
        lost = 0  # connections lost while watching
        with self._errors("ingest"), self._client.pipeline(transaction=True) as pipe:
            for attempt in range(1, MAX_ATTEMPTS + 1):
                try:
                    pipe.watch(k_ids, k_elo)
                    plan = plan_ingest(
                        batch,
                        _members(pipe, k_ids, ids),
                        lambda users: _members(pipe, k_users, users),
                        lambda: pipe.get(k_elo),
                        update_elo,
                    )
                    accepted = plan.accepted
                    per_user: dict[str, list[str]] = {}
                    for b in accepted:
                        if b.user_id is not None:
                            per_user.setdefault(b.user_id, []).append(b.doc)
                    if not accepted and not plan.elo_changed:
                        pipe.unwatch()  # nothing new: write nothing
                        return plan.result()
                    pipe.multi()
                    if accepted:
                        pipe.sadd(k_ids, *(b.battle_id for b in accepted))
                        pipe.rpush(self._key("battles"), *(b.doc for b in accepted))
                    for user, docs in per_user.items():
                        pipe.rpush(self._key("user", user, "battles"), *docs)
                    if plan.new_users:
                        pipe.sadd(k_users, *plan.new_users)
                    pipe.set(k_elo, plan.elo_doc)
                    pipe.execute()
                except WatchError as exc:
                    if "occurred while watching" in str(exc):  # redis-py: the connection died
                        lost += 1
                        if lost >= 3:
                            raise StoreUnavailable(
                                f"Redis at {self._where} is unreachable: {exc}"
                            ) from exc
                    logger.debug("ingest raced another writer (attempt %d); retrying", attempt)
                    if attempt > 10:
                        time.sleep(min(0.05, 0.001 * attempt))
                    continue
                return plan.result()
        raise StoreUnavailable(
            f"Redis at {self._where} is too contended: ingest lost {MAX_ATTEMPTS} races"
        )

    def battles(self, user_id: str | None = None) -> list[dict[str, Any]]:
        key = self._key("battles") if user_id is None else self._key("user", user_id, "battles")
        with self._errors("battles"):
            docs = self._client.lrange(key, 0, -1)
        return [loads(doc) for doc in docs]

    def n_battles(self) -> int:
        with self._errors("n_battles"):
            return int(self._client.llen(self._key("battles")))

    def elo(self) -> dict[str, float]:
        with self._errors("elo"):
            raw = self._client.get(self._key("elo"))
        return {} if raw is None else dict(loads(raw))

    def init_elo(self, ratings: Mapping[str, float]) -> bool:
        doc = dumps(checked_elo(ratings))
        with self._errors("init_elo"):
            return bool(self._client.set(self._key("elo"), doc, nx=True))

    def put_user(self, user_id: str, method: str, document: Mapping[str, Any]) -> None:
        doc, version = user_document_text(document)
        key = self._key("user", user_id, "docs")
        with self._errors("put_user"):
            if version is None:
                with self._client.pipeline(transaction=True) as pipe:
                    pipe.hset(key, method, doc)
                    pipe.hdel(key, _version_field(method))
                    pipe.execute()
            else:
                self._client.hset(key, mapping={method: doc, _version_field(method): version})

    def get_user(self, user_id: str, method: str) -> dict[str, Any] | None:
        with self._errors("get_user"):
            raw = self._client.hget(self._key("user", user_id, "docs"), method)
        return None if raw is None else dict(loads(raw))

    def get_user_raw(self, user_id: str, method: str) -> StoredDocument | None:
        key = self._key("user", user_id, "docs")
        with self._errors("get_user"):
            raw, version = self._client.hmget(key, [method, _version_field(method)])
        return None if raw is None else StoredDocument.read(raw, version)

    async def get_user_raw_async(self, user_id: str, method: str) -> StoredDocument | None:
        key = self._key("user", user_id, "docs")
        with self._errors("get_user"):
            reads = self._async_reads()
            raw, version = await reads.hmget(key, [method, _version_field(method)])
        return None if raw is None else StoredDocument.read(raw, version)

    def publish(self, snapshot: Mapping[str, Any]) -> int:
        doc = dumps(dict(snapshot))
        with self._errors("publish"), self._client.pipeline(transaction=True) as pipe:
            pipe.incr(self._key("version"))
            pipe.set(self._key("snapshot"), doc)
            version, _ = pipe.execute()
        return int(version)

    def snapshot(self) -> tuple[int, dict[str, Any] | None]:
        with self._errors("snapshot"), self._client.pipeline(transaction=True) as pipe:
            pipe.get(self._key("version"))
            pipe.get(self._key("snapshot"))
            version, raw = pipe.execute()
        if raw is None:
            return 0, None
        return int(version), dict(loads(raw))

    def version(self) -> int:
        with self._errors("version"):
            return int(self._client.get(self._key("version")) or 0)

    def secret(self) -> bytes:
        key = self._key("secret")
        with self._errors("secret"):
            value: Any = self._client.get(key)
            if value is None:
                with self._client.pipeline(transaction=True) as pipe:
                    pipe.set(key, secrets.token_bytes(32), nx=True)
                    pipe.get(key)
                    _, value = pipe.execute()
        return bytes(value)

    def _credentials(self, user_id: str) -> str:
        return self._key("user", user_id, "credentials")

    def token_generation(self, user_id: str) -> int:
        with self._errors("token_generation"):
            value = self._client.hget(self._credentials(user_id), "token_generation")
        return int(value or 0)

    async def token_generation_async(self, user_id: str) -> int:
        with self._errors("token_generation"):
            reads = self._async_reads()
            (value,) = await reads.hmget(self._credentials(user_id), ["token_generation"])
        return int(value or 0)

    def rotate_token(self, user_id: str) -> int:
        with self._errors("rotate_token"):
            return int(self._client.hincrby(self._credentials(user_id), "token_generation", 1))

    def _replace_share(self, what: str, user_id: str, digest: str | None) -> bool:
        """Set (``digest``) or drop (None) the share of ``user_id`` in one watched step;
        whether the user had one."""
        credentials = self._credentials(user_id)
        had: list[bool] = [False]

        def step(pipe: Any) -> None:
            old = pipe.hget(credentials, "share")
            had[0] = old is not None  # the last call is the one executed (retries)
            pipe.multi()
            if old is not None:
                pipe.delete(self._key("share", old.decode("ascii")))
            if digest is None:
                pipe.hdel(credentials, "share")
            else:
                pipe.set(self._key("share", digest), user_id)
                pipe.hset(credentials, "share", digest)

        with self._errors(what):
            self._client.transaction(step, credentials)
        return had[0]

    def put_share(self, user_id: str, digest: str) -> None:
        self._replace_share("put_share", user_id, digest)

    def drop_share(self, user_id: str) -> bool:
        return self._replace_share("drop_share", user_id, None)

    def share_owner(self, digest: str) -> str | None:
        with self._errors("share_owner"):
            owner: Any = self._client.get(self._key("share", digest))
        return None if owner is None else bytes(owner).decode("utf-8")

    def ping(self) -> None:
        with self._errors("ping"):
            self._client.ping()

    async def aclose(self) -> None:
        if self._async is not None and self._async[0] is asyncio.get_running_loop():
            client, self._async = self._async[1], None
            try:
                await client.aclose()
            except RedisError:
                logger.exception("closing the asynchronous Redis client for %s failed", self._where)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._async = None  # its connections close with their loop (see aclose)
            try:
                self._client.close()
            except RedisError:
                logger.exception("closing the Redis client for %s failed", self._where)
