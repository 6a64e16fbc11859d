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
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
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

EXAMPLES = int(os.environ.get("PLB_FUZZ_EXAMPLES", "25"))
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


@pytest.fixture(scope="module")
def api_schema(shared_fit: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The app's OpenAPI schema, loaded from the running app (schemathesis starts it)."""
    store = tmp_path_factory.mktemp("fuzz") / "store.sqlite"
    app = create_app(service_settings(shared_fit, store_path=store))
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
