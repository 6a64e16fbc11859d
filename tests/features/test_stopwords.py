"""Stop words and identifiers: what may never name a topic."""

from __future__ import annotations

import pytest

from features.stopwords import CODE, LANGUAGES, STOP_WORDS, is_identifier, topic_words


@pytest.mark.parametrize(
    "token", ["predictions_df", "int32_t", "uVar2", "dynamicScore", "getElementById", "MyClassName"]
)
def test_identifiers_are_recognised(token: str) -> None:
    assert is_identifier(token)


@pytest.mark.parametrize("token", ["python", "JavaScript", "PyTorch", "GitHub", "Recipe", "SQL"])
def test_words_and_product_names_are_not_identifiers(token: str) -> None:
    assert not is_identifier(token)


def test_code_tokens_never_name_a_topic() -> None:
    text = (
        "#include <iostream>\nint main() { std::cout << x; const div = document; }\n"
        "def f(self): return None\n<div class='btn'><span>hi</span></div>\n"
        "fn main() { let mut v: Vec<u32> = vec![]; }"
    )
    words = topic_words(text)
    assert not set(words) & {"std", "const", "div", "span", "def", "self", "include", "mut"}
    assert {"std", "const", "div", "cout", "println", "fn", "href"} <= CODE


def test_function_words_of_common_languages_never_name_a_topic() -> None:
    spanish = "¿Cómo puedo escribir una función para los datos de la empresa que tiene clientes?"
    assert topic_words(spanish) == ["escribir", "función", "datos", "empresa", "clientes"]
    german = "Wie kann ich das mit einer Datenbank und der Tabelle machen?"
    assert "datenbank" in topic_words(german) and "und" not in topic_words(german)
    assert {"le", "les", "und", "der", "что", "это", "della", "não", "the"} <= LANGUAGES


def test_topic_words_lower_case_keep_subjects_and_capital_pairs() -> None:
    words = topic_words("The AI writes PyTorch code; st.write shows predictions_df on GitHub")
    assert words == ["ai", "writes", "pytorch", "code", "shows", "github"]  # "st": 2 letters


def test_the_union_is_lower_case() -> None:
    assert all(word == word.lower() for word in STOP_WORDS)
