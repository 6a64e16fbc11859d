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

The default sample in ``data/sample`` is
``data.simulation_files.write_simulation(simulate(400, 60, 15, rng=0),
"data/sample")``.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from data.prompts import TOPICS, WRITING_TRAITS, generate_prompts
from data.real_prompts import CHOICE_STRENGTH, RealPrompts, choose_prompts, load_real_prompts
from data.truth import STYLE_TRAITS, Simulation, SimulationParams
from data.world import TOPIC_WORLD, draw_models, model_names
from ranking.pairwise import ELO_PER_NAT
from ranking.types import CENTER

__all__ = ["simulate"]

_WINNERS = np.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype=object)
_LOG = logging.getLogger(__name__)


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
    world = np.array([[*TOPIC_WORLD[t][:3], *TOPIC_WORLD[t][3]] for t in TOPICS])
    share, technical, difficulty, topic_style = world[:, 0], world[:, 1], world[:, 2], world[:, 3:]
    share = share / share.sum()

    # Models.
    quality, strength, traits, popularity = draw_models(gen, p, n_models, technical, share)

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
    models = model_names(n_models)
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
