"""Fixtures of the Dask tests: a small simulated log, its local fit, and a real cluster.

The cluster is a :class:`distributed.LocalCluster` of 2 worker processes on loopback,
started once for the module that asks for it; the tests pass its address to
``plb fit --scheduler`` as they would a remote scheduler's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main
from service.pipeline.artifacts import FitArtifacts, load_fit
from service.scale.cluster import local_cluster
from tests.conftest import built_once

pytest.importorskip("distributed")


@pytest.fixture(scope="session")
def scale_sim(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``plb simulate --users 80 --battles-per-user 25``: about 2,000 votes with prompts."""
    folder = built_once(
        tmp_path_factory, "scale-sim", lambda out: write_simulation(simulate(80, 25, rng=3), out)
    )
    return {"battles": folder / "battles.jsonl.gz", "truth": folder / "truth.json"}


@pytest.fixture(scope="session")
def local_fit(scale_sim: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local ``plb fit --no-features`` of :func:`scale_sim`, with the truth."""

    def build(folder: Path) -> None:
        argv = ["fit", str(scale_sim["battles"]), "--out", str(folder / "fit"), "--no-features"]
        assert main([*argv, "--truth", str(scale_sim["truth"])]) == 0

    return built_once(tmp_path_factory, "scale-fit-local", build) / "fit"


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A LocalCluster of 2 single-threaded worker processes; its scheduler address."""
    with local_cluster(2) as local:
        yield local.scheduler_address


def assert_same_fit(expected: FitArtifacts, actual: FitArtifacts, *, battles: bool = True) -> None:
    """Two fit directories hold the same results (per-user ratings within 1e-6 points)."""
    assert actual.leaderboards == expected.leaderboards  # BT and Elo, bootstrap included
    assert actual.summaries == expected.summaries
    assert actual.evaluation == expected.evaluation
    for name in ("users", "agreement"):
        mine, theirs = getattr(actual, name), getattr(expected, name)
        assert list(mine.columns) == list(theirs.columns)
        numbers = [c for c in mine.columns if pd.api.types.is_float_dtype(mine[c])]
        others = [c for c in mine.columns if c not in numbers]
        pd.testing.assert_frame_equal(mine[others], theirs[others])
        np.testing.assert_allclose(mine[numbers], theirs[numbers], rtol=0, atol=1e-6)
    same = ("n_battles", "n_users", "models", "min_battles", "seed", "features")
    assert {k: actual.manifest[k] for k in same} == {k: expected.manifest[k] for k in same}
    if battles:
        frame, reference = actual.read_battles(), expected.read_battles()
        assert frame is not None and reference is not None
        pd.testing.assert_frame_equal(frame, reference)


def fitted(path: Path) -> FitArtifacts:
    """:func:`load_fit`, for the test modules."""
    return load_fit(path)
