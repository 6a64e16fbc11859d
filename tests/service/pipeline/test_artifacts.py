"""The fit directory: written whole or not at all, read back, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ranking.analysis import analyse_users
from service.pipeline.artifacts import load_fit, write_fit
from tests.conftest import simulate_users


@pytest.fixture(scope="module")
def analysis():  # type: ignore[no-untyped-def]
    data, users, _, _ = simulate_users(15, 20, 5, seed=0)
    names = tuple(f"user{u}" for u in range(15))
    return analyse_users(data, users, names, min_battles=5)


def test_round_trip(tmp_path: Path, analysis) -> None:  # type: ignore[no-untyped-def]
    out = write_fit(
        tmp_path / "fit", manifest={"n_users": 15}, analyses=[analysis], evaluation=None
    )
    fit = load_fit(out)
    assert fit.manifest["n_users"] == 15 and fit.evaluation is None
    assert fit.leaderboards["bt"]["models"][0]["rank"] == 1
    assert len(fit.users) == 15 * 5 and len(fit.agreement) == 15
    assert np.allclose(fit.users.rating.to_numpy(), analysis.ratings.ratings.ravel())
    assert out.stat().st_mode & 0o777 == 0o755


def test_real_numbers_are_written_without_a_dictionary(tmp_path: Path, analysis) -> None:  # type: ignore[no-untyped-def]
    """Parquet's dictionary of nearly distinct ratings and profile values is thrown away
    and costs most of the write: float columns are plain; labels keep theirs; the frames
    read back are the same."""
    import pandas as pd
    import pyarrow.parquet as pq

    profiles = pd.DataFrame(
        {"topic:0": np.linspace(0.0, 1.0, 15), "n_battles": np.arange(15)},
        index=pd.Index([f"user{u}" for u in range(15)], name="user_id"),
    )
    out = write_fit(
        tmp_path / "fit", manifest={}, analyses=[analysis], evaluation=None, profiles=profiles
    )

    def dictionary_encoded(file: str) -> dict[str, bool]:
        group = pq.ParquetFile(out / file).metadata.row_group(0)
        return {
            group.column(i).path_in_schema: any(
                "DICTIONARY" in e for e in group.column(i).encodings
            )
            for i in range(group.num_columns)
        }

    users = dictionary_encoded("users.parquet")
    assert not users["rating"] and not users["p_best"]
    assert users["user_id"] and users["model"] and users["battles"]
    written = dictionary_encoded("profiles.parquet")
    assert not written["topic:0"] and written["n_battles"] and written["user_id"]
    pd.testing.assert_frame_equal(pd.read_parquet(out / "profiles.parquet"), profiles)
    assert np.allclose(load_fit(out).users.rating.to_numpy(), analysis.ratings.ratings.ravel())


def test_replacing_a_fit_leaves_no_debris(tmp_path: Path, analysis) -> None:  # type: ignore[no-untyped-def]
    for n in (1, 2):
        write_fit(tmp_path / "fit", manifest={"n": n}, analyses=[analysis], evaluation={"x": n})
    assert json.loads((tmp_path / "fit" / "manifest.json").read_text())["n"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit"]


def test_a_failed_write_keeps_the_old_fit(tmp_path: Path, analysis) -> None:  # type: ignore[no-untyped-def]
    write_fit(tmp_path / "fit", manifest={"n": 1}, analyses=[analysis], evaluation=None)
    with pytest.raises(ValueError):  # NaN is not JSON: the write fails midway
        write_fit(
            tmp_path / "fit", manifest={"n": 2}, analyses=[analysis], evaluation={"x": float("nan")}
        )
    assert load_fit(tmp_path / "fit").manifest["n"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit"]  # no staging debris


def test_load_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="missing manifest.json.*plb fit"):
        load_fit(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not a fit directory"):
        load_fit(tmp_path)


@pytest.mark.parametrize(
    ("manifest", "simulated"),
    [
        ({}, False),  # a fit of a real log
        ({"truth": None}, False),
        ({"truth": "sim/truth.json"}, True),  # plb fit --truth: the demo's fit
        ({"truth": "sim/truth.json", "simulated": False}, False),  # an explicit flag wins
        ({"simulated": True}, True),
    ],
)
def test_simulated_from_the_manifest(
    tmp_path: Path,
    analysis,  # type: ignore[no-untyped-def]
    manifest: dict[str, object],
    simulated: bool,
) -> None:
    write_fit(tmp_path / "fit", manifest=manifest, analyses=[analysis], evaluation=None)
    assert load_fit(tmp_path / "fit").simulated is simulated
