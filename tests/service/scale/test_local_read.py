"""Reading on the client, and the votes split into partitions by user for the workers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.io.ingest import read_battles
from service.scale.local_read import client_can_read, read_on_client, split_by_user, votes_of
from service.scale.partitions import InputError
from service.scale.tasks import merge_votes


def _votes(n: int = 400, users: int = 37, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models = np.array(["a", "b", "c", "d"])
    pairs = np.array([rng.choice(4, 2, replace=False) for _ in range(n)])
    user = rng.integers(0, users, n).astype(object)
    ids = pd.array([f"u{u:02d}" for u in user], dtype="string")
    ids[rng.random(n) < 0.1] = pd.NA  # votes without a user
    return pd.DataFrame(
        {
            "model_a": models[pairs[:, 0]],
            "model_b": models[pairs[:, 1]],
            "winner": rng.choice(["model_a", "model_b", "tie"], n),
            "user_id": ids,
            "tstamp": rng.permutation(n).astype(float),  # vote order is not row order
        }
    )


def test_votes_are_the_local_paths_arrays() -> None:
    frame = _votes()
    votes = votes_of(frame)
    data = pairwise_from_battles(frame)
    codes, names = user_codes(frame)
    assert votes.names == names and votes.data.models == data.models
    np.testing.assert_array_equal(votes.data.matchups, data.matchups)
    np.testing.assert_array_equal(votes.data.outcomes, data.outcomes)
    np.testing.assert_array_equal(votes.users, codes)
    with pytest.raises(ValueError, match="user_id"):
        votes_of(frame.assign(user_id=pd.Series(pd.NA, index=frame.index, dtype="string")))


@pytest.mark.parametrize("n_partitions", [1, 2, 3, 7, 60])
def test_every_user_in_one_partition_in_vote_order(n_partitions: int) -> None:
    votes = votes_of(_votes())
    parts = split_by_user(votes, n_partitions)
    assert 1 <= len(parts) <= n_partitions
    seen = [name for part in parts for name in part.user_names]
    assert sorted(seen) == list(votes.names) and len(set(seen)) == len(seen)
    for part in parts:
        assert list(part.user_names) == sorted(part.user_names)
        assert np.all(np.diff(part.rows) > 0)  # vote order kept
        np.testing.assert_array_equal(part.data.matchups, votes.data.matchups[part.rows])
        np.testing.assert_array_equal(part.data.outcomes, votes.data.outcomes[part.rows])
        names = np.array(votes.names, dtype=object)
        np.testing.assert_array_equal(
            np.array(part.user_names, dtype=object)[part.users], names[votes.users[part.rows]]
        )
    # merged again, they are the votes with a user, in the same order
    merged = merge_votes(votes.data.models, *parts)
    known = votes.users >= 0
    assert merged.names == votes.names
    np.testing.assert_array_equal(merged.users, votes.users[known])
    np.testing.assert_array_equal(merged.data.matchups, votes.data.matchups[known])


def test_partitions_hold_about_equal_votes() -> None:
    votes = votes_of(_votes(4_000, users=400))
    sizes = [len(part.rows) for part in split_by_user(votes, 4)]
    assert len(sizes) == 4
    assert max(sizes) - min(sizes) <= 2 * np.bincount(votes.users[votes.users >= 0]).max()
    with pytest.raises(ValueError, match="'n_partitions' must be at least 1, not 0"):
        split_by_user(votes, 0)


def test_the_client_reads_files_it_can_open(tmp_path: Path) -> None:
    log = tmp_path / "battles.csv"
    _votes(50).to_csv(log, index=False)
    dataset = tmp_path / "dataset.parquet"
    dataset.mkdir()
    assert client_can_read([str(log)])
    assert not client_can_read([str(log), str(dataset)])  # a Parquet directory: workers
    assert not client_can_read([str(log), str(tmp_path / "elsewhere.csv")])
    assert not client_can_read([])
    frame, report = read_on_client([str(log)], skip_invalid=False)
    pd.testing.assert_frame_equal(frame, read_battles(str(log)).battles)
    assert report.n_read == 50 and report.n_skipped == 0


def test_a_bad_log_read_on_the_client_says_why(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner,user_id\nx,y,model_a,u1\nx,y,nobody,u2\n")
    with pytest.raises(InputError, match=r"row 2: field 'winner'"):
        read_on_client([str(bad)], skip_invalid=False)
    frame, report = read_on_client([str(bad)], skip_invalid=True)
    assert len(frame) == 1 and report.n_skipped == 1
    none = tmp_path / "none.csv"
    none.write_text("model_a,model_b,winner,user_id\nx,y,nobody,u1\nx,x,model_a,u2\n")
    with pytest.raises(InputError, match="no battles left to fit in .*none.csv"):
        read_on_client([str(none)], skip_invalid=True)
