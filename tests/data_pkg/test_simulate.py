"""Tests for ``data/simulate.py`` and ``data/prompts.py``: the synthetic arena."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data.prompts import TOPICS, WRITING_TRAITS, generate_prompts
from data.simulate import simulate
from data.simulation_files import load_simulation, load_truth, write_simulation
from data.truth import Simulation, SimulationParams, mean_spearman, spearman_with_population

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
COLUMNS = ["battle_id", "user_id", "prompt", "model_a", "model_b", "winner", "tstamp", "topic"]
WINNERS = {"model_a", "model_b", "tie", "tie (bothbad)"}


@pytest.fixture(scope="module")
def default() -> Simulation:
    return simulate()


def check_schema(sim: Simulation) -> None:
    b = sim.battles
    assert list(b.columns) == COLUMNS
    assert b["battle_id"].is_unique
    for col in ("battle_id", "user_id", "prompt", "model_a", "model_b", "winner", "topic"):
        assert all(isinstance(v, str) and v for v in b[col]), col
    assert (b["model_a"] != b["model_b"]).all()
    assert set(b["model_a"]) | set(b["model_b"]) <= set(sim.models)
    assert set(b["winner"]) <= WINNERS
    assert set(b["topic"]) <= set(TOPICS)
    assert set(b["user_id"]) <= set(sim.user_ratings.index)
    assert b["tstamp"].dtype == np.float64
    assert b["tstamp"].is_monotonic_increasing
    assert b.groupby("user_id")["tstamp"].apply(lambda t: t.is_monotonic_increasing).all()
    # truth frames line up with the models, topics and users
    assert list(sim.user_ratings.columns) == list(sim.models)
    assert list(sim.population_ratings.index) == list(sim.models)
    assert list(sim.user_topics.columns) == list(sim.topics) == list(TOPICS)
    # (atol: a truth read back from file is rounded)
    np.testing.assert_allclose(sim.user_ratings.mean(axis=1), 1000.0, atol=1e-3)
    np.testing.assert_allclose(sim.population_ratings.mean(), 1000.0, atol=1e-3)
    np.testing.assert_allclose(sim.population_ratings, sim.user_ratings.mean(axis=0), atol=1e-3)
    np.testing.assert_allclose(sim.user_topics.sum(axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(sim.model_popularity.sum(), 1.0, atol=1e-4)


def test_schema_at_defaults(default: Simulation) -> None:
    check_schema(default)
    assert len(default.models) == 15 and len(default.user_ratings) == 400
    # users are interleaved in time, not one block each
    switches = int((default.battles["user_id"] != default.battles["user_id"].shift()).sum())
    assert switches > 5 * 400


@settings(max_examples=12, deadline=None)
@given(
    n_users=st.integers(1, 30),
    per_user=st.integers(1, 12),
    n_models=st.integers(2, 25),
    seed=st.integers(0, 2**32 - 1),
)
def test_schema_holds_for_any_size(n_users: int, per_user: int, n_models: int, seed: int) -> None:
    sim = simulate(n_users, per_user, n_models, rng=seed)
    check_schema(sim)
    assert len(set(sim.models)) == n_models
    assert sim.battles.groupby("user_id").size().min() >= min(3, per_user)


def test_same_seed_same_output_and_different_seed_differs() -> None:
    a, b = simulate(60, 15, 8, rng=7), simulate(60, 15, 8, rng=7)
    pd.testing.assert_frame_equal(a.battles, b.battles)
    pd.testing.assert_frame_equal(a.user_ratings, b.user_ratings)
    c = simulate(60, 15, 8, rng=np.random.default_rng(7))  # a Generator works the same way
    pd.testing.assert_frame_equal(a.battles, c.battles)
    d = simulate(60, 15, 8, rng=8)
    assert not a.user_ratings.equals(d.user_ratings)
    assert a.battles["battle_id"].iloc[0] != d.battles["battle_id"].iloc[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_heterogeneity_like_the_real_study(seed: int) -> None:
    sim = simulate(rng=seed)
    rho = spearman_with_population(sim.user_ratings, sim.population_ratings)
    assert 0.3 <= rho.mean() <= 0.5
    assert rho.mean() == pytest.approx(sim.mean_spearman())
    assert (rho < 0.1).mean() > 0.03  # some users disagree with the crowd outright


def test_spearman_helper_matches_scipy(default: Simulation) -> None:
    from scipy.stats import spearmanr

    users = default.user_ratings.iloc[:25]
    expected = [spearmanr(row, default.population_ratings).statistic for _, row in users.iterrows()]
    got = spearman_with_population(users, default.population_ratings)
    np.testing.assert_allclose(got, expected)
    shuffled = default.population_ratings.sample(frac=1.0, random_state=0)  # order-free
    assert mean_spearman(users, shuffled) == pytest.approx(np.mean(expected))
    with pytest.raises(ValueError, match="lacks models"):
        mean_spearman(users, default.population_ratings.iloc[1:])


def test_tie_share_like_arena(default: Simulation) -> None:
    winners = default.battles["winner"].value_counts(normalize=True)
    ties = winners.get("tie", 0.0) + winners.get("tie (bothbad)", 0.0)
    assert 0.15 <= ties <= 0.25
    assert winners.get("tie (bothbad)", 0.0) > 0.03
    assert abs(winners["model_a"] - winners["model_b"]) < 0.05  # no position bias
    bothbad = default.battles.assign(bb=default.battles["winner"] == "tie (bothbad)")
    by_topic = bothbad.groupby("topic")["bb"].mean()
    assert by_topic["math"] > by_topic["chat"]  # harder prompts: both models fail more


def test_votes_vary_around_battles_per_user(default: Simulation) -> None:
    votes = default.battles.groupby("user_id").size()
    assert votes.mean() == pytest.approx(60, rel=0.15)
    assert votes.min() >= 3 and votes.std() > 10


def test_popular_models_are_shown_more(default: Simulation) -> None:
    shown = pd.concat([default.battles["model_a"], default.battles["model_b"]]).value_counts()
    shown = shown.reindex(list(default.models)) / shown.sum()
    assert np.corrcoef(shown, default.model_popularity)[0, 1] > 0.95
    assert shown.max() / shown.min() > 2  # not uniform


def test_prompt_topics_follow_users_mixtures(default: Simulation) -> None:
    counts = pd.crosstab(default.battles["user_id"], default.battles["topic"])
    counts = counts.reindex(columns=list(TOPICS), fill_value=0)
    empirical = counts.div(counts.sum(axis=1), axis=0)
    mixture = default.user_topics.loc[empirical.index]
    tv = 0.5 * (empirical - mixture.to_numpy()).abs().sum(axis=1).mean()
    shuffled = mixture.sample(frac=1.0, random_state=0).to_numpy()
    tv_shuffled = 0.5 * (empirical - shuffled).abs().sum(axis=1).mean()
    assert tv < 0.5 * tv_shuffled
    focused = mixture.max(axis=1) > 0.7
    agree = empirical[focused].idxmax(axis=1) == mixture[focused].idxmax(axis=1)
    assert agree.mean() > 0.9
    # concentrated mixtures: most users care about one to three topics
    n_main = (default.user_topics > 0.1).sum(axis=1)
    assert n_main.between(1, 3).mean() > 0.8


def test_writing_style_shows_in_prompts(default: Simulation) -> None:
    b = default.battles
    per_user = (
        pd.DataFrame(
            {
                "length": b["prompt"].str.len(),
                "lower": b["prompt"] == b["prompt"].str.lower(),
                "user_id": b["user_id"],
            }
        )
        .groupby("user_id")
        .mean()
    )
    styles = default.user_styles.loc[per_user.index]
    assert np.corrcoef(per_user["length"], styles["writing_length"])[0, 1] > 0.3
    assert np.corrcoef(per_user["lower"], styles["writing_formality"])[0, 1] < -0.3
    # and the writing style carries a signal about the answer-style preferences
    assert np.corrcoef(styles["writing_length"], styles["verbosity"])[0, 1] > 0.4


def test_prompt_generator_direct() -> None:
    rng = np.random.default_rng(0)
    topics = np.repeat(np.arange(len(TOPICS)), 40)
    prompts = generate_prompts(topics, rng.normal(size=(len(topics), 3)), rng)
    assert len(prompts) == len(topics) and all(isinstance(p, str) and p for p in prompts)
    assert len(set(prompts)) > 0.8 * len(prompts)
    assert not any("{" in p and "```" not in p for p in prompts)  # no unfilled slots
    with pytest.raises(ValueError, match="writing"):
        generate_prompts(topics, np.zeros((3, len(WRITING_TRAITS))), rng)
    with pytest.raises(ValueError, match="topics"):
        generate_prompts(np.array([99]), np.zeros((1, 3)), rng)


def test_truth_round_trip(tmp_path: Path) -> None:
    sim = simulate(60, 12, 6, rng=11)
    paths = write_simulation(sim, tmp_path / "out")
    assert paths == {
        "battles": tmp_path / "out/battles.jsonl.gz",
        "truth": tmp_path / "out/truth.json",
    }
    truth = load_truth(paths["truth"])
    assert load_truth(tmp_path / "out").models == truth.models  # a directory works too
    assert truth.models == sim.models and truth.topics == sim.topics
    assert truth.params == sim.params and truth.seed == 11
    for name in ("user_ratings", "user_topics", "user_styles", "model_topic_strength",
                 "model_styles", "topic_world"):  # fmt: skip
        pd.testing.assert_frame_equal(getattr(truth, name), getattr(sim, name), atol=1e-3)
    for name in ("population_ratings", "model_quality", "model_popularity"):
        pd.testing.assert_series_equal(getattr(truth, name), getattr(sim, name), atol=1e-3)
    back = load_simulation(tmp_path / "out")
    pd.testing.assert_frame_equal(back.battles, sim.battles, check_exact=True)
    assert sim.battles["prompt"].str.contains('\n|"', regex=True).any()  # escaping covered
    # JSON Lines with the docs/SPEC.md section 1 fields; the same simulation gives the same bytes
    with gzip.open(paths["battles"], "rt", encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    assert list(first) == COLUMNS
    again = write_simulation(sim, tmp_path / "again")
    assert again["battles"].read_bytes() == paths["battles"].read_bytes()
    assert again["truth"].read_bytes() == paths["truth"].read_bytes()


def test_load_truth_rejects_other_files(tmp_path: Path) -> None:
    bad = tmp_path / "truth.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a simulation truth file"):
        load_truth(bad)
    with pytest.raises(ValueError, match="Cannot read"):
        load_truth(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"n_models": 1}, "n_models"),
        ({"n_users": 0}, "n_users"),
        ({"battles_per_user": 2.5}, "battles_per_user"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, object], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        simulate(**kwargs)  # type: ignore[arg-type]


def test_bad_rng_and_params() -> None:
    with pytest.raises(TypeError, match="rng"):
        simulate(5, 5, rng="seed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="topic_factor"):
        SimulationParams(topic_factor=1.5)
    with pytest.raises(ValueError, match="quality_sd"):
        SimulationParams(quality_sd=-0.1)
    with pytest.raises(ValueError, match="population_style"):
        SimulationParams(population_style=(0.0, 1.0))  # type: ignore[arg-type]


def test_params_move_heterogeneity() -> None:
    shared = simulate(200, 5, rng=0, params=SimulationParams(quality_sd=1.5, topic_sd=0.1))
    personal = simulate(200, 5, rng=0, params=SimulationParams(quality_sd=0.05))
    assert shared.mean_spearman() > 0.8 > 0.3 > personal.mean_spearman()


def test_sample_files() -> None:
    battles, truth_file = SAMPLE / "battles.jsonl.gz", SAMPLE / "truth.json"
    assert battles.stat().st_size + truth_file.stat().st_size < 5 * 2**20
    sample = load_simulation(SAMPLE)
    check_schema(sample)
    assert sample.seed == 0 and len(sample.user_ratings) == 400 and len(sample.models) == 15
    assert 50 <= len(sample.battles) / 400 <= 70
    # the sample is what the code makes with seed 0 (regenerate it after changing the world:
    # write_simulation(simulate(400, 60, 15, rng=0), "data/sample"))
    fresh = simulate(400, 60, 15, rng=0)
    pd.testing.assert_frame_equal(sample.user_ratings, fresh.user_ratings, atol=1e-3)
    assert sample.battles["prompt"].head(50).tolist() == fresh.battles["prompt"].head(50).tolist()


# -- adversarial voters (issue 15) ---------------------------------------------------------


def test_attackers_off_by_default_leave_the_output_unchanged(tmp_path: Path) -> None:
    plain = simulate(80, 15, 8, rng=4)
    off = simulate(80, 15, 8, rng=4, random_voters=0.0, brigade=0.0)
    pd.testing.assert_frame_equal(plain.battles, off.battles, check_exact=True)
    assert plain.attackers is None and plain.brigade_model is None
    a, b = write_simulation(plain, tmp_path / "a"), write_simulation(off, tmp_path / "b")
    assert a["truth"].read_bytes() == b["truth"].read_bytes()
    assert "attackers" not in json.loads(a["truth"].read_text())
    assert load_truth(a["truth"]).attackers is None


def test_attackers_are_marked_in_the_truth_and_vote_as_told(tmp_path: Path) -> None:
    honest = simulate(400, 30, 10, rng=6)
    sim = simulate(400, 30, 10, rng=6, random_voters=0.05, brigade=0.02)
    assert sim.attackers is not None and sim.brigade_model is not None
    assert sim.attackers.value_counts().to_dict() == {"random": 20, "brigade": 8}
    assert sim.brigade_model in set(sim.population_ratings.nsmallest(3).index)
    b = sim.battles
    kind = b["user_id"].map(sim.attackers).fillna("honest")
    brigade = b[kind == "brigade"]
    target = sim.brigade_model
    assert ((brigade["model_a"] == target) | (brigade["model_b"] == target)).all()
    winner = np.where(brigade["winner"] == "model_a", brigade["model_a"], brigade["model_b"])
    assert (winner == target).all() and brigade["winner"].isin(["model_a", "model_b"]).all()
    random = b[kind == "random"]
    assert random["winner"].isin(["model_a", "model_b"]).all()
    assert 0.4 < (random["winner"] == "model_a").mean() < 0.6
    # the honest users vote exactly as in the world without attackers
    plain = honest.battles.set_index("battle_id")
    mine = b[kind == "honest"].set_index("battle_id")
    pd.testing.assert_frame_equal(mine, plain.loc[mine.index])
    check_schema(sim)
    # written and read back
    write_simulation(sim, tmp_path / "out")
    truth = load_truth(tmp_path / "out")
    assert truth.brigade_model == target
    pd.testing.assert_series_equal(truth.attackers, sim.attackers)
    assert load_simulation(tmp_path / "out").attackers is not None


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"random_voters": -0.1}, "random_voters"),
        ({"brigade": 1.0}, "brigade"),
        ({"random_voters": 0.6, "brigade": 0.5}, "sum below 1"),
    ],
)
def test_bad_attacker_shares_are_named(kwargs: dict[str, float], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        simulate(10, 5, 4, **kwargs)  # type: ignore[arg-type]
