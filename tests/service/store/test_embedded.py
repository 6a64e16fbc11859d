"""The SQLite store: persistence across reopen and crash, sharing a file, refusing foreign files."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from service.store import embedded, open_store
from service.store.base import StoreUnavailable
from service.store.documents import StoredDocument
from service.store.embedded import APPLICATION_ID, SCHEMA_VERSION, EmbeddedStore
from tests.service.store.test_store_contract import battle, count_elo, ids

REPO = Path(__file__).resolve().parents[3]


def start_child(script: str, path: Path) -> subprocess.Popen[str]:
    """Run ``script`` in a fresh Python on the store file ``path``, its output piped."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-c", script, str(path)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_everything_survives_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    with EmbeddedStore(path) as store:
        assert store.init_elo({"alpha": 1000.0})
        store.ingest([battle(1, "u1"), battle(2, "u2"), battle(3, "u1")], count_elo)
        store.put_user("u1", "bt", {"n": 2})
        assert store.publish({"board": ["alpha"]}) == 1
        secret = store.secret()
    with EmbeddedStore(path) as store:
        assert store.battles() == [battle(1, "u1"), battle(2, "u2"), battle(3, "u1")]
        assert ids(store.battles("u1")) == ["b1", "b3"]
        assert store.elo() == {"alpha": 1000.0, "n": 3.0}
        assert store.get_user("u1", "bt") == {"n": 2}
        assert store.snapshot() == (1, {"board": ["alpha"]})
        assert store.secret() == secret
        got = store.ingest([battle(2, "u2"), battle(4, "u2")], count_elo)
        assert got.accepted == (1,) and got.new_users == ()


def test_the_file_is_in_wal_mode_with_our_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    EmbeddedStore(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def test_two_objects_on_one_file_share_writes_and_never_double_an_id(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    with EmbeddedStore(path) as one, EmbeddedStore(path) as two:
        one.ingest([battle(1, "u1"), battle(2)], count_elo)
        assert two.battles() == [battle(1, "u1"), battle(2)]
        got = two.ingest([battle(2), battle(3, "u1"), battle(4, "u2")], count_elo)
        assert got.accepted == (1, 2) and got.new_users == ("u2",)
        got = one.ingest([battle(i) for i in range(1, 6)], count_elo)
        assert got.accepted == (4,) and got.duplicates == 4
        assert ids(two.battles()) == ["b1", "b2", "b3", "b4", "b5"]
        assert one.elo() == two.elo() == {"n": 5.0}
        assert one.publish({"v": 1}) == 1 and two.publish({"v": 2}) == 2
        assert one.snapshot() == (2, {"v": 2})


def test_a_user_document_read_again_follows_every_write_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    with EmbeddedStore(path) as one, EmbeddedStore(path) as two:
        assert one.get_user_raw("u1", "bt") is None  # kept in memory as missing
        one.put_user("u1", "bt", {"n": 1, "version": 1})  # this object's own write
        assert one.get_user_raw("u1", "bt") == StoredDocument(b'{"n":1,"version":1}', 1)
        two.put_user("u1", "bt", {"n": 2, "version": 2})  # another connection's
        assert one.get_user_raw("u1", "bt") == StoredDocument(b'{"n":2,"version":2}', 2)
        with sqlite3.connect(path) as other:  # not a store at all
            other.execute("UPDATE user_docs SET doc = '{\"n\":3}', version = 3")
        assert one.get_user_raw("u1", "bt") == StoredDocument(b'{"n":3}', 3)
        assert two.get_user_raw("u1", "bt") == one.get_user_raw("u1", "bt")


def test_the_user_documents_kept_in_memory_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "RAW_CACHE_SIZE", 2)
    with EmbeddedStore(tmp_path / "store.sqlite3") as store:
        for user in ("u1", "u2", "u3"):
            store.put_user(user, "bt", {"user": user, "version": 1})
        for _ in range(2):
            for user in ("u1", "u2", "u3"):
                raw = store.get_user_raw(user, "bt")
                assert raw is not None and raw.body == f'{{"user":"{user}","version":1}}'.encode()
        assert len(store._raw) == 2


def test_parent_directories_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "store.sqlite3"
    with open_store(path=path) as store:
        assert isinstance(store, EmbeddedStore)
        store.ping()
    assert path.exists()


def test_open_store_refuses_a_bad_combination(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="neither"):
        open_store()
    with pytest.raises(ValueError, match="not both"):
        open_store(redis_url="redis://127.0.0.1:1/0", path=tmp_path / "s.sqlite3")
    with pytest.raises(ValueError, match="redis_url"):
        open_store(redis_url="")


def test_a_garbage_file_is_refused_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(StoreUnavailable, match="not a SQLite database") as caught:
        EmbeddedStore(path)
    assert str(path) in str(caught.value)


def test_a_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreUnavailable, match="something else") as caught:
        EmbeddedStore(path)
    assert str(path) in str(caught.value)


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    EmbeddedStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreUnavailable, match=f"schema version {SCHEMA_VERSION + 1}"):
        EmbeddedStore(path)


def test_a_directory_is_refused_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as caught:
        EmbeddedStore(tmp_path)
    assert str(tmp_path) in str(caught.value)


CHILD = """
import sys
from service.store.embedded import EmbeddedStore

def count(state, accepted):
    return {"n": state.get("n", 0) + len(accepted)}

store = EmbeddedStore(sys.argv[1])
for i in range(100000):
    store.ingest(
        [{"battle_id": f"c{i}-{j}", "user_id": f"u{j % 3}", "winner": "tie"} for j in range(5)],
        count,
    )
    sys.stdout.write(f"{i}\\n")
    sys.stdout.flush()
"""


def test_a_process_killed_mid_ingest_loses_no_acknowledged_battle(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    child = start_child(CHILD, path)
    acknowledged: list[int] = []
    try:
        assert child.stdout is not None
        deadline = time.monotonic() + 30
        while len(acknowledged) < 40 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            acknowledged.append(int(line))
        time.sleep(0.003)  # land the kill somewhere inside a later ingest
    finally:
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate(timeout=10)
    assert len(acknowledged) >= 40, f"the child stopped early: {err[-2000:]}"
    acknowledged += [int(line) for line in out.split()]
    assert child.returncode == -signal.SIGKILL

    with EmbeddedStore(path) as store:
        stored = ids(store.battles())
        assert len(stored) == len(set(stored)) == store.n_battles()
        assert len(stored) % 5 == 0  # whole batches only
        batches = {int(b[1:].split("-")[0]) for b in stored}
        assert set(acknowledged) <= batches
        assert batches == set(range(len(batches)))  # at most one batch beyond the last ack
        assert len(batches) - 1 <= max(acknowledged) + 1
        assert store.elo() == {"n": float(len(stored))}
        users: dict[str, Any] = {u: ids(store.battles(u)) for u in ("u0", "u1", "u2")}
        assert sum(len(v) for v in users.values()) == len(stored)
        got = store.ingest([{"battle_id": "c0-0"}, {"battle_id": "after"}], count_elo)
        assert got.accepted == (1,)


HELD_CHILD = """
import sys
import time

from service.store.embedded import EmbeddedStore

def count(state, accepted):
    return {"n": state.get("n", 0) + len(accepted)}

class HeldBeforeCommit:
    # The store's connection, except that COMMIT of the held transaction never comes.
    def __init__(self, conn):
        self._conn = conn
        self.hold = False

    def execute(self, sql, *args):
        if self.hold and sql == "COMMIT":
            sys.stdout.write("held\\n")
            sys.stdout.flush()
            time.sleep(3600)
        return self._conn.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._conn, name)

store = EmbeddedStore(sys.argv[1])
for i in range(20):
    store.ingest([{"battle_id": f"ok{i}-{j}", "user_id": f"u{j}"} for j in range(5)], count)
store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the WAL is empty now
store._conn.execute("PRAGMA cache_size=8")  # a big transaction spills pages into the WAL
store._conn = held = HeldBeforeCommit(store._conn)
held.hold = True
pad = "x" * 400
big = [{"battle_id": f"big-{j}", "user_id": f"v{j % 50}", "pad": pad} for j in range(3000)]
store.ingest(big, count)
"""


def test_a_process_killed_inside_a_write_transaction_leaves_no_trace_of_it(
    tmp_path: Path,
) -> None:
    """SIGKILL while a large ingest's pages are in the WAL but its COMMIT is not."""
    path = tmp_path / "store.sqlite3"
    wal = Path(f"{path}-wal")
    child = start_child(HELD_CHILD, path)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # blocks until the transaction is held open
        spilled = wal.stat().st_size if wal.exists() else 0
    finally:
        child.send_signal(signal.SIGKILL)
        _, err = child.communicate(timeout=10)
    assert line == "held\n", f"the child did not reach the held COMMIT: {err[-2000:]}"
    assert child.returncode == -signal.SIGKILL
    # the uncommitted transaction's pages had reached the file when the process died
    assert spilled > 100_000, f"only {spilled} bytes in the WAL: nothing spilled"

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    with EmbeddedStore(path) as store:
        stored = ids(store.battles())
        assert stored == [f"ok{i}-{j}" for i in range(20) for j in range(5)]
        assert store.n_battles() == 100
        assert store.elo() == {"n": 100.0}
        assert ids(store.battles("v0")) == []
        big = [{"battle_id": f"big-{j}", "user_id": f"v{j % 50}"} for j in range(3000)]
        got = store.ingest(big, count_elo)  # nothing of it was kept: all new now
        assert len(got.accepted) == 3000 and got.duplicates == 0
        assert len(got.new_users) == 50
        assert store.elo() == {"n": 3100.0}
