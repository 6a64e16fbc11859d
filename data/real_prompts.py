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
knows no cluster names (so it works for files never seen):

1. Lexicon score: each topic has a keyword lexicon (:data:`LEXICON`); a cluster scores
   ``NAME_WEIGHT`` per distinct name word in a topic's lexicon plus 1 per distinct word
   of its prompts' text in it (words lower-cased, a plural ``s`` dropped).
2. TF-IDF similarity: cosine similarity (in [0, 1]) of the cluster's name and text with
   each topic's description (its title, lexicon and the template bank of
   :mod:`data.prompts`), added to the lexicon score; it breaks ties and alone decides a
   cluster with no lexicon hit.

The cluster goes to the highest score (the first of :data:`TOPICS` on an exact tie). It
uses no sentence embeddings: the topic model is evaluated against this grouping.

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
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from data.prompts import BANK, TOPICS, WRITING_TRAITS, check_writing

__all__ = [
    "CHOICE_STRENGTH",
    "LEXICON",
    "NAME_WEIGHT",
    "RealPrompts",
    "choose_prompts",
    "default_real_prompts_path",
    "group_clusters",
    "load_real_prompts",
    "measure_traits",
]

#: Default ``strength`` of :func:`choose_prompts` (log-odds per unit of style x trait).
CHOICE_STRENGTH = 1.0
#: Weight of a cluster-name word relative to a prompt-text word in the lexicon score.
NAME_WEIGHT = 3.0
_CLIP = 3.0
_ENV = "PLB_REAL_PROMPTS"
_SHARED = Path("..") / "shared" / "data" / "real-prompts" / "arena-hard-v0.1.jsonl"

#: Keyword lexicon per topic (compared after lower-casing and dropping a plural "s").
LEXICON: Mapping[str, frozenset[str]] = {
    topic: frozenset(words.split())
    for topic, words in {
        "coding": "code coding python javascript typescript java c++ c# rust kotlin swift php "
        "sql html css react django flask api function script program programming bug debug "
        "compile compiler docker kubernetes linux git regex database server web app "
        "development developer framework class method array string loop json csv pandas "
        "numpy pytorch tensorflow cuda bash shell terminal vba excel implement "
        "implementation deploy deployment scraping scrape bot node laravel symfony "
        "streamlit gradio shiny tkinter wpf android unity roblox shader hlsl assembly "
        "kernel encryption cryptography hash chatbot frontend backend def return const "
        "struct int void matplotlib awk sed grep ffmpeg nix aws cloud vhdl verilog hdl odoo "
        "sap software variable library pdf github npm pip install gui browser extension "
        "testing authentication password wifi vulnerability xss cve ssh network subnet "
        "vlan cron redis socket webhook concurrency",
        "math": "math mathematic mathematical equation solve algebra calculus derivative "
        "integral proof prove theorem probability statistic statistical number prime "
        "geometry triangle matrix eigenvalue series limit continuity sum dice pi sqrt "
        "irrational rational formula calculate calculation compute deviation variance "
        "distribution percentage ratio sequence factorial integer arithmetic puzzle "
        "combinatoric modulo divisible fraction polynomial logarithm",
        "creative_writing": "story poem poetry fiction character novel plot song lyric "
        "melody music rpg roleplay creative narrative dialogue screenplay fantasy haiku "
        "rap satire tale chapter scene write rewrite essay guitar chord notation "
        "translation translate language word etymology metaphor association tone style "
        "author verse rhyme",
        "business": "business startup marketing market sale customer client strategy "
        "finance financial investment invest tax accounting revenue profit profitability "
        "pricing price stock trading option bank banking company management manager "
        "enterprise product seo advertising agile scrum leadership team cio kpi invoice "
        "commission economic econometric budget money salary career job interview resume "
        "email meeting project stakeholder operation industry retail commerce e-commerce "
        "contract legal employee hr brand sme",
        "science": "science scientific physic physics chemistry biology climate energy "
        "solar power electromagnetic wave motion radar sensor quantum experiment research "
        "theory atom molecule cell gene evolution planet space astronomy earth weather "
        "forecast engineering motor axle material mining neural learning deep transformer "
        "attention gradient ai machine detection signal filter kalman physic force "
        "velocity acceleration temperature",
        "health": "health healthy medical medicine doctor patient hospital disease symptom "
        "treatment diet nutrition exercise fitness workout training sleep mental anxiety "
        "stress therapy drug pain injury radiology clinical healthcare body weight "
        "calorie protein running race marathon endurance swim cycling heart blood vitamin "
        "triathlon",
        "travel_food": "travel trip visit vacation holiday hotel flight city country tour "
        "itinerary food recipe cook cooking bake baking meal dish breakfast lunch dinner "
        "restaurant ingredient peanut butter flavor taste wine coffee cuisine kitchen "
        "spice chocolate salt sugar tuna cheese",
        "chat": "chat conversation talk hello hi hey joke funny opinion advice relationship "
        "friend feel feeling life love game chess play fun riddle pretend hypothetical "
        "debate argument philosophy meaning yourself you bob alice inner confirm ready "
        "instruction card tic-tac-toe cheating",
    }.items()
}

_WORD = re.compile(r"[a-z][a-z0-9+#\-]*")
_POLITE = re.compile(
    r"\b(please|kindly|could you|would you|thank|thanks|hello|dear|greetings|i would like)\b"
)
_CASUAL = re.compile(r"\b(u|ur|pls|plz|thx|lol|gonna|wanna|btw|hey|yo|ya|im|dont|cant)\b")
_STRUCTURE = re.compile(
    r"```|^\s{0,3}#{1,6}\s|^\s*[-*+]\s|^\s*\d+[.)]\s|^\s*\|.*\|\s*$|\*\*[^*\n]+\*\*|`[^`\n]+`",
    re.MULTILINE,
)
_ASKS = re.compile(r"\b(bullet|bullets|table|tables|markdown|headings?|numbered list)\b")


def _words(text: str) -> set[str]:
    """Distinct lower-case words, a plural ``s`` dropped (``"strings"`` -> ``"string"``)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


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


def _descriptions() -> list[str]:
    """Each topic's text for the TF-IDF fallback: title, lexicon, template bank."""
    out = []
    for t in TOPICS:
        bank = BANK[t]
        slots = " ".join(v.replace("|", " ") for v in bank["slots"].values())
        text = " ".join([bank["title"], *LEXICON[t], bank["templates"], bank["context"], slots])
        out.append(re.sub(r"\{\w+\}", " ", text))
    return out


def group_clusters(clusters: list[str], texts: list[str]) -> dict[str, str]:
    """The simulator topic of each cluster (module docstring, "Grouping").

    Parameters
    ----------
    clusters : list of str
        Each prompt's cluster name.
    texts : list of str
        Each prompt's text, aligned with ``clusters``.

    Returns
    -------
    dict
        Cluster name to a topic of :data:`data.prompts.TOPICS`.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    names = sorted(set(clusters))
    joined: dict[str, list[str]] = {c: [] for c in names}
    for c, text in zip(clusters, texts, strict=True):
        joined[c].append(text)
    docs = [c + "\n" + "\n".join(joined[c]) for c in names]
    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    matrix = vectorizer.fit_transform(_descriptions() + docs)
    similarity = (matrix[len(TOPICS) :] @ matrix[: len(TOPICS)].T).toarray()
    out = {}
    for i, c in enumerate(names):
        name_words, text_words = _words(c), _words(" ".join(joined[c]))
        score = [
            NAME_WEIGHT * len(name_words & LEXICON[t]) + len(text_words & LEXICON[t])
            for t in TOPICS
        ]
        out[c] = TOPICS[int(np.argmax(np.asarray(score) + similarity[i]))]
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
