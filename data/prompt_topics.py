"""Grouping real prompts' clusters into the simulator's topics, for :mod:`data.real_prompts`.

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
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from data.prompts import BANK, TOPICS

__all__ = ["LEXICON", "NAME_WEIGHT", "group_clusters"]

#: Weight of a cluster-name word relative to a prompt-text word in the lexicon score.
NAME_WEIGHT = 3.0

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


def _words(text: str) -> set[str]:
    """Distinct lower-case words, a plural ``s`` dropped (``"strings"`` -> ``"string"``)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
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
