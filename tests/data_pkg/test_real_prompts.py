"""Tests for ``data/real_prompts.py`` and ``simulate(..., prompts=...)``: real prompt text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from data.prompt_topics import group_clusters
from data.prompts import TOPICS, WRITING_TRAITS
from data.real_prompts import (
    RealPrompts,
    choose_prompts,
    default_real_prompts_path,
    load_real_prompts,
    measure_traits,
)
from data.simulate import simulate
from data.simulation_files import load_simulation, write_simulation

# Cluster names and texts the lexicon was not written for, one cluster per topic.
CLUSTERS: dict[str, tuple[str, list[str]]] = {
    "coding": (
        "Go Microservice Bugs",
        [
            "Why does my Go server panic with a nil map?",
            'fix this pls\n```go\nfunc main() {\n  var m map[string]int\n  m["a"] = 1\n}\n```',
            "Could you please write a Python function that parses JSON logs, and explain "
            "each step? I would like a detailed answer with examples and tests. Thank you.",
            "Refactor this code:\n\n- one\n- two\n- three\n\nUse a table of functions.",
        ],
    ),
    "math": (
        "Combinatorics Homework",
        ["How many ways can 5 people sit at a round table?", "prove that sqrt(3) is irrational"],
    ),
    "creative_writing": (
        "Sonnets and Short Fiction",
        ["Write a sonnet about autumn.", "Write a short story with a twist ending."],
    ),
    "business": (
        "Pricing a SaaS Startup",
        ["How should a startup price its product?", "Write a marketing email for customers."],
    ),
    "science": (
        "Orbital Physics Questions",
        ["Why do planets orbit the sun?", "Explain the physics of energy in a quantum atom."],
    ),
    "health": (
        "Knee Injury Recovery",
        ["What exercise helps knee pain?", "Is ibuprofen safe for a knee injury? doctor says"],
    ),
    "travel_food": (
        "Weekend in Lisbon and Pastries",
        ["Plan a trip to Lisbon with food tips", "Give me a recipe for custard tarts to bake."],
    ),
    "chat": (
        "Small Talk with the Bot",
        ["hey how r u", "Tell me a joke, I feel bored. What is your opinion on life?"],
    ),
}


def write_prompts(path: Path, extra: list[dict[str, object]] | None = None) -> Path:
    rows: list[dict[str, object]] = [
        {"uid": f"{topic}-{i}", "cluster": cluster, "prompt": text}
        for topic, (cluster, texts) in CLUSTERS.items()
        for i, text in enumerate(texts)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows + (extra or [])) + "\n")
    return path


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    return write_prompts(tmp_path / "prompts.jsonl")


def test_load_groups_unseen_cluster_names_into_every_topic(prompt_file: Path) -> None:
    real = load_real_prompts(prompt_file)
    assert isinstance(real, RealPrompts) and len(real) == 18 and real.source == str(prompt_file)
    by_cluster = dict(zip(real.cluster, real.topic, strict=True))
    assert by_cluster == {cluster: topic for topic, (cluster, _) in CLUSTERS.items()}
    assert set(real.topic_sizes()) == set(TOPICS) and all(real.topic_sizes().values())
    assert real.uid[0] == "coding-0" and real.prompt[1].startswith("fix this pls")


def test_grouping_falls_back_to_tfidf_without_lexicon_hits() -> None:
    # No lexicon word anywhere: the TF-IDF similarity to the template bank decides.
    got = group_clusters(["Zzq", "Qqz"], ["What should I see in Kyoto?", "Tell me a riddle."])
    assert got == {"Zzq": "travel_food", "Qqz": "chat"}


def test_uid_is_optional_and_topic_overrides(tmp_path: Path) -> None:
    extra: list[dict[str, object]] = [
        {"cluster": "Go Microservice Bugs", "prompt": "a question"},
        {"cluster": "Go Microservice Bugs", "prompt": "another", "topic": "health"},
    ]
    real = load_real_prompts(write_prompts(tmp_path / "p.jsonl", extra))
    assert real.uid[-2:] == ("19", "20")  # line numbers
    assert real.topic[-2:] == ("coding", "health")


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("{not json", ["line 2", "not valid JSON"]),
        ("[1, 2]", ["line 2", "JSON object", "list"]),
        ('{"cluster": "c"}', ["line 2", "'prompt'", "None"]),
        ('{"cluster": "", "prompt": "p"}', ["line 2", "'cluster'", "''"]),
        ('{"cluster": "c", "prompt": 3}', ["line 2", "'prompt'", "3"]),
        ('{"cluster": "c", "prompt": "p", "uid": 7}', ["line 2", "'uid'", "7"]),
        ('{"cluster": "c", "prompt": "p", "topic": "sport"}', ["line 2", "'topic'", "'sport'"]),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, line: str, words: list[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"cluster": "c", "prompt": "fine"}\n' + line + "\n")
    with pytest.raises(ValueError) as info:
        load_real_prompts(path)
    assert all(word in str(info.value) for word in [str(path), *words]), str(info.value)


def test_empty_and_missing_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(ValueError, match="holds no prompts"):
        load_real_prompts(tmp_path / "empty.jsonl")
    with pytest.raises(ValueError, match="Cannot read prompt file"):
        load_real_prompts(tmp_path / "missing.jsonl")


def test_measured_traits_follow_the_text() -> None:
    raw = measure_traits(
        [
            "hey fix this pls",
            "Could you please explain closures? Thank you.",
            "# Plan\n\n- a\n- b\n\n| x | y |\n|---|---|\nAs a table in markdown.",
            " ".join(["word"] * 200),
        ]
    )
    length, formality, markdown = raw.T
    assert length[3] == length.max() and formality[1] > 0 > formality[0]
    assert markdown[2] == markdown.max() and markdown[0] == 0.0


def test_traits_are_standardised_within_topic(prompt_file: Path) -> None:
    real = load_real_prompts(prompt_file)
    assert real.traits.shape == (len(real), len(WRITING_TRAITS))
    assert not real.traits.flags.writeable
    for t in range(len(TOPICS)):
        rows = real.topic_index == t
        np.testing.assert_allclose(real.traits[rows].mean(axis=0), 0.0, atol=1e-12)
    assert np.abs(real.traits).max() <= 3.0


def test_a_long_winded_writer_picks_longer_prompts(prompt_file: Path) -> None:
    real = load_real_prompts(prompt_file)
    n, coding = 4000, TOPICS.index("coding")
    topics = np.full(n, coding)
    length = real.traits[:, 0]
    picks = {}
    for sign in (1.0, -1.0):
        writing = np.tile([2.0 * sign, 0.0, 0.0], (n, 1))
        picks[sign] = choose_prompts(real, topics, writing, np.random.default_rng(0))
    assert set(real.topic_index[picks[1.0]]) == {coding}
    assert length[picks[1.0]].mean() > length[picks[-1.0]].mean() + 1.0
    longest = int(
        np.flatnonzero(real.topic_index == coding)[np.argmax(length[real.topic_index == coding])]
    )
    assert (picks[1.0] == longest).mean() > 0.5 > (picks[-1.0] == longest).mean()
    uniform = choose_prompts(real, topics, writing, np.random.default_rng(0), strength=0.0)
    assert np.bincount(uniform, minlength=len(real))[real.topic_index == coding].min() > 800


def test_choice_is_deterministic_and_checks_its_input(prompt_file: Path) -> None:
    real = load_real_prompts(prompt_file)
    topics, writing = np.arange(16) % 8, np.random.default_rng(1).normal(size=(16, 3))
    first = choose_prompts(real, topics, writing, np.random.default_rng(5))
    np.testing.assert_array_equal(
        first, choose_prompts(real, topics, writing, np.random.default_rng(5))
    )
    with pytest.raises(ValueError, match="'writing' must have shape"):
        choose_prompts(real, topics, writing[:, :2], np.random.default_rng(5))
    only_math = RealPrompts(("a",), ("c",), ("p",), ("math",))
    with pytest.raises(ValueError, match="no prompts of topic 'coding'"):
        choose_prompts(only_math, [0], [[0.0, 0.0, 0.0]], np.random.default_rng(5))


def test_simulate_writes_real_text_deterministically(prompt_file: Path, tmp_path: Path) -> None:
    real = load_real_prompts(prompt_file)
    sim = simulate(80, 12, 5, rng=3, prompts=prompt_file)
    again = simulate(80, 12, 5, rng=3, prompts=real)
    assert sim.battles.equals(again.battles) and sim.user_ratings.equals(again.user_ratings)
    text_topic = dict(zip(real.prompt, real.topic, strict=True))
    assert set(sim.battles["prompt"]) <= set(real.prompt)
    assert (sim.battles["prompt"].map(text_topic) == sim.battles["topic"]).all()
    assert sim.prompts == str(prompt_file)
    write_simulation(sim, tmp_path / "sim")
    truth = json.loads((tmp_path / "sim" / "truth.json").read_text())
    assert truth["prompts"] == str(prompt_file) and "prompt_choice" in truth
    back = load_simulation(tmp_path / "sim")
    assert back.prompts == str(prompt_file) and back.battles["prompt"].equals(sim.battles["prompt"])
    assert simulate(20, 5, 3, rng=3).prompts is None


def test_writing_style_shows_through_which_prompts_users_pick(prompt_file: Path) -> None:
    real = load_real_prompts(prompt_file)
    sim = simulate(300, 30, 4, rng=7, prompts=real)
    index = {text: i for i, text in enumerate(real.prompt)}
    trait = real.traits[sim.battles["prompt"].map(index).to_numpy(), 0]
    writer = sim.user_styles.loc[sim.battles["user_id"], "writing_length"].to_numpy()
    assert np.corrcoef(writer, trait)[0, 1] > 0.3


def test_topics_without_prompts_get_no_votes(tmp_path: Path) -> None:
    rows = [{"cluster": "Algebra", "prompt": f"solve equation {i}"} for i in range(3)]
    rows += [{"cluster": "Poems", "prompt": f"write a poem {i}"} for i in range(3)]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sim = simulate(50, 10, 4, rng=1, prompts=path)
    assert set(sim.battles["topic"]) <= {"math", "creative_writing"}
    mixture = sim.user_topics
    np.testing.assert_allclose(mixture.sum(axis=1), 1.0)
    assert (mixture.drop(columns=["math", "creative_writing"]) == 0).all().all()


def test_default_path_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PLB_REAL_PROMPTS", str(tmp_path / "mine.jsonl"))
    assert default_real_prompts_path() == tmp_path / "mine.jsonl"
    monkeypatch.delenv("PLB_REAL_PROMPTS")
    found = default_real_prompts_path()
    assert found is None or found.name == "arena-hard-v0.1.jsonl"


def test_the_arena_hard_file_fills_every_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLB_REAL_PROMPTS", raising=False)
    path = default_real_prompts_path()
    if path is None:
        pytest.skip("../shared/data/real-prompts/arena-hard-v0.1.jsonl is not present")
    real = load_real_prompts(path)
    assert len(real) == 500 and len(set(real.cluster)) == 250
    sizes = real.topic_sizes()
    assert all(sizes[t] > 0 for t in TOPICS), sizes
    assert max(sizes, key=lambda t: sizes[t]) == "coding"
    clusters = dict(zip(real.cluster, real.topic, strict=True))
    assert clusters["Python Web Scraping"] == "coding"
    assert clusters["Baking and Peanut Butter Recipes"] == "travel_food"
    assert clusters["Options Trading Strategies"] == "business"
