"""``service.live.engine``: an engine restarted on its embedded store, and new versions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from service.live.engine import Engine
from service.live.settings import Settings
from service.pipeline import FitConfig
from service.pipeline.artifacts import load_fit
from service.store import open_store


def engine(fit_dir: Path, store_path: Path) -> Engine:
    settings = Settings(fit_dir=fit_dir, store_path=store_path, redis_url=None, refit_interval_s=0)
    return Engine(open_store(path=store_path), load_fit(fit_dir), settings)


def state(served: Engine, user: str) -> dict[str, Any]:
    return {
        "version": served.versions.served().version,
        "battles": served.store.battles(),
        "user": served.user_leaderboard(user),
        "user_elo": served.user_leaderboard(user, "elo"),
        "elo": served.reads.leaderboard("elo"),
        "bt": served.reads.leaderboard("bt"),
        "token": served.credentials.token(user),
    }


def test_engine_restart_keeps_everything(shared_fit_no_features: Path, tmp_path: Path) -> None:
    store_path = tmp_path / "store.sqlite"
    first = engine(shared_fit_no_features, store_path)
    try:
        votes = [
            {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a", "user_id": "r"},
            {"model_a": "sage-1.2", "model_b": "pico-3b", "winner": "tie", "user_id": "r"},
            {"model_a": "sage-1.2", "model_b": "lyra-mini", "winner": "model_b"},
        ]
        result = first.writes.ingest(votes)
        assert result.accepted == 3 and set(result.tokens) == {"r"}
        before = state(first, "r")
    finally:
        first.close()
    assert before["version"] == 1 and len(before["battles"]) == 3

    second = engine(shared_fit_no_features, store_path)
    try:
        after = state(second, "r")
        assert after == before  # same battles, user documents, Elo, version and token
        again = second.writes.ingest(before["battles"])  # their ids were stored: all duplicates
        assert (again.accepted, again.duplicates) == (0, 3)
    finally:
        second.close()


def test_a_new_fit_is_published_as_a_new_version(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    store_path = tmp_path / "store.sqlite"
    first = engine(shared_fit_no_features, store_path)
    try:
        first.writes.ingest([{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a"}])
        elo = first.store.elo()
    finally:
        first.close()

    refitted = tmp_path / "fit"
    shutil.copytree(shared_fit_no_features, refitted)
    manifest = json.loads((refitted / "manifest.json").read_text(encoding="utf-8"))
    manifest["created"] = "2001-01-01T00:00:00+00:00"
    (refitted / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    second = engine(refitted, store_path)
    try:
        served = second.versions.served()
        assert served.version == 2
        assert served.snapshot.fit_created == "2001-01-01T00:00:00+00:00"
        assert second.store.elo() == elo  # the live Elo state is kept, not reset
        assert second.reads.leaderboard("bt")["version"] == 2
    finally:
        second.close()


def test_the_refit_predictor_is_built_from_the_fits_recorded_configuration(
    shared_fit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import service.live.refits

    built: list[FitConfig] = []

    class Fitted:
        def save(self, path: Path) -> Path:
            return path

    class Features:
        predictor = Fitted()
        shelves = ()

    def fit(battles: Any, models: tuple[str, ...], config: FitConfig, *, earlier: Any) -> Any:
        assert len(battles) and models and earlier.predictor is not None
        built.append(config)
        return Features()

    monkeypatch.setattr(service.live.refits, "fit_query_features", fit)
    served = engine(shared_fit, tmp_path / "store.sqlite")
    try:
        saved = served.refits.refit_predictor(
            served.history.all_battles(), served.versions.served()
        )
    finally:
        served.close()
    assert saved is not None and Path(saved).name.startswith("predictor-")
    assert built == [load_fit(shared_fit).config] and built[0].n_topics == 4
