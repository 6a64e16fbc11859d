"""The style features in words: a short label, and what it says of the writer.

Each feature of :data:`features.style.STYLE_FEATURES` has a label for a writer above the
training users' mean and one for below (:data:`STYLE_LABELS`, "long queries"), and the
same as a clause about the reader (:data:`STYLE_SENTENCES`, "you write long queries"),
which :func:`trait_sentence` gives, so no explanation shows a number of standard
deviations to a person.

A person's taste in *answers* (:mod:`ranking.personal_style`: how the length or the
formatting of an answer moves their votes) is said with :data:`ANSWER_TASTE_WORDS`: what
a taste above most voters' is, what one below is, and the move each coefficient is read
per (:data:`ANSWER_TASTE_UNITS`, in :func:`features.answer_style.answer_style`'s measures).
"""

from __future__ import annotations

__all__ = [
    "ANSWER_TASTE_UNITS",
    "ANSWER_TASTE_WORDS",
    "STYLE_LABELS",
    "STYLE_SENTENCES",
    "answer_taste_words",
    "trait_sentence",
]

#: Each style feature in words: above the training users' mean, and below it.
STYLE_LABELS: dict[str, tuple[str, str]] = {
    "log_chars": ("long queries", "short queries"),
    "log_words": ("long queries", "short queries"),
    "mean_word_length": ("long words", "short words"),
    "sentences": ("many sentences", "few sentences"),
    "mean_sentence_words": ("long sentences", "short sentences"),
    "question": ("asks questions", "rarely asks questions"),
    "wh_start": ("starts with a question word", "rarely starts with a question word"),
    "imperative_start": ("gives instructions", "rarely gives instructions"),
    "politeness": ("polite", "few courtesies"),
    "casual": ("casual", "not casual"),
    "lowercase_start": ("starts in lower case", "starts with a capital"),
    "no_final_punct": ("leaves off the final stop", "ends with a stop"),
    "exclamations": ("exclamation marks", "few exclamation marks"),
    "uppercase_ratio": ("many capitals", "few capitals"),
    "code_block": ("pastes code blocks", "no code blocks"),
    "inline_code": ("inline code", "little inline code"),
    "code_chars": ("code-like symbols", "few code-like symbols"),
    "markdown": ("writes markdown", "no markdown"),
    "list_lines": ("writes lists", "no lists"),
    "newlines": ("many lines", "one-line queries"),
    "digits_ratio": ("many numbers", "few numbers"),
    "math": ("maths notation", "little maths notation"),
    "url": ("links", "no links"),
    "brevity_request": ("asks for short answers", "rarely asks for short answers"),
    "detail_request": ("asks for detail", "rarely asks for detail"),
    "structure_request": ("asks for lists or tables", "rarely asks for lists or tables"),
    "plain_request": ("asks for plain text", "rarely asks for plain text"),
    "non_ascii_ratio": ("non-ASCII characters", "plain ASCII"),
    "non_latin_ratio": ("non-Latin script", "Latin script"),
    "emoji": ("emoji", "no emoji"),
    "readability": ("easy to read", "hard to read"),
    "formality": ("formal", "informal"),
}

#: Each style feature as a clause about the writer: above the mean, and below it.
STYLE_SENTENCES: dict[str, tuple[str, str]] = {
    "log_chars": ("you write long queries", "you write short queries"),
    "log_words": ("you write long queries", "you write short queries"),
    "mean_word_length": ("you use long words", "you use short words"),
    "sentences": ("you write several sentences", "you write in a sentence or two"),
    "mean_sentence_words": ("you write long sentences", "you write short sentences"),
    "question": ("you ask questions", "you rarely ask questions"),
    "wh_start": ("you start with how, what or why", "you rarely start with how, what or why"),
    "imperative_start": ("you give instructions", "you rarely give instructions"),
    "politeness": ("you say please and thanks", "you skip please and thanks"),
    "casual": ("you write casually", "you rarely write casually"),
    "lowercase_start": ("you start in lower case", "you start with a capital"),
    "no_final_punct": ("you leave off the final full stop", "you end with a full stop"),
    "exclamations": ("you use exclamation marks", "you rarely use exclamation marks"),
    "uppercase_ratio": ("you use many capitals", "you use few capitals"),
    "code_block": ("you paste code", "you rarely paste code"),
    "inline_code": ("you ask in code", "you rarely quote code"),
    "code_chars": ("you ask in code", "you rarely write code"),
    "markdown": ("you format with markdown", "you write without markdown"),
    "list_lines": ("you write lists", "you rarely write lists"),
    "newlines": ("you write over several lines", "you write on one line"),
    "digits_ratio": ("you use many numbers", "you use few numbers"),
    "math": ("you write maths", "you rarely write maths"),
    "url": ("you include links", "you rarely include links"),
    "brevity_request": ("you ask for short answers", "you rarely ask for short answers"),
    "detail_request": ("you ask for detail", "you rarely ask for detail"),
    "structure_request": ("you ask for lists or tables", "you rarely ask for lists or tables"),
    "plain_request": ("you ask for plain text", "you rarely ask for plain text"),
    "non_ascii_ratio": ("you use accents or symbols", "you write in plain ASCII"),
    "non_latin_ratio": ("you write in a non-Latin script", "you write in the Latin alphabet"),
    "emoji": ("you use emoji", "you rarely use emoji"),
    "readability": ("you write simply", "you write in a dense style"),
    "formality": ("you write formally", "you write informally"),
}


def trait_sentence(feature: str, above: bool, relative: bool = False) -> str:
    """What a style trait says of the writer, as a clause ("you write long sentences").

    Parameters
    ----------
    feature : str
        A style feature (:data:`features.style.STYLE_FEATURES`).
    above : bool
        Whether the writer is above the training users' mean.
    relative : bool
        Whether the trait is measured against their topics' usual style (then "for
        your topics" is added).
    """
    fallback = (f"you use much {feature}", f"you use little {feature}")
    high, low = STYLE_SENTENCES.get(feature, fallback)
    clause = high if above else low
    return clause + " for your topics" if relative else clause


#: Each answer style feature (:data:`features.answer_style.ANSWER_STYLE_FEATURES`) as a
#: taste: above most voters', below, and the move a number of points is read per.
ANSWER_TASTE_WORDS: dict[str, tuple[str, str, str]] = {
    "length": (
        "you prefer longer answers than most",
        "you prefer shorter answers than most",
        "per doubling of length",
    ),
    "headers": (
        "you like headers in answers more than most",
        "you like headers in answers less than most",
        "for an answer with 3 headers against one with none",
    ),
    "lists": (
        "you like lists in answers more than most",
        "you like lists in answers less than most",
        "for an answer with 3 list items against one with none",
    ),
    "bold": (
        "you like bold text in answers more than most",
        "you like bold text in answers less than most",
        "for an answer with 3 bold spans against one with none",
    ),
}

#: Each answer style feature's measure in the two answers a taste is read for, as
#: :data:`ANSWER_TASTE_WORDS` says it: a length doubled (400 tokens against 200), or 3
#: of a count against none; the other measures equal (200 tokens, no formatting).
ANSWER_TASTE_UNITS: dict[str, tuple[float, float]] = {
    "length": (400.0, 200.0),
    "headers": (3.0, 0.0),
    "lists": (3.0, 0.0),
    "bold": (3.0, 0.0),
}


def answer_taste_words(feature: str, above: bool) -> tuple[str, str]:
    """A taste in answers as a clause and its unit.

    Parameters
    ----------
    feature : str
        An answer style feature (``"length"``).
    above : bool
        Whether the person's coefficient is above most voters'.

    Returns
    -------
    (str, str)
        The clause ("you prefer shorter answers than most") and the unit its points are
        read per ("per doubling of length").
    """
    more, less, unit = ANSWER_TASTE_WORDS.get(
        feature,
        (f"you like {feature} more than most", f"you like {feature} less than most", "per unit"),
    )
    return (more if above else less), unit
