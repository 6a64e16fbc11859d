"""service.pipeline.style: the fit's style-controlled board, kept and shaped for the public."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ranking.io.repeat_codes import cap_battles
from service.cli import main
from service.pipeline.artifacts import load_fit
from service.pipeline.style import STYLE_FILE, fit_style_document, public_style_board
from tests.style_arena import length_battles, write_length_log


def test_no_answers_no_board() -> None:
    battles = length_battles(200).drop(columns=["answer_a", "answer_b"])
    assert fit_style_document(battles) is None


def test_the_document_is_the_controlled_board_with_its_coefficients() -> None:
    document = fit_style_document(length_battles(900))
    assert document is not None
    assert document["method"] == "bt" and document["interval"] == "sandwich"
    assert {m["model"] for m in document["models"]} == {"long", "mid", "short"}
    assert document["style_control"]["coefficients"][0]["feature"] == "length"
    assert document["style_control"]["raw"][0]["model"] == "long"


def test_public_boards_set_apart_the_models_with_few_votes() -> None:
    battles = length_battles(900)
    rare = battles.iloc[:5].assign(model_b="rare")
    document = fit_style_document(pd.concat([battles, rare], ignore_index=True))
    assert document is not None
    public = public_style_board(document, min_votes=50)
    assert [m["model"] for m in public["provisional"]] == ["rare"]
    assert "rare" not in {m["model"] for m in public["models"]}
    assert "rare" not in {r["model"] for r in public["style_control"]["raw"]}
    assert public["min_votes"] == 50
    everyone = public_style_board(document, min_votes=0)
    assert "rare" in {m["model"] for m in everyone["models"]}


def test_plb_fit_keeps_it_in_the_fit_directory(tmp_path: Path) -> None:
    with_answers = write_length_log(tmp_path / "votes.jsonl", n=300)
    plain = tmp_path / "plain.jsonl"
    length_battles(300).drop(columns=["answer_a", "answer_b"]).to_json(
        plain, orient="records", lines=True
    )
    for log, name in ((with_answers, "fit"), (plain, "bare")):
        assert main(["-q", "fit", str(log), "--out", str(tmp_path / name), "--no-features"]) == 0
    fit = load_fit(tmp_path / "fit")
    assert (tmp_path / "fit" / STYLE_FILE).is_file()
    assert fit.style_control is not None
    assert fit.style_control["n_battles"] == fit.leaderboards["bt"]["n_battles"] == 300
    assert fit.style_control["style_control"]["coefficients"][0]["feature"] == "length"
    assert load_fit(tmp_path / "bare").style_control is None
    assert not (tmp_path / "bare" / STYLE_FILE).exists()


def test_it_stands_on_the_votes_the_public_boards_keep() -> None:
    battles = length_battles(900)  # 50 prompts, 18 votes each
    document = fit_style_document(battles, seed=3, repeat_cap=10)
    assert document is not None
    assert document["n_battles"] == 500
    kept, _ = cap_battles(battles, 10, rng=3)
    assert document == fit_style_document(kept, seed=3)
