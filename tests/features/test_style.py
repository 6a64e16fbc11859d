"""Writing-style features: known values, batch independence, validation, scikit-learn use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from features.style import STYLE_FEATURES, StyleFeaturizer, cached_style_features, style_features
from features.text_cache import TextCache


def row(query: str) -> dict[str, float]:
    """The features of one query, by name."""
    return dict(zip(STYLE_FEATURES, style_features([query])[0], strict=True))


def test_shape_names_and_dtype() -> None:
    x = style_features(["hello there", "Write a poem."])
    assert x.shape == (2, len(STYLE_FEATURES))
    assert x.dtype == np.float64
    assert len(set(STYLE_FEATURES)) == len(STYLE_FEATURES)
    assert style_features([]).shape == (0, len(STYLE_FEATURES))


def test_polite_request_with_code_block() -> None:
    f = row("Please write a Python function.\n\n```python\nprint(1)\n```")
    assert f["code_block"] == 1
    assert f["politeness"] >= 1
    assert f["imperative_start"] == 1
    assert f["wh_start"] == 0
    assert f["lowercase_start"] == 0
    assert f["casual"] == 0
    assert f["newlines"] == pytest.approx(np.log1p(4))
    assert f["code_chars"] > 0


def test_casual_question() -> None:
    f = row("how do i fix this?? pls")
    assert f["question"] == 1
    assert f["wh_start"] == 1
    assert f["casual"] >= 1
    assert f["lowercase_start"] == 1
    assert f["no_final_punct"] == 1
    assert f["log_words"] == pytest.approx(np.log1p(6))
    assert f["sentences"] == 2  # "how do i fix this??" and "pls"
    assert f["formality"] < 0


def test_counts_on_hand_written_queries() -> None:
    f = row("Thank you! Could you explain this? I'd appreciate it. Thanks")
    assert f["politeness"] == 4  # thank, could you, appreciate, thanks
    assert f["exclamations"] == 1
    assert f["sentences"] == 4
    assert f["formality"] == pytest.approx((1 - 1 + 1) / 3)
    assert row("hey u there? lol thx")["casual"] == 4
    assert row("Pleased to meet you, you know")["politeness"] == 0  # whole words only
    assert row("Kindly summarize this article.")["imperative_start"] == 1
    assert row("Please, translate it")["imperative_start"] == 1
    assert row("What's the capital of France?")["wh_start"] == 1
    assert row("Whatever works")["wh_start"] == 0
    assert row("if a != b: print('x')")["exclamations"] == 0
    assert row("One. Two! Three?")["sentences"] == 3
    assert row("ABCD efgh")["uppercase_ratio"] == pytest.approx(0.5)
    assert row("12 ab")["digits_ratio"] == pytest.approx(2 / 5)
    assert row("Use `np.sqrt` or `math.sqrt`, not ``x``.")["inline_code"] == 2


def test_urls_markdown_lists_and_math() -> None:
    f = row("See https://www.example.com and www.python.org, not foo.www.bar")
    assert f["url"] == 2
    md = row("# Title\n\n| a | b |\n|---|---|\n**bold** text\n- one\n* two\n1. three\n2) four")
    assert md["markdown"] == 4  # a header, two table lines, a bold span
    assert md["list_lines"] == 4
    maths = row(r"Solve $x^2 + 1 = 0$ and simplify \frac{a}{b} \leq 3 ≤ 4")
    assert maths["math"] >= 6
    assert row("It costs $5 or $10.")["math"] == 0


def test_fenced_code_is_not_prose() -> None:
    text = "Fix this:\n```python\n# a comment\n- x = 1 + 2  # pls\n```\n# Header"
    f = row(text)
    assert f["markdown"] == 1  # the header after the fence, not the comment inside
    assert f["list_lines"] == 0
    assert f["math"] == 0
    assert f["casual"] == 0
    assert f["code_block"] == 1


def test_scripts_and_emoji() -> None:
    assert row("这是一个关于机器学习的问题，请帮我解释一下。")["non_latin_ratio"] > 0.5
    assert row("ما هو أفضل نموذج لغوي؟")["non_latin_ratio"] > 0.5
    assert row("ما هو أفضل نموذج لغوي؟")["question"] == 1
    assert row("Привет, как дела?")["non_latin_ratio"] == 1
    latin = row("Café crème brûlée, señor")
    assert latin["non_latin_ratio"] == 0
    assert latin["non_ascii_ratio"] > 0
    f = row("Great job 🎉🔥 ☀")
    assert f["emoji"] == 3
    assert f["non_latin_ratio"] == 0
    assert row("plain text")["emoji"] == 0


def test_readability_and_formality_order() -> None:
    easy = row("The cat sat on the mat. It was fun.")
    hard = row(
        "Notwithstanding considerable methodological heterogeneity, contemporaneous "
        "epidemiological investigations substantiate the hypothesis."
    )
    assert easy["readability"] > hard["readability"]
    formal = row("Could you please explain quantum entanglement? Thank you.")
    casual = row("yo explain quantum stuff pls")
    assert formal["formality"] == 1
    assert casual["formality"] == -1


@pytest.mark.parametrize("query", ["", "   ", "\n\n", "\x00", "?!", "```", "🎉", "123"])
def test_degenerate_queries_are_finite(query: str) -> None:
    x = style_features([query, "Hello."])
    assert np.isfinite(x).all()


def test_empty_query_is_all_zeros() -> None:
    assert not style_features([""]).any()


def test_nul_reads_as_space_and_stays_inside_its_query() -> None:
    x = style_features(["a\x00b", "How are you?", "\x00how"])
    np.testing.assert_array_equal(x[0], style_features(["a b"])[0])
    np.testing.assert_array_equal(x[1], style_features(["How are you?"])[0])
    np.testing.assert_array_equal(x[2], style_features([" how"])[0])
    assert x[2, STYLE_FEATURES.index("wh_start")] == 1


FRAGMENTS = [
    "Please ", "thanks", " u ", "How ", "write ", "```", "`", "\n", "- ", "# ", "|", "**",
    "http://", "www.", "$x$", "\\frac", "?", "!", "!=", ".", " ", "é", "日本", "🎉", "\x00",
    "e", "A", "1. ", "could you", "tl;dr", "'",
]  # fmt: skip
queries = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(queries, min_size=1, max_size=8))
def test_rows_do_not_depend_on_the_batch(batch: list[str]) -> None:
    together = style_features(batch)
    assert np.isfinite(together).all()
    for i, query in enumerate(batch):
        np.testing.assert_array_equal(together[i], style_features([query])[0])


def test_containers() -> None:
    queries = ["How are you?", "write a haiku", ""]
    expected = style_features(queries)
    np.testing.assert_array_equal(style_features(tuple(queries)), expected)
    np.testing.assert_array_equal(style_features(np.array(queries)), expected)
    np.testing.assert_array_equal(style_features(np.array(queries, dtype=object)), expected)
    np.testing.assert_array_equal(style_features(pd.Series(queries, index=[5, 7, 9])), expected)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (12.5, "query 3 must be a string, not 12.5"),
        (None, "query 3 must be a string, not None"),
        (float("nan"), "query 3 must be a string, not nan"),
        (b"bytes", "query 3 must be a string, not b'bytes'"),
    ],
)
def test_non_string_query_is_named(bad: object, message: str) -> None:
    queries = ["a", "b", "c", bad]
    with pytest.raises(ValueError, match=message):
        style_features(queries)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query 3 must be a string"):  # pandas may make nan
        StyleFeaturizer().fit_transform(pd.Series(queries))


def test_wrong_shapes_are_rejected() -> None:
    with pytest.raises(ValueError, match="not a single str"):
        style_features("one query")
    with pytest.raises(ValueError, match="one-dimensional, not 2-dimensional"):
        style_features(np.array([["a", "b"]]))


def test_featurizer_contract() -> None:
    queries = pd.Series(["Write a poem.", "how r u", "Explain `x`."])
    featurizer = StyleFeaturizer()
    with pytest.raises(NotFittedError):
        featurizer.transform(queries)
    assert featurizer.fit(queries) is featurizer
    x = featurizer.transform(queries)
    np.testing.assert_array_equal(x, style_features(queries))
    names = featurizer.get_feature_names_out()
    assert isinstance(names, np.ndarray)
    assert list(names) == list(STYLE_FEATURES)
    assert names.shape == (x.shape[1],)
    twin = clone(featurizer)
    assert isinstance(twin, StyleFeaturizer) and twin.get_params() == {}
    np.testing.assert_array_equal(twin.fit_transform(queries), x)


def test_featurizer_in_a_pipeline_and_as_pandas() -> None:
    queries = ["Write a poem.", "how r u", "Could you explain `x`, please?", "hi 🎉"]
    pipeline = make_pipeline(StyleFeaturizer(), StandardScaler())
    z = pipeline.fit_transform(queries)
    assert z.shape == (4, len(STYLE_FEATURES))
    assert np.isfinite(z).all()
    np.testing.assert_allclose(pipeline.transform(queries), z)
    frame = StyleFeaturizer().set_output(transform="pandas").fit_transform(pd.Series(queries))
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(STYLE_FEATURES)


def test_requests_about_the_answers_form() -> None:
    from features.style import STYLE_FEATURES, style_features

    names = ("brevity_request", "detail_request", "structure_request", "plain_request")
    columns = [STYLE_FEATURES.index(n) for n in names]
    rows = style_features(
        [
            "Keep it short. Use bullet points please",
            "Explain step by step in detail, no markdown",
            "In-depth: tl;dr? Put it IN A TABLE",
            "The detailedness of a bulletin",  # no whole-word request
            "```\nbe concise\n```",  # inside fenced code
        ]
    )[:, columns]
    np.testing.assert_array_equal(
        rows, [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    )


def test_a_query_style_is_the_same_cached_whatever_its_batch() -> None:
    """Style rows depend on their text alone: looked up in another batch, they are what
    computing the whole batch at once gives."""
    texts = [
        "How do I sort a list in Python?",
        "Write a poem about rain",
        "What is DNA?",
        "",
        "¿Qué es el ADN?  ",
        "```py\nprint(1)\n```",
        "WHY!!! 🙂",
        "数学は？",
    ]
    cache = TextCache(max_items=100)
    np.testing.assert_array_equal(
        cached_style_features(texts[:4], cache), style_features(texts[:4])
    )
    again = cached_style_features(texts[::-1], cache)
    np.testing.assert_array_equal(again, style_features(texts)[::-1])
    info = cache.cache_info()
    assert (info.hits, info.misses, info.size) == (4, 8, 8)
    assert cached_style_features([], cache).shape == (0, style_features(["x"]).shape[1])
