"""Benchmark G's load generator: one phase of HTTP load, in a process of its own.

``python -m bench.service.load load SPEC OUT`` runs one phase (stdlib and uvloop) and writes
its :class:`LoadResult`; :mod:`bench.service.phases` starts it. Two kinds of load:

* **closed loop** (:func:`_drive`): a number of keep-alive connections, each sending its
  next request when the last one is answered.
* **open loop** (:func:`_drive_open`): request *i* is due at ``start + i / rate`` whatever
  happened to the others, and its latency is counted from that scheduled time.
"""

from __future__ import annotations

import asyncio
import collections
import json
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from bench.common import event_loop_runner, load_task_main

__all__ = ["OPEN_GRACE_S", "LoadResult", "Request", "main"]

OPEN_GRACE_S = 5.0  # after the last scheduled request, the longest to wait for answers

Request = tuple[str, str, Any]  # method, path, JSON body or None


@dataclass(frozen=True)
class LoadResult:
    """What one load phase measured.

    Attributes
    ----------
    requests : int
        Requests completed (answered, whatever the status).
    errors : int
        Requests answered with a status outside 2xx, or not answered.
    elapsed_s : float
        Wall time of the phase.
    p50_ms, p99_ms : float
        Latency percentiles, in milliseconds (open loop: from each request's due time).
    rate : float or None
        Open loop: the rate asked, requests a second; None for a closed loop.
    late_p99_ms : float or None
        Open loop: the 99th percentile of how late the client sent a request.
    scheduled : int or None
        Open loop: the requests due in the phase.
    """

    requests: int
    errors: int
    elapsed_s: float
    p50_ms: float
    p99_ms: float
    rate: float | None = None
    late_p99_ms: float | None = None
    scheduled: int | None = None

    @property
    def rps(self) -> float:
        """Requests completed a second."""
        return self.requests / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def text(self, *, errors: bool = True) -> str:
        """One table cell: percentiles, rate and errors (and, open loop, the rate asked)."""
        if self.rate is not None:
            cell = (
                f"at {self.rate:,.0f} req/s: p50 {self.p50_ms:.2f} ms, p99 {self.p99_ms:.2f} ms; "
                f"achieved {self.rps:,.0f} req/s"
            )
            if self.late_p99_ms is not None:
                cell += f"; sent late p99 {self.late_p99_ms:.2f} ms"
            if errors and self.scheduled is not None:
                unanswered = self.scheduled - self.requests
                return cell + (
                    f"; {self.errors:,} errors of {self.scheduled:,} due "
                    f"({unanswered:,} unanswered {OPEN_GRACE_S:.0f} s after the last was due)"
                )
        else:
            cell = f"p50 {self.p50_ms:.1f} ms, p99 {self.p99_ms:.1f} ms; {self.rps:,.0f} req/s"
        return cell + (f"; {self.errors:,} errors in {self.requests:,}" if errors else "")


# -- the Python load generator, run in a process of its own ------------------------------------


def _encode(base: str, method: str, path: str, body: Any) -> bytes:
    """One HTTP/1.1 keep-alive request, ready to send."""
    host = urllib.parse.urlsplit(base).netloc
    data = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return (head + "\r\n").encode() + data


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> int:
    """Send ``raw``, read the whole response (length or chunked); its status."""
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    fields = dict(
        (name.strip().lower(), value.strip().lower())
        for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    )
    if b"chunked" in fields.get(b"transfer-encoding", b""):
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            await reader.readexactly(size + 2)
        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
            pass
    else:
        await reader.readexactly(int(fields.get(b"content-length", b"0")))
    return int(head[9:12])


async def _drive(spec: dict[str, Any], duration: float, skip: int = 0) -> dict[str, Any]:
    """``clients`` connections, each sending requests back to back, for ``duration`` s,
    from request ``skip`` on; with ``spec["fresh"]``, none sent twice (it stops first)."""
    import numpy as np

    requests = [_encode(spec["base"], *r) for r in spec["requests"]]
    address = urllib.parse.urlsplit(spec["base"])
    clients, limit = int(spec["clients"]), int(spec["max_requests"])
    if spec.get("fresh"):
        limit = min(limit, len(requests) - skip)
    latencies: list[float] = []
    errors = issued = 0
    start = time.perf_counter()
    deadline = start + duration

    async def client() -> None:
        nonlocal errors, issued
        reader, writer = await asyncio.open_connection(address.hostname, address.port)
        try:
            while issued < limit and time.perf_counter() < deadline:
                raw = requests[(skip + issued) % len(requests)]
                issued += 1
                began = time.perf_counter()
                try:
                    async with asyncio.timeout(30.0):
                        failed = not 200 <= await _exchange(reader, writer, raw) < 300
                except (OSError, ValueError, asyncio.IncompleteReadError, TimeoutError):
                    failed = True
                    writer.close()
                    reader, writer = await asyncio.open_connection(address.hostname, address.port)
                latencies.append(time.perf_counter() - began)
                errors += failed
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - start
    p50, p99 = np.percentile(latencies, [50, 99]) * 1000.0 if latencies else (0.0, 0.0)
    return {
        "requests": len(latencies),
        "errors": errors,
        "elapsed_s": elapsed,
        "p50_ms": float(p50),
        "p99_ms": float(p99),
    }


class _OpenConnection(asyncio.Protocol):
    """One keep-alive connection of the open loop: a request at a time, answers parsed
    from the bytes as they arrive (status line and ``Content-Length``), no task a request."""

    def __init__(
        self,
        done: Callable[[_OpenConnection, bool], None],
        idle: collections.deque[_OpenConnection],
    ) -> None:
        self.done = done
        self.idle = idle
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.expected: int | None = None  # bytes of the answer being read, head included
        self.ok = False
        self.current: tuple[int, float] | None = None  # request index, due time

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def send(self, raw: bytes, index: int, due: float) -> None:
        assert self.transport is not None
        self.current = (index, due)
        self.transport.write(raw)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.current is not None:
            if self.expected is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = bytes(self.buffer[:end])
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                self.expected = end + 4 + length
                self.ok = 200 <= int(head[9:12]) < 300
            if len(self.buffer) < self.expected:
                return
            del self.buffer[: self.expected]
            self.expected = None
            self.done(self, self.ok)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.current is not None:
            self.done(self, False)
        elif self in self.idle:  # closed by the server while idle
            self.idle.remove(self)


async def _drive_open(spec: dict[str, Any], duration: float) -> dict[str, Any]:
    """Open loop: request ``i`` due at ``start + i / rate``, latency from that time.

    A due request goes out on an idle keep-alive connection of a pool of
    ``connections``, or waits for the first to be free (that wait is part of its
    latency); those not answered within :data:`OPEN_GRACE_S` after the last is due count
    as errors. The connections are asyncio protocols (no task, stream or queue a request),
    so that the client costs the shared cores as little as possible.

    A thread keeps the time: it sleeps until each request is due (``time.sleep``, to the
    tens of microseconds) and wakes the loop, which sends what is due. The loop's own
    timers count whole milliseconds (libuv's), so sleeping on them between requests less
    than a millisecond apart made the client spin: a core at 100% at 2,000 req/s, taken
    from the server and redis-server on the same 2 cores.
    """
    import numpy as np

    requests = [_encode(spec["base"], *r) for r in spec["requests"]]
    address = urllib.parse.urlsplit(spec["base"])
    rate = float(spec["rate"])
    n = max(1, int(rate * duration))
    latencies = np.full(n, np.nan)
    late = np.zeros(n)
    idle: collections.deque[_OpenConnection] = collections.deque()
    waiting: collections.deque[tuple[int, float]] = collections.deque()
    counts = {"finished": 0, "errors": 0}
    finished = asyncio.Event()

    def done(connection: _OpenConnection, ok: bool) -> None:
        assert connection.current is not None
        index, due = connection.current
        connection.current = None
        latencies[index] = time.perf_counter() - due
        counts["errors"] += not ok
        counts["finished"] += 1
        if counts["finished"] == n:
            finished.set()
        if connection.transport is None:
            return  # lost: the pool is one connection smaller
        if waiting:
            index, due = waiting.popleft()
            connection.send(requests[index % len(requests)], index, due)
        else:
            idle.append(connection)

    loop = asyncio.get_running_loop()
    opened = await asyncio.gather(
        *(
            loop.create_connection(
                lambda: _OpenConnection(done, idle), address.hostname, address.port
            )
            for _ in range(int(spec["connections"]))
        )
    )
    idle.extend(protocol for _, protocol in opened)
    start = time.perf_counter() + 0.01
    sent = 0
    all_sent = asyncio.Event()

    def send_due(woken_for: int) -> None:  # on the loop: every request due by now goes out
        nonlocal sent
        now = time.perf_counter()
        due_now = min(n, max(woken_for + 1, int((now - start) * rate) + 1))
        while sent < due_now:
            due = start + sent / rate
            late[sent] = now - due
            if idle:  # the longest idle first: every connection kept in use
                idle.popleft().send(requests[sent % len(requests)], sent, due)
            else:
                waiting.append((sent, due))
            sent += 1
        if sent == n:
            all_sent.set()

    def keep_time() -> None:  # on its own thread: wake the loop as each request falls due
        for index in range(n):
            delay = start + index / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            loop.call_soon_threadsafe(send_due, index)

    clock = threading.Thread(target=keep_time, name="open-loop-clock", daemon=True)
    clock.start()
    await all_sent.wait()
    clock.join()
    try:
        await asyncio.wait_for(finished.wait(), OPEN_GRACE_S)
    except TimeoutError:
        pass
    for transport, _ in opened:
        transport.close()
    answered = latencies[~np.isnan(latencies)]
    elapsed = time.perf_counter() - start
    if answered.size:  # the phase ends with its last answer
        elapsed = min(elapsed, float(np.nanmax(latencies + start + np.arange(n) / rate)) - start)
    p50, p99 = np.percentile(answered, [50, 99]) * 1000.0 if answered.size else (0.0, 0.0)
    return {
        "requests": int(answered.size),
        "errors": counts["errors"] + n - counts["finished"],
        "elapsed_s": max(elapsed, 1e-9),
        "p50_ms": float(p50),
        "p99_ms": float(p99),
        "rate": rate,
        "late_p99_ms": float(np.percentile(late, 99) * 1000.0),
        "scheduled": n,
    }


def _run_loop(spec: dict[str, Any]) -> dict[str, Any]:
    with event_loop_runner() as runner:
        if spec.get("rate"):
            if spec["warmup_s"] > 0:
                runner.run(_drive_open(spec, spec["warmup_s"]))
            return runner.run(_drive_open(spec, spec["duration_s"]))
        warm = runner.run(_drive(spec, spec["warmup_s"])) if spec["warmup_s"] > 0 else {}
        return runner.run(_drive(spec, spec["duration_s"], skip=warm.get("requests", 0)))


def _serve_phases() -> int:
    """Run phases in turn as stdin names them (a line ``SPEC OUT`` each), answering a line
    ``done`` on stdout after each result is written; until stdin closes.

    The quick run of benchmark G sends all its phases to one such process instead of
    starting a process a phase: an interpreter and its imports per phase were most of a
    quick phase's time.
    """
    for line in sys.stdin:
        spec, out = line.rstrip("\n").split("\t")
        with open(spec, encoding="utf-8") as source:
            result = _run_loop(json.load(source))
        with open(out, "w", encoding="utf-8") as sink:
            json.dump(result, sink)
        print("done", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench.service.load load SPEC OUT``: run one load phase, write its result;
    ``python -m bench.service.load serve``: run phases as stdin names them."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["serve"]:
        return _serve_phases()
    spec_help = "JSON: base, requests, clients, durations"
    return load_task_main("bench.service.load", _run_loop, spec_help, args)


if __name__ == "__main__":
    sys.exit(main())
