"""Request guards: body size limits (413) and rate limits (429), before any route runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.guards import parse_rates
from tests.service.conftest import INGEST_KEY, assert_error, bearer, open_client, service_settings


def test_parse_rates() -> None:
    assert [str(r) for r in parse_rates("5/second;100/minute")] == [
        "5 per 1 second",
        "100 per 1 minute",
    ]
    assert parse_rates("off") == parse_rates("") == parse_rates(None) == []
    with pytest.raises(ValueError):
        parse_rates("lots")


def test_a_body_over_the_limit_is_413_and_nothing_is_stored(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    settings = service_settings(
        shared_fit_no_features, store_path=tmp_path / "s.sqlite", max_body_bytes=4096
    )
    battle = {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "tie", "user_id": "big"}
    with open_client(settings) as client:
        before = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        body = {"battles": [battle] * 200}  # about 14 kB
        response = client.post("/v1/battles", json=body, headers=bearer(INGEST_KEY))
        assert_error(response, 413, "4,096 bytes")

        def chunks():  # no Content-Length: the limit is enforced while the body streams
            yield b'{"battles": ['
            for _ in range(100):
                yield b'{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "tie"},'
            yield b"{}]}"

        headers = {**bearer(INGEST_KEY), "content-type": "application/json"}
        response = client.post("/v1/battles", content=chunks(), headers=headers)
        assert_error(response, 413, "bytes")
        after = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        assert after["n_battles"] == before["n_battles"]


def test_a_garbled_content_length_is_400(shared_fit_no_features: Path, tmp_path: Path) -> None:
    settings = service_settings(shared_fit_no_features, store_path=tmp_path / "s.sqlite")
    with open_client(settings) as client:
        headers = {
            **bearer(INGEST_KEY),
            "content-length": "lots",
            "content-type": "application/json",
        }
        response = client.post("/v1/battles", content=b"{}", headers=headers)
        assert_error(response, 400, "Content-Length")


def test_rate_limit_per_address(shared_fit_no_features: Path, tmp_path: Path) -> None:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        rate_limit_per_address="5/minute",
    )
    with open_client(settings) as client:
        codes = [client.get("/v1/models").status_code for _ in range(7)]
        assert codes == [200] * 5 + [429] * 2
        response = client.get("/v1/leaderboard")
        assert_error(response, 429, "too many requests")
        assert int(response.headers["retry-after"]) >= 1
        assert client.get("/healthz").status_code == 200  # health checks are never limited
        metrics = client.get("/healthz")
        assert metrics.status_code == 200


def test_rate_limit_per_key_counts_each_key_apart(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        rate_limit_per_key="3/minute",
    )
    with open_client(settings) as client:
        one, two = bearer("a-token-of-some-user"), bearer("another-token-entirely")
        codes = [client.get("/v1/models", headers=one).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        assert client.get("/v1/models", headers=two).status_code == 200
        assert client.get("/v1/models").status_code == 200  # no key: the address limit only
