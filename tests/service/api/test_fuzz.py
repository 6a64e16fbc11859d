"""Fuzzing the REST API (docs/SPEC.md section 4) with schemathesis, from its own OpenAPI schema.

The app runs in-process (ASGI, its lifespan started by schemathesis) on the session's
shared fit and an embedded store. Every operation of ``/openapi.json`` gets generated
requests, valid and invalid (schemathesis's positive and negative modes), and every
answer must:

* not be a 5xx (a 5xx is always a bug);
* have a status code the schema documents (``responses=`` of each route:
  ``service.api.schemas.ERRORS``), the documented content type, and a body that matches
  the documented schema (errors are ``{"detail": ...}``);
* reject what the schema says is invalid with a 4xx (``negative_data_rejection``).

It runs twice: with the admin key, which every protected route accepts, so the real
handlers run (ingest, a user's leaderboard, tokens, refit); and without a credential,
over the protected operations only. ``PLB_FUZZ_EXAMPLES`` (default 25 an operation)
sets how many examples each operation gets; the run is derandomised, so CI sees the
same requests every time.

Issue 31 adds hostile values schemathesis does not make, on every operation and on both
stores (the embedded SQLite file and a real ``redis-server``): each generated request gets
one of :data:`HOSTILE_TEXT` (lone surrogates sent as JSON escapes, control characters,
100,000 characters) or :data:`HOSTILE_TOKENS` (``NaN``, the infinities, ``1e400``,
integers of 400 and 5,000 digits, 10,000 nested arrays, written raw into the JSON) in one
place: a value or a new field of the body (generated, or a valid body of the route, so
that the value gets past the schema to the handlers), a query or a path parameter. No
answer may be a 5xx. ``PLB_FUZZ_HOSTILE`` (default 4 an operation and store) sets how
many such requests each operation gets.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.python.asgi import shutdown_lifespans
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from service.api.app import create_app
from tests.service.conftest import ADMIN_KEY, bearer, service_settings

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("PLB_FUZZ_EXAMPLES", "6"))
HOSTILE_EXAMPLES = int(os.environ.get("PLB_FUZZ_HOSTILE", "4"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
#: The operations that need a credential.
PROTECTED = r"^/v1/(users|battles|admin)/?|^/widget/badge"
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module", params=["embedded", "redis"])
def api_schema(
    request: pytest.FixtureRequest, shared_fit: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The app's OpenAPI schema, loaded from the running app (schemathesis starts it), on
    an embedded store or a real ``redis-server``."""
    if request.param == "embedded":
        store: dict[str, Any] = {"store_path": tmp_path_factory.mktemp("fuzz") / "s.sqlite"}
    else:
        import redis

        server = request.getfixturevalue("redis_server")
        server.resume()
        server.start()
        with redis.Redis.from_url(server.url, socket_timeout=5) as keys:
            keys.flushall()
        store = {"redis_url": server.url}
    app = create_app(service_settings(shared_fit, **store))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=SchemathesisConfig(seed=0))
    try:
        yield schema
    finally:
        shutdown_lifespans()  # closes the engine and its store


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@FUZZ
def test_api_with_the_admin_key(case: Any) -> None:
    case.call_and_validate(headers=bearer(ADMIN_KEY), checks=CHECKS)


@schema.include(path_regex=PROTECTED).parametrize()
@FUZZ
def test_protected_api_without_a_key(case: Any) -> None:
    case.call_and_validate(checks=CHECKS)


# -- issue 31: hostile values in every place of every operation -------------------------------


class Raw(str):
    """JSON text written into a body as it is (``NaN``, ``1e400``, 5,000 digits, ``[[[...]]]``)."""


#: Strings that are not storable text (sent as JSON escapes: ``"\\ud800"``).
HOSTILE_TEXT = [
    "\ud800",
    "model-\udfff",
    "\udc00\ud800",
    "nul\x00byte",
    "\x1b[31mred",
    "\x85\x9f",
    "bell\x07",
    "\u202eevil",
    "x" * 100_000,
]
#: JSON number tokens (and nesting) written raw.
HOSTILE_TOKENS = [
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1" + "0" * 399),
    Raw("-" + "9" * 400),
    Raw("7" * 5000),
    Raw("[" * 10_000 + "]" * 10_000),
]
HOSTILE = st.sampled_from([*HOSTILE_TEXT, *HOSTILE_TOKENS])
#: Fields a hostile value is added as (battle records, labels, and names no schema has).
FIELDS = ["tstamp", "user_id", "battle_id", "prompt", "model_a", "winner", "topic", "\ud800"]
#: A valid body of each route with one, for the hostile value to reach the handler.
VOTE = {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a", "user_id": "fuzz"}
VALID_BODIES: dict[str, Any] = {
    "/v1/battles": {"battles": [VOTE]},
    "/v1/recommend": {"queries": ["How do I sort?"], "votes": [VOTE], "prompt": "Sort this"},
    "/v1/next-battle": {"queries": ["How do I sort?"], "votes": [VOTE]},
    "/v1/admin/models": {"models": ["fuzz-model"]},
}
#: (generated examples only: the schema's own cannot take the extra ``data`` argument)
FUZZ_HOSTILE = settings(FUZZ, max_examples=HOSTILE_EXAMPLES, phases=[Phase.generate])


def dumps(body: Any) -> bytes:
    """``body`` as JSON, lone surrogates escaped, each :class:`Raw` written as it is."""
    raws: list[str] = []

    def swap(value: Any) -> Any:
        if isinstance(value, Raw):
            raws.append(str(value))
            return f"\x00raw{len(raws) - 1}\x00"
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    text = json.dumps(swap(body), ensure_ascii=True)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00raw{i}\x00"), raw, 1)
    return text.encode()


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (itself included), depth first."""
    found: list[Any] = []
    if isinstance(value, dict | list):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            found += _containers(item)
    return found


def _in_url(value: str) -> str | bytes:
    """A hostile value as a query value: raw tokens as text, a lone surrogate as the bytes
    UTF-8 would give it (``%ED%A0%80``), long text cut to 8,000 characters."""
    if isinstance(value, Raw):
        return str(value)[:8_000]
    return value[:8_000].encode("utf-8", "surrogatepass")


def hostile_call(case: Any, data: st.DataObject) -> dict[str, Any]:
    """Put one hostile value into one place of ``case``; the keyword arguments of
    ``case.call`` that send it."""
    value = data.draw(HOSTILE, label="value")
    places = ["query", "new query"]
    if case.path_parameters:
        places.append("path")
    if case.operation.body:
        places += ["body", "valid body", "valid body"]
    place = data.draw(st.sampled_from(places), label="place")
    if place in ("query", "new query"):
        names = [p.name for p in case.operation.query] if place == "query" else []
        name = data.draw(st.sampled_from(names or ["where", "x\x00"]), label="name")
        return {"params": {name: _in_url(value)}}
    if place == "path":
        name = data.draw(st.sampled_from(sorted(case.path_parameters)), label="name")
        text = _in_url(value)
        case.path_parameters[name] = (
            text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        )
        return {}
    if place == "valid body":
        body = json.loads(json.dumps(VALID_BODIES.get(case.operation.path, {})))
    else:
        body = case.body if isinstance(case.body, dict | list) else {"value": case.body}
    target = data.draw(st.sampled_from(_containers(body) or [body]), label="container")
    if isinstance(target, dict):
        keys = [*target, *FIELDS]
        target[data.draw(st.sampled_from(keys), label="key")] = value
    elif target:
        target[data.draw(st.integers(0, len(target) - 1), label="index")] = value
    else:
        target.append(value)
    return {"data": dumps(body), "headers": {**bearer(ADMIN_KEY), **JSON}}


JSON = {"Content-Type": "application/json"}


@schema.parametrize()
@schema.given(data=st.data())
@FUZZ_HOSTILE
def test_hostile_values_are_never_a_5xx(case: Any, data: st.DataObject) -> None:
    kwargs = hostile_call(case, data)
    kwargs.setdefault("headers", bearer(ADMIN_KEY))
    response = case.call(**kwargs)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} answered {response.status_code}: "
        f"{response.text[:500]}"
    )
