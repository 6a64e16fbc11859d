"""``service.pipeline.config``: the options of a fit and the grid, said once."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import build_parser
from service.cli.fit import fit_config
from service.pipeline import GRID, FitConfig, build_predictor, load_fit


def test_the_grid_is_bt_and_elo_each_with_and_without_shrinkage() -> None:
    assert GRID == (("bt", "cv"), ("bt", "none"), ("elo", "cv"), ("elo", "none"))


def test_the_defaults_are_plb_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLB_DASK_SCHEDULER", raising=False)
    args = build_parser().parse_args(["fit", "battles.jsonl", "--out", "fit"])
    assert fit_config(args) == FitConfig()


@pytest.mark.parametrize(
    ("field", "value"),
    [("min_battles", 0), ("n_topics", 0), ("seed", -1), ("fraction", 1.0), ("fraction", 0.0)],
)
def test_a_bad_option_names_the_argument_and_the_value(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"Argument '{field}' .*{value}"):
        FitConfig(**{field: value})  # type: ignore[arg-type]


def test_a_fit_directory_records_its_configuration(shared_fit: Path) -> None:
    config = load_fit(shared_fit).config  # plb fit --n-topics 4 (conftest.shared_fit)
    assert (config.n_topics, config.embedding, config.seed, config.min_battles) == (4, None, 0, 10)
    assert FitConfig.recorded({"seed": 3}, {"embedding": "tfidf", "n_topics": 6}) == FitConfig(
        seed=3, embedding="tfidf", n_topics=6
    )


def test_the_predictor_chain_holds_the_topic_model_it_returns() -> None:
    predictor, topics = build_predictor(FitConfig(embedding="tfidf", n_topics=3, seed=5))
    assert predictor.profiler.topic_model is topics
    assert (topics.embedding, topics.n_topics, topics.random_state) == ("tfidf", 3, 5)
    assert predictor.random_state == 5
