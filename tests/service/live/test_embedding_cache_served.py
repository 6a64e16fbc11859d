"""The served predictor's embedding cache (``PLB_EMBEDDING_CACHE``): a repeated query is
looked up, recommend and the next battle share the cache, and 0 turns it off."""

from __future__ import annotations

from pathlib import Path

from features.embeddings.cache import CachedEmbedder
from tests.service.conftest import open_client, service_settings

QUERIES = ["How do I reverse a linked list in Rust?", "Write a short poem about autumn rain"]


def _embedder(client: object) -> object:
    predictor = client.app.state.engine.versions.served().predictor  # type: ignore[attr-defined]
    return predictor.profiler_.topic_model_.embedder_


def test_recommend_and_the_next_battle_share_one_cache(shared_fit: Path, tmp_path: Path) -> None:
    settings = service_settings(shared_fit, store_path=tmp_path / "s.sqlite", embedding_cache=50)
    with open_client(settings) as client:
        first = client.post("/v1/recommend", json={"queries": QUERIES})
        assert first.status_code == 200, first.text
        cache = _embedder(client)
        assert isinstance(cache, CachedEmbedder) and cache.max_items == 50
        found = cache.cache_info().hits
        again = client.post("/v1/recommend", json={"queries": QUERIES})
        assert again.json()["models"] == first.json()["models"]  # the same vectors
        assert cache.cache_info().hits >= found + len(QUERIES)
        hits = cache.cache_info().hits
        pair = client.post("/v1/next-battle", json={"queries": QUERIES})
        assert pair.status_code == 200, pair.text
        assert cache.cache_info().hits >= hits + len(QUERIES)


def test_no_cache_when_the_setting_is_zero(shared_fit: Path, tmp_path: Path) -> None:
    settings = service_settings(shared_fit, store_path=tmp_path / "s.sqlite", embedding_cache=0)
    with open_client(settings) as client:
        assert client.post("/v1/recommend", json={"queries": QUERIES}).status_code == 200
        assert not isinstance(_embedder(client), CachedEmbedder)


def test_a_repeated_recommend_answers_what_an_uncached_service_answers(
    shared_fit: Path, tmp_path: Path
) -> None:
    """Served from the caches (embeddings, style, topics and components by text), a
    repeated request's document is the one computed without any cache, key for key."""
    body = {"queries": [*QUERIES, "Explain p-values simply", QUERIES[0]]}
    uncached = service_settings(shared_fit, store_path=tmp_path / "a.sqlite", embedding_cache=0)
    with open_client(uncached) as client:
        expected = client.post("/v1/recommend", json=body)
        assert expected.status_code == 200, expected.text
        with_prompt = client.post("/v1/recommend", json={**body, "prompt": QUERIES[1]}).json()
    cached = service_settings(shared_fit, store_path=tmp_path / "b.sqlite", embedding_cache=50)
    with open_client(cached) as client:
        for _ in range(3):  # the first computes and keeps, the others look up
            assert client.post("/v1/recommend", json=body).json() == expected.json()
            prompt = client.post("/v1/recommend", json={**body, "prompt": QUERIES[1]})
            assert prompt.json() == with_prompt
        assert "explanation" in expected.json() and with_prompt["scope"] == "prompt"
