"""Prompt text for the synthetic arena: topic templates, slot vocabularies, writing style.

A prompt is one *core* request drawn from its topic's templates (slots filled from real
vocabulary), decorated according to the writer's style (:data:`WRITING_TRAITS`):

``length``
    Long-winded writers add context sentences ("I'm working on a Discord bot and I'm
    stuck.") and ask for detail; terse ones ask for short answers ("Keep it short.").
``formality``
    Formal writers greet, say "please"/"could you" and thank; casual ones type in lower
    case, drop the final full stop, write "u", "pls", "thx".
``markdown``
    Structure-minded writers ask for bullet points or tables and paste code in fenced
    blocks; the others occasionally ask for plain text.

The answer-style preferences of a simulated user shape their writing style, so the text
of their queries carries a (noisy) signal about which models they prefer.

The text bank (templates, slot vocabularies, decorations) is package data,
``data/prompt_bank.json``, read once at import; the code is :func:`generate_prompts`. All
randomness comes from the :class:`numpy.random.Generator` handed in.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

__all__ = [
    "BANK",
    "TopicBank",
    "TOPICS",
    "TOPIC_TITLES",
    "WRITING_TRAITS",
    "check_writing",
    "generate_prompts",
]

#: The text bank's file, package data of :mod:`data`.
BANK_FILE = "prompt_bank.json"

# ---------------------------------------------------------------------------------------
# The bank, package data (``prompt_bank.json``). Templates: one a line; "{slot}" draws
# from the topic's slots (then the common ones); "{slot2}" draws a different word from the
# same slot. Core templates that start with an imperative verb and end with "." can take
# "Please ..." / "Could you ...?".
# ---------------------------------------------------------------------------------------


class TopicBank(TypedDict):
    """The text of one topic: templates and context sentences (one a line), slots."""

    title: str
    templates: str
    context: str
    slots: dict[str, str]


def _read_bank() -> dict[str, Any]:
    """The text bank as stored: word lists and lines, not yet joined."""
    text = resources.files("data").joinpath(BANK_FILE).read_text(encoding="utf-8")
    bank: dict[str, Any] = json.loads(text)
    return bank


def _slots(stored: Mapping[str, list[str]]) -> dict[str, str]:
    return {name: "|".join(words) for name, words in stored.items()}


_STORED = _read_bank()
IMPERATIVE_VERBS: frozenset[str] = frozenset(_STORED["imperative_verbs"])
COMMON_SLOTS: dict[str, str] = _slots(_STORED["common_slots"])
#: Each topic's text, in the order used by the simulator's arrays.
BANK: dict[str, TopicBank] = {
    topic: {
        "title": spec["title"],
        "templates": "\n".join(spec["templates"]),
        "context": "\n".join(spec["context"]),
        "slots": _slots(spec["slots"]),
    }
    for topic, spec in _STORED["topics"].items()
}
DECORATIONS: dict[str, tuple[str, ...]] = {
    name: tuple(pieces) for name, pieces in _STORED["decorations"].items()
}
del _STORED

#: Topic labels, in the order used by the simulator's arrays.
TOPICS: tuple[str, ...] = tuple(BANK)
#: Human-readable topic names.
TOPIC_TITLES: Mapping[str, str] = {t: spec["title"] for t, spec in BANK.items()}
#: Columns of the ``writing`` array of :func:`generate_prompts`.
WRITING_TRAITS: tuple[str, ...] = ("length", "formality", "markdown")

# ---------------------------------------------------------------------------------------
# The generator.
# ---------------------------------------------------------------------------------------

_ObjArray = npt.NDArray[np.object_]
_FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Template:
    """A template in positional form: ``text.format(*fillers)``."""

    text: str
    slots: tuple[tuple[str, str], ...]  # (vocabulary key, base slot) of each field
    imperative: bool  # "Write a poem." -> can become "Could you write a poem?"


@dataclass(frozen=True)
class _Topic:
    core: tuple[_Template, ...]
    context: tuple[_Template, ...]
    vocab: Mapping[str, _ObjArray]


def _lines(block: str) -> list[str]:
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def _with_article(words: _ObjArray, article: str) -> _ObjArray:
    """``"a eerie"`` -> ``"an eerie"``, but ``"a US citizen"`` stays."""
    return np.array(
        [
            f"{article}n {w}" if w[0] in "aeiouAEIOU" and w[1:2].islower() else f"{article} {w}"
            for w in words
        ],
        dtype=object,
    )


def _parse(raw: str, vocab: dict[str, _ObjArray], topic: str) -> _Template:
    """Parse a template; ``"a {slot}"`` becomes one field drawn from articled words."""
    pieces: list[str] = []
    slots: list[tuple[str, str]] = []
    for literal, field, _, _ in string.Formatter().parse(raw):
        if field is None:
            pieces.append(literal.replace("{", "{{").replace("}", "}}"))
            continue
        base = field.rstrip("0123456789")
        if base not in vocab:
            raise KeyError(f"Template {raw!r} of topic {topic!r} uses unknown slot {field!r}.")
        key = base
        for article in ("a", "A"):
            if literal == f"{article} " or literal.endswith(f" {article} "):
                literal, key = literal[:-2], f"{article} {base}"
                if key not in vocab:
                    vocab[key] = _with_article(vocab[base], article)
        pieces.extend([literal.replace("{", "{{").replace("}", "}}"), "{}"])
        slots.append((key, base))
    imperative = raw.endswith(".") and raw.split(" ", 1)[0] in IMPERATIVE_VERBS
    return _Template("".join(pieces), tuple(slots), imperative)


@lru_cache(maxsize=1)
def _compiled() -> tuple[_Topic, ...]:
    out = []
    for topic, spec in BANK.items():
        merged = {**COMMON_SLOTS, **spec["slots"]}
        vocab = {k: np.array(v.split("|"), dtype=object) for k, v in merged.items()}
        core = tuple(_parse(t, vocab, topic) for t in _lines(spec["templates"]))
        context = tuple(_parse(t, vocab, topic) for t in _lines(spec["context"]))
        out.append(_Topic(core, context, vocab))
    return tuple(out)


def _fill(
    templates: Sequence[_Template],
    which: npt.NDArray[np.intp],
    vocab: Mapping[str, _ObjArray],
    rng: np.random.Generator,
) -> _ObjArray:
    """Fill ``templates[which[i]]`` for every ``i``; a repeated slot gets a different word."""
    out = np.empty(len(which), dtype=object)
    order = np.argsort(which, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(which, minlength=len(templates)))])
    for k, tpl in enumerate(templates):
        rows = order[bounds[k] : bounds[k + 1]]
        if len(rows) == 0:
            continue
        columns: list[list[str]] = []
        drawn: dict[str, npt.NDArray[np.int64]] = {}
        for key, base in tpl.slots:
            words = vocab[key]
            if base in drawn and len(words) > 1:
                idx = (drawn[base] + rng.integers(1, len(words), size=len(rows))) % len(words)
            else:
                idx = rng.integers(0, len(words), size=len(rows))
            drawn[base] = idx
            columns.append(words[idx].tolist())
        if columns:
            out[rows] = [tpl.text.format(*args) for args in zip(*columns, strict=True)]
        else:
            out[rows] = tpl.text
    return out


def _nonempty(pieces: _ObjArray) -> Iterator[tuple[int, str]]:
    """``(index, piece)`` for the non-empty strings of an object array."""
    idx = np.flatnonzero(pieces != "")
    return zip(idx.tolist(), pieces[idx].tolist(), strict=True)


def _sigmoid(x: _FloatArray) -> _FloatArray:
    return 1.0 / (1.0 + np.exp(-x))


def _choose(
    mask: npt.NDArray[np.bool_], choices: Sequence[str], rng: np.random.Generator
) -> _ObjArray:
    """A random element of ``choices`` where ``mask`` holds, ``""`` elsewhere."""
    out = np.full(mask.shape, "", dtype=object)
    n = int(mask.sum())
    if n:
        out[mask] = np.asarray(choices, dtype=object)[rng.integers(0, len(choices), size=n)]
    return out


def _either(
    first: npt.NDArray[np.bool_],
    second: npt.NDArray[np.bool_],
    choices: tuple[Sequence[str], Sequence[str]],
    rng: np.random.Generator,
) -> _ObjArray:
    """``choices[0]`` where ``first``, ``choices[1]`` where ``second`` (and not first)."""
    out = _choose(first, choices[0], rng)
    rest = second & ~first
    out[rest] = _choose(rest, choices[1], rng)[rest]
    return out


def check_writing(
    topics: npt.ArrayLike, writing: npt.ArrayLike
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """``topics`` and ``writing`` as arrays, checked: one topic index into :data:`TOPICS`
    and one row of :data:`WRITING_TRAITS` per prompt.

    Raises
    ------
    ValueError
        Naming the argument, when a shape or an index is wrong.
    """
    topic = np.asarray(topics, dtype=np.intp)
    style = np.asarray(writing, dtype=np.float64)
    n = len(topic)
    if style.shape != (n, len(WRITING_TRAITS)):
        raise ValueError(
            f"Argument 'writing' must have shape ({n}, {len(WRITING_TRAITS)}), not {style.shape}."
        )
    if n and (topic.min() < 0 or topic.max() >= len(TOPICS)):
        raise ValueError(f"Argument 'topics' must hold indices 0..{len(TOPICS) - 1}.")
    return topic, style


def generate_prompts(
    topics: npt.ArrayLike,
    writing: npt.ArrayLike,
    rng: np.random.Generator,
) -> list[str]:
    """Generate one prompt per vote.

    Parameters
    ----------
    topics : array_like of int, shape (n,)
        Index into :data:`TOPICS` of each prompt's topic.
    writing : array_like of float, shape (n, 3)
        The writer's style for each prompt, columns :data:`WRITING_TRAITS`, on a standard
        normal scale (0 is a typical writer, +-2 an extreme one).
    rng : numpy.random.Generator
        Source of all randomness.

    Returns
    -------
    list of str
        The prompts, in the order of ``topics``.
    """
    topic, style = check_writing(topics, writing)
    n = len(topic)
    length, formal, md = style[:, 0], style[:, 1], style[:, 2]

    # The request itself, and up to three context sentences before or after it.
    core = np.empty(n, dtype=object)
    imperative = np.zeros(n, dtype=bool)
    n_context = np.minimum(rng.poisson(np.exp(0.8 * length - 1.0)), 3)
    before, after = np.full((3, n), "", dtype=object), np.full((3, n), "", dtype=object)
    for t, spec in enumerate(_compiled()):
        rows = np.flatnonzero(topic == t)
        if len(rows) == 0:
            continue
        which = rng.integers(0, len(spec.core), size=len(rows))
        core[rows] = _fill(spec.core, which, spec.vocab, rng)
        imperative[rows] = np.array([tpl.imperative for tpl in spec.core])[which]
        k = len(spec.context)
        start = rng.integers(0, k, size=len(rows))
        up_front = rng.random(len(rows)) < 0.5
        for j in range(3):  # consecutive templates from a random start: no repeats
            has = np.flatnonzero(n_context[rows] > j)
            sentence = _fill(spec.context, (start[has] + j) % k, spec.vocab, rng)
            before[j, rows[has[up_front[has]]]] = sentence[up_front[has]]
            after[j, rows[has[~up_front[has]]]] = sentence[~up_front[has]]

    # Decorations, each a Bernoulli draw whose probability follows the writer's style.
    deco, u = DECORATIONS, rng.random((n, 10))
    casual = formal < 0
    greet = _either(
        casual & (u[:, 0] < 0.05 + 0.08 * -formal),
        ~casual & (u[:, 0] < 0.05 + 0.08 * formal),
        (deco["greet_casual"], deco["greet_formal"]),
        rng,
    )
    polite = imperative & (u[:, 1] < _sigmoid(1.4 * np.abs(formal) - 0.8))
    lead = _either(polite & casual, polite, (deco["polite_casual"], deco["polite_formal"]), rng)
    layout = _either(
        u[:, 2] < _sigmoid(1.4 * md - 2.0),
        u[:, 2] > 1.0 - _sigmoid(-1.4 * md - 3.0),
        (deco["format_rich"], ("No bullet points, just plain text.", "No markdown please.")),
        rng,
    )
    size = _either(
        u[:, 3] < _sigmoid(1.3 * length - 1.8),
        u[:, 3] > 1.0 - _sigmoid(-1.3 * length - 1.8),
        (deco["long"], deco["short"]),
        rng,
    )
    thanks = _either(
        casual & (u[:, 4] < _sigmoid(-1.2 * formal - 2.2)),
        ~casual & (u[:, 4] < _sigmoid(1.2 * formal - 1.2)),
        (deco["thanks_casual"], deco["thanks_formal"]),
        rng,
    )
    code = _choose((topic == TOPICS.index("coding")) & (u[:, 5] < 0.3), deco["snippets"], rng)
    fenced = u[:, 6] < _sigmoid(1.5 * md + 0.5)
    lower = u[:, 7] < _sigmoid(-1.6 * formal - 1.2)
    no_stop = u[:, 8] < _sigmoid(-1.6 * formal - 0.4)
    slang = casual & (u[:, 9] < _sigmoid(-2.0 * formal - 2.0))

    # Assemble, touching only the prompts that get each piece (no per-prompt containers).
    prompts: list[str] = core.tolist()
    for i, piece in _nonempty(lead):
        text = piece + prompts[i][0].lower() + prompts[i][1:]
        prompts[i] = text[:-1] + "?" if piece.startswith("Could") else text
    for extra in (before[2], before[1], before[0], greet):
        for i, piece in _nonempty(extra):
            prompts[i] = f"{piece} {prompts[i]}"
    for extra in (after[0], after[1], after[2], layout, size, thanks):
        for i, piece in _nonempty(extra):
            prompts[i] = f"{prompts[i]} {piece}"
    for i in np.flatnonzero(lower).tolist():
        prompts[i] = prompts[i].lower()
    for i in np.flatnonzero(no_stop).tolist():
        if prompts[i][-1] in ".!":
            prompts[i] = prompts[i][:-1]
    for i in np.flatnonzero(slang).tolist():
        text = prompts[i].replace(" you ", " u ").replace("please", "pls")
        prompts[i] = text.replace("Please", "Pls")
    for i, piece in _nonempty(code):
        lang, source = piece.split("\n", 1)
        prompts[i] += f"\n\n```{lang}\n{source}\n```" if fenced[i] else f"\n\n{source}"
    return prompts
