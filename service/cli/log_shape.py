"""The options that read a battle log in its own shape: which column holds which field,
what the winner values mean, which column (if any) is the battle id, and a separate file
of prompt texts (docs/SPEC.md section 5, "Logs in their own shape").

``--columns FIELD=COLUMN,...``, ``--winner-values VALUE=WINNER,...``, ``--battle-id
COLUMN|none`` and ``--preset NAME`` make a :class:`ranking.io.column_map.ColumnMap`;
``--prompts FILE`` (with ``--prompts-id`` and ``--prompts-text``) a
:class:`ranking.io.prompt_texts.PromptTexts`. :func:`shape_error` says which option a
reading error is about.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from ranking.io.chunks import BattleLogError, ColumnMapError, NotABattleIdError
from ranking.io.column_map import (
    BATTLE_COLUMNS,
    OPTIONAL_FIELDS,
    PRESETS,
    UNMAPPED_WINNER,
    ColumnMap,
)
from ranking.io.prompt_texts import PromptTexts, read_prompt_texts
from ranking.types import WINNER_OUTCOME

__all__ = ["LogShape", "add_shape_options", "log_shape", "shape_error"]

#: The value of ``--battle-id`` and ``--columns FIELD=`` that says the log has no such column.
NONE = "none"


@dataclass(frozen=True)
class LogShape:
    """The shape options of a command, made into what :func:`read_battles` takes.

    Attributes
    ----------
    columns : ColumnMap or None
        ``None`` when no option names a column or a winner value (docs/SPEC.md section 1).
    prompts : PromptTexts or None
        The texts of ``--prompts``.
    given : dict of str to str
        Each field mapped to the option that mapped it, as written (``--columns
        model_a=left``), for messages.
    """

    columns: ColumnMap | None = None
    prompts: PromptTexts | None = None
    given: dict[str, str] = field(default_factory=dict)


def _pairs(text: str, what: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        key, sep, value = item.partition("=") if what == "FIELD=COLUMN" else item.rpartition("=")
        if not sep or not key.strip() or not value.strip():
            raise argparse.ArgumentTypeError(f"{item.strip()!r} is not {what} (in {text!r})")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _column_pairs(text: str) -> list[tuple[str, str]]:
    """``--columns``: ``FIELD=COLUMN`` pairs, checked."""
    pairs = _pairs(text, "FIELD=COLUMN")
    for name, column in pairs:
        if name not in BATTLE_COLUMNS:
            fields = ", ".join(BATTLE_COLUMNS)
            raise argparse.ArgumentTypeError(
                f"{name}={column}: no field {name!r} (fields: {fields})"
            )
        if column == NONE and name not in OPTIONAL_FIELDS:
            raise argparse.ArgumentTypeError(f"{name}={column}: {name} needs a column")
    return pairs


def _winner_pairs(text: str) -> list[tuple[str, str]]:
    """``--winner-values``: ``VALUE=WINNER`` pairs, each WINNER canonical."""
    pairs = _pairs(text, "VALUE=WINNER")
    for value, winner in pairs:
        if winner not in WINNER_OUTCOME:
            canonical = ", ".join(WINNER_OUTCOME)
            raise argparse.ArgumentTypeError(
                f"{value}={winner}: {winner!r} is not one of {canonical}"
            )
    return pairs


def add_shape_options(parser: argparse.ArgumentParser) -> None:
    """The options of a log in its own shape (see the module)."""
    group = parser.add_argument_group(
        "logs in their own shape",
        "read a log whose columns or winner values are named otherwise, e.g. LLMFAO's: "
        "--columns model_a=left,model_b=right,user_id=worker --winner-values "
        "left=model_a,right=model_b,tie=tie --battle-id none --prompts prompts.jsonl",
    )
    fields = ", ".join(BATTLE_COLUMNS)
    group.add_argument(
        "--columns",
        type=_column_pairs,
        action="append",
        metavar="FIELD=COLUMN[,...]",
        help=f"the column that holds a field ({fields}); COLUMN 'none' for a field the log "
        "lacks (battle_id, user_id, prompt, tstamp); other fields as docs/SPEC.md section 1",
    )
    group.add_argument(
        "--winner-values",
        type=_winner_pairs,
        action="append",
        metavar="VALUE=WINNER[,...]",
        help="what each winner value of the log means (model_a, model_b, tie, tie (bothbad), "
        "both_bad); the log's winners must then be among these values",
    )
    group.add_argument(
        "--battle-id",
        metavar="COLUMN|none",
        help="the column of unique battle ids, or 'none' (an id, id or question_id column "
        "that names a question or a pair, repeating with different votes, is refused)",
    )
    group.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="a published log's shape: llmfao (left, right, worker, winner=left|right|tie, "
        "id not a battle id), mt-bench (question_id not a battle id); options given win",
    )
    group.add_argument(
        "--prompts",
        metavar="FILE",
        help="prompt texts by id (.jsonl, .json or .csv): the log's prompt column holds ids",
    )
    group.add_argument(
        "--prompts-id", default="id", metavar="COLUMN", help="--prompts' id column (default id)"
    )
    group.add_argument(
        "--prompts-text",
        default="text",
        metavar="COLUMN",
        help="--prompts' text column (default text)",
    )


def log_shape(args: argparse.Namespace) -> LogShape:
    """The :class:`LogShape` of a command's options; reads the ``--prompts`` file.

    Raises
    ------
    ValueError
        (``UsageError`` where the CLI raises it) naming the option and the value.
    """
    preset = PRESETS[args.preset] if args.preset else ColumnMap()
    columns: dict[str, str | None] = dict(preset.columns)
    given = {name: f"--preset {args.preset}" for name in columns}
    for pairs in args.columns or []:
        for name, column in pairs:
            columns[name] = None if column == NONE else column
            given[name] = f"--columns {name}={column}"
    if args.battle_id is not None:
        wanted = None if args.battle_id == NONE else args.battle_id
        if given.get("battle_id", "").startswith("--columns") and columns["battle_id"] != wanted:
            raise ValueError(f"--battle-id {args.battle_id} contradicts {given['battle_id']}")
        columns["battle_id"] = wanted
        given["battle_id"] = f"--battle-id {args.battle_id}"
    winners = dict(preset.winner_values)
    for pairs in args.winner_values or []:
        winners.update(pairs)
    if winners:
        given["winner"] = "--winner-values " + ",".join(f"{v}={w}" for v, w in winners.items())
    try:
        column_map = ColumnMap(columns, winners) if columns or winners else None
    except ValueError as error:  # e.g. one column for two fields
        raise ValueError(f"--columns: {error}") from None
    return LogShape(column_map, _prompts(args), given)


def _prompts(args: argparse.Namespace) -> PromptTexts | None:
    if args.prompts is None:
        named = [o for o, v, d in _PROMPT_COLUMNS if getattr(args, v) != d]
        if named:
            raise ValueError(f"{named[0]} names a column of --prompts FILE, which is not given")
        return None
    try:
        return read_prompt_texts(
            args.prompts, id_column=args.prompts_id, text_column=args.prompts_text
        )
    except BattleLogError as error:
        raise ValueError(f"--prompts {args.prompts}: {error}") from None


_PROMPT_COLUMNS = (("--prompts-id", "prompts_id", "id"), ("--prompts-text", "prompts_text", "text"))


def shape_error(error: BattleLogError, shape: LogShape) -> str:
    """One line for a reading error, naming the shape option it is about, if any."""
    text = str(error)
    if isinstance(error, ColumnMapError):
        option = shape.given.get(error.field or "", "--columns")
        return f"{option}: {text}"
    if isinstance(error, NotABattleIdError):
        return f"{text}; name the battle id with --battle-id COLUMN, or --battle-id none"
    if error.field == "winner" and error.reason.startswith(UNMAPPED_WINNER):
        return f"{shape.given.get('winner', '--winner-values')}: {text}"
    if error.field == "prompt" and shape.prompts is not None and error.row is None:
        return f"--prompts {shape.prompts.source}: {text}"
    if error.reason.startswith("missing required column") and shape.columns is None:
        return f"{text}; name the columns that hold them with --columns FIELD=COLUMN,..."
    return text
