"""``service.pipeline.snapshot``: the published document, from a fit directory and from a refit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ranking.pairwise import ELO_PER_NAT
from service.pipeline.artifacts import FitArtifacts, load_fit
from service.pipeline.snapshot import (
    HISTOGRAM_EDGES,
    correlations_document,
    refit_snapshot,
    snapshot_from_fit,
)

KEYS = {"bt/cv", "bt/none", "elo/cv", "elo/none"}


@pytest.fixture(scope="module")
def fit(shared_fit_no_features: Path) -> FitArtifacts:
    return load_fit(shared_fit_no_features)


def test_histogram_edges() -> None:
    assert len(HISTOGRAM_EDGES) == 21
    assert HISTOGRAM_EDGES[0] == -1.0 and HISTOGRAM_EDGES[-1] == 1.0
    np.testing.assert_allclose(np.diff(HISTOGRAM_EDGES), 0.1, atol=1e-9)


def test_correlations_document_bins() -> None:
    rho = [-1.0, -0.95, 0.0, 0.05, 0.55, 1.0, np.nan, 0.3]
    n_battles = [10, 10, 10, 10, 10, 10, 10, 9]  # the last user has too few votes
    summary = {"users": 6}
    document = correlations_document(
        rho, n_battles, summary, method="bt", shrinkage="cv", min_battles=10
    )
    assert document["method"] == "bt" and document["shrinkage"] == "cv"
    assert document["min_battles"] == 10 and document["summary"] == summary
    histogram = document["histogram"]
    assert histogram["edges"] == HISTOGRAM_EDGES.tolist()
    counts = histogram["counts"]
    assert len(counts) == 20 and sum(counts) == 6  # NaN and the short user are left out
    assert counts[0] == 2  # -1 and -0.95
    assert counts[10] == 2  # 0 and 0.05: [0, 0.1)
    assert counts[15] == 1  # 0.55
    assert counts[19] == 1  # 1.0: the last bin is closed


def test_snapshot_from_fit(fit: FitArtifacts) -> None:
    snapshot = snapshot_from_fit(fit)
    assert snapshot["origin"] == "fit"
    assert snapshot["fit_created"] == fit.manifest["created"]
    assert snapshot["n_battles"] == fit.manifest["n_battles"]
    assert snapshot["models"] == sorted(fit.manifest["models"])
    assert snapshot["leaderboards"] == fit.leaderboards
    assert snapshot["topics"] is None and snapshot["predictor_dir"] is None
    assert set(snapshot["correlations"]) == KEYS
    for key, document in snapshot["correlations"].items():
        method, shrinkage = key.split("/")
        assert document["summary"] == fit.summaries[method][shrinkage]
        rows = fit.agreement[
            (fit.agreement["method"] == method) & (fit.agreement["shrinkage"] == shrinkage)
        ]
        kept = (rows["n_battles"] >= document["min_battles"]) & rows["spearman"].notna()
        assert sum(document["histogram"]["counts"]) == int(kept.sum())
        assert sum(document["histogram"]["counts"]) == document["summary"]["users"]
    prior_sd = fit.agreement.query("method == 'bt' and shrinkage == 'cv'")["prior_sd"].iloc[0]
    assert snapshot["user_alpha"] == pytest.approx((ELO_PER_NAT / prior_sd) ** 2)


def test_snapshot_from_a_fit_with_features(shared_fit: Path) -> None:
    snapshot = snapshot_from_fit(load_fit(shared_fit))
    assert snapshot["predictor_dir"] == str(shared_fit / "predictor")
    assert [t["topic"] for t in snapshot["topics"]] == [0, 1, 2, 3]


def test_refit_snapshot(fit: FitArtifacts) -> None:
    previous = snapshot_from_fit(fit) | {"topics": [{"topic": 0}], "predictor_dir": "/p"}
    battles = fit.read_battles()
    assert battles is not None
    new = pd.DataFrame(
        [{"model_a": "pico-3b", "model_b": "helios-2-ultra", "winner": "model_a", "user_id": "n"}]
        * 12
    )
    everything = pd.concat([battles, new], ignore_index=True)
    snapshot = refit_snapshot(everything, previous, rng=0)
    assert snapshot["origin"] == "refit"
    assert snapshot["n_battles"] == len(battles) + 12
    for method in ("bt", "elo"):
        board = snapshot["leaderboards"][method]
        assert board["method"] == method and board["n_battles"] == len(battles) + 12
    pico = {m["model"]: m for m in snapshot["leaderboards"]["bt"]["models"]}["pico-3b"]
    before = {m["model"]: m for m in fit.leaderboards["bt"]["models"]}["pico-3b"]
    assert pico["wins"] == before["wins"] + 12 and pico["rating"] > before["rating"]
    assert snapshot["models"] == previous["models"]
    # what a refit does not touch is kept
    assert snapshot["topics"] == [{"topic": 0}] and snapshot["predictor_dir"] == "/p"
    assert snapshot["fit_created"] == previous["fit_created"]
    assert set(snapshot["correlations"]) == KEYS
    summary = snapshot["correlations"]["bt/cv"]["summary"]
    assert summary["users"] == previous["correlations"]["bt/cv"]["summary"]["users"] + 1
    assert sum(snapshot["correlations"]["bt/cv"]["histogram"]["counts"]) == summary["users"]
    assert snapshot["user_alpha"] > 0
    # the same battles and seed: the same figures
    assert refit_snapshot(everything, previous, rng=0)["leaderboards"] == snapshot["leaderboards"]
