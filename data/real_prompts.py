"""Real prompts for the simulator: load, group into topics, measure writing traits, choose.

``plb simulate --prompts FILE`` replaces the template text of :mod:`data.prompts` by
real queries (e.g. the 500 Arena-Hard v0.1 prompts in ``../shared/data/real-prompts``).
Users keep their topic mixtures and tastes; what their writing style leaves in the log
shows only through *which* real prompts they pick.

The file
--------
JSON Lines, one object a line: ``prompt`` (non-empty string) and ``cluster`` (non-empty
string, the publishers' topic cluster) are required; ``uid`` (string) is optional (the
line number when missing) and an optional ``topic`` (one of :data:`data.prompts.TOPICS`)
overrides the grouping for that prompt.

Grouping clusters into topics
-----------------------------
Every prompt of a cluster goes to the same simulator topic, by a deterministic rule that
knows no cluster names, a lexicon score then TF-IDF similarity
(:func:`data.prompt_topics.group_clusters`, re-exported here with :data:`LEXICON` and
:data:`NAME_WEIGHT`).

Writing traits
--------------
Measured from the text, columns :data:`data.prompts.WRITING_TRAITS`:

``length``
    ``log(1 + words)``.
``formality``
    +1 per polite or greeting marker ("please", "could you", "thank", "hello", "dear"),
    +1 for a capital first letter and -1 for a lower-case one, +0.5 for a final ``.?!:``
    and -0.5 without one, -1 per casual marker ("u", "pls", "thx", "lol", "gonna", "hey"),
    -1 for shouting (most letters upper case).
``markdown``
    ``log(1 + structures)`` (fenced code, headings, bullet, numbered and table lines,
    bold, inline code) + 1 per request for structure ("bullet", "table", "markdown").

Each is standardised *within its topic* (z-score, clipped to +-3) so that a code paste
is not "long" just for being code. :func:`choose_prompts` then picks, for a vote of
topic ``t`` by a writer with style ``w``, prompt ``p`` of topic ``t`` with probability
proportional to ``exp(strength * w . traits[p])``.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from data.prompt_topics import group_clusters
from data.prompts import TOPICS, WRITING_TRAITS, check_writing

__all__ = [
    "CHOICE_STRENGTH",
    "RealPrompts",
    "choose_prompts",
    "default_real_prompts_path",
    "load_real_prompts",
    "measure_traits",
]

#: Default ``strength`` of :func:`choose_prompts` (log-odds per unit of style x trait).
CHOICE_STRENGTH = 1.0
_CLIP = 3.0
_ENV = "PLB_REAL_PROMPTS"
_SHARED = Path("..") / "shared" / "data" / "real-prompts" / "arena-hard-v0.1.jsonl"

_POLITE = re.compile(
    r"\b(please|kindly|could you|would you|thank|thanks|hello|dear|greetings|i would like)\b"
)
_CASUAL = re.compile(r"\b(u|ur|pls|plz|thx|lol|gonna|wanna|btw|hey|yo|ya|im|dont|cant)\b")
_STRUCTURE = re.compile(
    r"```|^\s{0,3}#{1,6}\s|^\s*[-*+]\s|^\s*\d+[.)]\s|^\s*\|.*\|\s*$|\*\*[^*\n]+\*\*|`[^`\n]+`",
    re.MULTILINE,
)
_ASKS = re.compile(r"\b(bullet|bullets|table|tables|markdown|headings?|numbered list)\b")


@dataclass(frozen=True)
class RealPrompts:
    """Real prompts, each with its cluster and simulator topic.

    Attributes
    ----------
    uid, cluster, prompt : tuple of str
        The file's fields, in file order.
    topic : tuple of str
        Each prompt's simulator topic (one of :data:`data.prompts.TOPICS`).
    source : str
        The file read ('' when built in memory).
    """

    uid: tuple[str, ...]
    cluster: tuple[str, ...]
    prompt: tuple[str, ...]
    topic: tuple[str, ...]
    source: str = ""

    def __post_init__(self) -> None:
        n = len(self.prompt)
        for name in ("uid", "cluster", "topic"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"Field {name!r} must have {n} entries, not {len(getattr(self, name))}."
                )
        bad = sorted(set(self.topic) - set(TOPICS))
        if bad:
            raise ValueError(f"Field 'topic' must hold topics of {TOPICS!r}, not {bad!r}.")

    def __len__(self) -> int:
        return len(self.prompt)

    @cached_property
    def topic_index(self) -> npt.NDArray[np.intp]:
        """Index into :data:`data.prompts.TOPICS` of each prompt's topic, shape (n,)."""
        return np.array([TOPICS.index(t) for t in self.topic], dtype=np.intp)

    @cached_property
    def raw_traits(self) -> npt.NDArray[np.float64]:
        """Measured writing traits before standardisation, shape (n, 3)."""
        return measure_traits(self.prompt)

    @cached_property
    def traits(self) -> npt.NDArray[np.float64]:
        """Writing traits standardised within each topic (z-score clipped to +-3), (n, 3)."""
        raw, out = self.raw_traits, np.zeros((len(self), len(WRITING_TRAITS)))
        for t in range(len(TOPICS)):
            rows = np.flatnonzero(self.topic_index == t)
            if rows.size:
                sd = raw[rows].std(axis=0)
                z = (raw[rows] - raw[rows].mean(axis=0)) / np.where(sd > 1e-12, sd, 1.0)
                out[rows] = np.clip(z, -_CLIP, _CLIP)
        out.setflags(write=False)
        return out

    def topic_sizes(self) -> dict[str, int]:
        """Number of prompts per topic, every topic of :data:`TOPICS` (0 when none)."""
        counts = np.bincount(self.topic_index, minlength=len(TOPICS))
        return {t: int(c) for t, c in zip(TOPICS, counts, strict=True)}


def measure_traits(prompts: tuple[str, ...] | list[str]) -> npt.NDArray[np.float64]:
    """Raw ``length``, ``formality`` and ``markdown`` of each text (module docstring)."""
    out = np.zeros((len(prompts), len(WRITING_TRAITS)))
    for i, text in enumerate(prompts):
        lower = text.lower()
        stripped = text.strip()
        letters = [c for c in stripped if c.isalpha()]
        formal = float(len(set(_POLITE.findall(lower))) - len(set(_CASUAL.findall(lower))))
        if letters:
            formal += 1.0 if letters[0].isupper() else -1.0
            if len(letters) > 10 and sum(c.isupper() for c in letters) > len(letters) / 2:
                formal -= 1.0
        formal += 0.5 if stripped[-1:] in tuple(".?!:") else -0.5
        markdown = math.log1p(len(_STRUCTURE.findall(text))) + len(set(_ASKS.findall(lower)))
        out[i] = (math.log1p(len(text.split())), formal, markdown)
    return out


def _field(obj: dict[str, object], name: str, where: str, required: bool) -> str | None:
    value = obj.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: field {name!r} must be a non-empty string, not {value!r}.")
    return value


def load_real_prompts(path: str | Path) -> RealPrompts:
    """Read a real-prompt file (JSON Lines, module docstring) and group it into topics.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    RealPrompts

    Raises
    ------
    ValueError
        The file cannot be read, or a line is not an object with a non-empty string
        ``prompt`` and ``cluster`` (and, when present, string ``uid`` and a known
        ``topic``); the message names the file, the line and the field.
    """
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"Cannot read prompt file {str(file)!r}: {exc}") from exc
    uid, cluster, prompt, override = [], [], [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{str(file)!r} line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc.msg}).") from exc
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: must be a JSON object, not {type(obj).__name__}.")
        prompt.append(str(_field(obj, "prompt", where, True)))
        cluster.append(str(_field(obj, "cluster", where, True)))
        uid.append(_field(obj, "uid", where, False) or str(number))
        topic = _field(obj, "topic", where, False)
        if topic is not None and topic not in TOPICS:
            raise ValueError(f"{where}: field 'topic' must be one of {TOPICS!r}, not {topic!r}.")
        override.append(topic)
    if not prompt:
        raise ValueError(f"Prompt file {str(file)!r} holds no prompts.")
    grouping = group_clusters(cluster, prompt)
    topics = tuple(
        o if o is not None else grouping[c] for o, c in zip(override, cluster, strict=True)
    )
    return RealPrompts(tuple(uid), tuple(cluster), tuple(prompt), topics, source=str(file))


def default_real_prompts_path() -> Path | None:
    """``$PLB_REAL_PROMPTS`` if set, else the shared Arena-Hard file if present, else None."""
    env = os.environ.get(_ENV)
    if env:
        return Path(env)
    candidate = (Path(__file__).resolve().parents[1] / _SHARED).resolve()
    return candidate if candidate.is_file() else None


def choose_prompts(
    real: RealPrompts,
    topics: npt.ArrayLike,
    writing: npt.ArrayLike,
    rng: np.random.Generator,
    *,
    strength: float = CHOICE_STRENGTH,
) -> npt.NDArray[np.intp]:
    """Pick one real prompt per vote, by the writer's style, within the vote's topic.

    Parameters
    ----------
    real : RealPrompts
        The prompts to pick from.
    topics : array_like of int, shape (n,)
        Index into :data:`data.prompts.TOPICS` of each vote's topic; every topic drawn
        must have prompts in ``real``.
    writing : array_like of float, shape (n, 3)
        The writer's style per vote, columns :data:`data.prompts.WRITING_TRAITS`.
    rng : numpy.random.Generator
        Source of randomness (one uniform per vote).
    strength : float
        Log-odds per unit of ``writing . traits``; 0 picks uniformly within the topic.

    Returns
    -------
    numpy.ndarray of int, shape (n,)
        Index into ``real`` of each vote's prompt.
    """
    topic, style = check_writing(topics, writing)
    n = len(topic)
    if not (isinstance(strength, int | float) and math.isfinite(strength)):
        raise ValueError(f"Argument 'strength' must be a finite number, not {strength!r}.")
    u = rng.random(n)
    out = np.empty(n, dtype=np.intp)
    for t in np.unique(topic).tolist():
        pool = np.flatnonzero(real.topic_index == t)
        if pool.size == 0:
            raise ValueError(f"Argument 'real' has no prompts of topic {TOPICS[t]!r}.")
        rows = np.flatnonzero(topic == t)
        logits = strength * style[rows] @ real.traits[pool].T
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        cum = np.cumsum(weights, axis=1)
        pick = (cum < (u[rows] * cum[:, -1])[:, None]).sum(axis=1)
        out[rows] = pool[np.minimum(pick, pool.size - 1)]
    return out
