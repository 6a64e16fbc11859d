"""Aggregate and per-user Elo and Bradley-Terry ratings from pairwise votes.

Pure numerics over arrays (``types``, ``pairwise``, ``bt``, ``elo``, ``intervals``,
``leaderboard``, ``users``, ``shrinkage``, ``agreement``, ``evaluation``, ``analysis``,
``integrity``, ``consistency``); :mod:`ranking.io` is the only part that touches files
and pandas: it turns battle logs into the arrays the rest works on (``make lint`` checks
that no maths module imports pandas or ``ranking.io``).

The entry points a notebook needs are re-exported here (``docs/python.md`` shows them at
work)::

    from ranking import read_battles, pairwise_from_battles, fit_leaderboard

    battles = read_battles("battles.jsonl.gz").battles
    board = fit_leaderboard(pairwise_from_battles(battles), method="bt")

They are imported on first use, so ``import ranking`` stays cheap (no pandas or SciPy
until a name needs them).
"""

from __future__ import annotations

from ranking.lazy import lazy_exports

# typing is not imported at run time: it would double the cost of importing the package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ranking.agreement import AgreementSummary, kendall_per_row, spearman_per_row
    from ranking.analysis import UserAnalysis, analyse_users, fit_user_agreement
    from ranking.bt import fit_bt
    from ranking.elo import online_elo
    from ranking.evaluation import EvaluationRow, evaluate_personalisation
    from ranking.io.chunks import BattleLogError, NotABattleIdError
    from ranking.io.column_map import ColumnMap
    from ranking.io.frames import filter_battles, pairwise_from_battles, user_codes
    from ranking.io.ingest import IngestResult, read_battles, read_frame
    from ranking.io.prompt_texts import PromptTexts, read_prompt_texts
    from ranking.leaderboard import fit_leaderboard
    from ranking.provisional import split_provisional
    from ranking.types import Leaderboard, ModelRating, PairwiseData
    from ranking.users import UserRatings, fit_user_ratings

__all__ = [
    "AgreementSummary",
    "BattleLogError",
    "ColumnMap",
    "EvaluationRow",
    "IngestResult",
    "Leaderboard",
    "ModelRating",
    "NotABattleIdError",
    "PairwiseData",
    "PromptTexts",
    "UserAnalysis",
    "UserRatings",
    "analyse_users",
    "evaluate_personalisation",
    "filter_battles",
    "fit_bt",
    "fit_leaderboard",
    "fit_user_agreement",
    "fit_user_ratings",
    "kendall_per_row",
    "online_elo",
    "pairwise_from_battles",
    "read_battles",
    "read_frame",
    "read_prompt_texts",
    "spearman_per_row",
    "split_provisional",
    "user_codes",
]

#: The module each public name lives in, imported when the name is first asked for.
_HOMES: dict[str, str] = {
    "AgreementSummary": "agreement",
    "kendall_per_row": "agreement",
    "spearman_per_row": "agreement",
    "UserAnalysis": "analysis",
    "analyse_users": "analysis",
    "fit_user_agreement": "analysis",
    "fit_bt": "bt",
    "online_elo": "elo",
    "EvaluationRow": "evaluation",
    "evaluate_personalisation": "evaluation",
    "filter_battles": "io.frames",
    "pairwise_from_battles": "io.frames",
    "user_codes": "io.frames",
    "BattleLogError": "io.chunks",
    "NotABattleIdError": "io.chunks",
    "IngestResult": "io.ingest",
    "read_battles": "io.ingest",
    "read_frame": "io.ingest",
    "ColumnMap": "io.column_map",
    "PromptTexts": "io.prompt_texts",
    "read_prompt_texts": "io.prompt_texts",
    "fit_leaderboard": "leaderboard",
    "split_provisional": "provisional",
    "Leaderboard": "types",
    "ModelRating": "types",
    "PairwiseData": "types",
    "UserRatings": "users",
    "fit_user_ratings": "users",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
