"""Which column of a battle log holds which field, and what its winner values mean.

A log in its own shape (LLMFAO's ``left``, ``right``, ``worker``, ``winner=left|right|tie``;
MT-bench's ``question_id`` that names a question, not a battle) is read through a
:class:`ColumnMap`, as arena-rank's ``PairDataset.from_pandas`` takes column names and an
outcome map. :meth:`ColumnMap.plan` turns the column names of a file into the renames
both readers apply (:mod:`ranking.io.columnar` to Arrow tables, :mod:`ranking.io.records`
to frames): one definition of the fields, their aliases (docs/SPEC.md section 1) and the
map. The default map is the format of section 1 as it stands.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ranking.types import WINNER_OUTCOME

__all__ = [
    "ALIASES",
    "BATTLE_COLUMNS",
    "DEFAULT_MAP",
    "OPTIONAL_FIELDS",
    "PRESETS",
    "UNMAPPED_WINNER",
    "ColumnMap",
    "MissingColumn",
    "Renaming",
]

#: Columns of a battle frame, in order; label columns follow them.
BATTLE_COLUMNS = ("battle_id", "model_a", "model_b", "winner", "user_id", "prompt", "tstamp")
#: Canonical column to its aliases, in order of preference; an alias is used only when
#: the canonical column is absent (otherwise it stays a label column).
ALIASES: Mapping[str, tuple[str, ...]] = {
    "battle_id": ("id", "question_id"),
    "user_id": ("judge",),
    "prompt": ("question",),
}
#: Fields a log may lack: a map may say that it has none of them (``None``).
OPTIONAL_FIELDS = ("battle_id", "user_id", "prompt", "tstamp")
#: Why a winner value outside a map's ``winner_values`` is rejected (then the values).
UNMAPPED_WINNER = "is not one of the winner values mapped:"
_WINNERS = tuple(WINNER_OUTCOME)


class Renaming(NamedTuple):
    """What a reader does to the columns of one file: :meth:`ColumnMap.plan`."""

    #: Source column to field, for the columns that hold a field.
    renames: dict[str, str]
    #: Columns named as a field that the map takes from elsewhere (or not at all): left out.
    dropped: tuple[str, ...]
    #: The source column of ``battle_id`` (for messages), or ``None``.
    battle_id: str | None
    #: Whether the prompt is to be taken from ``conversation_a`` where no column holds it.
    prompt_from_conversation: bool


class MissingColumn(ValueError):
    """A column map naming a column that a battle log does not have (the readers name
    the file: :class:`ranking.io.chunks.ColumnMapError`).

    Attributes
    ----------
    field : str
        The field the map takes from that column, e.g. ``"model_a"``.
    column : str
        The column named.
    found : list of str
        The columns the log has.
    """

    def __init__(self, field: str, column: str, found: Sequence[str]) -> None:
        shown = ", ".join(map(str, found[:12])) + (", ..." if len(found) > 12 else "")
        super().__init__(f"no column {column!r} for {field} (columns found: {shown})")
        self.field = field
        self.column = column
        self.found = list(found)


@dataclass(frozen=True)
class ColumnMap:
    """Where a battle log holds each field, and what its winner values mean.

    Parameters
    ----------
    columns : mapping of str to str or None, optional
        Field (one of :data:`BATTLE_COLUMNS`) to the column that holds it, e.g.
        ``{"model_a": "left", "model_b": "right", "user_id": "worker"}``; ``None`` says
        the log has no such column (optional fields only): ``{"battle_id": None}`` reads
        a log whose ``id`` or ``question_id`` is not a battle id. A field not named is
        found as docs/SPEC.md section 1 says: its own name, else an alias. A column named
        as a field but mapped elsewhere (or to none) is left out of the battles.
    winner_values : mapping of str to str, optional
        Winner value as written in the log to a canonical winner (``model_a``,
        ``model_b``, ``tie``, ``tie (bothbad)``, ``both_bad``), e.g. ``{"left":
        "model_a", "right": "model_b", "tie": "tie"}``. When given, the log's winners
        must be among its keys (matched as text); when empty, the canonical values.

    Raises
    ------
    ValueError
        For a field that is not one, a required field mapped to none, a column mapped to
        two fields, or a winner value mapped to something not canonical.
    """

    columns: Mapping[str, str | None] = field(default_factory=dict)
    winner_values: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        columns, winners = dict(self.columns), dict(self.winner_values)
        fields = ", ".join(BATTLE_COLUMNS)
        for name, column in columns.items():
            if name not in BATTLE_COLUMNS:
                raise ValueError(f"Argument 'columns' names no field {name!r}; fields: {fields}.")
            if column is None and name not in OPTIONAL_FIELDS:
                raise ValueError(f"Argument 'columns' must name a column for {name!r}, not None.")
            if column is not None and (not isinstance(column, str) or not column):
                raise ValueError(f"Argument 'columns' maps {name!r} to {column!r}, not a column.")
        named = [c for c in columns.values() if c is not None]
        twice = sorted({c for c in named if named.count(c) > 1})
        if twice:
            raise ValueError(f"Argument 'columns' maps column {twice[0]!r} to two fields.")
        for value, winner in winners.items():
            if not isinstance(value, str) or not value:
                raise ValueError(f"Argument 'winner_values' has {value!r}, not a winner value.")
            if winner not in _WINNERS:
                canonical = ", ".join(_WINNERS)
                raise ValueError(
                    f"Argument 'winner_values' maps {value!r} to {winner!r}, "
                    f"not one of {canonical}."
                )
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "winner_values", winners)

    def __hash__(self) -> int:
        return hash((tuple(self.columns.items()), tuple(self.winner_values.items())))

    @property
    def sources(self) -> frozenset[str]:
        """The columns the map names (a CSV reader keeps them as text)."""
        return frozenset(c for c in self.columns.values() if c is not None)

    def plan(self, names: Iterable[Any]) -> Renaming:
        """The renames that make a file's columns the battle frame's fields.

        Parameters
        ----------
        names : iterable
            The file's column names, as read.

        Returns
        -------
        Renaming

        Raises
        ------
        MissingColumn
            When the map names a column that is not among ``names``.
        """
        present = list(names)
        have = set(present)
        taken = self.sources
        renames: dict[str, str] = {}
        for name in BATTLE_COLUMNS:
            if name in self.columns:
                column = self.columns[name]
                if column is not None and column not in have:
                    raise MissingColumn(name, column, present)
            else:
                candidates = (name, *ALIASES.get(name, ()))
                column = next((c for c in candidates if c in have and c not in taken), None)
            if column is not None:
                renames[column] = name
        dropped = tuple(n for n in present if n in BATTLE_COLUMNS and n not in renames)
        battle_id = next((s for s, f in renames.items() if f == "battle_id"), None)
        return Renaming(renames, dropped, battle_id, "prompt" not in self.columns)

    def winners(self, values: Iterable[Any]) -> list[str | None]:
        """Canonical winners of ``values`` as read (``None`` where the map has none)."""
        if not self.winner_values:
            return [v if isinstance(v, str) and v in _WINNERS else None for v in values]
        return [self.winner_values.get(v) if isinstance(v, str) else None for v in values]

    @property
    def accepted_winners(self) -> Collection[str]:
        """The winner values a log may hold: the map's, else the canonical ones."""
        return tuple(self.winner_values) or _WINNERS

    def unmapped_reason(self) -> str:
        """Why a winner value outside :attr:`winner_values` is rejected."""
        return f"{UNMAPPED_WINNER} " + ", ".join(map(repr, self.winner_values))


#: The format of docs/SPEC.md section 1: each field's own column, else an alias.
DEFAULT_MAP = ColumnMap()

#: Named maps of logs published in their own shape (``plb ... --preset NAME``).
PRESETS: Mapping[str, ColumnMap] = {
    # LLMFAO crowd comparisons (dustalov/llmfao): `id` names a pair of models, shared by
    # every worker who judged it; `prompt` is an id into prompts.jsonl.
    "llmfao": ColumnMap(
        {"model_a": "left", "model_b": "right", "user_id": "worker", "battle_id": None},
        {"left": "model_a", "right": "model_b", "tie": "tie"},
    ),
    # MT-bench human judgments: `question_id` names the question, shared by judges and models.
    "mt-bench": ColumnMap({"battle_id": None}),
}
