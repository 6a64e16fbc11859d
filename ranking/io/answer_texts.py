"""The two answers of each vote: the ``answer_a`` and ``answer_b`` fields of a battle log.

A log that carries what each model answered (docs/SPEC.md section 5) can be fitted with
style control (:mod:`ranking.style_control`). The answers are part of the vote, never
labels (:data:`ranking.io.frames.PRIVATE_COLUMNS`): a segment cannot be selected by an
answer's text.

Some logs keep the answers apart, in a file of one answer per model and prompt
(LLMFAO's ``results.jsonl.gz``); :func:`read_answer_texts` reads such a file and
:meth:`AnswerTexts.attach` joins each vote's two answers by its prompt and its models,
making the log style control reads. :func:`vote_answers` gives the answers of a battle
frame in the order of :func:`ranking.io.frames.pairwise_from_battles`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ranking.io.chunks import BattleLogError, PathArg
from ranking.io.frames import vote_order
from ranking.io.prompt_texts import PromptTexts, _id_text, side_records
from ranking.types import BoolArray

__all__ = [
    "ANSWER_FIELDS",
    "LLMFAO_ANSWERS",
    "AnswerTexts",
    "has_answers",
    "read_answer_texts",
    "vote_answers",
]

#: The fields of a battle log holding ``model_a``'s and ``model_b``'s answers.
ANSWER_FIELDS = ("answer_a", "answer_b")
#: The fields of LLMFAO's ``results.jsonl.gz`` (:func:`read_answer_texts` keywords).
LLMFAO_ANSWERS: Mapping[str, str] = {"model_column": "name", "answer_column": "result"}


@dataclass(frozen=True)
class AnswerTexts:
    """Answers by prompt and model.

    Attributes
    ----------
    texts : mapping of (str, str) to str
        ``(prompt, model)`` to the model's answer; the prompt is its text where the
        answers were read with the prompt texts, else its id as text.
    source : str
        Where they were read from, for messages.
    """

    texts: Mapping[tuple[str, str], str] = field(default_factory=dict)
    source: str = "the answers"

    def __hash__(self) -> int:
        return hash((self.source, len(self.texts)))

    def attach(self, battles: pd.DataFrame) -> pd.DataFrame:
        """``battles`` with ``answer_a`` and ``answer_b``: each model's answer to the
        vote's prompt (missing where this file has none).

        Parameters
        ----------
        battles : pandas.DataFrame
            A battle frame with ``model_a``, ``model_b`` and ``prompt``; not modified.

        Raises
        ------
        ValueError
            When ``battles`` has no ``prompt`` column.
        """
        if "prompt" not in battles.columns:
            raise ValueError("Answers are joined by prompt: the battles have no 'prompt' field.")
        prompt = battles["prompt"].astype("string")
        out = battles.copy(deep=False)
        for column, model in zip(ANSWER_FIELDS, ("model_a", "model_b"), strict=True):
            keys = zip(prompt.tolist(), battles[model].astype("string").tolist(), strict=True)
            out[column] = pd.array([self.texts.get(key) for key in keys], dtype="string")
        return out


def has_answers(battles: pd.DataFrame) -> bool:
    """Whether any vote of ``battles`` carries both answers."""
    if not all(c in battles.columns for c in ANSWER_FIELDS):
        return False
    return bool((battles["answer_a"].notna() & battles["answer_b"].notna()).any())


def vote_answers(battles: pd.DataFrame) -> tuple[list[str], list[str], BoolArray]:
    """The answers of each vote, in the order of :func:`ranking.io.frames.pairwise_from_battles`.

    Returns
    -------
    answers_a, answers_b : list of str
        The two answers of each vote that has both, in vote order.
    present : numpy.ndarray of bool
        ``(n,)`` in vote order: whether the vote has both answers (the rows the lists
        hold).
    """
    order = vote_order(battles)
    if not all(c in battles.columns for c in ANSWER_FIELDS):
        return [], [], np.zeros(len(order), dtype=bool)
    a = battles["answer_a"].astype(object).to_numpy()[order]
    b = battles["answer_b"].astype(object).to_numpy()[order]
    present = np.array(
        [isinstance(x, str) and isinstance(y, str) for x, y in zip(a, b, strict=True)],
        dtype=bool,
    )
    return [str(x) for x in a[present]], [str(y) for y in b[present]], present


def read_answer_texts(
    path: PathArg,
    *,
    prompts: PromptTexts | None = None,
    prompt_column: str = "prompt",
    model_column: str = "model",
    answer_column: str = "answer",
) -> AnswerTexts:
    """Read answers by prompt and model from a JSON Lines, JSON or CSV file.

    Parameters
    ----------
    path : path
        The file; ``.jsonl``, ``.json`` or ``.csv``, each optionally ``.gz``.
    prompts : PromptTexts, optional
        Where the file names prompts by id (as LLMFAO does): their texts, so that the
        answers join votes read with the same prompt texts (``--prompts``).
    prompt_column, model_column, answer_column : str
        The fields holding the prompt (its text, or its id), the model's name and the
        answer; LLMFAO's are :data:`LLMFAO_ANSWERS`.

    Returns
    -------
    AnswerTexts

    Raises
    ------
    BattleLogError
        Naming the file, row, field and value: a file that cannot be read, a record
        without one of the fields, a prompt id without a text, or no answer at all. Two
        answers of one model to one prompt keep the first.
    """
    texts: dict[tuple[str, str], str] = {}
    for row, record in side_records(path):
        if not isinstance(record, dict):
            raise BattleLogError(path, "record is not an object", row=row)
        for column in (prompt_column, model_column, answer_column):
            if column not in record:
                found = ", ".join(map(str, list(record)[:12]))
                raise BattleLogError(
                    path, f"is missing (fields found: {found})", row=row, field=column
                )
        key, model, answer = (
            _id_text(record[prompt_column]),
            record[model_column],
            record[answer_column],
        )
        if key is None:
            reason = "is not a prompt (text, or a whole-number id)"
            raise BattleLogError(path, reason, row=row, field=prompt_column, value=key)
        if prompts is not None:
            if key not in prompts.texts:
                reason = f"is not a prompt id of {prompts.source}"
                raise BattleLogError(path, reason, row=row, field=prompt_column, value=key)
            key = prompts.texts[key]
        if not isinstance(model, str) or not model:
            raise BattleLogError(path, "is not a model name", row=row, field=model_column)
        if answer is None:
            continue  # a model that gave no answer: its votes are left out of the control
        if not isinstance(answer, str):
            raise BattleLogError(path, "is not text", row=row, field=answer_column, value=answer)
        texts.setdefault((key, model), answer)
    if not texts:
        raise BattleLogError(path, "holds no answers")
    return AnswerTexts(texts, os.fspath(path))
