"""The default store: SQLite in one local file, in WAL mode; a restart loses nothing.

Durability and concurrency
--------------------------
The file runs with ``journal_mode=WAL`` and ``synchronous=FULL``: an ingest that has
returned is on disk and survives a crash of the process or of the machine. Every write is
one ``BEGIN IMMEDIATE`` transaction, which takes the file's write lock before it reads, so
the read-check-write of :meth:`EmbeddedStore.ingest` is atomic against other threads and
against other processes that open the same file (they wait up to ``busy_timeout`` seconds
for the lock). Within one process, one connection is shared under a lock, so a store object
can be used from the many threads of a FastAPI pool.

Schema (``PRAGMA application_id`` marks the file as ours, ``PRAGMA user_version`` holds
:data:`SCHEMA_VERSION`)::

    battles   (seq INTEGER PRIMARY KEY, battle_id TEXT UNIQUE, user_id TEXT, doc TEXT)
    users     (user_id TEXT PRIMARY KEY)
    kv        (key TEXT PRIMARY KEY, value)      -- 'elo', 'snapshot', 'version', 'secret'
    user_docs (user_id, method, doc, version INTEGER, PRIMARY KEY (user_id, method))
    credentials (user_id TEXT PRIMARY KEY, token_generation INTEGER, share_digest TEXT UNIQUE)

A user's ``doc`` is the text the service answers (:func:`~service.store.documents.encode_document`)
and ``version`` the version it is stamped with, written in the same statement, so that
:meth:`EmbeddedStore.get_user_raw` hands both over without parsing any JSON. It keeps
the last :data:`RAW_CACHE_SIZE` documents it read in memory while the file is unchanged:
``PRAGMA data_version`` tells it when another connection (another process) has committed,
and every write of its own connection empties it, so an answer is never older than
what a read of the file would give. A file of
schema version 1 (no ``version`` column) is migrated when opened: the column is added and
filled from the documents (``json_extract``), in one transaction. The ``credentials``
table (issue 31: read tokens rotated, share ids) is created when missing, on any schema
version: a file that lacks it holds no credential, and an older version of this code
reads a file that has it (it never looks at it).
"""

from __future__ import annotations

import logging
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from service.store.base import EloUpdate, Ingested, Store, StoreUnavailable
from service.store.documents import StoredDocument, dumps, loads, user_document_text
from service.store.ingest_plan import checked_elo, plan_ingest, prepare_batch

__all__ = ["APPLICATION_ID", "RAW_CACHE_SIZE", "SCHEMA_VERSION", "EmbeddedStore"]

logger = logging.getLogger(__name__)

APPLICATION_ID = 0x504C4231  # "PLB1": marks a SQLite file as a personal-leaderboard store
SCHEMA_VERSION = 2
_CHUNK = 500  # bound parameters per IN (...) query
#: User documents :meth:`EmbeddedStore.get_user_raw` keeps in memory (the oldest read
#: dropped first): a few KB each.
RAW_CACHE_SIZE = 4096

_SCHEMA = """
CREATE TABLE battles (
    seq INTEGER PRIMARY KEY,
    battle_id TEXT NOT NULL UNIQUE,
    user_id TEXT,
    doc TEXT NOT NULL
);
CREATE INDEX battles_user ON battles (user_id, seq);
CREATE TABLE users (user_id TEXT PRIMARY KEY);
CREATE TABLE kv (key TEXT PRIMARY KEY, value);
CREATE TABLE user_docs (
    user_id TEXT NOT NULL,
    method TEXT NOT NULL,
    doc TEXT NOT NULL,
    version INTEGER,
    PRIMARY KEY (user_id, method)
);
"""
#: Made on opening when missing (see the module's docstring): the users' credentials.
_CREDENTIALS = """
CREATE TABLE IF NOT EXISTS credentials (
    user_id TEXT PRIMARY KEY,
    token_generation INTEGER NOT NULL DEFAULT 0,
    share_digest TEXT UNIQUE
)
"""
_MIGRATIONS = {
    # 1 -> 2: each user document's version beside it
    1: (
        "ALTER TABLE user_docs ADD COLUMN version INTEGER",
        "UPDATE user_docs SET version = json_extract(doc, '$.version') "
        "WHERE json_type(doc, '$.version') = 'integer'",
    ),
}


class EmbeddedStore(Store):
    """A :class:`~service.store.base.Store` in one SQLite file.

    Parameters
    ----------
    path : str or os.PathLike
        The database file; created (with its parent directories) when absent.
    busy_timeout : float, default 5.0
        Seconds to wait for another process's write lock before giving up with
        :class:`~service.store.base.StoreUnavailable`.

    Raises
    ------
    StoreUnavailable
        When the file cannot be opened, is not a SQLite database, is a SQLite database of
        something else, or has a schema version this code does not read.
    """

    def __init__(self, path: str | os.PathLike[str], busy_timeout: float = 5.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # get_user_raw's documents, valid while the file's data_version is _raw_seen
        self._raw: dict[tuple[str, str], StoredDocument | None] = {}
        self._raw_seen: int | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._fail("open", exc) from exc
        with self._errors("open"):
            conn = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                self._setup(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        logger.debug("opened the embedded store at %s", self.path)

    def __repr__(self) -> str:
        return f"EmbeddedStore({str(self.path)!r})"

    # -- plumbing -------------------------------------------------------------------------

    def _fail(self, what: str, why: object) -> StoreUnavailable:
        return StoreUnavailable(f"SQLite store at {self.path} is unusable ({what}): {why}")

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._fail(what, exc) from exc

    def _setup(self, conn: sqlite3.Connection) -> None:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise self._fail("open", f"not a SQLite database ({exc})") from exc
        if str(mode).lower() != "wal":
            raise self._fail("open", f"cannot use WAL journal mode (got {mode!r})")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            app = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if app == 0 and version == 0:
                (n_objects,) = conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
                if n_objects:
                    raise self._fail(
                        "open", "a SQLite database of something else, not a leaderboard store"
                    )
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                logger.info("created the embedded store at %s", self.path)
            elif app != APPLICATION_ID:
                raise self._fail(
                    "open", f"a SQLite database of something else (application_id {app})"
                )
            elif version in _MIGRATIONS:
                for from_version in range(version, SCHEMA_VERSION):
                    for statement in _MIGRATIONS[from_version]:
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                logger.info(
                    "migrated the embedded store at %s from schema version %d to %d",
                    self.path,
                    version,
                    SCHEMA_VERSION,
                )
            elif version != SCHEMA_VERSION:
                raise self._fail(
                    "open", f"schema version {version}; this code reads {SCHEMA_VERSION}"
                )
            conn.execute(_CREDENTIALS)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _read(self, what: str) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors(what):
            if self._conn is None:
                raise self._fail(what, "the store is closed")
            yield self._conn

    @contextmanager
    def _write(self, what: str) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error."""
        with self._read(what) as conn:
            conn.execute("BEGIN IMMEDIATE")
            self._raw.clear()  # this connection's commits leave data_version as it is
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        logger.exception("rollback failed on %s", self.path)
                raise

    @staticmethod
    def _existing(conn: sqlite3.Connection, table: str, column: str, values: list[str]) -> set[str]:
        found: set[str] = set()
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT {column} FROM {table} WHERE {column} IN ({marks})", chunk
            ).fetchall()
            found.update(row[0] for row in rows)
        return found

    @staticmethod
    def _get(conn: sqlite3.Connection, key: str) -> Any:
        row = conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    # -- the interface --------------------------------------------------------------------

    def ingest(self, battles: Sequence[Mapping[str, Any]], update_elo: EloUpdate) -> Ingested:
        batch = prepare_batch(battles)
        with self._write("ingest") as conn:
            plan = plan_ingest(
                batch,
                self._existing(conn, "battles", "battle_id", [b.battle_id for b in batch]),
                lambda users: self._existing(conn, "users", "user_id", users),
                lambda: self._get(conn, "elo"),
                update_elo,
            )
            conn.executemany(
                "INSERT INTO battles (battle_id, user_id, doc) VALUES (?, ?, ?)",
                [(b.battle_id, b.user_id, b.doc) for b in plan.accepted],
            )
            users = [(u,) for u in plan.new_users]
            conn.executemany("INSERT INTO users (user_id) VALUES (?)", users)
            if plan.elo_changed:  # nothing new: the file stays as it was, byte for byte
                elo_doc = plan.elo_doc
                conn.execute("INSERT OR REPLACE INTO kv (key, value) VALUES ('elo', ?)", (elo_doc,))
        return plan.result()

    def battles(self, user_id: str | None = None) -> list[dict[str, Any]]:
        with self._read("battles") as conn:
            if user_id is None:
                rows = conn.execute("SELECT doc FROM battles ORDER BY seq").fetchall()
            else:
                rows = conn.execute(
                    "SELECT doc FROM battles WHERE user_id = ? ORDER BY seq", (user_id,)
                ).fetchall()
        return [loads(doc) for (doc,) in rows]

    def n_battles(self) -> int:
        with self._read("n_battles") as conn:
            (count,) = conn.execute("SELECT count(*) FROM battles").fetchone()
        return int(count)

    def elo(self) -> dict[str, float]:
        with self._read("elo") as conn:
            raw = self._get(conn, "elo")
        return {} if raw is None else dict(loads(raw))

    def init_elo(self, ratings: Mapping[str, float]) -> bool:
        doc = dumps(checked_elo(ratings))
        with self._write("init_elo") as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO kv (key, value) VALUES ('elo', ?)", (doc,))
            return cursor.rowcount == 1

    def put_user(self, user_id: str, method: str, document: Mapping[str, Any]) -> None:
        doc, version = user_document_text(document)
        with self._write("put_user") as conn:
            # an unchanged document is not rewritten: the file stays as it was, byte for byte
            conn.execute(
                "INSERT INTO user_docs (user_id, method, doc, version) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (user_id, method) DO UPDATE "
                "SET doc = excluded.doc, version = excluded.version "
                "WHERE doc != excluded.doc OR version IS NOT excluded.version",
                (user_id, method, doc, version),
            )

    def get_user(self, user_id: str, method: str) -> dict[str, Any] | None:
        with self._read("get_user") as conn:
            row = conn.execute(
                "SELECT doc FROM user_docs WHERE user_id = ? AND method = ?", (user_id, method)
            ).fetchone()
        return None if row is None else dict(loads(row[0]))

    def get_user_raw(self, user_id: str, method: str) -> StoredDocument | None:
        # _read spelt out: the service's most frequent read, on the event loop
        key = (user_id, method)
        with self._lock:
            if self._conn is None:
                raise self._fail("get_user", "the store is closed")
            try:
                seen = self._conn.execute("PRAGMA data_version").fetchone()[0]
                if seen != self._raw_seen:  # another connection has committed
                    self._raw.clear()
                    self._raw_seen = seen
                elif key in self._raw:
                    return self._raw[key]
                row = self._conn.execute(
                    "SELECT doc, version FROM user_docs WHERE user_id = ? AND method = ?",
                    key,
                ).fetchone()
            except sqlite3.Error as exc:
                raise self._fail("get_user", exc) from exc
            stored = None if row is None else StoredDocument.read(row[0], row[1])
            if len(self._raw) >= RAW_CACHE_SIZE:
                del self._raw[next(iter(self._raw))]
            self._raw[key] = stored
        return stored

    def publish(self, snapshot: Mapping[str, Any]) -> int:
        doc = dumps(dict(snapshot))
        with self._write("publish") as conn:
            version = int(self._get(conn, "version") or 0) + 1
            conn.executemany(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
                [("version", version), ("snapshot", doc)],
            )
        return version

    def snapshot(self) -> tuple[int, dict[str, Any] | None]:
        with self._read("snapshot") as conn:
            # one statement reads one consistent state of the file
            rows = dict(
                conn.execute(
                    "SELECT key, value FROM kv WHERE key IN ('version', 'snapshot')"
                ).fetchall()
            )
        if "snapshot" not in rows:
            return 0, None
        return int(rows["version"]), dict(loads(rows["snapshot"]))

    def version(self) -> int:
        with self._read("version") as conn:
            return int(self._get(conn, "version") or 0)

    def secret(self) -> bytes:
        with self._read("secret") as conn:
            value = self._get(conn, "secret")
        if value is None:
            with self._write("secret") as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO kv (key, value) VALUES ('secret', ?)",
                    (secrets.token_bytes(32),),
                )
                value = self._get(conn, "secret")
        return bytes(value)

    def token_generation(self, user_id: str) -> int:
        with self._read("token_generation") as conn:
            row = conn.execute(
                "SELECT token_generation FROM credentials WHERE user_id = ?", (user_id,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def rotate_token(self, user_id: str) -> int:
        with self._write("rotate_token") as conn:
            (generation,) = conn.execute(
                "INSERT INTO credentials (user_id, token_generation) VALUES (?, 1) "
                "ON CONFLICT (user_id) DO UPDATE SET token_generation = token_generation + 1 "
                "RETURNING token_generation",
                (user_id,),
            ).fetchone()
        return int(generation)

    def put_share(self, user_id: str, digest: str) -> None:
        with self._write("put_share") as conn:
            conn.execute(
                "INSERT INTO credentials (user_id, share_digest) VALUES (?, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET share_digest = excluded.share_digest",
                (user_id, digest),
            )

    def drop_share(self, user_id: str) -> bool:
        with self._write("drop_share") as conn:
            cursor = conn.execute(
                "UPDATE credentials SET share_digest = NULL "
                "WHERE user_id = ? AND share_digest IS NOT NULL",
                (user_id,),
            )
            return cursor.rowcount > 0

    def share_owner(self, digest: str) -> str | None:
        with self._read("share_owner") as conn:
            row = conn.execute(
                "SELECT user_id FROM credentials WHERE share_digest = ?", (digest,)
            ).fetchone()
        return None if row is None else str(row[0])

    def ping(self) -> None:
        with self._read("ping") as conn:
            conn.execute("SELECT count(*) FROM kv").fetchone()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                try:
                    conn.close()
                except sqlite3.Error:
                    logger.exception("closing %s failed", self.path)
