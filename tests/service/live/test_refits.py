"""``service.live.refits``: the predictor's refit embeds only prompts it has not seen."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from service.live.engine import Engine
from service.live.settings import Settings
from service.pipeline.artifacts import load_fit
from service.store import open_store

NEW_PROMPT = "Plan a three-day walking tour of Lisbon for someone who hates hills."


def test_the_predictor_refit_embeds_only_new_prompts(
    shared_fit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import features.embeddings.base
    from features.predictor import RatingPredictor

    embedded: list[str] = []
    original = features.embeddings.base.embed

    def counting(embedder: Any, documents: Sequence[str], progress: Any = None) -> Any:
        embedded.extend(documents)
        return original(embedder, documents, progress)

    monkeypatch.setattr(features.embeddings.base, "embed", counting)
    settings = Settings(
        fit_dir=shared_fit, store_path=tmp_path / "store.sqlite", redis_url=None, refit_interval_s=0
    )
    engine = Engine(open_store(path=tmp_path / "store.sqlite"), load_fit(shared_fit), settings)
    embedded.clear()  # the engine's warm-up of the predictor served
    try:
        served = engine.versions.served()
        battles = engine.history.all_battles()
        first = engine.refits.refit_predictor(battles, served)
        assert embedded == []  # every prompt's vector was kept by the fit
        new = battles.iloc[:3].assign(prompt=NEW_PROMPT, user_id="newcomer")
        more = pd.concat([battles, new], ignore_index=True)
        second = engine.refits.refit_predictor(more, served)
        assert embedded == [NEW_PROMPT]
    finally:
        engine.close()
    assert first is not None and second is not None
    refitted = RatingPredictor.load(second)
    prediction = refitted.predict_queries([NEW_PROMPT])
    assert prediction.models == tuple(sorted(served.models))
