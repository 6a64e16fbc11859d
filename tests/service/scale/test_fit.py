"""``plb fit --scheduler``: the local fit's results, from a Dask cluster of 2 workers."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main
from tests.service.scale.conftest import assert_same_fit, fitted

ROOT = Path(__file__).resolve().parents[3]


def _records(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [line for line in lines if line.strip()]


def test_local_cluster_gives_the_local_fit(
    scale_sim: dict[str, Path], local_fit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fit"
    argv = ["fit", str(scale_sim["battles"]), "--out", str(out), "--no-features"]
    argv += ["--truth", str(scale_sim["truth"]), "--scheduler", "local:2", "--format", "json"]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["scheduler"] == "local:2" and document["partitions"] == 4
    # read here; the workers' own work timed beside the client's steps
    timings = document["timings"]
    assert "ingest" in timings and "reading on the workers" not in timings
    for kind in ("Elo bootstrap", "per-user fits", "shrinkage strength"):
        assert timings[f"on the workers / {kind}"] > 0
        assert timings[f"on the workers / {kind}, task seconds"] > 0
    fit = fitted(out)
    assert fit.manifest["scheduler"] == "local:2" and fit.manifest["workers"] == 2
    assert_same_fit(fitted(local_fit), fit)


@pytest.mark.parametrize("reader", ["client", "workers"])
def test_several_files_and_a_repeated_battle_id(
    scale_sim: dict[str, Path],
    local_fit: Path,
    cluster: str,
    tmp_path: Path,
    reader: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The log in 3 files, the last repeating a vote of the first: read on the client
    # (it can open them), or on the workers (as when only they can), the repeat dropped
    # as read_battles drops it across files.
    import service.scale.fit as scale_fit

    if reader == "workers":
        monkeypatch.setattr(scale_fit, "client_can_read", lambda inputs: False)
    records = _records(scale_sim["battles"])
    third = len(records) // 3
    chunks = [records[:third], records[third : 2 * third], records[2 * third :] + records[:1]]
    files = []
    for i, chunk in enumerate(chunks):
        files.append(tmp_path / f"part-{i}.jsonl")
        files[-1].write_text("".join(chunk), encoding="utf-8")
    out = tmp_path / "fit"
    argv = ["fit", *map(str, files), "--out", str(out), "--no-features"]
    argv += ["--truth", str(scale_sim["truth"]), "--scheduler", cluster, "--partitions", "3"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "skipped 1 duplicate battle ids" in err
    where = "here" if reader == "client" else "on 2 Dask workers"
    assert f"reading 3 input(s) {where}" in err
    fit = fitted(out)
    assert fit.manifest["scheduler"] == cluster and fit.manifest["partitions"] == 3
    assert_same_fit(fitted(local_fit), fit)


def test_a_parquet_dataset_directory(
    scale_sim: dict[str, Path], local_fit: Path, cluster: str, tmp_path: Path
) -> None:
    records = pd.DataFrame([json.loads(line) for line in _records(scale_sim["battles"])])
    dataset = tmp_path / "battles.parquet"
    dataset.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(records)), 3)):
        records.iloc[part].to_parquet(dataset / f"part.{i}.parquet", index=False)
    out = tmp_path / "fit"
    argv = ["fit", str(dataset), "--out", str(out), "--no-features", "--scheduler", cluster]
    assert main([*argv, "--truth", str(scale_sim["truth"])]) == 0
    fit = fitted(out)
    assert_same_fit(fitted(local_fit), fit, battles=False)  # labels typed by Parquet
    frame, reference = fit.read_battles(), fitted(local_fit).read_battles()
    assert frame is not None and reference is not None
    core = ["battle_id", "model_a", "model_b", "winner", "user_id", "tstamp"]
    pd.testing.assert_frame_equal(frame[core], reference[core])


def test_topics_profiles_and_predictor(cluster: str, tmp_path: Path) -> None:
    # The workers embed the queries (static backend: fast), the client fits the rest.
    from features.predictor import RatingPredictor
    from features.topics import TopicModel

    battles = write_simulation(simulate(24, 20, 6, rng=4), tmp_path / "sim")["battles"]
    fits = {}
    for where in ("local", "dask"):
        fits[where] = tmp_path / where
        argv = ["fit", str(battles), "--out", str(fits[where])]
        argv += ["--n-topics", "4", "--embedding", "static"]
        assert main(argv + (["--scheduler", cluster] if where == "dask" else [])) == 0
    local, dask = fitted(fits["local"]), fitted(fits["dask"])
    assert_same_fit(local, dask)
    assert dask.topics == local.topics
    assert local.profiles is not None and dask.profiles is not None
    pd.testing.assert_frame_equal(dask.profiles, local.profiles, rtol=1e-9)
    frame = local.read_battles()
    assert frame is not None
    queries = frame["prompt"].iloc[:40].astype(str).tolist()
    topics = [TopicModel.load(fits[w] / "topics").predict(queries) for w in ("local", "dask")]
    np.testing.assert_array_equal(topics[0], topics[1])
    predictors = [RatingPredictor.load(fits[w] / "predictor") for w in ("local", "dask")]
    assert predictors[1].prior_sd == pytest.approx(predictors[0].prior_sd, rel=1e-9)
    ranked = [p.predict_queries(queries[:5]).ratings for p in predictors]
    np.testing.assert_allclose(ranked[1], ranked[0], rtol=0, atol=1e-6)


def test_the_local_path_never_imports_dask(scale_sim: dict[str, Path], tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "import ranking.analysis, ranking.leaderboard, features.topics, features.predictor\n"
        "from service.cli import main\n"
        f"assert main(['fit', {str(scale_sim['battles'])!r}, '--out', {str(tmp_path / 'f')!r},"
        " '--no-features']) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_a_bad_log_is_exit_2_with_the_local_message(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner,user_id\nx,y,model_a,u1\nx,y,nobody,u2\n")
    errors = []
    for extra in ([], ["--scheduler", cluster]):
        assert main(["fit", str(bad), "--out", str(tmp_path / "f"), *extra]) == 2
        errors.append(capsys.readouterr().err.strip().splitlines())
    assert errors[1][-1] == errors[0][-1]
    assert errors[1][-1].startswith(f"plb fit: error: {bad}: row 2: field 'winner'")
    assert not any("Traceback" in line for line in errors[1])
    assert not (tmp_path / "f").exists()
