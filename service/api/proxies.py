"""Who the client is: the connection's own address, unless a trusted proxy names another.

A reverse proxy in front of the service tells the client's address in ``X-Forwarded-For``
(or ``Forwarded``, RFC 7239, or ``X-Real-IP``), but anyone can send those headers. They
are read only on connections from the addresses of ``PLB_TRUSTED_PROXIES`` (none by
default, not even this machine), and then as uvicorn reads ``X-Forwarded-For``: the
hops are read from the right, and the first one that is not itself a trusted proxy is
the client. Everything that keys on the client (the rate limits, the budget of query
characters, the cap on connections) sees that address in ``scope["client"]``.

``plb serve`` turns uvicorn's own reading of these headers off, which by default trusts
the loopback address: a client on this machine, or a proxy that passes the header on
unchanged, could otherwise name any address it likes and escape the per-address limits.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from service.live.rates import Networks

__all__ = ["TrustedProxies", "forwarded_hops"]

#: The longest client name taken from a header (a rate limiter's key, not a display).
MAX_HOST_CHARS = 100


def _host(value: str) -> str:
    """The address of one hop, without quotes, brackets or port (``"[::1]:80"``: ``::1``)."""
    value = value.strip().strip('"')
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:  # IPv4 with a port; a bare IPv6 has several colons
        return value.split(":", 1)[0]
    return value


def forwarded_hops(headers: list[tuple[bytes, bytes]]) -> list[str]:
    """The client addresses the proxy headers name, nearest the client first.

    ``X-Forwarded-For`` when present (every such header, in order), else the ``for=``
    of ``Forwarded``, else ``X-Real-IP``; empty when none is present.
    """
    found: dict[bytes, list[str]] = {b"x-forwarded-for": [], b"forwarded": [], b"x-real-ip": []}
    for name, value in headers:
        if name in found:
            found[name].append(value.decode("latin-1"))
    if found[b"x-forwarded-for"]:
        hops = ",".join(found[b"x-forwarded-for"]).split(",")
    elif found[b"forwarded"]:
        hops = [
            pair.split("=", 1)[1]
            for element in ",".join(found[b"forwarded"]).split(",")
            for pair in element.split(";")
            if pair.strip().lower().startswith("for=")
        ]
    else:
        hops = found[b"x-real-ip"][-1:]
    return [host for host in (_host(hop)[:MAX_HOST_CHARS] for hop in hops) if host]


class TrustedProxies:
    """Put the client a trusted proxy names into ``scope["client"]``; ignore the rest.

    Parameters
    ----------
    app : ASGI app
    trusted : Networks
        The proxies' addresses; from any other peer the proxy headers are ignored.
    """

    def __init__(self, app: ASGIApp, trusted: Networks) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.trusted:
            client = scope.get("client")
            if client and client[0] in self.trusted:
                hops = forwarded_hops(scope["headers"])
                if hops:
                    host = next((h for h in reversed(hops) if h not in self.trusted), hops[0])
                    scope["client"] = (host, 0)
                for name, value in scope["headers"]:
                    if name == b"x-forwarded-proto" and value.strip() in (b"http", b"https"):
                        scope["scheme"] = value.strip().decode("ascii")
        await self.app(scope, receive, send)
