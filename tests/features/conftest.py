"""A small labelled corpus and its real MiniLM embeddings, shared by the feature tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from features.embeddings import make_embedder
from tests.conftest import built_once


@pytest.fixture(scope="session")
def labelled_battles() -> pd.DataFrame:
    """About 1,200 simulated battles of 40 users, with prompts and their true topic."""
    return simulate(40, 30, 6, rng=7).battles


@pytest.fixture(scope="session")
def corpus(labelled_battles: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """400 distinct prompts and their true topics."""
    distinct = labelled_battles.drop_duplicates("prompt").iloc[:400]
    return distinct["prompt"].tolist(), distinct["topic"].astype(str).to_numpy()


@pytest.fixture(scope="session")
def corpus_embeddings(
    corpus: tuple[list[str], np.ndarray], tmp_path_factory: pytest.TempPathFactory
) -> np.ndarray:
    """Real all-MiniLM-L6-v2 (int8) embeddings of :func:`corpus`, computed once a run."""

    def build(folder: Path) -> None:
        np.save(folder / "embeddings.npy", make_embedder("minilm-int8").embed(corpus[0]))

    return np.load(built_once(tmp_path_factory, "corpus-embeddings", build) / "embeddings.npy")
