"""A synthetic arena with known truth (docs/SPEC.md section 3, ``plb simulate``).

The world
---------
* Topics (:data:`data.prompts.TOPICS`) have a population share, a position on a
  technical <-> creative axis, a difficulty and a style modifier (markdown helps more in
  coding, long answers hurt in casual chat).
* Models have a global quality, per-topic strengths (partly along the technical axis, as
  coder models and creative models differ) and style traits ``verbosity``, ``formality``
  and ``markdown``; popular models (correlated with quality) are shown more often.
* Users have a Dirichlet topic mixture (concentrated: most users care about one to three
  topics), answer-style preferences (the population leans towards long, structured
  answers) that also shape how they *write* their queries, a tie propensity, and small
  idiosyncratic tastes per model.

The utility (natural-log strength) of model ``m`` for user ``u`` on a prompt of topic
``t`` is::

    U = quality[m] + strength[m, t]
        + style_weight * sum_k (pref[u, k] + topic_style[t, k]) * trait[m, k]
        + idiosyncratic[u, m]

A vote shows two models drawn by popularity on a prompt whose topic is drawn from the
user's mixture, and its outcome follows the Davidson (1970) extension of Bradley-Terry:
``P(a) : P(b) : P(tie) = pi_a : pi_b : nu * sqrt(pi_a * pi_b)`` with ``pi = exp(U)`` and
``nu`` the user's tie propensity. A tie is ``tie (bothbad)`` with a probability that
grows with the prompt's difficulty minus the two models' mean utility.

The truth
---------
A user's true rating of a model is their *expected utility under their own topic
mixture* (linear in the mixture), on the Elo scale and centred to average 1000:
``rating = 1000 + 400 / ln(10) * (EU - mean_m EU)``. The population's true rating is the
same quantity for a user with the population-average topic mixture, style preferences
and idiosyncrasies, which (by linearity) is the column mean of the users' true ratings;
every user weighs the same, whatever their number of votes.

A Bradley-Terry fit with ties counted half recovers these ratings up to a compression:
with Davidson ties the expected score's slope is ``2 / (2 + nu)`` of the logistic one
(about 0.75 here), and a BT fit to a mixture of topics is a little flatter still. With
3,000 votes a user's BT ratings regress on their true ones with slope about 0.7 and
Spearman about 0.95; on the default sample the aggregate BT ranking has Spearman about
0.98 with the population truth. Compare rankings, or calibrate the scale, not raw points.

Real prompts
------------
With ``prompts`` (a file or :class:`data.real_prompts.RealPrompts`) the text of each vote
is a real prompt instead of a template: the vote's topic is drawn from the user's mixture
as before, then :func:`data.real_prompts.choose_prompts` picks a prompt of that topic
with probability proportional to ``exp(strength * writing[u] . traits[p])`` (the
prompts' measured writing traits, standardised within topic), so a user's writing style
shows only through which real prompts they write. A topic without prompts in the file
gets no votes: users' mixtures are renormalised over the topics the file covers (and the
truth uses the renormalised mixtures). Everything else is drawn as without ``prompts``.

The default sample in ``data/sample`` is ``write_simulation(simulate(400, 60, 15, rng=0),
"data/sample")``.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
from pyarrow import json as pa_json
from scipy.special import ndtri

from data.prompts import TOPICS, WRITING_TRAITS, generate_prompts
from data.real_prompts import CHOICE_STRENGTH, RealPrompts, choose_prompts, load_real_prompts
from ranking.agreement import spearman_per_row
from ranking.pairwise import ELO_PER_NAT
from ranking.types import CENTER

__all__ = [
    "ELO_PER_NAT",
    "STYLE_TRAITS",
    "Simulation",
    "SimulationParams",
    "Truth",
    "load_simulation",
    "load_truth",
    "mean_spearman",
    "simulate",
    "spearman_with_population",
    "write_simulation",
]

#: Answer-style traits of models, and the matching preferences of users.
STYLE_TRAITS: tuple[str, ...] = ("verbosity", "formality", "markdown")
_WINNERS = np.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype=object)
_TRUTH_FORMAT = "plb-simulation-truth"
_LOG = logging.getLogger(__name__)
_COLUMNS = ("battle_id", "user_id", "prompt", "model_a", "model_b", "winner", "tstamp", "topic")

# topic: (population share, technical axis, difficulty, style modifier per STYLE_TRAITS)
_TOPIC_WORLD: dict[str, tuple[float, float, float, tuple[float, float, float]]] = {
    "coding": (0.20, 1.0, 0.5, (0.0, 0.0, 0.6)),
    "math": (0.09, 0.9, 0.8, (0.1, 0.0, 0.3)),
    "creative_writing": (0.13, -1.0, -0.2, (0.3, -0.2, -0.4)),
    "business": (0.12, -0.3, -0.3, (0.0, 0.6, 0.2)),
    "science": (0.11, 0.5, 0.2, (0.2, 0.2, 0.1)),
    "health": (0.08, 0.1, 0.0, (0.1, 0.2, 0.0)),
    "travel_food": (0.11, -0.6, -0.6, (0.0, -0.2, 0.2)),
    "chat": (0.16, -0.8, -0.8, (-0.6, -0.6, -0.6)),
}
_MODEL_NAMES = (
    "helios-2-ultra", "nimbus-pro-1.5", "orca-70b-chat", "quill-3-large", "cobalt-coder-34b",
    "lyra-mini", "atlas-instruct-13b", "vesper-8x7b", "kestrel-2-flash", "sage-1.2",
    "tempo-7b-chat", "meridian-large-2", "pico-3b", "zephyrine-9b", "solace-v4",
    "ember-mini-0.9", "basalt-40b", "marlin-2-turbo", "corvid-33b", "aster-4-mini",
)  # fmt: skip


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


def _model_names(n: int) -> list[str]:
    pool = len(_MODEL_NAMES)
    return [_MODEL_NAMES[i % pool] + ("" if i < pool else f"-r{i // pool + 1}") for i in range(n)]


def _as_generator(rng: np.random.Generator | int | None) -> tuple[np.random.Generator, int | None]:
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None or (isinstance(rng, int | np.integer) and not isinstance(rng, bool)):
        return np.random.default_rng(rng), None if rng is None else int(rng)
    raise TypeError(f"Argument 'rng' must be a numpy Generator, an int or None, not {rng!r}.")


def _check_count(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"Argument {name!r} must be an integer >= {least}, not {value!r}.")
    return int(value)


def simulate(
    n_users: int = 400,
    battles_per_user: int = 60,
    n_models: int = 15,
    *,
    rng: np.random.Generator | int | None = 0,
    params: SimulationParams | None = None,
    random_voters: float = 0.0,
    brigade: float = 0.0,
    prompts: RealPrompts | str | Path | None = None,
) -> Simulation:
    """Simulate an arena of users voting on pairs of models, with known true preferences.

    Parameters
    ----------
    n_users : int
        Number of users.
    battles_per_user : int
        Mean number of votes per user (lognormal around it, at least
        ``min(params.min_votes, battles_per_user)``).
    n_models : int
        Number of models (at least 2).
    rng : numpy.random.Generator, int or None
        Source of randomness, or a seed; the same seed gives identical output.
    params : SimulationParams, optional
        The knobs of the world; the defaults when omitted.
    random_voters : float
        Share of users who vote by coin flip (``model_a`` or ``model_b``, never a tie).
    brigade : float
        Share of users who vote one weak model up: each of their battles shows it (the
        other slot drawn by popularity) and they always vote it the winner. With both
        shares zero (the default) the output is that of a world without attackers.
    prompts : RealPrompts, str or Path, optional
        Real prompts (or a file for :func:`data.real_prompts.load_real_prompts`) to
        write the votes with, chosen by the writer's style (module docstring, "Real
        prompts"); template text when omitted.

    Returns
    -------
    Simulation
        The battles and the truth behind them.
    """
    n_users = _check_count("n_users", n_users, 1)
    battles_per_user = _check_count("battles_per_user", battles_per_user, 1)
    n_models = _check_count("n_models", n_models, 2)
    for name, share_value in (("random_voters", random_voters), ("brigade", brigade)):
        if not (isinstance(share_value, int | float) and 0.0 <= share_value < 1.0):
            raise ValueError(f"Argument {name!r} must lie in [0, 1), not {share_value!r}.")
    if random_voters + brigade >= 1.0:
        raise ValueError(
            "Arguments 'random_voters' and 'brigade' must sum below 1, "
            f"not {random_voters + brigade!r}."
        )
    real = load_real_prompts(prompts) if isinstance(prompts, str | Path) else prompts
    if real is not None and not isinstance(real, RealPrompts):
        raise TypeError(f"Argument 'prompts' must be RealPrompts, a path or None, not {real!r}.")
    gen, seed = _as_generator(rng)
    p = params if params is not None else SimulationParams()
    n_topics = len(TOPICS)
    world = np.array([[*_TOPIC_WORLD[t][:3], *_TOPIC_WORLD[t][3]] for t in TOPICS])
    share, technical, difficulty, topic_style = world[:, 0], world[:, 1], world[:, 2], world[:, 3:]
    share = share / share.sum()

    # Models.
    # Stratified quality and realised spreads pinned to the parameters, so that the
    # heterogeneity of a 15-model world depends on the knobs rather than on the draw.
    strata = (gen.permutation(n_models) + gen.random(n_models)) / n_models
    quality = p.quality_sd * ndtri(np.clip(strata, 1e-12, 1 - 1e-12))
    axis = gen.normal(size=(n_models, 1)) * technical
    strength = p.topic_sd * (
        math.sqrt(p.topic_factor) * axis
        + math.sqrt(1 - p.topic_factor) * gen.normal(size=(n_models, n_topics))
    )
    strength -= (strength @ share)[:, None]
    strength *= p.topic_sd / max(float(np.sqrt((strength**2 @ share).mean())), 1e-12)
    trait_cov = np.array([[1.0, 0.2, 0.5], [0.2, 1.0, 0.3], [0.5, 0.3, 1.0]])
    traits = gen.normal(size=(n_models, 3)) @ np.linalg.cholesky(trait_cov).T
    traits = (traits - traits.mean(axis=0)) / np.maximum(traits.std(axis=0), 1e-12)
    z_quality = quality / max(float(quality.std()), 1e-12)
    log_pop = p.popularity_sd * (
        p.popularity_quality * z_quality
        + math.sqrt(1 - p.popularity_quality**2) * gen.normal(size=n_models)
    )
    popularity = np.exp(log_pop - log_pop.max())
    popularity /= popularity.sum()

    # Users.
    mixture = gen.dirichlet(p.topic_concentration * share, size=n_users)
    if real is not None:
        mixture = _covered(mixture, share, real)
    pop_style = np.asarray(p.population_style)
    taste = gen.normal(size=(n_users, 3))
    prefs = pop_style + taste
    rho = p.writing_correlation
    writing = rho * taste + math.sqrt(1 - rho**2) * gen.normal(size=(n_users, 3))
    idiosyncratic = gen.normal(0.0, p.idiosyncratic_sd, (n_users, n_models))
    tie_propensity = p.tie_strength * np.exp(gen.normal(0.0, p.tie_propensity_sd, n_users))
    sigma = p.vote_dispersion
    votes = np.rint(gen.lognormal(math.log(battles_per_user) - sigma**2 / 2, sigma, n_users))
    votes = np.maximum(votes, min(p.min_votes, battles_per_user)).astype(np.intp)

    # Votes: who, on what topic, which pair.
    user = np.repeat(np.arange(n_users), votes)
    n = len(user)
    cum = np.cumsum(mixture, axis=1)
    cum[:, -1] = 1.0
    flat = (cum + np.arange(n_users)[:, None]).ravel()
    topic = np.searchsorted(flat, user + gen.random(n), side="right") - user * n_topics
    topic = np.minimum(topic, n_topics - 1)
    model_a = gen.choice(n_models, size=n, p=popularity)
    model_b = gen.choice(n_models, size=n, p=popularity)
    while (same := np.flatnonzero(model_a == model_b)).size:
        model_b[same] = gen.choice(n_models, size=same.size, p=popularity)

    # Outcomes: Davidson ties on the per-vote utilities; bothbad when both are weak.
    def utility(m: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        style = ((prefs[user] + topic_style[topic]) * traits[m]).sum(axis=1)
        return quality[m] + strength[m, topic] + p.style_weight * style + idiosyncratic[user, m]

    u_a, u_b = utility(model_a), utility(model_b)
    delta, nu = u_a - u_b, tie_propensity[user]
    p_a = 1.0 / (1.0 + np.exp(-delta) + nu * np.exp(-delta / 2))
    p_b = 1.0 / (1.0 + np.exp(delta) + nu * np.exp(delta / 2))
    r = gen.random(n)
    outcome = np.where(r < p_a, 0, np.where(r < p_a + p_b, 1, 2))
    hardness = difficulty[topic] + gen.normal(0.0, 0.5, n) - (u_a + u_b) / 2
    bothbad = gen.random(n) < 1.0 / (1.0 + np.exp(-(p.bothbad_slope * hardness + p.bothbad_offset)))
    outcome[(outcome == 2) & bothbad] = 3

    # Time: each user is active over a stretch of the period; the log is in time order.
    period = p.days * 86_400.0
    first = gen.uniform(0.0, 0.9 * period, n_users)
    span = np.minimum(gen.lognormal(math.log(14 * 86_400.0), 1.0, n_users), period - first)
    tstamp = np.round(p.start + first[user] + span[user] * gen.random(n), 3)
    if real is None:
        texts = np.asarray(generate_prompts(topic, writing[user], gen), dtype=object)
    else:
        chosen = choose_prompts(real, topic, writing[user], gen, strength=CHOICE_STRENGTH)
        texts = np.asarray(real.prompt, dtype=object)[chosen]
    order = np.argsort(tstamp, kind="stable")

    users = [f"u{i:0{max(5, len(str(n_users - 1)))}d}" for i in range(n_users)]
    models = _model_names(n_models)
    tag = f"{int(gen.integers(16**8)):08x}"
    expected = (
        quality
        + mixture @ strength.T
        + p.style_weight * (prefs + mixture @ topic_style) @ traits.T
        + idiosyncratic
    )
    kind, target = _attack(
        gen, expected, user, model_a, model_b, outcome, popularity, random_voters, brigade
    )
    width = max(6, len(str(n - 1)))
    names, topic_names = np.array(models, dtype=object), np.array(TOPICS, dtype=object)
    battles = pd.DataFrame(
        {
            "battle_id": [f"sim{tag}-{i:0{width}d}" for i in range(n)],
            "user_id": np.array(users, dtype=object)[user[order]],
            "prompt": texts[order],
            "model_a": names[model_a[order]],
            "model_b": names[model_b[order]],
            "winner": _WINNERS[outcome[order]],
            "tstamp": tstamp[order],
            "topic": topic_names[topic[order]],
        }
    )

    # Truth: expected utility under the user's own topic mixture (computed above).
    ratings = CENTER + ELO_PER_NAT * (expected - expected.mean(axis=1, keepdims=True))
    user_index = pd.Index(users, name="user_id")
    styles = np.column_stack([prefs, writing, tie_propensity])
    style_cols = [*STYLE_TRAITS, *(f"writing_{w}" for w in WRITING_TRAITS), "tie_propensity"]
    world_cols = ["share", "technical", "difficulty", *(f"style_{s}" for s in STYLE_TRAITS)]
    user_ratings = pd.DataFrame(ratings, index=user_index, columns=models)
    return Simulation(
        models=tuple(models),
        topics=TOPICS,
        user_ratings=user_ratings,
        population_ratings=user_ratings.mean(axis=0).rename("rating"),
        user_topics=pd.DataFrame(mixture, index=user_index, columns=list(TOPICS)),
        user_styles=pd.DataFrame(styles, index=user_index, columns=style_cols),
        model_quality=pd.Series(quality, index=models, name="quality"),
        model_topic_strength=pd.DataFrame(strength, index=models, columns=list(TOPICS)),
        model_styles=pd.DataFrame(traits, index=models, columns=list(STYLE_TRAITS)),
        model_popularity=pd.Series(popularity, index=models, name="popularity"),
        topic_world=pd.DataFrame(
            np.column_stack([share, world[:, 1:]]), index=list(TOPICS), columns=world_cols
        ),
        params=p,
        seed=seed,
        battles=battles,
        attackers=None
        if kind is None
        else pd.Series(
            np.array(["random", "brigade"], dtype=object)[kind[kind >= 0]],
            index=pd.Index(np.array(users, dtype=object)[kind >= 0], name="user_id"),
            name="attack",
            dtype=object,
        ),
        brigade_model=None if target is None else models[target],
        prompts=None if real is None else (real.source or "<in memory>"),
    )


def _covered(
    mixture: npt.NDArray[np.float64], share: npt.NDArray[np.float64], real: RealPrompts
) -> npt.NDArray[np.float64]:
    """Topic mixtures renormalised over the topics ``real`` has prompts for."""
    covered = np.array([n > 0 for n in real.topic_sizes().values()])
    if covered.all():
        return mixture
    if not covered.any():
        raise ValueError("Argument 'prompts' holds no prompts.")
    _LOG.warning(
        "The prompts cover no %s: those topics get no votes.",
        ", ".join(t for t, c in zip(TOPICS, covered, strict=True) if not c),
    )
    out = mixture * covered
    total = out.sum(axis=1, keepdims=True)
    fallback = share * covered / (share * covered).sum()
    return np.where(total > 0, out / np.where(total > 0, total, 1.0), fallback)


def _attack(
    gen: np.random.Generator,
    expected: npt.NDArray[np.float64],
    user: npt.NDArray[np.intp],
    model_a: npt.NDArray[np.intp],
    model_b: npt.NDArray[np.intp],
    outcome: npt.NDArray[np.intp],
    popularity: npt.NDArray[np.float64],
    random_voters: float,
    brigade: float,
) -> tuple[npt.NDArray[np.intp] | None, int | None]:
    """Turn shares of the users into attackers, in place; draws nothing when both are 0.

    Returns each user's kind (-1 honest, 0 random, 1 brigade), or None without
    attackers, and the brigade's model, or None without a brigade.
    """
    n_users, n_models = expected.shape
    n_random, n_brigade = round(random_voters * n_users), round(brigade * n_users)
    if n_random == 0 and n_brigade == 0:
        return None, None
    kind = np.full(n_users, -1, dtype=np.intp)
    chosen = gen.permutation(n_users)
    kind[chosen[:n_random]] = 0
    kind[chosen[n_random : n_random + n_brigade]] = 1
    votes_kind = kind[user]
    coin = np.flatnonzero(votes_kind == 0)
    outcome[coin] = gen.integers(0, 2, coin.size)
    target = None
    if n_brigade:
        truth = expected.mean(axis=0)
        target = int(gen.choice(np.argsort(truth, kind="stable")[: min(3, n_models)]))
        rows = np.flatnonzero(votes_kind == 1)
        other = np.where(model_a[rows] == target, model_b[rows], model_a[rows])
        while (same := np.flatnonzero(other == target)).size:
            other[same] = gen.choice(n_models, size=same.size, p=popularity)
        first = gen.random(rows.size) < 0.5
        model_a[rows] = np.where(first, target, other)
        model_b[rows] = np.where(first, other, target)
        outcome[rows] = np.where(first, 0, 1)
    return kind, target


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


# ---------------------------------------------------------------------------------------
# Files: battles.jsonl.gz (docs/SPEC.md section 1 fields plus ``topic``) and truth.json.
# ---------------------------------------------------------------------------------------


def _frame_json(frame: pd.DataFrame, digits: int) -> dict[str, Any]:
    return {
        "index": [str(i) for i in frame.index],
        "columns": [str(c) for c in frame.columns],
        "data": np.round(frame.to_numpy(dtype=float), digits).tolist(),
    }


def _series_json(series: pd.Series, digits: int) -> dict[str, float]:
    return {str(k): round(float(v), digits) for k, v in series.items()}


def _frame_from(obj: Mapping[str, Any], index_name: str | None = None) -> pd.DataFrame:
    index = pd.Index([str(i) for i in obj["index"]], name=index_name)
    return pd.DataFrame(
        np.asarray(obj["data"], dtype=float).reshape(len(index), -1),
        index=index,
        columns=list(obj["columns"]),
    )


def _json_values(column: pd.Series) -> list[str]:
    """JSON text of each value; only strings that need escaping go through ``json.dumps``."""
    if pd.api.types.is_float_dtype(column) and np.isfinite(column.to_numpy()).all():
        return [repr(x) for x in column.tolist()]  # shortest exact form, unlike to_json
    if not pd.api.types.is_string_dtype(column):
        return [json.dumps(x) for x in column.tolist()]
    values = column.astype(str)
    out = [f'"{v}"' for v in values.tolist()]
    for i in np.flatnonzero(values.str.contains(r'["\\\x00-\x1f]', regex=True)).tolist():
        out[i] = json.dumps(values.iloc[i], ensure_ascii=False)
    return out


def _write_jsonl_gz(frame: pd.DataFrame, path: Path, compresslevel: int) -> None:
    """JSON Lines, gzip with a zero mtime (same frame, same bytes); compress in a thread."""
    keys = [json.dumps(str(c)).replace("{", "{{").replace("}", "}}") for c in frame.columns]
    line = "{{" + ",".join(f"{k}:{{}}" for k in keys) + "}}\n"
    with (
        gzip.GzipFile(path, "wb", compresslevel=compresslevel, mtime=0) as fh,
        ThreadPoolExecutor(max_workers=1) as pool,  # zlib releases the GIL
    ):
        pending: Future[int] | None = None
        for start in range(0, len(frame), 100_000):
            part = frame.iloc[start : start + 100_000]
            columns = [_json_values(part[c]) for c in part.columns]
            data = "".join(line.format(*row) for row in zip(*columns, strict=True)).encode()
            if pending is not None:
                pending.result()
            pending = pool.submit(fh.write, data)
        if pending is not None:
            pending.result()


def write_simulation(
    sim: Simulation, out_dir: str | Path, *, compresslevel: int = 3
) -> dict[str, Path]:
    """Write a simulation as ``battles.jsonl.gz`` and ``truth.json`` in ``out_dir``.

    Parameters
    ----------
    sim : Simulation
        What :func:`simulate` returned.
    out_dir : str or Path
        Directory, created when missing; existing files of those names are replaced.
    compresslevel : int
        gzip level of the battles (1 fastest .. 9 smallest); writing is deterministic.

    Returns
    -------
    dict
        ``{"battles": path, "truth": path}``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"battles": out / "battles.jsonl.gz", "truth": out / "truth.json"}
    _write_jsonl_gz(sim.battles, paths["battles"], compresslevel)
    winners = sim.battles["winner"].value_counts(normalize=True)
    truth = {
        "format": _TRUTH_FORMAT,
        "version": 1,
        "seed": sim.seed,
        "definition": "rating = 1000 + 400/ln(10) * (EU - mean EU); EU is a user's expected "
        "utility (natural-log strength) under their own topic mixture; the population's "
        "is the mean of the users' ratings (users weighted equally).",
        "summary": {
            "users": len(sim.user_ratings),
            "battles": len(sim.battles),
            "mean_spearman": round(sim.mean_spearman(), 4),
            "tie_share": round(
                float(winners.get("tie", 0.0) + winners.get("tie (bothbad)", 0.0)), 4
            ),
        },
        "models": list(sim.models),
        "topics": list(sim.topics),
        "params": asdict(sim.params),
        "population_ratings": _series_json(sim.population_ratings, 3),
        "user_ratings": _frame_json(sim.user_ratings, 3),
        "user_topics": _frame_json(sim.user_topics, 5),
        "user_styles": _frame_json(sim.user_styles, 4),
        "model_quality": _series_json(sim.model_quality, 5),
        "model_topic_strength": _frame_json(sim.model_topic_strength, 5),
        "model_styles": _frame_json(sim.model_styles, 5),
        "model_popularity": _series_json(sim.model_popularity, 6),
        "topic_world": _frame_json(sim.topic_world, 5),
    }
    if sim.prompts is not None:
        truth["prompts"] = sim.prompts
        truth["prompt_choice"] = (
            "within the vote's topic, P(prompt p) is proportional to "
            f"exp({CHOICE_STRENGTH} * writing[u] . traits[p]) (data/real_prompts.py)"
        )
    if sim.attackers is not None:
        truth["attackers"] = {str(k): str(v) for k, v in sim.attackers.items()}
        truth["brigade_model"] = sim.brigade_model
    paths["truth"].write_text(json.dumps(truth, separators=(",", ":")) + "\n", encoding="utf-8")
    return paths


def load_truth(path: str | Path) -> Truth:
    """Read ``truth.json`` (or the ``truth.json`` inside a directory) back.

    Parameters
    ----------
    path : str or Path
        The file, or the directory :func:`write_simulation` wrote.

    Returns
    -------
    Truth
        As written, up to the rounding of the file (3 decimals for ratings).
    """
    file = Path(path)
    if file.is_dir():
        file = file / "truth.json"
    try:
        obj = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"Cannot read truth file {str(file)!r}: {exc}") from exc
    if not isinstance(obj, dict) or obj.get("format") != _TRUTH_FORMAT:
        raise ValueError(f"File {str(file)!r} is not a simulation truth file.")
    raw = dict(obj["params"])
    raw["population_style"] = tuple(raw["population_style"])
    series = {k: pd.Series(obj[k], dtype=float, name=name) for k, name in
              [("population_ratings", "rating"), ("model_quality", "quality"),
               ("model_popularity", "popularity")]}  # fmt: skip
    return Truth(
        models=tuple(obj["models"]),
        topics=tuple(obj["topics"]),
        user_ratings=_frame_from(obj["user_ratings"], "user_id"),
        population_ratings=series["population_ratings"],
        user_topics=_frame_from(obj["user_topics"], "user_id"),
        user_styles=_frame_from(obj["user_styles"], "user_id"),
        model_quality=series["model_quality"],
        model_topic_strength=_frame_from(obj["model_topic_strength"]),
        model_styles=_frame_from(obj["model_styles"]),
        model_popularity=series["model_popularity"],
        topic_world=_frame_from(obj["topic_world"]),
        params=SimulationParams(**raw),
        seed=obj["seed"],
        attackers=None
        if "attackers" not in obj
        else pd.Series(
            list(obj["attackers"].values()),
            index=pd.Index(list(obj["attackers"]), name="user_id"),
            name="attack",
            dtype=object,
        ),
        brigade_model=obj.get("brigade_model"),
        prompts=obj.get("prompts"),
    )


def load_simulation(out_dir: str | Path) -> Simulation:
    """Read back what :func:`write_simulation` wrote in ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Directory holding ``battles.jsonl.gz`` and ``truth.json``.

    Returns
    -------
    Simulation
    """
    folder = Path(out_dir)
    truth = load_truth(folder / "truth.json")
    schema = pa.schema([(c, pa.float64() if c == "tstamp" else pa.string()) for c in _COLUMNS])
    try:
        with pa.input_stream(folder / "battles.jsonl.gz", compression="gzip") as stream:
            table = pa_json.read_json(stream, parse_options=pa_json.ParseOptions(schema))
    except (OSError, pa.ArrowInvalid) as exc:
        raise ValueError(f"Cannot read battles in {str(folder)!r}: {exc}") from exc
    battles = table.to_pandas().astype({c: "str" for c in _COLUMNS if c != "tstamp"})
    return Simulation(**{f.name: getattr(truth, f.name) for f in fields(Truth)}, battles=battles)
