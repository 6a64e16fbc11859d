"""A small labelled corpus and its real MiniLM embeddings, shared by the feature tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from features.embeddings import make_embedder


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
def corpus_embeddings(corpus: tuple[list[str], np.ndarray]) -> np.ndarray:
    """Real all-MiniLM-L6-v2 (int8) embeddings of :func:`corpus`, computed once."""
    return make_embedder("minilm-int8").embed(corpus[0])
