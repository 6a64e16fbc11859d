"""``plb fit --reuse DIR``: a refit embeds only new prompts and keeps the earlier topics."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from service.cli import main
from service.pipeline.artifacts import load_fit
from service.pipeline.text_store import TEXTS_DIR

FIT = ["--embedding", "tfidf", "--n-topics", "3", "--format", "json"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The first 90% of a small arena's votes, all of them, and the distinct prompts the
    last 10% add."""
    battles = simulate(40, 15, 5, rng=3).battles
    folder = tmp_path_factory.mktemp("reuse")
    cut = int(len(battles) * 0.9)
    battles.iloc[:cut].to_parquet(folder / "first.parquet")
    battles.to_parquet(folder / "all.parquet")
    new = set(battles["prompt"].iloc[cut:]) - set(battles["prompt"].iloc[:cut])
    return folder / "first.parquet", folder / "all.parquet", len(new)


def fit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["-q", "fit", *argv, *FIT]) == 0
    return dict(json.loads(capsys.readouterr().out))


@pytest.fixture(scope="module")
def earlier(logs: tuple[Path, Path, int], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("earlier") / "fit"
    assert main(["-q", "fit", str(logs[0]), "--out", str(out), *FIT[:4]]) == 0
    return out


def test_a_fit_keeps_its_prompts_rows(earlier: Path, logs: tuple[Path, Path, int]) -> None:
    manifest = json.loads((earlier / "manifest.json").read_text("utf-8"))
    n_prompts = pd.read_parquet(logs[0])["prompt"].nunique()
    assert manifest["reuse"]["from"] is None and manifest["reuse"]["topics"] == "fitted"
    assert manifest["reuse"]["predictor"] == "fresh"
    for kind in ("embeddings", "style"):
        assert manifest["reuse"][kind] == {"kept": 0, "computed": n_prompts}
        (producer,) = (earlier / TEXTS_DIR / kind).iterdir()
        assert len(list(producer.glob("*.parquet"))) == 1


def test_a_refit_on_the_same_votes_computes_nothing_and_changes_nothing(
    earlier: Path, logs: tuple[Path, Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "refit"
    document = fit(capsys, str(logs[0]), "--out", str(out), "--reuse", str(earlier))
    n_prompts = pd.read_parquet(logs[0])["prompt"].nunique()
    reuse = document["reuse"]
    assert reuse["from"] == str(earlier) and reuse["topics"] == "kept"
    assert reuse["predictor"] == "warm"
    assert reuse["embeddings"] == reuse["style"] == {"kept": n_prompts, "computed": 0}
    before, after = load_fit(earlier), load_fit(out)
    assert after.topics == before.topics
    assert before.profiles is not None and after.profiles is not None
    np.testing.assert_allclose(after.profiles.to_numpy(), before.profiles.to_numpy(), atol=1e-9)
    from features.predictor import RatingPredictor

    assert before.predictor_dir is not None and after.predictor_dir is not None
    query = ["Write a poem about the sea, and explain its metre."]
    warm = RatingPredictor.load(after.predictor_dir).predict_queries(query).ratings
    fresh = RatingPredictor.load(before.predictor_dir).predict_queries(query).ratings
    np.testing.assert_allclose(warm, fresh, atol=0.5)  # Elo points: the same optimum


def test_a_refit_in_place_with_new_votes_embeds_only_their_new_prompts(
    earlier: Path, logs: tuple[Path, Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fit"
    shutil.copytree(earlier, out)
    document = fit(capsys, str(logs[1]), "--out", str(out), "--reuse", str(out))
    n_prompts = pd.read_parquet(logs[1])["prompt"].nunique()
    new = logs[2]
    assert new > 0
    assert document["reuse"]["embeddings"] == {"kept": n_prompts - new, "computed": new}
    assert document["n_battles"] == len(pd.read_parquet(logs[1]))
    for kind in ("embeddings", "style"):
        (producer,) = (out / TEXTS_DIR / kind).iterdir()
        assert len(list(producer.glob("*.parquet"))) == 2  # the earlier part, and the new


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--reuse", "{missing}"], "is not an earlier fit"),
        (["--reuse", "{earlier}", "--no-features"], "--no-features"),
        (["--reuse", "{earlier}", "--scheduler", "local:1"], "drop --scheduler"),
    ],
)
def test_a_reuse_that_cannot_work_is_refused_before_reading(
    extra: list[str],
    message: str,
    earlier: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.format(missing=tmp_path / "nothing", earlier=earlier) for a in extra]
    code = main(["fit", str(tmp_path / "no-such.csv"), "--out", str(tmp_path / "o"), *argv])
    assert code == 2
    error = capsys.readouterr().err
    assert message in error and "--reuse" in error
