"""When the cluster fails: a worker killed mid-fit, every worker lost, no scheduler."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from service.cli import main
from service.pipeline import FitConfig
from service.pipeline.artifacts import analysis_frames
from service.scale.cluster import local_cluster
from tests.service.scale.conftest import fitted


@pytest.mark.parametrize("reader", ["client", "workers"])
def test_a_worker_killed_mid_fit_changes_nothing(
    scale_sim: dict[str, Path], local_fit: Path, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read on the client, the victim's partitions were sent with their tasks; read on
    # the workers, they are read and shuffled again: either way Dask remakes them.
    from distributed import Client

    import service.scale.fit as scale_fit
    from service.scale import fit_distributed

    if reader == "workers":
        monkeypatch.setattr(scale_fit, "client_can_read", lambda inputs: False)

    killed: list[int] = []
    messages: list[str] = []
    with local_cluster(2) as cluster, Client(cluster) as client:
        pids = client.run(os.getpid)

        def progress(message: str) -> None:
            messages.append(message)
            # Once the partitions are on both workers, before the per-user fits.
            if message.startswith("fitting") and not killed:
                killed.append(pids[sorted(pids)[0]])
                os.kill(killed[0], signal.SIGKILL)

        result = fit_distributed(
            client,
            [str(scale_sim["battles"])],
            FitConfig(truth=str(scale_sim["truth"]), features=False),
            progress=progress,
        )
        assert ("Dask workers" in messages[0]) == (reader == "workers"), messages[0]
        assert killed and killed[0] not in client.run(os.getpid).values()  # restarted
    expected = fitted(local_fit)
    assert {a.ratings.method: a.aggregate.to_dict() for a in result.analyses} == (
        expected.leaderboards
    )
    assert result.evaluation == expected.evaluation
    for analysis in result.analyses:
        users, agreement = analysis_frames(analysis)
        r = analysis.ratings
        mine = users.set_index(["user_id", "model"])
        theirs = expected.users.query(
            f"method == '{r.method}' and shrinkage == '{r.shrinkage}'"
        ).set_index(["user_id", "model"])
        columns = ["rating", "lower", "upper", "battles"]
        difference = mine[columns] - theirs.loc[mine.index, columns]
        assert float(difference.abs().to_numpy().max()) < 1e-6
        assert agreement["n_battles"].sum() == r.battles.sum() // 2


@pytest.mark.parametrize("step", ["_place_here", "read_by_user"])
def test_losing_every_worker_ends_with_one_line_and_exit_2(
    scale_sim: dict[str, Path],
    tmp_path: Path,
    step: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The votes placed on the only worker (read on the client, or on the workers), then
    # the worker gone for good.
    from distributed import Client

    import service.scale.fit as scale_fit

    out = tmp_path / "fit"
    out.mkdir()  # a previous fit (plb fit replaces no folder without a manifest)
    (out / "manifest.json").write_text('{"format": "personal-leaderboard/fit-2"}\n')
    (out / "old.txt").write_text("the previous fit", encoding="utf-8")
    with local_cluster(1) as cluster, Client(cluster) as watcher:
        place = getattr(scale_fit, step)

        def place_then_lose_the_workers(*args: Any, **kwargs: Any) -> Any:
            result = place(*args, **kwargs)
            cluster.scale(0)  # the partitions go with the only worker
            deadline = time.monotonic() + 30
            while watcher.nthreads() and time.monotonic() < deadline:
                time.sleep(0.05)
            return result

        monkeypatch.setattr(scale_fit, step, place_then_lose_the_workers)
        if step == "read_by_user":
            monkeypatch.setattr(scale_fit, "client_can_read", lambda inputs: False)
        monkeypatch.setattr(scale_fit, "WORKER_TIMEOUT_S", 2.0)
        argv = ["fit", str(scale_sim["battles"]), "--out", str(out), "--no-features"]
        started = time.monotonic()
        assert main([*argv, "--scheduler", cluster.scheduler_address]) == 2
        assert time.monotonic() - started < 60
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("plb fit: error: the Dask cluster lost its workers: "), err
    assert not any("Traceback" in line for line in err)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "old.txt"]  # untouched


def test_no_scheduler_at_the_address_is_exit_2_at_once(
    scale_sim: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fit"
    argv = ["fit", str(scale_sim["battles"]), "--out", str(out), "--no-features"]
    started = time.monotonic()
    assert main([*argv, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "plb fit: error: cannot reach the Dask scheduler at tcp://127.0.0.1:1: connection refused"
    ]
    assert not out.exists()
    assert main([*argv, "--scheduler", "local:0"]) == 2
    assert "local:N needs a positive number of workers" in capsys.readouterr().err
    assert main([*argv, "--partitions", "3"]) == 2
    assert "--partitions needs --scheduler" in capsys.readouterr().err


def test_the_scheduler_comes_from_the_environment(
    scale_sim: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PLB_DASK_SCHEDULER", "tcp://127.0.0.1:1")
    argv = ["fit", str(scale_sim["battles"]), "--out", str(tmp_path / "f"), "--no-features"]
    assert main(argv) == 2
    assert "tcp://127.0.0.1:1" in capsys.readouterr().err
