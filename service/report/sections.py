"""The sections of ``plb report``, each rendered from a fit to HTML.

One function a section, from a :class:`~service.pipeline.artifacts.FitArtifacts` (or the
part of it the section shows) to the ``<section>`` element; the figures come from
:mod:`service.report.plots` and the HTML pieces from :mod:`service.report.markup`. The
methods and shrinkages are the pipeline's (:data:`~service.pipeline.config.GRID`).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from service.pipeline.artifacts import FitArtifacts
from service.pipeline.config import GRID, METHODS
from service.report.markup import count, date, figure, num, section, table
from service.report.plots import (
    MAX_PANEL_MODELS,
    METHOD_TITLES,
    PLAIN_FIRST,
    UserPanel,
    pick_users,
    spearman_histograms,
    user_panels,
    votes_scatter,
)

__all__ = [
    "SECTIONS",
    "agreement_sections",
    "evaluation_section",
    "header",
    "leaderboard_section",
    "topics_section",
]

#: Section ids, in report order (the ``id`` of each ``<section>``), with their titles.
SECTIONS = {
    "summary": "Agreement summary",
    "spearman": "Distribution of agreement",
    "noise": "How much of the disagreement is noise",
    "users": "Aggregate against personal rankings",
    "votes": "Votes against agreement",
    "evaluation": "Held-out evaluation",
    "topics": "Topics of the users' queries",
    "leaderboard": "Aggregate leaderboard",
    "history": "Ratings over time",
}

_SHRINKAGE = {"none": "none (plain)", "cv": "cv (shrunk)"}
_PREDICTORS = {
    "aggregate": "one leaderboard for everyone",
    "per-user": "each user's votes alone",
    "shrunk": "each user shrunk toward the aggregate",
}


def _summary(fit: FitArtifacts, key: tuple[str, str]) -> dict[str, Any]:
    return dict(fit.summaries.get(key[0], {}).get(key[1], {}))


def _prior_sd(agreement: pd.DataFrame, method: str, shrinkage: str) -> float | None:
    rows = agreement[(agreement["method"] == method) & (agreement["shrinkage"] == shrinkage)]
    values = rows["prior_sd"].to_numpy(dtype=float) if "prior_sd" in rows else np.array([])
    values = values[np.isfinite(values)]
    return float(values[0]) if values.size else None


def header(fit: FitArtifacts) -> tuple[str, str]:
    """The lead paragraph (what was fitted) and the agreement summary section."""
    m = fit.manifest
    sources = ", ".join(escape(str(s)) for s in m.get("battles", [])) or "n/a"
    created = date(m.get("created"))
    keys = [(m, s) for m in METHODS for s in PLAIN_FIRST if s in fit.summaries.get(m, {})]
    rows = []
    for method, shrinkage in keys:
        s = _summary(fit, (method, shrinkage))
        sd = _prior_sd(fit.agreement, method, shrinkage)
        rows.append(
            [
                METHOD_TITLES.get(method, escape(method)),
                _SHRINKAGE.get(shrinkage, escape(shrinkage)),
                count(s.get("users")),
                num(s.get("mean_spearman")),
                num(s.get("median_spearman")),
                num(s.get("share_near_zero_or_negative"), percent=True),
                num(s.get("mean_kendall")),
                "&ndash;" if sd is None else f"{sd:.0f}",
            ]
        )
    headers = ["method", "shrinkage", "users", "mean Spearman", "median Spearman"]
    headers += ["share ≤ 0.1", "mean Kendall", "prior SD (Elo points)"]
    html_table = table(headers, rows, text_columns=2, id="agreement-summary")
    bt_sd = _prior_sd(fit.agreement, "bt", "cv")
    strength = (
        f"For Bradley-Terry the learnt prior SD is <b>{bt_sd:.0f} Elo points</b>: the typical "
        "distance between a user's own rating of a model and the aggregate. The smaller it "
        "is, the harder each user is pulled toward the aggregate. "
        if bt_sd is not None
        else ""
    )
    lead = (
        f'<p class="lead">Fitted <b>{m.get("n_battles", 0):,}</b> battles from '
        f"<b>{m.get('n_users', 0):,}</b> users on <b>{len(m.get('models', []))}</b> models; "
        f"fit created {created} (seed {escape(str(m.get('seed', 'n/a')))}). "
        f"Source: {sources}.</p>"
    )
    return lead, section(
        "summary",
        "Agreement of personal rankings with the aggregate",
        html_table
        + "<p>Each user's ranking is compared with the aggregate ranking by the Spearman "
        "(and Kendall) correlation over the models that user voted on: 1 is the same "
        "order, 0 no relation, negative a reversed order. <i>none</i> fits each user "
        "alone, as the research study did; <i>cv</i> shrinks each user toward the "
        "aggregate with a strength learnt by cross-validation. Users with at least "
        f"{escape(str(m.get('min_battles', 'n/a')))} votes are summarised. {strength}"
        "For Elo, shrinkage means a user's online Elo starts from the aggregate ratings "
        "instead of 1000; it has no learnt strength.</p>",
    )


def _spearman_text(fit: FitArtifacts) -> str:
    plain, shrunk = _summary(fit, ("bt", "none")), _summary(fit, ("bt", "cv"))
    parts = []
    if plain:
        parts.append(
            f"Fitted alone, users' Bradley-Terry rankings have a mean Spearman of "
            f"{num(plain.get('mean_spearman'), 2)} with the aggregate, and "
            f"{num(plain.get('share_near_zero_or_negative'), percent=True)} of users are "
            "at or below 0.1 (the study's measure)."
        )
    if shrunk:
        parts.append(
            f"Shrunk, the mean is {num(shrunk.get('mean_spearman'), 2)}, with "
            f"{num(shrunk.get('share_near_zero_or_negative'), percent=True)} at or below 0.1."
        )
    parts.append(
        "Read both with care. A plain ranking from a few dozen votes is noisy, and noise alone "
        "drags its correlation toward zero, so low plain agreement overstates how much tastes "
        "differ. Shrinkage pulls every user toward the aggregate, so part of the high shrunk "
        "agreement is put there by the prior rather than learnt from the user (shrunk Elo, "
        "which barely moves from its aggregate start with K = 4, is close to 1 by "
        "construction). The held-out evaluation below is the fairer test."
    )
    return " ".join(parts)


def _users_section(fit: FitArtifacts, min_battles: int) -> str | None:
    present = {tuple(k) for k in fit.users[["method", "shrinkage"]].drop_duplicates().to_numpy()}
    # the first cell of the grid that the fit has: shrunk before plain, Bradley-Terry first
    chosen = next((p for p in GRID if p in present and p[0] in fit.leaderboards), None)
    if chosen is None:
        return None
    method, shrinkage = chosen
    agreement = fit.agreement[
        (fit.agreement["method"] == method) & (fit.agreement["shrinkage"] == shrinkage)
    ].set_index("user_id")
    ratings = fit.users[(fit.users["method"] == method) & (fit.users["shrinkage"] == shrinkage)]
    panels = []
    for user_id, reason in pick_users(fit.agreement, method, shrinkage, min_battles):
        votes, rho = agreement.at[user_id, "n_battles"], agreement.at[user_id, "spearman"]
        title = f"{user_id}: {reason}\n{num(votes, 0)} votes, Spearman {num(rho, 2)}"
        panels.append(UserPanel(title, ratings[ratings["user_id"] == user_id]))
    if not panels:
        return None
    kind = "shrunk" if shrinkage != "none" else "plain"
    name = METHOD_TITLES.get(method, method)
    svg = user_panels(panels, fit.leaderboards[method]["models"], f"{name} rating (Elo scale)")
    caption = (
        f"Each panel is one user; models run down in aggregate {name} order, best at the top. "
        f"Grey diamonds are the aggregate ratings with their 95% intervals; blue dots are "
        f"the user's {kind} {name} ratings with their 95% intervals. Hollow dots with "
        "dotted bars are models the user never voted on: their rating is the prior, not "
        "evidence about the user. The users are the most active one, one with the median "
        "number of votes, and the lowest and highest Spearman among users with at least the "
        "median number of votes, so the extremes are picked on purpose and are not typical. "
        "Where the blue bars cover the grey diamonds, the user's votes cannot tell their "
        "taste apart from the crowd's."
    )
    n_models = len(fit.leaderboards[method]["models"])
    if n_models > MAX_PANEL_MODELS:
        caption += f" Only the {MAX_PANEL_MODELS} most-voted of the {n_models} models are shown."
    return section("users", "Aggregate against personal rankings", figure(svg, caption))


def _trend_text(agreement: pd.DataFrame, min_battles: int) -> str:
    rows = agreement[
        (agreement["method"] == "bt")
        & (agreement["shrinkage"] == "none")
        & (agreement["n_battles"] >= min_battles)
    ].dropna(subset=["spearman"])
    if len(rows) < 8:
        return ""
    low, high = rows["n_battles"].quantile([0.25, 0.75])
    light = rows.loc[rows["n_battles"] <= low, "spearman"].median()
    heavy = rows.loc[rows["n_battles"] >= high, "spearman"].median()
    return (
        f" Here, plain Bradley-Terry users in the lightest quarter (≤ {low:.0f} votes) have "
        f"a median Spearman of {light:.2f}, those in the heaviest quarter (≥ {high:.0f} votes) "
        f"{heavy:.2f}."
    )


def evaluation_section(evaluation: dict[str, Any] | None) -> tuple[str, bool]:
    if evaluation is None:
        note = (
            '<p class="note">This fit has no held-out evaluation: no user had enough votes '
            "to hold some out. Run <code>plb evaluate BATTLES</code> for one.</p>"
        )
        return section("evaluation", "Held-out evaluation", note), False
    results = evaluation.get("results", [])
    with_truth = any(r.get("spearman_truth") is not None for r in results)
    columns = [("log_loss", min), ("accuracy", max), ("brier", min)]
    if with_truth:
        columns.append(("spearman_truth", max))
    best: dict[tuple[str, str], float] = {}
    for method in {r["method"] for r in results}:
        group = [r for r in results if r["method"] == method]
        for field, pick in columns:
            values = [r[field] for r in group if r.get(field) is not None]
            if values:
                best[(method, field)] = pick(values)
    rows = []
    for r in results:
        cells = [METHOD_TITLES.get(r["method"], escape(r["method"])), escape(r["predictor"])]
        for field, _ in columns:
            text = num(r.get(field), 4)
            is_best = r.get(field) is not None and r[field] == best.get((r["method"], field))
            cells.append(f"<b>{text}</b>" if is_best else text)
        rows.append(cells)
    headers = ["method", "predictor", "log-loss ↓", "accuracy ↑", "Brier ↓"]
    headers += ["Spearman vs truth ↑"] if with_truth else []
    html_table = table(headers, rows, text_columns=2, id="evaluation-table")
    legend = "; ".join(f"<i>{escape(k)}</i>: {v}" for k, v in _PREDICTORS.items())
    truth = (
        " <i>Spearman vs truth</i> (simulated data only) is the mean rank correlation of the "
        "predicted ranking of all models with the user's true ranking."
        if with_truth
        else ""
    )
    text = (
        f"<p>Each user's latest {num(evaluation.get('fraction'), percent=True)} of votes "
        f"({evaluation.get('n_test_votes', 'n/a')} votes, users with at least "
        f"{evaluation.get('min_votes', 'n/a')} votes) were held out; ratings were fitted on "
        f"the rest and used to predict them. Predictors: {legend}. Log-loss and Brier score: "
        f"lower is better; accuracy (a tie counts half): higher is better.{truth} The best "
        "value per method is in bold. Unlike the agreement figures above, these numbers "
        "score predictions of votes the fit never saw, so the prior cannot flatter them."
        f"{_best_text(results)}</p>"
    )
    return section("evaluation", "Held-out evaluation", html_table + text), True


def _best_text(results: Sequence[dict[str, Any]]) -> str:
    sentences = []
    for method in METHODS:
        group = {r["predictor"]: r for r in results if r["method"] == method}
        if not group or any(r.get("log_loss") is None for r in group.values()):
            continue
        best = min(group.values(), key=lambda r: r["log_loss"])
        others = ", ".join(
            f"{escape(p)} {r['log_loss']:.4f}" for p, r in group.items() if r is not best
        )
        name = METHOD_TITLES[method]
        sentences.append(
            f" For {name}, the lowest log-loss is the <i>{escape(best['predictor'])}"
            f"</i> predictor's, {best['log_loss']:.4f} ({others})."
        )
    return "".join(sentences)


def topics_section(topics: Sequence[dict[str, Any]]) -> str:
    rows = [
        [str(t["topic"]), f"{t['size']:,}", num(t["share"], 1, percent=True),
         escape(", ".join(t["words"][:8]))]
        for t in sorted(topics, key=lambda t: -t["size"])
    ]  # fmt: skip
    html_table = table(("topic", "queries", "share", "top words"), rows, id="topics-table")
    text = (
        "<p>The topic model of the users' queries (BERTopic over offline sentence "
        "embeddings; see the README, 'Query features'). Each user's profile holds their "
        "share of queries in each topic, which the rating predictor uses with their "
        "writing style.</p>"
    )
    return section("topics", SECTIONS["topics"], text + html_table)


def leaderboard_section(board: dict[str, Any]) -> str:
    rows = []
    for m in board.get("models", []):
        lo, hi = m.get("lower"), m.get("upper")
        interval = "n/a" if lo is None or hi is None else f"{lo:.1f} – {hi:.1f}"
        rows.append(
            [str(m["rank"]), escape(str(m["model"])), f"{m['rating']:.1f}", interval]
            + [f"{m.get('battles', 0):,}"]
        )
    html_table = table(
        ("rank", "model", "rating", "interval", "battles"),
        rows,
        text_columns=2,
        id="leaderboard-table",
    )
    kind = escape(str(board.get("interval", "")))
    level = num(board.get("confidence"), percent=True)
    text = (
        f"<p>All {board.get('n_battles', 0):,} votes pooled. Ratings are on the Elo scale, "
        f"averaging 1000; intervals are {level} ({kind}). A model's rank is 1 plus the "
        "number of models whose lower bound is above its upper bound, so models whose "
        "intervals overlap share a rank.</p>"
    )
    name = METHOD_TITLES.get(str(board.get("method", "bt")), "")
    return section("leaderboard", f"Aggregate leaderboard ({name})", html_table + text)


def agreement_sections(fit: FitArtifacts, min_battles: int) -> list[tuple[str | None, str]]:
    """The three per-user figures as ``(section id, html)``; a note (id None) without users."""
    title = "How far do personal rankings agree with the aggregate?"
    a = fit.agreement
    rated = a[(a["n_battles"] >= min_battles) & np.isfinite(a["spearman"].to_numpy(dtype=float))]
    if rated.empty:
        note = (
            f'<p class="note">No user with at least {min_battles} votes has a defined Spearman '
            "correlation with the aggregate, so there is nothing to plot per user.</p>"
        )
        return [(None, section("spearman", title, note))]
    spearman = figure(spearman_histograms(a, min_battles), _spearman_text(fit))
    sections: list[tuple[str | None, str]] = [("spearman", section("spearman", title, spearman))]
    users = _users_section(fit, min_battles)
    if users is not None:
        sections.append(("users", users))
    caption = (
        "Each dot is a user: how many votes they cast (log scale) against the Spearman "
        "correlation of their ranking with the aggregate; the lines are running medians over "
        "neighbouring users. If plain agreement climbs with votes, part of the low agreement "
        "of light users is noise from too few votes rather than a different taste; shrunk "
        "rankings of light users sit near the aggregate because there is little evidence to "
        "move them." + _trend_text(a, min_battles)
    )
    votes = figure(votes_scatter(a, min_battles), caption)
    sections.append(("votes", section("votes", "Votes per user against agreement", votes)))
    return sections
