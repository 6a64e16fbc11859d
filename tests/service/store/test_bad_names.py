"""Model names that are not text (issue 31, item 4), on both stores.

Before issue 31 ``POST /v1/admin/models {"models": ["\\ud800x"]}`` stored the name, and
every ingest and ``?method=elo`` failed from then on, across refits and restarts. Now the
store refuses such a name before anything is written, and a store that holds one (left
by an older version) is repaired when the service starts: the name is dropped from the
catalogue with a logged warning (docs/SPEC.md section 5).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from service.live.engine import Engine
from service.live.writes import drop_names_not_text
from service.pipeline.artifacts import load_fit
from service.store.base import Store
from tests.service.conftest import service_settings
from tests.service.store.conftest import Opener

BAD = "\ud800x"


def _poison(store: Store) -> None:
    """Store ``BAD`` in the catalogue as an older version did (no check on the way)."""

    def update(state: dict[str, float], battles: list[dict[str, Any]]) -> dict[str, float]:
        return {**state, BAD: 1000.0, "good-model": 1000.0}

    store.ingest([], update)
    assert BAD in store.models()


def test_a_name_that_is_not_text_is_refused_and_nothing_is_stored(store: Store) -> None:
    store.register_models(["before"])
    with pytest.raises(ValueError, match=r"models\[1\].*surrogate"):
        store.register_models(["fine", BAD])
    assert store.models() == frozenset({"before"})


def test_a_stored_name_that_is_not_text_is_dropped_with_a_warning(
    opener: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    _poison(opener())
    store = opener()  # a restart: another store object on the same backend
    with caplog.at_level(logging.WARNING, logger="service.live.writes"):
        assert drop_names_not_text(store) == [BAD]
    assert store.models() == frozenset({"good-model"})
    [record] = [r for r in caplog.records if "not valid Unicode text" in r.getMessage()]
    assert repr(store) in record.getMessage() and "'\\ud800x'" in record.getMessage()
    json.dumps(store.elo(), ensure_ascii=False).encode("utf-8")  # every name encodable
    assert drop_names_not_text(store) == []  # repaired once, for good


def test_a_service_starts_on_a_poisoned_store_and_ingests(opener: Opener, shared_fit: Path) -> None:
    _poison(opener())
    store = opener()
    settings = service_settings(shared_fit, store_path=Path("unused.sqlite"))
    engine = Engine(store, load_fit(shared_fit), settings)
    assert BAD not in engine.writes.catalogue()
    board = engine.reads.leaderboard("elo")
    json.dumps(board, ensure_ascii=False).encode("utf-8")
    models = sorted(engine.writes.catalogue() - {"good-model"})[:2]
    vote = {"model_a": models[0], "model_b": models[1], "winner": "tie", "battle_id": "p-1"}
    result = engine.writes.ingest([vote])
    assert (result.accepted, result.rejected) == (1, [])
