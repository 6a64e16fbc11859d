"""``plb evaluate``'s new-users section in a few lines: the answer, not every row.

The full section (:func:`service.cli.evaluate.format_new_users`: every predictor of
every target and method, every way of predicting later votes) is some 40 rows; ``plb
evaluate --all`` prints it, and ``--format json`` holds all of it. This summary keeps,
for each question, the best answer beside what it is measured against:

* the held-out users' ratings: for each method, the prediction of the ratings the
  service serves (shrunk) closest to them, against the mean of the training users;
* their later votes: for each number of votes they gave first, the way that predicts
  the rest best, against the public board (the aggregate);
* with a simulation's truth, how well the predicted rankings match it.

Predictors that are told the truth (``true ratings, ...``: the best possible, a
yardstick) are never picked as the best.
"""

from __future__ import annotations

import textwrap
from typing import Any

from service.cli.tables import format_table

__all__ = ["summarise_new_users"]

#: The target whose ratings the service serves, the one summarised.
SERVED = "shrunk"
#: The baseline of the rating rows, and the one of the later-vote rows.
MEAN, AGGREGATE = "mean of training users", "aggregate"
#: How each method is written in prose.
METHOD_NAMES = {"bt": "BT", "elo": "Elo"}
#: The width prose lines are wrapped to.
WIDTH = 88


def _wrapped(text: str, indent: str = "") -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _told_the_truth(row: dict[str, Any]) -> bool:
    return str(row["predictor"]).startswith("true ratings")


def _rating_lines(ratings: list[dict[str, Any]]) -> list[str]:
    """One line a method: the best prediction of the served ratings against the mean."""
    lines = []
    for method in dict.fromkeys(r["method"] for r in ratings):
        rows = [r for r in ratings if r["target"] == SERVED and r["method"] == method]
        rivals = [r for r in rows if r["predictor"] != MEAN and not _told_the_truth(r)]
        if not rows or not rivals:
            continue
        best = min(rivals, key=lambda r: r["mae"])
        mean = best["mae_mean_predictor"]
        if best["mae"] < mean:
            verdict = f"{(mean - best['mae']) / mean:.0%} closer than the mean of the others"
        else:
            verdict = "no closer than the mean of the others"
        name = METHOD_NAMES.get(method, method)
        text = (
            f"{name}: {best['predictor']} is {verdict} (mean absolute error "
            f"{best['mae']:.2f} against {mean:.2f})"
        )
        lines.append(_wrapped(text, "  "))
    return lines


def _later_votes_table(votes: list[dict[str, Any]]) -> str:
    """One row for each number of first votes: the best way against the aggregate."""
    rows = []
    for known in dict.fromkeys(r["known"] for r in votes):
        block = [r for r in votes if r["known"] == known]
        aggregate = next((r for r in block if r["way"] == AGGREGATE), None)
        rivals = [r for r in block if r["way"] != AGGREGATE]
        if aggregate is None or not rivals:
            continue
        best = min(rivals, key=lambda r: r["log_loss"])
        se = best["minus_aggregate_se"]
        rows.append(
            (
                f"{known} votes",
                f"{best['n_votes']:,}",
                best["way"],
                f"{best['log_loss']:.4f}",
                f"{aggregate['log_loss']:.4f}",
                f"{best['minus_aggregate']:+.4f}" + ("" if se is None else f" ({se:.4f})"),
                f"{best['accuracy']:.1%} vs {aggregate['accuracy']:.1%}",
            )
        )
    if not rows:
        return ""
    headers = (
        "after",
        "votes",
        "predicted best by",
        "log-loss",
        "aggregate's",
        "difference (se)",
        "accuracy",
    )
    return format_table(headers, rows)


def summarise_new_users(section: dict[str, Any]) -> str:
    """The ``new_users`` section of ``plb evaluate``'s document, in a few lines.

    Parameters
    ----------
    section : dict
        ``document["new_users"]`` (docs/SPEC.md): ``n_test_users``, ``n_train_users``,
        ``ratings`` and ``votes`` rows.

    Returns
    -------
    str
        A title, a line a method for the held-out users' ratings, one table row for
        each number of first votes, the truth where the log is a simulation's, and how
        to see every row.
    """
    title = (
        f"New users: {section['n_test_users']} users held out whole, known by their "
        f"queries, predicted by a model of the other {section['n_train_users']}"
    )
    lines = [_wrapped(title)]
    ratings = _rating_lines(section["ratings"])
    if ratings:
        lines += ["", "Their ratings (shrunk, as served):", *ratings]
    table = _later_votes_table(section["votes"])
    if table:
        intro = (
            "Their later votes, predicted after their first votes (log-loss: lower is "
            "better; difference: from the aggregate's, with its standard error by user):"
        )
        lines += ["", _wrapped(intro), "", table]
    for r in section["ratings"]:
        if r["target"] == "truth":
            truth = (
                f"Against the truth: their predicted rankings {r['spearman_truth']:.3f} "
                f"(Spearman), the aggregate's {r['spearman_truth_aggregate']:.3f}"
            )
            lines += ["", _wrapped(truth)]
    lines += ["", "Every predictor and way: plb evaluate --all (or --format json)."]
    return "\n".join(lines)
