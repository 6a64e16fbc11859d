"""The ``plb`` sub-commands, named without importing them.

``plb --help`` lists every command from this table alone; only the command a run names
is imported (its module registers its options and runs it), so ``plb leaderboard`` never
loads PyTorch or BERTopic, and ``plb --help`` loads neither pandas nor numba.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COMMANDS", "Command"]


class Command(NamedTuple):
    """One sub-command: the module that runs it, and its line of ``plb --help``."""

    module: str
    """The module under ``service.cli`` that registers and runs the command."""
    help: str
    """The command's line in ``plb --help``."""
    register: str = "add_parser"
    """The function of ``module`` that registers the command's parser."""


#: Every sub-command, in the order ``plb --help`` lists them.
COMMANDS: dict[str, Command] = {
    "leaderboard": Command("leaderboard", "aggregate leaderboard of a battle log"),
    "users": Command("users", "per-user leaderboards and their agreement with the aggregate"),
    "history": Command(
        "history", "a board per period of a battle log, and the models that drifted"
    ),
    "topics": Command("topics", "topics of the users' queries, with sizes and top words"),
    "fit": Command("fit", "fit aggregate and per-user ratings, agreement and evaluation into DIR"),
    "recommend": Command(
        "recommend", "ranking for a user known only by queries (and optionally a few votes)"
    ),
    "evaluate": Command("evaluate", "held-out evaluation of the personalised rankings"),
    "simulate": Command("simulate", "synthetic arena with known true preferences"),
    "report": Command(
        "report",
        "research report with plots (one self-contained HTML file) of a fit directory",
    ),
    "serve": Command("serve", "the REST service and web page"),
    "next-battle": Command(
        "next_battle", "the pair of models whose vote would tell most about a user's best model"
    ),
    "refit": Command(
        "admin", "ask a running service to refit on all votes now", "add_refit_parser"
    ),
    "models": Command("admin", "register models with a running service", "add_models_parser"),
}
