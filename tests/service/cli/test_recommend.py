"""``plb recommend``: a ranking from queries (and votes), end to end on a real fit."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main
from service.cli.errors import UsageError
from service.cli.recommend import read_queries

QUERIES = [
    "How do I prove that the square root of two is irrational?",
    "Write a short poem about the sea at night",
    "Why does my Python loop raise IndexError: list index out of range?",
    "Explain photosynthesis to a ten year old",
]


@dataclass(frozen=True)
class Arena:
    battles: Path
    fit_dir: Path
    models: tuple[str, ...]
    frame: pd.DataFrame


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Arena:
    """A small simulated arena, fitted once (with a real sentence-embedding model)."""
    root = tmp_path_factory.mktemp("recommend")
    sim = simulate(60, 30, 6, rng=0)
    paths = write_simulation(sim, root / "sim")
    fit_dir = root / "fit"
    assert main(["fit", str(paths["battles"]), "--out", str(fit_dir)]) == 0
    return Arena(paths["battles"], fit_dir, sim.models, sim.battles)


@pytest.fixture
def queries_txt(tmp_path: Path) -> Path:
    path = tmp_path / "queries.txt"
    path.write_text("\n".join(QUERIES) + "\n\n", encoding="utf-8")
    return path


#: The odds every recommended row carries (docs/SPEC.md section 2).
ODDS = ("p_best", "rank_lower", "rank_upper")


def recommend_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["recommend", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def check_ranking(doc: dict, models: tuple[str, ...]) -> None:
    entries = doc["models"]
    assert sorted(m["model"] for m in entries) == sorted(models)
    ranks = [m["rank"] for m in entries]  # docs/SPEC.md section 2: overlapping intervals share
    assert ranks == sorted(ranks) and ranks[0] == 1
    for m in entries:
        above = sum(o["lower"] > m["upper"] for o in entries)
        assert m["rank"] == 1 + above
    ratings = [m["rating"] for m in entries]
    assert ratings == sorted(ratings, reverse=True)
    for m in entries:
        assert set(m) == {"model", "rating", "lower", "upper", "rank", *ODDS}
        assert m["lower"] <= m["rating"] <= m["upper"]
        assert 1 <= m["rank_lower"] <= m["rank_upper"] <= len(models)
    # the odds of the Gaussian each interval stands for: p_best sums to 1
    assert sum(m["p_best"] for m in entries) == pytest.approx(1.0, abs=1e-3)


def write_votes(path: Path, rows: pd.DataFrame) -> Path:
    rows.to_json(path, orient="records", lines=True)
    return path


# -- reading --queries ---------------------------------------------------------------------


def test_read_queries_text_and_json_lines(tmp_path: Path) -> None:
    text = tmp_path / "q.txt"
    text.write_text("  first query \n\n\t\nsecond query\n", encoding="utf-8")
    assert read_queries(str(text)) == ["first query", "second query"]

    records = "\n".join(json.dumps({"prompt": q, "n": i}) for i, q in enumerate(QUERIES))
    for name in ("q.jsonl", "q.txt"):  # by suffix, and by every line being a JSON object
        path = tmp_path / name
        path.write_text(records + "\n\n", encoding="utf-8")
        assert read_queries(str(path)) == QUERIES
    packed = tmp_path / "q.jsonl.gz"
    packed.write_bytes(gzip.compress(records.encode()))
    assert read_queries(str(packed)) == QUERIES

    mixed = tmp_path / "mixed.txt"  # one line is not JSON: plain text, one query a line
    mixed.write_text('{"prompt": "a"}\nplain words\n', encoding="utf-8")
    assert read_queries(str(mixed)) == ['{"prompt": "a"}', "plain words"]


def test_read_queries_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        read_queries(str(tmp_path / "absent.txt"))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(UsageError, match="not UTF-8"):
        read_queries(str(latin))
    not_json = tmp_path / "bad.jsonl"
    not_json.write_text('{"prompt": "a"}\nnot json\n', encoding="utf-8")
    with pytest.raises(UsageError, match="line 2 is not JSON"):
        read_queries(str(not_json))


# -- end to end ----------------------------------------------------------------------------


def test_text_queries_predict_a_ranking(
    arena: Arena, queries_txt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = recommend_json(capsys, str(arena.fit_dir), "--queries", str(queries_txt))
    assert doc["source"] == "predicted"
    assert doc["n_queries"] == len(QUERIES) and doc["n_votes"] == 0
    assert doc["prior_sd"] > 0
    check_ranking(doc, arena.models)


def test_json_lines_queries_predict_the_same(
    arena: Arena, queries_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsonl = tmp_path / "queries.jsonl"
    jsonl.write_text("".join(json.dumps({"prompt": q}) + "\n" for q in QUERIES), encoding="utf-8")
    doc = recommend_json(capsys, str(arena.fit_dir), "--queries", str(jsonl))
    assert doc["source"] == "predicted" and doc["n_queries"] == len(QUERIES)
    check_ranking(doc, arena.models)
    assert doc == recommend_json(capsys, str(arena.fit_dir), "--queries", str(queries_txt))


def test_votes_blend_the_prediction(
    arena: Arena, queries_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = arena.frame["user_id"].value_counts().index[0]
    votes = write_votes(tmp_path / "votes.jsonl", arena.frame[arena.frame["user_id"] == user][:10])
    argv = (str(arena.fit_dir), "--queries", str(queries_txt), "--votes", str(votes))
    doc = recommend_json(capsys, *argv)
    assert doc["source"] == "blended" and doc["n_votes"] == 10
    assert doc["n_queries"] == len(QUERIES) + 10  # the votes' prompts count as queries
    check_ranking(doc, arena.models)

    assert main(["recommend", *argv]) == 0
    table = capsys.readouterr().out
    assert table.startswith(f"Your ranking (blended: {len(QUERIES) + 10} queries, 10 votes)")


def test_table_output(arena: Arena, queries_txt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", str(arena.fit_dir), "--queries", str(queries_txt)]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"plb: predicting from {len(QUERIES)} queries\n"
    assert main(["--quiet", "recommend", str(arena.fit_dir), "--queries", str(queries_txt)]) == 0
    assert capsys.readouterr() == (captured.out, "")  # the same table, no note
    table = captured.out
    assert table.startswith(f"Your ranking (predicted from {len(QUERIES)} queries)")
    assert "rank" in table and "95% interval" in table
    assert all(model in table for model in arena.models)


def test_many_votes_for_one_model_put_it_first(
    arena: Arena, queries_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predicted = recommend_json(capsys, str(arena.fit_dir), "--queries", str(queries_txt))
    favourite = predicted["models"][-1]["model"]  # predicted last
    others = [m for m in arena.models if m != favourite]
    rows = pd.DataFrame(
        {
            "battle_id": [f"mine-{i}" for i in range(200)],
            "user_id": "me",
            "model_a": favourite,
            "model_b": [others[i % len(others)] for i in range(200)],
            "winner": "model_a",
        }
    )
    votes = write_votes(tmp_path / "votes.jsonl", rows)
    argv = (str(arena.fit_dir), "--queries", str(queries_txt), "--votes", str(votes))
    doc = recommend_json(capsys, *argv)
    assert doc["source"] == "blended" and doc["n_votes"] == 200
    assert doc["n_queries"] == len(QUERIES)  # these votes have no prompts
    assert doc["models"][0]["model"] == favourite
    check_ranking(doc, arena.models)


def test_the_ranking_comes_with_its_explanation(
    arena: Arena, queries_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = recommend_json(capsys, str(arena.fit_dir), "--queries", str(queries_txt))
    explanation = doc["explanation"]  # against the fit's Bradley-Terry board
    assert {"topics", "style", "models", "n_queries", "note", "sentences"} <= set(explanation)
    assert explanation["n_queries"] == len(QUERIES) and explanation["topics"]
    assert [m["model"] for m in explanation["models"]] == [m["model"] for m in doc["models"][:3]]
    board = json.loads((arena.fit_dir / "leaderboard.json").read_text(encoding="utf-8"))
    aggregate = {m["model"]: m["rating"] for m in board["bt"]["models"]}
    parts = ("aggregate", "baseline", "topic", "style", "votes")
    for row in explanation["models"]:
        assert row["aggregate"] == pytest.approx(aggregate[row["model"]], abs=0.01)
        assert row["votes"] == 0.0
        assert sum(row[p] for p in parts) == pytest.approx(row["rating"], abs=0.05)

    assert main(["recommend", str(arena.fit_dir), "--queries", str(queries_txt)]) == 0
    table = capsys.readouterr().out
    why = " ".join(table[table.index("Why:") :].split())  # the sentences, wrapped
    assert all(" ".join(line.split()) in why for line in explanation["sentences"])
    assert all(f"{m['model']}, rated " in why for m in explanation["models"])
    assert " sd" not in why and "baseline" not in why


# -- errors: exit 2, one line ---------------------------------------------------------------


def recommend_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["recommend", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("plb recommend: error:") and "\n" not in err
    return err


def test_query_errors_exit_2(
    arena: Arena, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit = str(arena.fit_dir)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    assert f"{empty} holds no queries" in recommend_error(capsys, fit, "--queries", str(empty))

    absent = tmp_path / "absent.txt"
    assert f"no such file: {absent}" in recommend_error(capsys, fit, "--queries", str(absent))

    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"prompt": "fine"}\n\n{"question": "no prompt"}\n', encoding="utf-8")
    err = recommend_error(capsys, fit, "--queries", str(jsonl))
    assert "line 3 needs a string 'prompt', not None" in err
    jsonl.write_text('{"prompt": "fine"}\n{"prompt": 42}\n', encoding="utf-8")
    assert "line 2 needs a string 'prompt', not 42" in recommend_error(
        capsys, fit, "--queries", str(jsonl)
    )


def test_votes_naming_an_unknown_model_exit_2(
    arena: Arena, queries_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = arena.models
    rows = pd.DataFrame(
        {
            "model_a": [known[0], known[1], "mystery-9b"],
            "model_b": [known[1], "enigma-2", known[0]],
            "winner": ["model_a", "tie", "model_b"],
        }
    )
    votes = write_votes(tmp_path / "votes.jsonl", rows)
    argv = (str(arena.fit_dir), "--queries", str(queries_txt), "--votes", str(votes))
    assert "names model 'enigma-2'" in recommend_error(capsys, *argv)

    missing = tmp_path / "absent.jsonl"
    argv = (str(arena.fit_dir), "--queries", str(queries_txt), "--votes", str(missing))
    assert "not found" in recommend_error(capsys, *argv)

    only_self = write_votes(tmp_path / "self.jsonl", rows.assign(model_b=rows["model_a"]))
    argv = (str(arena.fit_dir), "--queries", str(queries_txt), "--votes", str(only_self))
    error = recommend_error(capsys, *argv)
    assert error.startswith(f"plb recommend: error: --votes: no battles left in {only_self}")
    assert "3 votes of a model against itself dropped" in error


def test_fit_without_predictor_exit_2(
    arena: Arena, queries_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare"
    assert main(["fit", str(arena.battles), "--out", str(bare), "--no-features"]) == 0
    capsys.readouterr()
    err = recommend_error(capsys, str(bare), "--queries", str(queries_txt))
    assert "no rating predictor" in err and "rerun 'plb fit'" in err

    absent = tmp_path / "absent"
    err = recommend_error(capsys, str(absent), "--queries", str(queries_txt))
    assert "not a complete fit directory" in err
