"""A short soak (issue 7, item 5): the mixed load of ``bench/service/soak_load.py`` for 15 seconds.

A real ``plb serve`` on the embedded store, refitting in the background every 5 seconds
so that versions change under load, answers an open loop of reads, votes (new, and
batches sent again) and recommendations at 10 requests a second: every answer is 2xx,
every vote answer adds up, and the server logs no error. The ten-minute run, with its
memory and latency figures, is ``python -m bench.run soak``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.service.soak_load import run_load, soak_spec
from tests.service.conftest import ADMIN_KEY, INGEST_KEY, ServeProcess

pytestmark = pytest.mark.slow

DURATION_S = 15.0
RATE = 10.0


def test_mixed_load_meets_no_error_while_versions_change(shared_fit: Path, tmp_path: Path) -> None:
    env = {
        "PLB_INGEST_KEY": INGEST_KEY,
        "PLB_ADMIN_KEY": ADMIN_KEY,
        "PLB_REFIT_INTERVAL_S": "5",
        "PLB_RATE_LIMIT_PER_ADDRESS": "off",
        "PLB_RATE_LIMIT_PER_KEY": "off",
    }
    args = [str(shared_fit), "--store", str(tmp_path / "store.sqlite")]
    server = ServeProcess(args, tmp_path, tmp_path / "serve.log", env)
    try:
        server.wait_healthy()
        spec = soak_spec(
            server.url,
            shared_fit,
            admin_key=ADMIN_KEY,
            ingest_key=INGEST_KEY,
            duration_s=DURATION_S,
            rate=RATE,
            bucket_s=5.0,
        )
        result = run_load(spec)
    finally:
        server.stop()
    log = server.stderr()
    try:
        total = result["total"]
        assert total["requests"] == int(DURATION_S * RATE)
        assert total["errors"] == 0, total["statuses"]
        assert total["server_errors"] == 0
        assert result["inconsistent"] == 0, "an ingest answer did not add up"
        assert set(total["by_kind"]) == {
            "GET /v1/leaderboard",
            "GET /v1/leaderboard?method=elo",
            "GET /v1/users/{id}/leaderboard",
            "POST /v1/battles",
            "POST /v1/recommend",
        }
        assert max(total["versions"]) > 1, "no background refit was served under load"
        assert "Traceback" not in log and '"level": "error"' not in log
    except AssertionError:
        sys.stderr.write(f"\n----- plb serve's log (last 8000 characters) -----\n{log[-8000:]}\n")
        raise
