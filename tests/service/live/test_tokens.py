"""``service.live.tokens``: per-user read tokens and key checks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import pytest

from service.live import tokens
from service.live.tokens import keys_match, user_token, verify_user_token

SECRET = b"s" * 32


def test_token_is_the_hmac_of_the_user_id() -> None:
    digest = hmac.new(SECRET, b"u-42", hashlib.sha256).digest()
    expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert user_token(SECRET, "u-42") == expected
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", expected)


def test_token_is_stable_and_differs_by_user_and_secret() -> None:
    token = user_token(SECRET, "u-42")
    assert user_token(SECRET, "u-42") == token
    assert user_token(SECRET, "u-43") != token
    assert user_token(b"t" * 32, "u-42") != token
    assert user_token(SECRET, "ü-42") != user_token(SECRET, "u-42")  # unicode ids are fine


def test_verify_user_token() -> None:
    token = user_token(SECRET, "u-42")
    assert verify_user_token(SECRET, "u-42", token)
    assert not verify_user_token(SECRET, "u-43", token)
    assert not verify_user_token(b"t" * 32, "u-42", token)
    assert not verify_user_token(SECRET, "u-42", token[:-1])
    assert not verify_user_token(SECRET, "u-42", "")


def test_keys_match() -> None:
    assert keys_match("the-key-0123456789", "the-key-0123456789")
    assert not keys_match("the-key-0123456789", "the-key-012345678")
    assert not keys_match("the-key-0123456789", "THE-KEY-0123456789")
    assert not keys_match("ключ-0123456789", "ключ-0123456788")


@pytest.mark.parametrize("given", [None, "", "anything"])
def test_an_unset_key_never_matches(given: str | None) -> None:
    assert not keys_match(None, given)
    assert not keys_match("", given)


def test_a_missing_key_never_matches_a_set_one() -> None:
    assert not keys_match("the-key-0123456789", None)
    assert not keys_match("the-key-0123456789", "")


def test_comparisons_are_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both checks go through ``hmac.compare_digest`` (a spy wrapping the real one)."""
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", spy)
    token = user_token(SECRET, "u-42")
    assert verify_user_token(SECRET, "u-42", token)
    assert not keys_match("the-key-0123456789", "the-key-0123456780")
    assert calls == [
        (token.encode(), token.encode()),
        (b"the-key-0123456789", b"the-key-0123456780"),
    ]
