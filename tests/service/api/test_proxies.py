"""Proxy headers name the client only from a trusted proxy (issue 31, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.proxies import forwarded_hops
from service.live.rates import parse_networks
from service.live.settings import Settings
from tests.service.conftest import open_client, service_settings


def test_networks_parse_addresses_networks_and_star() -> None:
    trusted = parse_networks("10.0.0.5, 10.1.0.0/16, ::1")
    assert "10.0.0.5" in trusted and "10.1.200.3" in trusted and "::1" in trusted
    assert "::ffff:10.0.0.5" in trusted  # IPv4 mapped into IPv6
    assert "10.0.0.6" not in trusted and "127.0.0.1" not in trusted
    assert "testclient" not in trusted and "" not in trusted
    assert not parse_networks("") and "127.0.0.1" not in parse_networks("")
    assert "anything" in parse_networks("*")
    with pytest.raises(ValueError, match="'10.0.0.300' is not an IP address"):
        parse_networks("10.0.0.300")


def test_the_setting_names_a_bad_entry() -> None:
    with pytest.raises(ValueError, match="'proxy.example' is not an IP address"):
        Settings(trusted_proxies="proxy.example")


@pytest.mark.parametrize(
    ("headers", "hops"),
    [
        (
            [(b"x-forwarded-for", b"1.1.1.1, 2.2.2.2"), (b"x-forwarded-for", b"3.3.3.3")],
            ["1.1.1.1", "2.2.2.2", "3.3.3.3"],
        ),
        (
            [(b"forwarded", b'for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"')],
            ["192.0.2.60", "2001:db8::17"],
        ),
        ([(b"x-real-ip", b"5.5.5.5:80")], ["5.5.5.5"]),
        ([(b"x-forwarded-for", b"1.1.1.1"), (b"x-real-ip", b"5.5.5.5")], ["1.1.1.1"]),
        ([], []),
    ],
)
def test_forwarded_hops(headers: list[tuple[bytes, bytes]], hops: list[str]) -> None:
    assert forwarded_hops(headers) == hops


def codes(settings: Settings, n: int) -> list[int]:
    with open_client(settings) as client:
        return [
            client.get(
                "/v1/models",
                headers={
                    "X-Forwarded-For": f"10.0.{i}.1",
                    "Forwarded": f"for=10.1.{i}.1",
                    "X-Real-IP": f"10.2.{i}.1",
                },
            ).status_code
            for i in range(n)
        ]


def test_an_untrusted_peer_cannot_name_another_client(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    """Before: a random X-Forwarded-For from loopback escaped the per-address limit."""
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        rate_limit_per_address="5/minute",
    )
    assert codes(settings, 10).count(429) == 5


def test_a_trusted_proxy_names_the_client(shared_fit_no_features: Path, tmp_path: Path) -> None:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        rate_limit_per_address="5/minute",
        trusted_proxies="*",  # the test client's peer is "testclient", not an address
    )
    assert codes(settings, 10).count(429) == 0  # ten clients, one request each
