"""The budget of text a request without a credential may have embedded (issue 31, item 5).

Before: one anonymous recommend of 200 queries of 20,000 characters cost 4.5 s of CPU,
and 20 at once took 37 s each. Now it is refused before any embedding, naming the field
and the limit; and one address may send only so many characters a minute.
"""

from __future__ import annotations

import time
from pathlib import Path

from service.api.budget import text_chars
from tests.service.conftest import ADMIN, assert_error, open_client, service_settings


def test_a_huge_anonymous_recommend_is_refused_at_once(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    settings = service_settings(shared_fit_no_features, store_path=tmp_path / "s.sqlite")
    body = {"queries": ["a" * 20_000] * 200}
    with open_client(settings) as client:
        started = time.monotonic()
        response = client.post("/v1/recommend", json=body)
        seconds = time.monotonic() - started
        detail = assert_error(response, 413, "queries", "4,000,000", "50,000")
        assert "PLB_ANONYMOUS_QUERY_CHARS" in detail
        assert seconds < 5.0  # refused before anything is embedded
        # the same through the next battle, which asks the recommendation
        assert_error(client.post("/v1/next-battle", json=body), 413, "queries")


def test_an_address_spends_its_budget_then_waits(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        anonymous_query_chars=1_000,
        anonymous_query_chars_per_address="2000/minute",
    )
    body = {"queries": ["b" * 800]}
    with open_client(settings) as client:
        for _ in range(2):  # 1,600 of 2,000: answered (or 404 without a predictor)
            assert client.post("/v1/recommend", json=body).status_code != 429
        refused = client.post("/v1/recommend", json=body)
        detail = assert_error(refused, 429, "queries", "2000 per 1 minute")
        assert "PLB_ANONYMOUS_QUERY_CHARS_PER_ADDRESS" in detail
        assert int(refused.headers["retry-after"]) >= 1
        # a key holder is not counted against the address
        assert client.post("/v1/recommend", json=body, headers=ADMIN).status_code != 429
        # over the per-request cap: 413 before the address's budget is asked
        assert_error(client.post("/v1/recommend", json={"queries": ["c" * 1_001]}), 413)


def test_text_chars_counts_queries_prompt_and_the_votes_prompts() -> None:
    votes: list[dict[str, object]] = [{"prompt": "abc"}, {"question": "de"}, {"prompt": 5}, {}]
    assert text_chars(["xy", "z"], "pq", votes) == 3 + 2 + 3 + 2
    assert text_chars(["xy"], None, None) == 2
