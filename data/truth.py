"""What a simulated arena knows: its parameters, the truth, and rankings against it.

:class:`SimulationParams` are the knobs of :func:`data.simulate.simulate`;
:class:`Truth` is every user's and the population's true rating per model (and the
users' traits), :class:`Simulation` a truth with its battle log. The truth's conventions
are in the docstring of :mod:`data.simulate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from ranking.agreement import spearman_per_row

__all__ = [
    "STYLE_TRAITS",
    "Simulation",
    "SimulationParams",
    "Truth",
    "mean_spearman",
    "spearman_with_population",
]

#: Answer-style traits of models, and the matching preferences of users.
STYLE_TRAITS: tuple[str, ...] = ("verbosity", "formality", "markdown")


@dataclass(frozen=True)
class SimulationParams:
    """The knobs of the world; the defaults give a mean Spearman of about 0.4.

    All scales are natural-log strength (1 unit = 174 Elo points).

    Attributes
    ----------
    quality_sd : float
        Spread of the models' global quality (shared by everyone: drives agreement).
    topic_sd : float
        Spread of the models' per-topic strengths.
    topic_factor : float
        Share (0..1) of the topic-strength variance along the technical <-> creative axis.
    style_weight : float
        Utility per unit of (preference x trait).
    population_style : tuple of 3 float
        Population-mean preference for ``verbosity``, ``formality``, ``markdown``; users
        scatter around it with unit standard deviation.
    idiosyncratic_sd : float
        Spread of a user's idiosyncratic taste per model.
    topic_concentration : float
        Total Dirichlet concentration of users' topic mixtures (small: concentrated).
    writing_correlation : float
        Correlation between a user's answer-style preferences and their writing style.
    vote_dispersion : float
        Lognormal sigma of the number of votes per user.
    min_votes : int
        Fewest votes a user casts (capped at ``battles_per_user``).
    popularity_sd : float
        Spread of the models' log popularity (how often they are shown).
    popularity_quality : float
        Correlation between popularity and quality.
    tie_strength : float
        Davidson tie parameter ``nu`` of a typical user.
    tie_propensity_sd : float
        Lognormal sigma of users' tie propensity around ``tie_strength``.
    bothbad_slope : float
        Slope of P(bothbad | tie) in (difficulty - mean utility of the two models).
    bothbad_offset : float
        Log-odds offset of P(bothbad | tie).
    start : float
        Unix time of the first possible vote.
    days : float
        Length of the collection period.
    """

    quality_sd: float = 0.32
    topic_sd: float = 0.7
    topic_factor: float = 0.5
    style_weight: float = 0.3
    population_style: tuple[float, float, float] = (0.4, 0.0, 0.2)
    idiosyncratic_sd: float = 0.2
    topic_concentration: float = 1.0
    writing_correlation: float = 0.7
    vote_dispersion: float = 0.6
    min_votes: int = 3
    popularity_sd: float = 0.5
    popularity_quality: float = 0.4
    tie_strength: float = 0.6
    tie_propensity_sd: float = 0.5
    bothbad_slope: float = 1.5
    bothbad_offset: float = 0.0
    start: float = 1_711_929_600.0  # 2024-04-01 UTC
    days: float = 120.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            values = value if isinstance(value, tuple) else (value,)
            if len(values) != (3 if f.name == "population_style" else 1) or not all(
                isinstance(v, int | float) and math.isfinite(v) for v in values
            ):
                raise ValueError(f"Parameter {f.name!r} must be finite numbers, not {value!r}.")
            low = -1.0 if f.name in ("writing_correlation", "popularity_quality") else 0.0
            if f.name in _UNIT_RANGE and not low <= value <= 1.0:
                raise ValueError(f"Parameter {f.name!r} must lie in [{low}, 1], not {value!r}.")
            if f.name in _POSITIVE and value <= 0:
                raise ValueError(f"Parameter {f.name!r} must be > 0, not {value!r}.")
            if f.name in _NON_NEGATIVE and value < 0:
                raise ValueError(f"Parameter {f.name!r} must be >= 0, not {value!r}.")


_UNIT_RANGE = frozenset({"topic_factor", "writing_correlation", "popularity_quality"})
_POSITIVE = frozenset({"topic_concentration", "min_votes"})
_NON_NEGATIVE = frozenset(
    {"quality_sd", "topic_sd", "idiosyncratic_sd", "vote_dispersion", "popularity_sd",
     "tie_strength", "tie_propensity_sd", "days", "style_weight"}
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class Truth:
    """What the simulator knows and an estimator must recover.

    Attributes
    ----------
    models, topics : tuple of str
        Model names and topic labels, in the order of the frames' columns.
    user_ratings : pandas.DataFrame
        Index ``user_id``, one column per model: each user's true Elo rating (mean 1000).
    population_ratings : pandas.Series
        Model to the population's true Elo rating (mean 1000).
    user_topics : pandas.DataFrame
        Index ``user_id``, one column per topic: each user's topic mixture (rows sum to 1).
    user_styles : pandas.DataFrame
        Index ``user_id``: answer-style preferences (:data:`STYLE_TRAITS`), writing style
        (``writing_`` + :data:`data.prompts.WRITING_TRAITS`) and ``tie_propensity``.
    model_quality : pandas.Series
        Global quality per model (natural-log scale).
    model_topic_strength : pandas.DataFrame
        Models x topics strengths (natural-log scale, population-share weighted mean 0).
    model_styles : pandas.DataFrame
        Models x :data:`STYLE_TRAITS`.
    model_popularity : pandas.Series
        Probability of a model being drawn for a battle slot.
    topic_world : pandas.DataFrame
        Topics x (``share``, ``technical``, ``difficulty`` and the style modifiers).
    params : SimulationParams
        The knobs used.
    seed : int or None
        The seed, when the simulation was seeded with an int.
    attackers : pandas.Series or None
        Index ``user_id``, the adversarial voters only: ``"random"`` (coin-flip votes) or
        ``"brigade"`` (always votes :attr:`brigade_model` up); ``None`` without attackers.
        Their ``user_ratings`` are the tastes they would have had as honest users.
    brigade_model : str or None
        The weak model the brigade votes up (one of the bottom 3 by true rating).
    prompts : str or None
        The real-prompt file the prompts were drawn from; ``None`` for template text.
    """

    models: tuple[str, ...]
    topics: tuple[str, ...]
    user_ratings: pd.DataFrame
    population_ratings: pd.Series
    user_topics: pd.DataFrame
    user_styles: pd.DataFrame
    model_quality: pd.Series
    model_topic_strength: pd.DataFrame
    model_styles: pd.DataFrame
    model_popularity: pd.Series
    topic_world: pd.DataFrame
    params: SimulationParams
    seed: int | None
    attackers: pd.Series | None = field(default=None, kw_only=True)
    brigade_model: str | None = field(default=None, kw_only=True)
    prompts: str | None = field(default=None, kw_only=True)

    def mean_spearman(self) -> float:
        """Mean Spearman correlation of the users' true rankings with the population's."""
        return mean_spearman(self.user_ratings, self.population_ratings)


@dataclass(frozen=True, eq=False)
class Simulation(Truth):
    """A simulated arena: the battle log plus the :class:`Truth` behind it.

    Attributes
    ----------
    battles : pandas.DataFrame
        One vote per row, sorted by ``tstamp``: ``battle_id``, ``user_id``, ``prompt``,
        ``model_a``, ``model_b``, ``winner``, ``tstamp`` and the prompt's true ``topic``.
    """

    battles: pd.DataFrame

    @property
    def truth(self) -> Truth:
        """The truth alone, as :func:`load_truth` returns it."""
        return Truth(**{f.name: getattr(self, f.name) for f in fields(Truth)})


def spearman_with_population(
    user_ratings: pd.DataFrame, population_ratings: pd.Series
) -> pd.Series:
    """Spearman correlation of each user's ranking with the population's.

    Parameters
    ----------
    user_ratings : pandas.DataFrame
        One row per user, one column per model.
    population_ratings : pandas.Series
        Model to rating; must cover the columns of ``user_ratings``.

    Returns
    -------
    pandas.Series
        Index as ``user_ratings``; NaN for a user whose ratings are all equal.
    """
    missing = set(user_ratings.columns) - set(population_ratings.index)
    if missing:
        raise ValueError(f"Argument 'population_ratings' lacks models {sorted(missing)!r}.")
    rho = spearman_per_row(
        user_ratings.to_numpy(dtype=float),
        population_ratings[user_ratings.columns].to_numpy(dtype=float),
    )
    return pd.Series(rho, index=user_ratings.index, name="spearman")


def mean_spearman(user_ratings: pd.DataFrame, population_ratings: pd.Series) -> float:
    """Mean over users of :func:`spearman_with_population` (users with no ranking skipped)."""
    return float(np.nanmean(spearman_with_population(user_ratings, population_ratings)))
