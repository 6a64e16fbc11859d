"""``service.live.versions`` and the :class:`Snapshot` it serves: documents round-trip."""

from __future__ import annotations

import json
from pathlib import Path

from service.live.engine import Engine
from service.live.settings import Settings
from service.pipeline.artifacts import load_fit
from service.pipeline.snapshot import Snapshot, refit_snapshot, snapshot_from_fit
from service.store import open_store
from tests.service.live.test_served import SNAPSHOT


def encoded(document: object) -> str:
    return json.dumps(document, separators=(",", ":"))


def test_a_minimal_document_round_trips() -> None:
    snapshot = Snapshot.from_dict(SNAPSHOT)
    assert snapshot.models == ("a", "b") and snapshot.counted_battles == 10
    assert snapshot.to_dict() == SNAPSHOT


def test_the_published_documents_round_trip_unchanged(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    store_path = tmp_path / "store.sqlite"
    settings = Settings(
        fit_dir=shared_fit_no_features, store_path=store_path, redis_url=None, refit_interval_s=0
    )
    engine = Engine(open_store(path=store_path), load_fit(shared_fit_no_features), settings)
    try:
        documents = [engine.store.snapshot()[1]]
        engine.writes.ingest([{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a"}])
        engine.refits.refit()
        documents.append(engine.store.snapshot()[1])
        assert engine.versions.served().snapshot.counted_battles == 1
        fitted = snapshot_from_fit(load_fit(shared_fit_no_features))
        documents += [fitted, refit_snapshot(engine.history.all_battles(), fitted, rng=0)]
    finally:
        engine.close()
    for document in documents:
        assert document is not None
        again = Snapshot.from_dict(document).to_dict()
        assert encoded(again) == encoded(document)  # same keys, order and values
    assert "store_battles" not in documents[0] and documents[1]["store_battles"] == 1
