"""What one connection may hold: a deadline for each request's headers, a cap on their
size, and caps on open connections, in all and per client address.

uvicorn closes a connection that stays idle after an answer (``timeout_keep_alive``) but
sets no deadline on the headers of a request: a client that opens connections and sends
a header line now and then (slowloris) holds each one, with its file descriptor, for as
long as it likes; 3,000 of them stayed open 40 s and more. :func:`guarded_protocol`
wraps uvicorn's HTTP protocol (httptools or h11, whichever uvicorn picks) so that

* a request's headers must have come ``header_timeout_s`` after the connection opened,
  or after the first byte that follows an answer; else the connection is answered 408
  (when some bytes came) and closed;
* the headers may hold at most ``max_header_bytes`` (else 431, and closed);
* a connection over ``max_connections`` open ones, or over ``max_connections_per_address``
  from its peer (the trusted proxies excepted), is answered 503 and closed at once.

The body's own deadline is an ASGI guard (:class:`service.api.guards.BodyTimeout`).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from service.live.rates import Networks

__all__ = ["ConnectionLimits", "guarded_protocol"]


@dataclass(frozen=True)
class ConnectionLimits:
    """The bounds of :func:`guarded_protocol`; a cap of 0 is off.

    Attributes
    ----------
    header_timeout_s : float
    max_header_bytes : int
    max_connections, max_connections_per_address : int
    trusted : Networks
        Peers the per-address cap does not apply to (reverse proxies).
    """

    header_timeout_s: float = 10.0
    max_header_bytes: int = 64 * 2**10
    max_connections: int = 1024
    max_connections_per_address: int = 64
    trusted: Networks = field(default_factory=Networks)


def _response(status: int, reason: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer with a JSON ``detail``, closing the connection."""
    body = json.dumps({"detail": detail}).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def guarded_protocol(limits: ConnectionLimits, base: type[Any] | None = None) -> type[Any]:
    """uvicorn's HTTP protocol class ``base`` (its ``auto`` choice by default), bounded by
    ``limits``; pass it to ``uvicorn.Config(http=...)``.

    Each call makes a new class with its own count of connections per address: one
    class for one server.
    """
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    per_address: Counter[str] = Counter()
    timeout_reply = _response(
        408,
        "Request Timeout",
        f"the request's headers did not arrive within {limits.header_timeout_s:g} s",
    )
    size_reply = _response(
        431,
        "Request Header Fields Too Large",
        f"the request's headers are larger than the {limits.max_header_bytes:,} bytes allowed",
    )
    busy_reply = _response(503, "Service Unavailable", "too many open connections; try again")
    too_many_reply = _response(
        503,
        "Service Unavailable",
        f"more than {limits.max_connections_per_address} open connections from this "
        "address; close some",
    )

    class GuardedHTTPProtocol(base):  # type: ignore[valid-type, misc]
        """uvicorn's protocol with a deadline on headers and caps on connections."""

        _refused = False
        _host: str | None = None
        _deadline: asyncio.TimerHandle | None = None
        _header_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:
            peer = transport.get_extra_info("peername")
            host = str(peer[0]) if isinstance(peer, list | tuple) and peer else None
            reply = None
            if limits.max_connections and len(self.connections) >= limits.max_connections:
                reply = busy_reply
            elif (
                limits.max_connections_per_address
                and host is not None
                and host not in limits.trusted
                and per_address[host] >= limits.max_connections_per_address
            ):
                reply = too_many_reply
            if reply is not None:
                self._refused = True
                self.transport = transport
                transport.write(reply)
                transport.close()
                return
            if host is not None:
                self._host = host
                per_address[host] += 1
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._disarm()
            if self._host is not None:
                per_address[self._host] -= 1
                if per_address[self._host] <= 0:
                    del per_address[self._host]
                self._host = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.transport.is_closing():
                self._disarm()
            elif self.cycle is not before:  # a request's headers came: it runs
                self._disarm()
                self._header_bytes = 0
            elif self.cycle is None or self.cycle.response_complete:  # awaiting headers
                if self._deadline is None:
                    self._arm()
                self._header_bytes += len(data)
                if self._header_bytes > limits.max_header_bytes:
                    self._give_up(size_reply)

        def _arm(self) -> None:
            self._disarm()
            self._header_bytes = 0
            self._deadline = self.loop.call_later(
                limits.header_timeout_s, self._give_up, timeout_reply
            )

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _give_up(self, reply: bytes) -> None:
            """Answer ``reply`` when some bytes of a request came, and close."""
            self._disarm()
            if self.transport.is_closing():
                return
            if self._header_bytes:
                self.transport.write(reply)
            self.transport.close()

    return GuardedHTTPProtocol
