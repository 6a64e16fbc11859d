"""Prompt text for the synthetic arena: topic templates, slot vocabularies, writing style.

A prompt is one *core* sentence drawn from its topic's templates (slots filled from
real vocabulary), decorated according to the writer's style:

* ``length`` (writes long queries): extra context sentences, requests for detail;
  negative values ask for short answers ("Keep it short.").
* ``formality``: greetings, "please"/"could you", thanks, capitalisation and final
  punctuation; casual writers type lower case, drop the final full stop, write "u"/"pls".
* ``markdown``: asks for bullet points or tables, pastes code in fenced blocks.

Everything random comes from the :class:`numpy.random.Generator` handed in; the bank
itself is plain constant text, parsed once on first use.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from data._prompt_bank import BANK, COMMON_SLOTS, DECORATIONS, IMPERATIVE_VERBS

__all__ = ["TOPICS", "TOPIC_TITLES", "WRITING_TRAITS", "generate_prompts"]

#: Topic labels, in the order used by the simulator's arrays.
TOPICS: tuple[str, ...] = tuple(BANK)
#: Human-readable topic names.
TOPIC_TITLES: dict[str, str] = {t: str(BANK[t]["title"]) for t in TOPICS}
#: Columns of the ``writing`` array of :func:`generate_prompts`.
WRITING_TRAITS: tuple[str, ...] = ("length", "formality", "markdown")

_FORMATTER = string.Formatter()
_ObjArray = npt.NDArray[np.object_]


@dataclass(frozen=True)
class _Template:
    """A template in positional form: ``text.format(*fillers)``."""

    text: str
    slots: tuple[str, ...]  # vocabulary name of each positional field
    imperative: bool


def _split(block: str) -> list[str]:
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def _parse(raw: str, vocab: dict[str, _ObjArray], where: str) -> _Template:
    pieces: list[str] = []
    slots: list[str] = []
    for literal, field, _, _ in _FORMATTER.parse(raw):
        pieces.append(literal.replace("{", "{{").replace("}", "}}"))
        if field is None:
            continue
        base = field.rstrip("0123456789")
        if base not in vocab:
            raise KeyError(f"Template {raw!r} in {where} uses unknown slot {field!r}.")
        slots.append(base)
        pieces.append("{}")
    first = raw.split(" ", 1)[0]
    imperative = raw.endswith(".") and first in IMPERATIVE_VERBS
    return _Template("".join(pieces), tuple(slots), imperative)


@lru_cache(maxsize=1)
def _compiled() -> dict[str, tuple[list[_Template], list[_Template], dict[str, _ObjArray]]]:
    out = {}
    for topic, spec in BANK.items():
        slots = {**COMMON_SLOTS, **spec["slots"]}  # type: ignore[dict-item]
        vocab = {k: np.array(v.split("|"), dtype=object) for k, v in slots.items()}
        core = [_parse(t, vocab, topic) for t in _split(str(spec["templates"]))]
        context = [_parse(t, vocab, topic) for t in _split(str(spec["context"]))]
        out[topic] = (core, context, vocab)
    return out


def _fill(
    templates: Sequence[_Template],
    which: npt.NDArray[np.intp],
    vocab: dict[str, _ObjArray],
    rng: np.random.Generator,
) -> _ObjArray:
    """Fill ``templates[which[i]]`` for every ``i``; repeated slots get distinct words."""
    out = np.empty(len(which), dtype=object)
    order = np.argsort(which, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(which, minlength=len(templates)))])
    for k, tpl in enumerate(templates):
        rows = order[bounds[k] : bounds[k + 1]]
        if len(rows) == 0:
            continue
        if not tpl.slots:
            out[rows] = tpl.text.format()
            continue
        columns: list[list[str]] = []
        drawn: dict[str, npt.NDArray[np.intp]] = {}
        for name in tpl.slots:
            words = vocab[name]
            n = len(words)
            if name in drawn and n > 1:  # a second {x2}: shift to a different word
                idx = (drawn[name] + rng.integers(1, n, size=len(rows))) % n
            else:
                idx = rng.integers(0, n, size=len(rows))
            drawn[name] = idx
            columns.append(words[idx].tolist())
        out[rows] = [tpl.text.format(*args) for args in zip(*columns, strict=True)]
    return out


def _sigmoid(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return 1.0 / (1.0 + np.exp(-x))


def _pick(
    mask: npt.NDArray[np.bool_], choices: Sequence[str], rng: np.random.Generator
) -> _ObjArray:
    """``choices[random]`` where ``mask`` holds, ``""`` elsewhere."""
    out = np.full(mask.shape, "", dtype=object)
    n = int(mask.sum())
    if n:
        out[mask] = np.asarray(choices, dtype=object)[rng.integers(0, len(choices), size=n)]
    return out


def generate_prompts(
    topics: npt.NDArray[np.intp],
    writing: npt.NDArray[np.float64],
    rng: np.random.Generator,
) -> list[str]:
    """Generate one prompt per vote.

    Parameters
    ----------
    topics : ndarray of int, shape (n,)
        Index into :data:`TOPICS` of each prompt's topic.
    writing : ndarray of float, shape (n, 3)
        The writer's style for each prompt, columns :data:`WRITING_TRAITS`; standard
        normal scale (0 is a typical writer, +-2 is extreme).
    rng : numpy.random.Generator
        Source of all randomness.

    Returns
    -------
    list of str
        The prompts, in the order of ``topics``.
    """
    topics = np.asarray(topics, dtype=np.intp)
    writing = np.asarray(writing, dtype=np.float64)
    n = len(topics)
    if writing.shape != (n, len(WRITING_TRAITS)):
        raise ValueError(
            f"Argument 'writing' must have shape ({n}, {len(WRITING_TRAITS)}), "
            f"not {writing.shape}."
        )
    if n and (topics.min() < 0 or topics.max() >= len(TOPICS)):
        raise ValueError(f"Argument 'topics' must index TOPICS (0..{len(TOPICS) - 1}).")
    length, formal, md = writing[:, 0], writing[:, 1], writing[:, 2]
    bank = _compiled()
    core = np.empty(n, dtype=object)
    imperative = np.zeros(n, dtype=bool)
    n_context = np.minimum(rng.poisson(np.exp(0.8 * length - 0.9)), 3)
    before = [np.empty(n, dtype=object) for _ in range(3)]
    after = [np.empty(n, dtype=object) for _ in range(3)]
    for t, topic in enumerate(TOPICS):
        rows = np.flatnonzero(topics == t)
        if len(rows) == 0:
            continue
        tpl_core, tpl_context, vocab = bank[topic]
        which = rng.integers(0, len(tpl_core), size=len(rows))
        core[rows] = _fill(tpl_core, which, vocab, rng)
        imperative[rows] = np.array([tpl.imperative for tpl in tpl_core])[which]
        first = rng.random(len(rows)) < 0.5  # context before or after the request
        for j in range(3):
            has = n_context[rows] > j
            # distinct context sentences: consecutive offsets from one random start
            start = rng.integers(0, len(tpl_context), size=len(rows)) if j == 0 else start
            pick = (start + j) % len(tpl_context)
            text = np.where(has, _fill(tpl_context, pick, vocab, rng), "")
            before[j][rows] = np.where(first, text, "")
            after[j][rows] = np.where(first, "", text)

    deco = DECORATIONS
    u = rng.random((n, 10))
    casual = formal < 0
    greet = _pick(u[:, 0] < 0.12 + 0.1 * np.abs(formal), (), rng)
    greet[casual & (greet == "")] = ""  # placeholder so both arrays are filled below
    greet = np.where(
        u[:, 0] < 0.08 + 0.08 * np.abs(formal),
        np.where(
            casual,
            _pick(np.ones(n, bool), deco["greet_casual"], rng),
            _pick(np.ones(n, bool), deco["greet_formal"], rng),
        ),
        "",
    )
    polite = imperative & (u[:, 1] < _sigmoid(1.4 * np.abs(formal) - 0.6))
    lead_formal = _pick(polite & ~casual, deco["polite_formal"], rng)
    lead_casual = _pick(polite & casual, deco["polite_casual"], rng)
    fmt = np.where(
        u[:, 2] < _sigmoid(1.4 * md - 1.8),
        _pick(np.ones(n, bool), deco["format_rich"], rng),
        np.where(u[:, 2] > 1 - _sigmoid(-1.4 * md - 3.0), "No bullet points, just plain text.", ""),
    )
    wants_long = u[:, 3] < _sigmoid(1.3 * length - 1.8)
    wants_short = u[:, 3] > 1 - _sigmoid(-1.3 * length - 1.8)
    size = np.where(
        wants_long,
        _pick(np.ones(n, bool), deco["long"], rng),
        np.where(wants_short, _pick(np.ones(n, bool), deco["short"], rng), ""),
    )
    thanks_p = _sigmoid(1.2 * formal - 1.2)
    thanks = np.where(
        u[:, 4] < thanks_p,
        np.where(casual, _pick(np.ones(n, bool), deco["thanks_casual"], rng),
                 _pick(np.ones(n, bool), deco["thanks_formal"], rng)),
        "",
    )
    coding = topics == TOPICS.index("coding")
    code = _pick(coding & (u[:, 5] < 0.3), deco["snippets"], rng)
    fenced = u[:, 6] < _sigmoid(1.5 * md + 0.5)
    lower = u[:, 7] < _sigmoid(-1.6 * formal - 1.4)
    no_stop = u[:, 8] < _sigmoid(-1.6 * formal - 0.6)
    slang = casual & (u[:, 9] < _sigmoid(-2.0 * formal - 2.5))

    prompts: list[str] = []
    for i in range(n):
        body = core[i]
        if lead_formal[i]:
            lead = lead_formal[i]
            body = lead + body[0].lower() + body[1:]
            if lead.endswith("you ") or lead.endswith("you please "):
                body = body[:-1] + "?"
        elif lead_casual[i]:
            body = lead_casual[i] + body[0].lower() + body[1:]
        parts = [greet[i], before[0][i], before[1][i], before[2][i], body, after[0][i],
                 after[1][i], after[2][i], fmt[i], size[i], thanks[i]]
        text = " ".join(p for p in parts if p)
        if lower[i]:
            text = text.lower()
        if no_stop[i] and text[-1] in ".!":
            text = text[:-1]
        if slang[i]:
            text = text.replace(" you ", " u ").replace("please", "pls").replace("Please", "pls")
        if code[i]:
            snippet = code[i]
            text += "\n\n```" + snippet + "\n```" if fenced[i] else "\n\n" + snippet.split("\n", 1)[1]
        prompts.append(text)
    return prompts
