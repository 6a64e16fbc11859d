"""The battles of every file read, settled: prompt ids joined to their texts, repeated
battle ids judged.

After :mod:`ranking.io.ingest` has read each file (by columns or by rows), the frames are
settled here, once for all the files: a vote's prompt id becomes its text
(:class:`ranking.io.prompt_texts.PromptTexts`), and a row whose ``battle_id`` was met
before is a duplicate when it carries the same vote (dropped and counted), or shows the
id column to be no battle id when it carries another (:class:`NotABattleIdError`:
dropping it would drop a real vote).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence, Set
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.io.battle_frame import concat_battle_frames
from ranking.io.chunks import BattleLogError, NotABattleIdError, PathArg
from ranking.io.duplicate_ids import differing_repeats, repeated_ids
from ranking.io.prompt_texts import PromptTexts

__all__ = ["Origin", "Settled", "settle"]


class Origin(NamedTuple):
    """Where a frame of battles was read: the file, and the column its ids come from."""

    file: PathArg
    id_column: str | None


class Settled(NamedTuple):
    """The battles of all files, in one frame, and how many repeated ids were dropped."""

    battles: pd.DataFrame
    n_duplicates: int


def settle(
    frames: Sequence[pd.DataFrame],
    origins: Sequence[Origin],
    *,
    known: Set[str] = frozenset(),
    prompts: PromptTexts | None = None,
    reasons: Counter[str] | None = None,
) -> Settled:
    """One battle frame of the frames read, prompts joined and repeated ids dropped.

    Parameters
    ----------
    frames : sequence of pandas.DataFrame
        Typed battle frames, in reading order.
    origins : sequence of Origin
        Where each frame was read.
    known : set of str, optional
        Battle ids ingested before: their rows are duplicates, whatever their vote.
    prompts : PromptTexts, optional
        Texts of the prompt ids in the ``prompt`` column.
    reasons : collections.Counter, optional
        Where to count the votes whose prompt id has no text, which are then skipped;
        without it such a vote is an error.

    Returns
    -------
    Settled

    Raises
    ------
    NotABattleIdError
        When a row repeats an id met in an earlier row with another vote.
    BattleLogError
        Without ``reasons``, for a prompt id without a text.
    """
    battles = concat_battle_frames(list(frames))
    origin = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    if prompts is not None and len(battles):
        battles, origin = _join_prompts(battles, origin, origins, prompts, reasons)
    ids = battles["battle_id"]
    repeated = repeated_ids(ids, known)
    differ = differing_repeats(battles, repeated_ids(ids) if known else repeated)
    if differ.any():
        file, column = origins[origin[np.argmax(differ)]]
        n_differ = int(differ.sum())
        raise NotABattleIdError(file, column or "battle_id", n_differ, len(battles))
    n_duplicates = int(repeated.sum())
    if n_duplicates:
        battles = battles.loc[~repeated].reset_index(drop=True)
    return Settled(battles, n_duplicates)


def _join_prompts(
    battles: pd.DataFrame,
    origin: npt.NDArray[np.intp],
    origins: Sequence[Origin],
    prompts: PromptTexts,
    reasons: Counter[str] | None,
) -> tuple[pd.DataFrame, npt.NDArray[np.intp]]:
    """The battles with their prompt ids replaced by texts, and the frame of each."""
    ids = battles["prompt"]
    texts, unknown = prompts.lookup(ids)
    battles = battles.assign(prompt=texts)
    if unknown.any():
        source = os.path.basename(prompts.source)
        if reasons is None:
            first = int(np.argmax(unknown))
            key = ids.iloc[first]
            n_key = int(ids.eq(key).sum())
            reason = (
                f"prompt id {key!r} of {n_key:,} votes is not in {source} "
                f"({len(prompts.texts):,} ids there)"
            )
            raise BattleLogError(origins[origin[first]].file, reason, field="prompt")
        reasons[f"field 'prompt': id not in {source}"] += int(unknown.sum())
        battles = battles.loc[~unknown].reset_index(drop=True)
        origin = origin[~unknown]
    return battles, origin
