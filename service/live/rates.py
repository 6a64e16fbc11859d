"""The notations of the settings that the request guards enforce: rate limits, and the
addresses of trusted proxies.

Neutral ground: :mod:`service.live.settings` validates ``PLB_RATE_LIMIT_*`` and
``PLB_TRUSTED_PROXIES`` with them and :mod:`service.api` enforces what they parse, so
neither imports the other.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from limits import RateLimitItem, parse_many

__all__ = ["Networks", "parse_networks", "parse_rates"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_rates(text: str | None) -> list[RateLimitItem]:
    """Rate limits in the ``limits`` notation (``"50/second;1000/minute"``); none if empty.

    Raises
    ------
    ValueError
        When the text is not in that notation.
    """
    if text is None or not text.strip() or text.strip().lower() == "off":
        return []
    return list(parse_many(text))


@dataclass(frozen=True)
class Networks:
    """A set of IP networks, tested with ``in`` on an address's text.

    Attributes
    ----------
    networks : tuple of IPv4Network or IPv6Network
        The networks; a single address is a network of one.
    everyone : bool
        Whether every address is in the set (``"*"``).
    """

    networks: tuple[Network, ...] = ()
    everyone: bool = False

    def __contains__(self, host: object) -> bool:
        if self.everyone:
            return True
        if not self.networks or not isinstance(host, str):
            return False
        try:
            address = ipaddress.ip_address(host.strip().strip("[]"))
        except ValueError:  # a unix socket's path, a name: never trusted
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    def __bool__(self) -> bool:
        return self.everyone or bool(self.networks)


def parse_networks(text: str | None) -> Networks:
    """Addresses and networks separated by commas (``"10.0.0.5, 10.1.0.0/16"``), or
    ``"*"`` for every address; empty: none.

    Raises
    ------
    ValueError
        Naming the first entry that is not an address or a network.
    """
    entries = [entry.strip() for entry in (text or "").split(",") if entry.strip()]
    if entries == ["*"]:
        return Networks(everyone=True)
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(
                f"{entry!r} is not an IP address or network (such as '10.0.0.5' or "
                "'10.1.0.0/16'), nor '*' alone"
            ) from None
    return Networks(tuple(networks))
