"""The ``plb`` command line: docs/SPEC.md section 3 (output, exit codes) end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from data.simulate import simulate
from data.simulation_files import write_simulation
from ranking.pairwise import ELO_PER_NAT
from service.cli import main
from service.pipeline.artifacts import load_fit

LEADERBOARD_KEYS = {
    "model",
    "rating",
    "lower",
    "upper",
    "rank",
    "battles",
    "wins",
    "losses",
    "ties",
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(0)
    models = ["alpha", "beta", "gamma", "delta"]
    strength = {"alpha": 1.0, "beta": 0.5, "gamma": 0.0, "delta": -0.5}
    rows = []
    for i in range(600):
        a, b = rng.choice(models, 2, replace=False)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        winner = "tie" if u < 0.15 else "model_a" if rng.random() < p else "model_b"
        rows.append(
            {
                "id": f"b{i}",
                "model_a": a,
                "model_b": b,
                "winner": winner,
                "tstamp": i,
                "lang": "en" if i % 3 else "de",
                "math": i % 2,
            }  # fmt: skip
        )
    path = tmp_path_factory.mktemp("logs") / "battles.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    sim = simulate(80, 30, 8, rng=1)
    return write_simulation(sim, tmp_path_factory.mktemp("sim"))


class TestLeaderboard:
    def test_table(self, small_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["leaderboard", str(small_log)]) == 0
        out = capsys.readouterr().out
        assert "BT leaderboard: 4 models, 600 battles" in out
        assert out.index("alpha") < out.index("delta")

    def test_json_document(self, small_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
        doc = run_json(capsys, "leaderboard", str(small_log))
        assert doc["method"] == "bt" and doc["n_battles"] == 600
        assert [m["model"] for m in doc["models"]] == ["alpha", "beta", "gamma", "delta"]
        assert all(LEADERBOARD_KEYS <= set(m) for m in doc["models"])
        assert np.mean([m["rating"] for m in doc["models"]]) == pytest.approx(1000, abs=0.01)

    @pytest.mark.parametrize(
        ("method", "ci"), [("elo", "bootstrap"), ("bt", "bootstrap"), ("bt", "none")]
    )
    def test_methods_and_intervals(
        self, small_log: Path, method: str, ci: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        doc = run_json(
            capsys, "leaderboard", str(small_log), "--method", method, "--ci", ci, "--rounds", "20"
        )
        assert doc["method"] == method and doc["interval"] == ci
        assert all(m["lower"] <= m["rating"] <= m["upper"] for m in doc["models"])

    def test_min_votes_lists_few_vote_models_below_the_table(
        self, small_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        battles = pd.read_csv(small_log)
        extra = [
            {"id": "x1", "model_a": "tiny-new", "model_b": "delta", "winner": "model_a"},
            {"id": "x2", "model_a": "alpha", "model_b": "tiny-new", "winner": "model_b"},
        ]
        path = tmp_path / "with-new.csv"
        pd.concat([battles, pd.DataFrame(extra)], ignore_index=True).to_csv(path, index=False)
        before = run_json(capsys, "leaderboard", str(small_log))

        doc = run_json(capsys, "leaderboard", str(path))
        assert [m["model"] for m in doc["models"]] == ["alpha", "beta", "gamma", "delta"]
        assert doc["provisional"] == [
            {"model": "tiny-new", "battles": 2, "wins": 2, "losses": 0, "ties": 0}
        ]
        assert doc["n_battles"] == 602  # every vote counted, the provisional model's too
        # the two votes leave the ranked models' ratings as without them
        for old, new in zip(before["models"], doc["models"], strict=True):
            assert new["rating"] == pytest.approx(old["rating"], abs=0.01)
        assert main(["leaderboard", str(path)]) == 0
        table = capsys.readouterr().out
        assert "BT leaderboard: 4 models, 602 battles" in table
        assert table.index("delta") < table.index("Provisional, not ranked (1 model with fewer")
        assert table.rstrip().endswith("tiny-new        2     2       0     0")

        everything = run_json(capsys, "leaderboard", str(path), "--min-votes", "0")
        assert everything["models"][0]["model"] == "tiny-new"  # what the minimum prevents
        assert everything["provisional"] == []
        assert main(["leaderboard", str(path), "--min-votes", "-1"]) == 2
        assert "--min-votes must be at least 0, not -1" in capsys.readouterr().err

    def test_where_anchor_and_matrix(
        self, small_log: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        doc = run_json(
            capsys, "leaderboard", str(small_log), "--where", "lang=de", "--where", "math=1",
            "--anchor", "gamma=1200", "--matrix",
        )  # fmt: skip
        assert doc["n_battles"] == 100  # i % 3 == 0 and i % 2 == 1
        assert {m["model"]: m["rating"] for m in doc["models"]}["gamma"] == 1200
        p = doc["win_probability"]
        assert p["alpha"]["delta"] == pytest.approx(1 - p["delta"]["alpha"], abs=1e-3)

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["--where", "coding=1"], "'coding' is not in the battles"),
            (["--where", "lang=fr"], "no battles match lang=fr"),
            (["--anchor", "nope=1000"], "'nope'"),
            (["--anchor", "gamma"], "MODEL=RATING"),
            (["--method", "elo", "--ci", "sandwich"], "sandwich"),
            (["--rounds", "0"], "--rounds"),
            (["--method", "glicko"], "invalid choice"),
        ],
    )
    def test_bad_usage_exits_2_with_one_line(
        self, small_log: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) if "glicko" in argv else _no_exit():
            assert main(["leaderboard", str(small_log), *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err

    def test_malformed_file_names_row_and_field(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = tmp_path / "bad.csv"
        bad.write_text("model_a,model_b,winner\nx,y,model_a\nx,y,maybe\n")
        assert main(["leaderboard", str(bad)]) == 2
        err = capsys.readouterr().err
        assert "bad.csv" in err and "row 2" in err and "'winner'" in err and "'maybe'" in err
        assert main(["leaderboard", str(bad), "--skip-invalid", "--format", "json"]) == 0
        captured = capsys.readouterr()
        assert json.loads(captured.out)["n_battles"] == 1
        assert "skipped 1 invalid rows" in captured.err

    def test_missing_file(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["leaderboard", str(tmp_path / "nope.csv")]) == 2
        assert "nope.csv" in capsys.readouterr().err


class _no_exit:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_real_arena_leaderboard(arena_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, "leaderboard", str(arena_path), "--min-votes", "0")
    assert len(doc["models"]) == 53 and doc["provisional"] == []
    # An independent fit: logistic regression on the expanded rows, ties split in two.
    battles = pd.read_csv(arena_path)
    battles = battles[battles.model_a != battles.model_b]
    models = sorted(set(battles.model_a) | set(battles.model_b))
    index = {m: j for j, m in enumerate(models)}
    a = battles.model_a.map(index).to_numpy()
    b = battles.model_b.map(index).to_numpy()
    y = battles.winner.map({"model_a": 1.0, "model_b": 0.0}).fillna(0.5).to_numpy()
    tie = y == 0.5
    n = len(y)
    rows = np.concatenate([np.arange(n), np.arange(n)])
    x = sparse.csr_matrix(
        (np.concatenate([np.ones(n), -np.ones(n)]), (rows, np.concatenate([a, b]))),
        shape=(n, len(models)),
    )
    xs = sparse.vstack([x, x[tie]])
    ys = np.concatenate([np.where(tie, 1.0, y), np.zeros(tie.sum())])
    ws = np.concatenate([np.where(tie, 0.5, 1.0), np.full(tie.sum(), 0.5)])
    fit = LogisticRegression(C=1e6, fit_intercept=False, tol=1e-10, max_iter=5000)
    coef = fit.fit(xs, ys, sample_weight=ws).coef_[0]
    reference = 1000 + ELO_PER_NAT * (coef - coef.mean())
    ours = {m["model"]: m["rating"] for m in doc["models"]}
    assert max(abs(ours[m] - reference[index[m]]) for m in models) < 0.5
    math_doc = run_json(capsys, "leaderboard", str(arena_path), "--where", "math=1")
    assert 0 < math_doc["n_battles"] < doc["n_battles"]


def test_real_arena_table_says_what_was_read_and_dropped(
    arena_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["leaderboard", str(arena_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == (
        "BT leaderboard: 52 models, 135,624 battles (of 135,634 read; 10 votes of a model "
        "against itself dropped), 95% sandwich intervals"
    )
    assert captured.err == "plb: ignored 10 votes of a model against itself\n"
    assert run_json(capsys, "leaderboard", str(arena_path))["n_battles"] == 135_624


def test_real_arena_two_vote_model_is_provisional_not_first(
    arena_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """qwen3-coder-480b has 2 votes, both ties: with every model ranked it shares rank 1."""
    everything = run_json(capsys, "leaderboard", str(arena_path), "--min-votes", "0")
    qwen = next(m for m in everything["models"] if m["model"].startswith("qwen3-coder-480b"))
    assert (qwen["battles"], qwen["ties"], qwen["rank"]) == (2, 2, 1)

    doc = run_json(capsys, "leaderboard", str(arena_path))  # the default minimum: 20 votes
    assert doc["min_votes"] == 20
    assert not any(m["model"].startswith("qwen3-coder-480b") for m in doc["models"])
    assert doc["provisional"] == [
        {"model": qwen["model"], "battles": 2, "wins": 0, "losses": 0, "ties": 2}
    ]
    assert doc["models"][0]["model"] == "gemini-2.5-pro" and doc["models"][0]["rank"] == 1
    assert doc["n_battles"] == everything["n_battles"] == 135_624
    assert main(["leaderboard", str(arena_path)]) == 0
    table = capsys.readouterr().out
    below = table.split("Provisional, not ranked (1 model with fewer than 20 votes):")
    assert len(below) == 2 and qwen["model"] in below[1] and qwen["model"] not in below[0]


def test_tables_count_what_reading_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": f"b{i}", "user_id": f"u{i % 2}", "model_a": a, "model_b": b,
         "winner": "model_a", "lang": "de" if i < 2 else "en"}
        for i, (a, b) in enumerate([("x", "y"), ("y", "z"), ("z", "x"), ("x", "z"), ("y", "x")])
    ]  # fmt: skip
    rows += [{**rows[0]}, {**rows[1], "id": "s1", "model_b": "y"}, {**rows[2], "id": "s2"}]
    rows[-1]["model_b"] = rows[-1]["model_a"]
    path = tmp_path / "log.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    left_out = "(of 8 read; 1 duplicate battle ids skipped; 2 votes of a model against itself "
    assert main(["leaderboard", str(path)]) == 0  # 5 votes: all 3 models provisional by default
    captured = capsys.readouterr()
    assert f"0 models, 5 battles {left_out}dropped)" in captured.out.splitlines()[0]
    assert "Provisional, not ranked (3 models with fewer than 20 votes)" in captured.out
    assert "plb: ignored 2 votes of a model against itself" in captured.err
    assert "plb: skipped 1 duplicate battle ids" in captured.err
    assert run_json(capsys, "leaderboard", str(path))["n_battles"] == 5  # the contract's
    assert main(["leaderboard", str(path), "--min-votes", "0"]) == 0
    assert f"3 models, 5 battles {left_out}dropped)" in capsys.readouterr().out.splitlines()[0]
    assert main(["leaderboard", str(path), "--where", "lang=de"]) == 0
    assert f"2 battles where lang=de {left_out}" in capsys.readouterr().out
    assert main(["users", str(path), "--min-battles", "1"]) == 0
    assert f"for 2 users, from 5 battles {left_out}" in capsys.readouterr().out
    assert main(["fit", str(path), "--out", str(tmp_path / "fit"), "--no-features"]) == 0
    assert f"Fitted 5 battles {left_out}dropped) from 2 users" in capsys.readouterr().out
    assert main(["leaderboard", str(path), "--where", "lang=fr"]) == 2
    assert "no battles match lang=fr (of 5 battles in" in capsys.readouterr().err


@pytest.mark.parametrize(("method", "ci"), [("bt", "bootstrap"), ("elo", "bootstrap")])
def test_real_arena_intervals(
    arena_path: Path, method: str, ci: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = run_json(capsys, "leaderboard", str(arena_path), "--method", method, "--ci", ci)
    assert len(doc["models"]) == 52 and len(doc["provisional"]) == 1 and doc["interval"] == ci
    assert all(m["lower"] <= m["rating"] <= m["upper"] for m in doc["models"])
    assert doc["models"][0]["rank"] == 1


class TestPerUserCommands:
    def test_users(self, simulated: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
        doc = run_json(capsys, "users", str(simulated["battles"]), "--min-battles", "5")
        assert doc["method"] == "bt" and doc["shrinkage"] == "cv"
        assert {"users", "mean_spearman", "median_spearman", "share_near_zero_or_negative"} <= set(
            doc["summary"]
        )
        assert doc["summary"]["users"] == len(doc["users"]) > 0
        user = doc["users"][0]
        assert {"user_id", "n_battles", "ratings", "spearman", "kendall"} <= set(user)
        assert doc["aggregate"]["models"][0]["rank"] == 1

    def test_users_plain_elo_table(
        self, simulated: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["users", str(simulated["battles"]), "--method", "elo", "--shrinkage", "none"]
        assert main(argv) == 0
        assert "ELO per-user ratings (none shrinkage)" in capsys.readouterr().out

    def test_users_without_user_ids(
        self, small_log: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert main(["users", str(small_log)]) == 2
        assert "'user_id'" in capsys.readouterr().err

    def test_evaluate_with_truth(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``plb evaluate --truth`` scores every predictor against the truth, new users
        from their queries included; bad test users and vote counts are exit 2."""
        # a log smaller than the module's: the new users' check, which embeds every query
        # and fits the study's regressions, is nearly all of the time
        simulated = write_simulation(simulate(40, 20, 6, rng=1), tmp_path / "sim")
        doc = run_json(
            capsys, "evaluate", str(simulated["battles"]), "--truth", str(simulated["truth"])
        )
        predictors = {(r["method"], r["predictor"]) for r in doc["results"]}
        assert ("bt", "shrunk") in predictors and ("elo", "aggregate") in predictors
        assert all(r["spearman_truth"] is not None for r in doc["results"])
        ids = tmp_path / "ids.txt"
        ids.write_text("nobody\n")
        assert main(["evaluate", str(simulated["battles"]), "--test-users", str(ids)]) == 2
        assert "none of its ids voted" in capsys.readouterr().err
        assert main(["evaluate", str(simulated["battles"]), "--min-votes", "10000"]) == 2
        assert "no user has the 10000 votes needed" in capsys.readouterr().err

    def test_fit_writes_a_directory(
        self, simulated: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "fit"
        doc = run_json(capsys, "fit", str(simulated["battles"]), "--out", str(out))
        assert doc["n_users"] == 80
        for name in ("manifest.json", "leaderboard.json", "summary.json", "users.parquet"):
            assert (out / name).exists()
        agreement = pd.read_parquet(out / "agreement.parquet")
        assert set(agreement.shrinkage) == {"cv", "none"} and len(agreement) == 4 * 80
        fit = load_fit(out)
        assert fit.profiles is not None and len(fit.profiles) == 80
        assert fit.topics is not None and len(fit.topics) == len(doc["topics"]) == 10
        assert fit.topic_model_dir is not None and (fit.topic_model_dir / "topics.json").exists()
        parts = [n.partition(" / ")[2] for n in doc["timings"] if n.startswith("query features")]
        assert parts[0] == "" and {"embedding queries", "topics", "rating predictor"} <= set(parts)

    def test_fit_without_features(
        self, simulated: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "fit"
        doc = run_json(capsys, "fit", str(simulated["battles"]), "--out", str(out), "--no-features")
        assert doc["topics"] is None and doc["features"] is False
        fit = load_fit(out)
        assert fit.profiles is None and fit.topics is None and fit.topic_model_dir is None

    def test_simulate(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        doc = run_json(capsys, "simulate", "--out", str(tmp_path), "--users", "20", "--seed", "3")
        assert doc["users"] == 20 and Path(doc["battles"]).exists()
        assert main(["simulate", "--out", str(tmp_path), "--users", "0"]) == 2


def test_evaluate_tables_read_at_a_glance() -> None:
    from features.later_votes import WAYS
    from service.cli.evaluate import format_new_users

    rating = {"target": "shrunk", "method": "bt", "predictor": "contextual BT", "mae": 39.17,
              "improvement": None, "spearman_fitted": 0.5, "spearman_truth": None}  # fmt: skip
    votes = [
        {"known": 10, "way": way, "log_loss": 0.6 + i / 100, "accuracy": 0.6,
         "minus_aggregate": i / 100, "minus_aggregate_se": 0.001, "n_votes": 1096, "users": 31}
        for i, way in enumerate(WAYS)
    ]  # fmt: skip
    section = {"n_test_users": 31, "n_train_users": 120, "ratings": [rating], "votes": votes}
    text = format_new_users(section)
    assert "n/a" in text and "%" not in text.splitlines()[4]  # no share of a zero spread
    assert "after their first 10 votes: 1,096 votes of 31 users" in text
    assert "+0.0100 (0.0010)" in text  # each way against the aggregate, with its se
    for way in WAYS:
        assert way in text
