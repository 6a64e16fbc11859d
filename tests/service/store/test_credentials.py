"""The users' credentials in both stores: read-token generations and share digests."""

from __future__ import annotations

import asyncio

from service.live.tokens import new_share_id, share_digest
from service.store.base import Store
from tests.service.store.conftest import Opener


def test_a_token_generation_starts_at_zero_and_rotates_by_one(store: Store) -> None:
    assert store.token_generation("u") == 0
    assert asyncio.run(store.token_generation_async("u")) == 0
    assert store.rotate_token("u") == 1
    assert store.rotate_token("u") == 2
    assert store.token_generation("u") == 2
    assert asyncio.run(store.token_generation_async("u")) == 2
    assert store.token_generation("u:credentials") == 0  # another user's, colons and all


def test_a_share_names_its_user_until_replaced_or_revoked(store: Store) -> None:
    first, second = share_digest(new_share_id()), share_digest(new_share_id())
    assert store.share_owner(first) is None
    assert store.drop_share("zoë 日本") is False  # none yet
    store.put_share("zoë 日本", first)
    assert store.share_owner(first) == "zoë 日本"
    store.put_share("zoë 日本", second)  # the previous one stops at once
    assert store.share_owner(first) is None
    assert store.share_owner(second) == "zoë 日本"
    assert store.drop_share("zoë 日本") is True
    assert store.share_owner(second) is None
    assert store.drop_share("zoë 日本") is False


def test_a_share_and_its_token_generation_are_kept_apart(store: Store) -> None:
    digest = share_digest(new_share_id())
    store.rotate_token("u")
    store.put_share("u", digest)
    store.drop_share("u")
    assert store.token_generation("u") == 1  # revoking a share leaves the token as it is
    store.put_share("u", digest)
    store.rotate_token("u")
    assert store.share_owner(digest) == "u"  # rotating the token leaves the share


def test_credentials_are_shared_by_every_process_and_kept(opener: Opener) -> None:
    one, two = opener(), opener()
    digest = share_digest(new_share_id())
    one.put_share("u", digest)
    one.rotate_token("u")
    assert two.share_owner(digest) == "u"
    assert two.token_generation("u") == 1
    two.drop_share("u")
    assert one.share_owner(digest) is None
    one.close()
    assert opener().token_generation("u") == 1  # reopened
