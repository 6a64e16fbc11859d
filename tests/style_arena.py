"""A simulated arena where one model wins by the length of its answers alone.

Three models of one strength; ``long`` answers four times longer than the others (each
answer's length varying about its model's), and voters pick the longer answer more often
(``by`` natural-log odds per doubling). The raw board ranks ``long`` first; a board with
style control must not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["length_battles", "write_length_log"]


def length_battles(n: int = 1500, seed: int = 0, by: float = 0.5) -> pd.DataFrame:
    """``n`` votes of the arena, with ``answer_a`` and ``answer_b``."""
    rng = np.random.default_rng(seed)
    names = np.array(["long", "mid", "short"])
    pairs = np.array([rng.choice(3, 2, replace=False) for _ in range(n)])
    words = np.array([400, 100, 100])
    # each answer's length varies around its model's (else length and model coincide)
    a = np.rint(words[pairs[:, 0]] * 2.0 ** rng.normal(0.0, 0.7, n)).astype(int) + 1
    b = np.rint(words[pairs[:, 1]] * 2.0 ** rng.normal(0.0, 0.7, n)).astype(int) + 1
    p = 1.0 / (1.0 + np.exp(-by * np.log2(a / b)))
    winner = np.where(rng.random(n) < p, "model_a", "model_b")
    return pd.DataFrame(
        {
            "model_a": names[pairs[:, 0]],
            "model_b": names[pairs[:, 1]],
            "winner": winner,
            "user_id": [f"u{i % 40}" for i in range(n)],
            "prompt": [f"question {i % 50}?" for i in range(n)],
            "answer_a": ["word " * int(x) for x in a],
            "answer_b": ["word " * int(x) for x in b],
        }
    )


def write_length_log(path: Path, n: int = 1500, seed: int = 0) -> Path:
    """The arena's votes as a JSON Lines battle log at ``path``."""
    length_battles(n, seed).to_json(path, orient="records", lines=True)
    return path
