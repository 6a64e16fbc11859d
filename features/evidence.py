"""How much a person's queries are worth: weights learnt from training users' later votes.

The rating predictor's answer for a person starts from the aggregate board and moves it
by what their queries say. Where earlier prompts do not say what a person will ask and
prefer next (assigned prompts, people who ask about everything), that move is noise, and
applied at full strength it predicts their later votes *worse* than the public board. So
each move is scaled by a weight learnt on held-out votes::

    person(u)    = aggregate + w_person * (predicted(u) - aggregate)
    prompt(q, u) = person(u) + w_prompt * (predicted(q, u) - predicted(u))

``predicted(u)`` is the contextual model at the person's mean context,
``predicted(q, u)`` at the context of one prompt (:mod:`features.per_prompt`); both
weights lie in ``[0, 1]``. At 0 the answer *is* the aggregate; at 1 it is the model's
prediction as it stands.

The weights are learnt by user-grouped, time-ordered cross-validation
(:func:`time_split`): each training user's first :data:`KNOWN_QUERIES` votes (at most
half of them) are their known queries; a model fitted without that user's fold (the
predictor's fold models) predicts them from those queries alone, the aggregate is the
Bradley-Terry fit of the other folds' votes, and their *later* votes are scored.
``w_person`` minimises the log-loss of the later votes by the person's ranking,
``w_prompt`` then that by each later vote's own prompt (:func:`learn_weights`). Each loss
is convex in its weight, so the minimum on ``[0, 1]`` is found exactly. The same split
then sets how strongly a person's own votes are shrunk toward their prediction: the
prior precision whose blend of each user's first votes best predicts their later ones
(:meth:`TimeSplit.blend_alpha`), so that a few votes never move a person further than
their next votes bear out.

The gains reported are measured on the votes the weights were chosen on: two numbers
chosen on thousands of votes, so the optimism is small; their standard errors are
clustered by user (a person's votes are not independent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.optimize import minimize_scalar

from features.contexts import StyleBasis, vote_query_context
from features.predictor_fit import FittedMembers
from features.profile import UserProfiler
from features.user_profiles import UserProfiles
from ranking.bt import fit_bt
from ranking.evaluation import clustered_se
from ranking.pairwise import position_in_group
from ranking.shrinkage import later_votes_alpha
from ranking.types import FloatArray, IntArray, PairwiseData

__all__ = [
    "EVIDENCE_USERS",
    "KNOWN_QUERIES",
    "MIN_VOTES",
    "EvidenceWeights",
    "HeldOutVotes",
    "TimeSplit",
    "learn_weights",
    "time_split",
]

#: A training user's known queries: their first this many votes, at most half of them.
KNOWN_QUERIES = 10
#: Votes a training user needs to be scored (at least one known and one later vote).
MIN_VOTES = 3
#: Training users scored at most (drawn at random): two numbers need a few thousand.
EVIDENCE_USERS = 5_000


@dataclass(frozen=True)
class HeldOutVotes:
    """Training users' later votes, each as the three differences its prediction sums.

    Every array is ``(n,)``, one entry a later vote, ``model_a`` less ``model_b`` in
    natural-log units: the aggregate's strength, the person's predicted deviation from
    it, and the vote's prompt's deviation from the person.
    """

    aggregate: FloatArray
    person: FloatArray
    prompt: FloatArray
    outcomes: FloatArray
    users: IntArray

    def losses(self, person: float, prompt: float) -> FloatArray:
        """``(n,)`` log-loss of each vote at the weights ``person`` and ``prompt``."""
        margin = self.aggregate + person * self.person + prompt * self.prompt
        # -log sigmoid(m) = logaddexp(0, -m); a tie (outcome 0.5) scores half of each way
        y = self.outcomes
        return y * np.logaddexp(0.0, -margin) + (1.0 - y) * np.logaddexp(0.0, margin)


@dataclass(frozen=True)
class TimeSplit:
    """Training users' votes split in time: what :func:`time_split` found.

    Attributes
    ----------
    held : HeldOutVotes
        The later votes, as the weights are learnt from them.
    aggregate, predicted : ndarray
        ``(n_people, n_models)`` for each user scored: the Bradley-Terry board of the
        folds without them, and the contextual model's strengths at their earlier
        queries (natural-log units).
    rows : ndarray of int
        Positions of the scored users' votes in the pairwise data, earlier and later.
    owners : ndarray of int
        ``(len(rows),)`` row of ``aggregate`` of each vote's user.
    earlier : ndarray of bool
        ``(len(rows),)`` True for a vote among its user's known first ones.
    """

    held: HeldOutVotes
    aggregate: FloatArray
    predicted: FloatArray
    rows: IntArray
    owners: IntArray
    earlier: npt.NDArray[np.bool_]

    def blend_alpha(self, data: PairwiseData, weight: float) -> float | None:
        """How strongly a person's first votes are shrunk toward their prediction.

        The prior precision whose blend of each user's earlier votes with their
        prediction (the aggregate moved by ``weight``) best predicts their later votes
        (:func:`ranking.shrinkage.later_votes_alpha`); None without later votes.
        """
        if not (~self.earlier).any():
            return None
        prior = self.aggregate + weight * (self.predicted - self.aggregate)
        return later_votes_alpha(
            data.n_models,
            data.matchups[self.rows],
            data.outcomes[self.rows],
            self.owners,
            prior,
            self.earlier,
        )


@dataclass(frozen=True)
class EvidenceWeights:
    """How much a person's queries are worth, learnt on training users' later votes.

    Attributes
    ----------
    person, prompt : float
        ``w_person`` and ``w_prompt`` of the module docstring, each in ``[0, 1]``.
    n_users, n_votes : int
        Training users scored, and their later votes.
    log_loss : dict of str to float
        Mean log-loss of the later votes: ``aggregate``; ``person`` and ``prompt`` at
        the learnt weights; ``person_unweighted`` and ``prompt_unweighted`` at weight 1.
    gain_person, gain_prompt : float
        Log-loss less than the aggregate's, by the person's ranking and by each vote's
        prompt, at the learnt weights (positive: better than the public board).
    se_person, se_prompt : float
        Their standard errors, clustered by user.
    """

    person: float
    prompt: float
    n_users: int
    n_votes: int
    log_loss: dict[str, float]
    gain_person: float
    gain_prompt: float
    se_person: float
    se_prompt: float

    @classmethod
    def unknown(cls) -> EvidenceWeights:
        """No training user could be scored: nothing shows the queries help, so 0."""
        nan = float("nan")
        return cls(0.0, 0.0, 0, 0, {}, nan, nan, nan, nan)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, rounded."""
        document = asdict(self)
        for key, value in document.items():
            if isinstance(value, float):
                document[key] = None if not np.isfinite(value) else round(value, 5)
        document["log_loss"] = {k: round(v, 5) for k, v in self.log_loss.items()}
        return document


def learn_weights(held: HeldOutVotes) -> EvidenceWeights:
    """The weights of the module docstring, by held-out log-loss.

    Parameters
    ----------
    held : HeldOutVotes
        Training users' later votes (:func:`held_out_votes`).

    Returns
    -------
    EvidenceWeights
    """
    if held.outcomes.size == 0:
        return EvidenceWeights.unknown()
    person = _minimise(lambda w: float(held.losses(w, 0.0).mean()))
    prompt = _minimise(lambda w: float(held.losses(person, w).mean()))
    aggregate = held.losses(0.0, 0.0)
    at_person = held.losses(person, 0.0)
    at_prompt = held.losses(person, prompt)
    log_loss = {
        "aggregate": float(aggregate.mean()),
        "person_unweighted": float(held.losses(1.0, 0.0).mean()),
        "person": float(at_person.mean()),
        "prompt_unweighted": float(held.losses(1.0, 1.0).mean()),
        "prompt": float(at_prompt.mean()),
    }
    return EvidenceWeights(
        person=person,
        prompt=prompt,
        n_users=int(np.unique(held.users).size),
        n_votes=int(held.outcomes.size),
        log_loss=log_loss,
        gain_person=log_loss["aggregate"] - log_loss["person"],
        gain_prompt=log_loss["aggregate"] - log_loss["prompt"],
        se_person=clustered_se(aggregate - at_person, held.users),
        se_prompt=clustered_se(aggregate - at_prompt, held.users),
    )


def _minimise(loss: Callable[[float], float]) -> float:
    """The minimiser of a convex ``loss`` on ``[0, 1]``; an end when it is there."""
    found = minimize_scalar(loss, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-3})
    best = float(found.x)
    ends = {0.0: loss(0.0), 1.0: loss(1.0)}
    end = min(ends, key=ends.__getitem__)
    return end if ends[end] <= loss(best) else best


def time_split(
    profiler: UserProfiler,
    basis: StyleBasis,
    folds: int,
    battles: pd.DataFrame,
    data: PairwiseData,
    users: IntArray,
    profiles: UserProfiles,
    fitted: FittedMembers,
    rng: np.random.Generator | int | None = 0,
) -> TimeSplit:
    """Training users' later votes, predicted from their earlier queries (module docstring).

    Parameters
    ----------
    profiler : UserProfiler
        The predictor's, fitted on ``battles``.
    basis : StyleBasis
        How the predictor being fitted reads the users' styles.
    folds : int
        Its number of folds over users.
    battles : DataFrame
        The training votes in vote order, each with a user (the profiler's fitted frame).
    data : PairwiseData
        The same votes as pairwise data.
    users : array of int
        ``(n_votes,)`` row of ``profiles`` of each vote's user.
    profiles : UserProfiles
        The training users' profiles (from all their queries; only their ids are read).
    fitted : FittedMembers
        The members and their fold models (:func:`features.predictor_fit.fit_members`).
    rng : numpy.random.Generator or int, optional
        Draws the users scored when more than :data:`EVIDENCE_USERS` could be.
    """
    n_users = len(profiles.user_ids)
    counts = np.bincount(users, minlength=n_users)
    known = np.minimum(KNOWN_QUERIES, counts // 2)
    eligible = np.flatnonzero(counts >= MIN_VOTES)
    if eligible.size > EVIDENCE_USERS:
        drawn = np.random.default_rng(rng).choice(eligible, EVIDENCE_USERS, replace=False)
        eligible = np.sort(drawn)
    chosen = np.zeros(n_users, dtype=bool)
    chosen[eligible] = True
    position = position_in_group(users)
    early = np.flatnonzero(chosen[users] & (position < known[users]))
    later = np.flatnonzero(chosen[users] & (position >= known[users]))
    if later.size == 0:
        empty, none = np.zeros(0), np.zeros(0, dtype=np.intp)
        held = HeldOutVotes(empty, empty, empty, empty, none)
        nobody = np.zeros((0, data.n_models))
        return TimeSplit(held, nobody, nobody, none, none, np.zeros(0, dtype=bool))
    row_of_user = np.full(n_users, -1, dtype=np.intp)
    row_of_user[eligible] = np.arange(eligible.size)
    early_profiles = profiler.fitted_row_profiles(battles, early)
    present = battles["prompt"].notna().to_numpy()
    queries = vote_query_context(profiler, present, later)
    fold = fitted.fold_of_user[eligible]
    later_rows = row_of_user[users[later]]
    person = np.zeros((eligible.size, data.n_models))
    prompt = np.zeros((later.size, data.n_models))
    for member, fold_models in zip(fitted.members, fitted.fold_models, strict=True):
        contexts = basis.member_contexts(early_profiles, member.components, member.scale)
        style = contexts[:, 1 + queries.shape[1] :]
        vote_contexts = np.hstack([np.ones((later.size, 1)), queries, style[later_rows]])
        for f, model in fold_models.items():
            mine = fold == f
            person[mine] += model.strengths(contexts[mine])
            votes = mine[later_rows]
            prompt[votes] += model.strengths(vote_contexts[votes])
    person /= len(fitted.members)
    prompt /= len(fitted.members)
    boards = _fold_aggregates(data, fitted.fold_of_user[users], folds)[fold]
    held = _differences(data, later, users[later], boards[later_rows], person[later_rows], prompt)
    rows = np.concatenate([early, later])
    earlier = np.arange(rows.size) < early.size
    return TimeSplit(held, boards, person, rows, row_of_user[users[rows]], earlier)


def _fold_aggregates(data: PairwiseData, vote_fold: IntArray, n_folds: int) -> FloatArray:
    """``(n_folds, n_models)`` the Bradley-Terry board of the votes outside each fold."""
    boards = np.zeros((n_folds, data.n_models))
    for f in range(n_folds):
        outside = vote_fold != f
        boards[f] = fit_bt(data.n_models, data.matchups[outside], data.outcomes[outside])
    return boards


def _differences(
    data: PairwiseData,
    later: IntArray,
    owners: IntArray,
    aggregate: FloatArray,
    person: FloatArray,
    prompt: FloatArray,
) -> HeldOutVotes:
    """The later votes' three differences, ``model_a`` less ``model_b`` (rows aligned)."""
    rows = np.arange(later.size)
    a, b = data.matchups[later, 0], data.matchups[later, 1]

    def margin(strengths: npt.NDArray[np.float64]) -> FloatArray:
        return strengths[rows, a] - strengths[rows, b]

    return HeldOutVotes(
        aggregate=margin(aggregate),
        person=margin(person - aggregate),
        prompt=margin(prompt - person),
        outcomes=np.asarray(data.outcomes[later], dtype=np.float64),
        users=np.asarray(owners, dtype=np.intp),
    )
