"""A user's document as stored bytes, its version beside it, on both stores (issue 18).

The bytes are those ``JSONResponse(document)`` renders, for any text (non-ASCII ids and
names, control characters); the version is the one stamped in the document, read without
parsing it; documents stored the old way (``\\u`` escapes, no version beside them) read
back as the same bytes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from starlette.responses import JSONResponse

from service.store.base import Store, StoreUnavailable
from service.store.documents import StoredDocument, dumps, encode_document
from service.store.embedded import SCHEMA_VERSION, EmbeddedStore
from service.store.redis_store import RedisStore
from tests.service.store.conftest import Opener

DOCUMENTS: list[dict[str, Any]] = [
    {"user_id": "u1", "models": [{"model": "alpha", "rating": 1.5}], "version": 3},
    {"user_id": "zoë-日本", "models": [{"model": "modèle ✓", "rating": -0.1}], "version": 12},
    {"user_id": "tab\there", "note": 'quote " and \\ and \u2028', "version": 1},
    {"user_id": "no-version", "n": 2},
]


def rendered(document: dict[str, Any]) -> bytes:
    return bytes(JSONResponse(document).body)


@pytest.mark.parametrize("document", DOCUMENTS, ids=["ascii", "unicode", "escapes", "unversioned"])
def test_stored_bytes_are_the_response_bytes(store: Store, document: dict[str, Any]) -> None:
    assert encode_document(document) == rendered(document)
    store.put_user("u1", "bt", document)
    raw = store.get_user_raw("u1", "bt")
    assert raw is not None
    assert raw.body == rendered(document)
    assert raw.version == document.get("version")
    assert asyncio.run(store.get_user_raw_async("u1", "bt")) == raw
    assert store.get_user("u1", "bt") == document


def test_the_version_follows_each_new_document(store: Store) -> None:
    store.put_user("u1", "bt", {"n": 1, "version": 1})
    store.put_user("u1", "elo", {"n": 9, "version": 1})
    store.put_user("u1", "bt", {"n": 1, "version": 2})
    assert store.get_user_raw("u1", "bt") == StoredDocument(b'{"n":1,"version":2}', 2)
    store.put_user("u1", "bt", {"n": 3})  # a document without a version drops the old one
    assert store.get_user_raw("u1", "bt") == StoredDocument(b'{"n":3}', None)
    assert store.get_user_raw("u1", "elo") == StoredDocument(b'{"n":9,"version":1}', 1)
    assert store.get_user_raw("u2", "bt") is None
    assert asyncio.run(store.get_user_raw_async("u2", "bt")) is None


def test_a_method_named_like_the_version_field_keeps_its_own_document(store: Store) -> None:
    store.put_user("u1", "bt", {"n": 1, "version": 4})
    store.put_user("u1", "version:bt", {"n": 2, "version": 5})
    assert store.get_user_raw("u1", "bt") == StoredDocument(b'{"n":1,"version":4}', 4)
    assert store.get_user_raw("u1", "version:bt") == StoredDocument(b'{"n":2,"version":5}', 5)


def test_a_document_stored_escaped_reads_back_as_the_response_bytes() -> None:
    document = DOCUMENTS[1]
    escaped = dumps(document)
    assert "\\u" in escaped and escaped.encode() != rendered(document)
    assert StoredDocument.read(escaped, None) == StoredDocument(rendered(document), 12)
    assert StoredDocument.read(escaped.encode(), b"12") == StoredDocument(rendered(document), 12)


def test_a_schema_1_file_is_migrated_with_its_documents_versions(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    EmbeddedStore(path).close()
    conn = sqlite3.connect(path)  # the file as schema version 1 left it
    conn.execute("DROP TABLE user_docs")
    conn.execute(
        "CREATE TABLE user_docs (user_id TEXT NOT NULL, method TEXT NOT NULL, "
        "doc TEXT NOT NULL, PRIMARY KEY (user_id, method))"
    )
    rows = [("u1", "bt", dumps(DOCUMENTS[1])), ("u2", "bt", dumps({"n": 2}))]
    conn.executemany("INSERT INTO user_docs VALUES (?, ?, ?)", rows)
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    with EmbeddedStore(path) as migrated:
        assert migrated.get_user_raw("u1", "bt") == StoredDocument(rendered(DOCUMENTS[1]), 12)
        assert migrated.get_user_raw("u2", "bt") == StoredDocument(b'{"n":2}', None)
        assert migrated.get_user("u1", "bt") == DOCUMENTS[1]
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        assert conn.execute("SELECT version FROM user_docs ORDER BY user_id").fetchall() == [
            (12,),
            (None,),
        ]
    finally:
        conn.close()


def test_a_redis_document_stored_without_its_version_reads_it_from_the_json(
    redis_url: str,
) -> None:
    namespace = f"test-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(redis_url)
    client.hset(f"{namespace}:user:u1:docs", "bt", dumps(DOCUMENTS[1]))  # as stored before
    with RedisStore(redis_url, namespace=namespace) as old:
        expected = StoredDocument(rendered(DOCUMENTS[1]), 12)
        assert old.get_user_raw("u1", "bt") == expected
        assert asyncio.run(old.get_user_raw_async("u1", "bt")) == expected
    client.close()


def test_the_async_redis_read_follows_the_running_loop_and_closes(redis_url: str) -> None:
    with RedisStore(redis_url, namespace=f"test-{uuid.uuid4().hex[:8]}") as shared:
        shared.put_user("u1", "bt", DOCUMENTS[0])

        async def read_then_close() -> StoredDocument | None:
            try:
                return await shared.get_user_raw_async("u1", "bt")
            finally:
                await shared.aclose()

        for _ in range(2):  # a new loop each time, as a test client may start
            assert asyncio.run(read_then_close()) == StoredDocument(rendered(DOCUMENTS[0]), 3)


def test_a_closed_store_refuses_the_raw_reads(opener: Opener) -> None:
    closed = opener()
    closed.put_user("u1", "bt", DOCUMENTS[0])
    closed.close()
    with pytest.raises(StoreUnavailable, match="closed"):
        closed.get_user_raw("u1", "bt")
    with pytest.raises(StoreUnavailable, match="closed"):
        asyncio.run(closed.get_user_raw_async("u1", "bt"))


def test_concurrent_redis_reads_go_together_each_with_its_own_answer(redis_url: str) -> None:
    namespace = f"test-{uuid.uuid4().hex[:8]}"
    with RedisStore(redis_url, namespace=namespace) as shared:
        for i in range(40):
            shared.put_user(f"u{i}", "bt", {"user_id": f"u{i}", "version": i})
        client = redis.Redis.from_url(redis_url)
        client.set(f"{namespace}:user:broken:docs", "not a hash")  # HMGET: WRONGTYPE
        client.close()

        async def read_all() -> list[Any]:
            reads = [shared.get_user_raw_async(f"u{i}", "bt") for i in range(40)]
            reads.insert(7, shared.get_user_raw_async("broken", "bt"))
            reads.insert(9, shared.get_user_raw_async("nobody", "bt"))
            try:
                answers = await asyncio.gather(*reads, return_exceptions=True)
                # the connection that carried the error reply serves the next read in step
                return [*answers, await shared.get_user_raw_async("u3", "bt")]
            finally:
                await shared.aclose()

        answers = asyncio.run(read_all())
    assert answers.pop() == StoredDocument(b'{"user_id":"u3","version":3}', 3)
    assert isinstance(answers[7], StoreUnavailable) and "WRONGTYPE" in str(answers[7])
    assert answers[9] is None
    del answers[9], answers[7]
    assert answers == [
        StoredDocument(f'{{"user_id":"u{i}","version":{i}}}'.encode(), i) for i in range(40)
    ]


def test_an_async_redis_read_on_a_dropped_connection_is_retried(redis_url: str) -> None:
    """The server closes the pooled connection between two reads (a restart, an idle
    timeout): the next read reconnects, as the client retries its commands."""
    with RedisStore(redis_url, namespace=f"test-{uuid.uuid4().hex[:8]}") as shared:
        shared.put_user("u1", "bt", DOCUMENTS[0])
        admin = redis.Redis.from_url(redis_url)

        async def read_drop_read() -> list[StoredDocument | None]:
            try:
                first = await shared.get_user_raw_async("u1", "bt")
                admin.client_kill_filter(_type="normal", skipme=True)  # ours among them
                return [first, await shared.get_user_raw_async("u1", "bt")]
            finally:
                await shared.aclose()

        try:
            assert asyncio.run(read_drop_read()) == [StoredDocument(rendered(DOCUMENTS[0]), 3)] * 2
        finally:
            admin.close()
