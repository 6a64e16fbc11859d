"""A simulated arena with a few prompts asked thousands of times (issue 34, item 4).

:func:`with_repeated_prompts` adds to a :class:`data.simulate.Simulation`'s log the votes
of prompts repeated far more than any other:

* **bot prompts** (``n_bots``), each asked ``bot_votes`` times by one-shot voters (a new
  ``user_id`` a vote) whose taste is the prompt's own: a model utility vector drawn
  afresh, ``N(0, bot_sd)`` per model, unrelated to anyone's. They stand for a scripted
  test question or a greeting answered by whoever happens to ask it; they are what a cap
  should thin;
* **popular prompts** (``n_popular``), each asked ``popular_votes`` times by the same
  one-shot voters but with the *population's* taste (its true ratings): a prompt everyone
  asks, whose votes are as good as any; a cap only wastes them.

Each repeated prompt's text comes in a few spellings (case, spaces, a trailing newline),
as real logs have them, so that only a normalised comparison counts them as one. The
votes are spread over the log's time span and models are drawn by the simulation's
popularity; outcomes follow Bradley-Terry (no ties). The distinct-prompt votes of the
original log are untouched, and :attr:`RepeatedArena.repeated` marks the added rows:
held-out judging scores a board on the distinct-prompt votes alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from data.truth import Simulation
from ranking.pairwise import ELO_PER_NAT
from ranking.types import CENTER

__all__ = ["RepeatedArena", "with_repeated_prompts"]

#: The spellings each repeated prompt's text comes in (applied to its base text).
_SPELLINGS = (str, str.upper, lambda t: f"  {t} ", lambda t: t.replace(" ", "  ") + "\n")


@dataclass(frozen=True)
class RepeatedArena:
    """A simulated log with repeated prompts added.

    Attributes
    ----------
    battles : pandas.DataFrame
        The simulation's battles and the added ones, sorted by ``tstamp``.
    repeated : ndarray of bool
        ``(n,)`` true for an added vote (a bot or popular prompt's), in the rows' order.
    bot_ratings : pandas.DataFrame
        Each bot prompt's own taste (Elo scale, mean 1000), one row a prompt text.
    """

    battles: pd.DataFrame
    repeated: npt.NDArray[np.bool_]
    bot_ratings: pd.DataFrame


def _check(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"Argument {name!r} must be an integer >= 0, not {value!r}.")
    return int(value)


def with_repeated_prompts(
    sim: Simulation,
    *,
    n_bots: int = 3,
    bot_votes: int = 3000,
    bot_sd: float = 1.5,
    n_popular: int = 0,
    popular_votes: int = 1000,
    rng: np.random.Generator | int | None = 0,
) -> RepeatedArena:
    """``sim``'s log with bot and popular prompts repeated thousands of times.

    Parameters
    ----------
    sim : Simulation
        The arena (:func:`data.simulate.simulate`).
    n_bots, bot_votes : int
        Bot prompts, and the votes on each.
    bot_sd : float
        Spread of a bot prompt's model utilities (natural-log units; 1.5 is about 260
        Elo points).
    n_popular, popular_votes : int
        Popular prompts voted with the population's taste, and the votes on each.
    rng : numpy.random.Generator or int, optional
        Seed of everything drawn here.

    Returns
    -------
    RepeatedArena
    """
    n_bots, bot_votes = _check("n_bots", n_bots), _check("bot_votes", bot_votes)
    n_popular, popular_votes = (
        _check("n_popular", n_popular),
        _check("popular_votes", popular_votes),
    )
    if not (np.isfinite(bot_sd) and bot_sd >= 0):
        raise ValueError(f"Argument 'bot_sd' must be a finite number >= 0, not {bot_sd!r}.")
    gen = np.random.default_rng(rng)
    models = list(sim.models)
    popularity = sim.model_popularity.reindex(models).to_numpy(dtype=np.float64)
    popularity = popularity / popularity.sum()
    population = (sim.population_ratings.reindex(models).to_numpy() - CENTER) / ELO_PER_NAT
    tastes = [gen.normal(0.0, bot_sd, len(models)) for _ in range(n_bots)]
    texts = [f"bot test question number {i}: reply with one word" for i in range(n_bots)]
    texts += [f"hello, what can you do? (popular {i})" for i in range(n_popular)]
    sizes = [bot_votes] * n_bots + [popular_votes] * n_popular
    utilities = tastes + [population] * n_popular
    frames = []
    stamps = sim.battles["tstamp"].to_numpy(dtype=np.float64)
    for p, (text, size, utility) in enumerate(zip(texts, sizes, utilities, strict=True)):
        if size == 0:
            continue
        a = gen.choice(len(models), size=size, p=popularity)
        b = gen.choice(len(models), size=size, p=popularity)
        while (same := np.flatnonzero(a == b)).size:
            b[same] = gen.choice(len(models), size=same.size, p=popularity)
        wins_a = gen.random(size) < 1.0 / (1.0 + np.exp(utility[b] - utility[a]))
        spelling = gen.integers(len(_SPELLINGS), size=size)
        frames.append(
            pd.DataFrame(
                {
                    "battle_id": [f"rep{p}-{i:06d}" for i in range(size)],
                    "user_id": [f"one-shot-{p}-{i:06d}" for i in range(size)],
                    "prompt": [_SPELLINGS[s](text) for s in spelling],
                    "model_a": np.array(models, dtype=object)[a],
                    "model_b": np.array(models, dtype=object)[b],
                    "winner": np.where(wins_a, "model_a", "model_b").astype(object),
                    "tstamp": np.round(gen.uniform(stamps.min(), stamps.max(), size), 3),
                    "topic": "repeated",
                }
            )
        )
    original = sim.battles.assign(_added=False)
    added = [f.assign(_added=True) for f in frames]
    battles = pd.concat([original, *added], ignore_index=True)
    battles = battles.sort_values("tstamp", kind="stable", ignore_index=True)
    repeated = battles.pop("_added").to_numpy(dtype=bool)
    bot_ratings = pd.DataFrame(
        [CENTER + ELO_PER_NAT * (t - t.mean()) for t in tastes],
        index=pd.Index(texts[:n_bots], name="prompt"),
        columns=models,
    )
    return RepeatedArena(battles, repeated, bot_ratings)
