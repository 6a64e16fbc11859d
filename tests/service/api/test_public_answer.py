"""Where a fit learnt that queries tell nothing, recommend answers the public board itself.

The fit is a real ``plb fit`` whose saved predictor is given the weights a log like
LLMFAO's teaches (0: every voter judged the same prompts); everything else is served as
it is, through the API.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from features.predictor import RatingPredictor
from service.cli import main
from tests.service.conftest import open_client, service_settings

QUERIES = ["Write a haiku about autumn", "How do I reverse a list in Python?"]
ROW = ("model", "rating", "lower", "upper", "rank", "p_best", "rank_lower", "rank_upper")


def _with_weights(fit: Path, to: Path, person: float, prompt: float) -> Path:
    """A copy of ``fit`` whose predictor keeps ``person`` and ``prompt`` of what queries
    say."""
    shutil.copytree(fit, to)
    folder = to / "predictor"
    predictor = RatingPredictor.load(folder)
    predictor.evidence_ = dataclasses.replace(predictor.evidence_, person=person, prompt=prompt)
    shutil.rmtree(folder)
    predictor.save(folder)
    return to


@pytest.fixture
def public_client(shared_fit: Path, tmp_path: Path) -> Iterator[Any]:
    fit = _with_weights(shared_fit, tmp_path / "fit", 0.0, 0.0)
    with open_client(service_settings(fit, store_path=tmp_path / "s.sqlite")) as client:
        yield client


def test_recommend_is_the_public_board_row_for_row(public_client: Any) -> None:
    answer = public_client.post("/v1/recommend", json={"queries": QUERIES}).json()
    board = public_client.get("/v1/leaderboard").json()
    assert answer["source"] == "aggregate"
    assert answer["weights"] == {"queries": 0.0, "prompt": 0.0}
    shown = [{k: m[k] for k in ROW} for m in answer["models"]]
    assert shown == [{k: m[k] for k in ROW} for m in board["models"]]
    assert answer["spearman"] == 1.0
    assert "don't separate you" in answer["explanation"]["note"]


def test_a_prompt_with_weight_zero_gets_the_public_board_too(public_client: Any) -> None:
    body = {"queries": QUERIES, "prompt": "Explain black holes simply"}
    answer = public_client.post("/v1/recommend", json=body).json()
    assert answer["source"] == "aggregate" and answer["scope"] == "prompt"


def test_votes_make_it_personal(public_client: Any) -> None:
    board = public_client.get("/v1/leaderboard").json()["models"]
    best, worst = board[0]["model"], board[-1]["model"]
    votes = [{"model_a": best, "model_b": worst, "winner": "model_b"}] * 3
    answer = public_client.post("/v1/recommend", json={"queries": QUERIES, "votes": votes})
    assert answer.json()["source"] == "blended"


def test_plb_fit_reports_what_queries_are_worth(
    shared_fit: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = json.loads((shared_fit / "manifest.json").read_text(encoding="utf-8"))
    evidence = manifest["query_evidence"]
    assert 0.0 <= evidence["person"] <= 1.0 and 0.0 <= evidence["prompt"] <= 1.0
    assert evidence["n_users"] > 0 and evidence["n_votes"] > 0
    assert set(evidence["log_loss"]) == {
        "aggregate",
        "person_unweighted",
        "person",
        "prompt_unweighted",
        "prompt",
    }
    # the learnt weight is never worse than the aggregate on the votes it was chosen on
    assert evidence["log_loss"]["person"] <= evidence["log_loss"]["aggregate"] + 1e-9
    queries = shared_fit.parent / "queries.txt"
    queries.write_text("\n".join(QUERIES), encoding="utf-8")
    assert main(["recommend", str(shared_fit), "--queries", str(queries), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["weights"]["queries"] == pytest.approx(evidence["person"], abs=1e-3)


def test_plb_recommend_says_it_is_the_public_ranking(
    shared_fit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit = _with_weights(shared_fit, tmp_path / "fit", 0.0, 0.0)
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUERIES), encoding="utf-8")
    assert main(["recommend", str(fit), "--queries", str(queries)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("The public ranking: your 2 queries don't separate you")
    assert "intervals of the public ranking" in text
