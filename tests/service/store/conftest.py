"""Fixtures of the store tests: store objects on one fresh backend, each store in turn."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from service.store.base import Store
from service.store.embedded import EmbeddedStore
from service.store.redis_store import RedisStore

Opener = Callable[[], Store]


@pytest.fixture(params=["embedded", "redis"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens more store objects on one fresh backend, as more processes would."""
    opened: list[Store] = []
    if request.param == "embedded":
        path = tmp_path / "store.sqlite3"

        def make() -> Store:
            opened.append(EmbeddedStore(path))
            return opened[-1]
    else:
        url = request.getfixturevalue("redis_url")
        namespace = f"test-{uuid.uuid4().hex[:8]}"

        def make() -> Store:
            opened.append(RedisStore(url, namespace=namespace))
            return opened[-1]

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> Store:
    """A store object on :func:`opener`'s backend."""
    return opener()
