"""Connecting to a Dask cluster, and waiting on it without hanging when its workers go.

``local:N`` starts a :class:`distributed.LocalCluster` of ``N`` single-threaded worker
processes on the loopback interface (no dashboard) and closes it afterwards; anything
else is the address of a running scheduler (``tcp://host:8786``). Every failure to reach
the cluster, or to keep it, becomes a :class:`ClusterError` whose message is one line.

Dask reschedules the tasks of a worker that dies, and recomputes the data it held from
the task graph: every task here is a pure function of its inputs, so that is safe. It
does not give up when *all* workers are gone, it waits for new ones; :func:`gather`
stops waiting after ``worker_timeout`` seconds without a worker.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "CONNECT_TIMEOUT_S",
    "WORKER_TIMEOUT_S",
    "ClusterError",
    "connect",
    "describe",
    "gather",
    "local_cluster",
    "n_workers",
    "settle",
]

#: Seconds to reach a scheduler before giving up.
CONNECT_TIMEOUT_S = 10.0
#: Seconds a fit waits while the cluster has no worker at all.
WORKER_TIMEOUT_S = 60.0
_LOCAL = "local:"
_DEFAULT_PORT = 8786


class ClusterError(RuntimeError):
    """The Dask cluster cannot be reached or lost its workers; the message is one line."""


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def describe(address: str) -> str:
    """The address as the manifest records it: ``local:N``, or the URL without credentials."""
    if address.startswith(_LOCAL):
        return address
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def _local_workers(address: str) -> int:
    text = address[len(_LOCAL) :]
    if not text.isdigit() or int(text) < 1:
        raise ClusterError(
            f"scheduler {address!r}: local:N needs a positive number of workers, e.g. local:2"
        )
    return int(text)


def _check_reachable(address: str, timeout: float) -> None:
    """Fail at once, with the reason, when nothing listens at a TCP scheduler address.

    Dask itself retries a refused connection until its timeout; asking the socket first
    turns "nothing there" into an answer in milliseconds.
    """
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme not in ("tcp", "tls"):
        return  # other transports (inproc, ucx): leave them to Dask
    if not parts.hostname:
        raise ClusterError(f"scheduler {address!r} names no host; expected tcp://HOST:PORT")
    try:
        port = parts.port or _DEFAULT_PORT
    except ValueError:
        raise ClusterError(
            f"scheduler {address!r} has a bad port; expected tcp://HOST:PORT"
        ) from None
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except ConnectionRefusedError:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {describe(address)}: connection refused"
        ) from None
    except TimeoutError:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {describe(address)}: no answer in {timeout:g} s"
        ) from None
    except OSError as error:
        reason = error.strerror or _one_line(error)
        raise ClusterError(
            f"cannot reach the Dask scheduler at {describe(address)}: {reason}"
        ) from None


@contextmanager
def connect(address: str, *, timeout: float = CONNECT_TIMEOUT_S) -> Iterator[Any]:
    """A :class:`distributed.Client` of the cluster at ``address``, closed afterwards.

    Dask's own log lines (INFO and WARNING: workers starting, restarting) are kept quiet
    meanwhile unless the root logger is at DEBUG (``plb -v``).

    Parameters
    ----------
    address : str
        ``local:N`` for a LocalCluster of ``N`` worker processes on 127.0.0.1 (closed
        on exit), or a scheduler address such as ``tcp://scheduler.internal:8786``.
    timeout : float
        Seconds to reach the scheduler.

    Raises
    ------
    ClusterError
        When the cluster cannot be started or reached.
    """
    with _quiet_dask():
        if address.startswith(_LOCAL):
            with _local_client(_local_workers(address), timeout) as client:
                yield client
            return
        _check_reachable(address, timeout)
        from distributed import Client

        try:
            client = Client(address, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as error:
            raise ClusterError(
                f"cannot reach the Dask scheduler at {describe(address)}: {_one_line(error)}"
            ) from None
        with client:
            yield client


def local_cluster(workers: int) -> Any:
    """A ``distributed.LocalCluster`` of ``workers`` single-threaded worker processes on
    loopback, without a dashboard (what ``--scheduler local:N`` starts)."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )


@contextmanager
def _local_client(workers: int, timeout: float) -> Iterator[Any]:
    from distributed import Client

    try:
        cluster = local_cluster(workers)
    except Exception as error:
        raise ClusterError(f"cannot start a local Dask cluster: {_one_line(error)}") from None
    try:
        with Client(cluster, timeout=timeout) as client:
            yield client
    finally:
        cluster.close()


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's loggers at ERROR, unless the root logger is at DEBUG."""
    import distributed  # noqa: F401  (its import sets its loggers' levels: first)

    loggers = [logging.getLogger(name) for name in ("distributed", "bokeh", "tornado")]
    levels = [logger.level for logger in loggers]
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        for logger in loggers:
            logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def n_workers(client: Any, *, timeout: float = WORKER_TIMEOUT_S) -> int:
    """Workers of the cluster, after waiting up to ``timeout`` seconds for the first."""
    try:
        client.wait_for_workers(1, timeout=timeout)
        return len(client.nthreads())
    except TimeoutError:
        raise ClusterError(
            f"the Dask cluster has no workers (waited {timeout:g} s for one)"
        ) from None
    except OSError as error:
        raise ClusterError(f"lost the Dask scheduler: {_one_line(error)}") from None


def _wait(client: Any, futures: Sequence[Any], worker_timeout: float) -> None:
    """Wait until every future is done, or fail when the cluster has no worker for long."""
    from distributed import wait

    alone_since: float | None = None
    while True:
        try:
            wait(list(futures), timeout=1.0)
            return
        except TimeoutError:
            pass
        if client.nthreads():
            alone_since = None
            continue
        alone_since = alone_since or time.monotonic()
        if time.monotonic() - alone_since > worker_timeout:
            unfinished = sum(not f.done() for f in futures)
            raise ClusterError(
                f"the Dask cluster lost its workers: none left for {worker_timeout:g} s, "
                f"{unfinished} tasks unfinished"
            )


@contextmanager
def _cluster_errors() -> Iterator[None]:
    """Dask's ways of saying the cluster is gone, as :class:`ClusterError`."""
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    try:
        yield
    except KilledWorker as error:
        raise ClusterError(f"the Dask cluster lost its workers: {_one_line(error)}") from None
    except (CommClosedError, ConnectionError) as error:
        raise ClusterError(f"lost the Dask scheduler: {_one_line(error)}") from None


def gather(
    client: Any, futures: Sequence[Any], *, worker_timeout: float = WORKER_TIMEOUT_S
) -> list[Any]:
    """The results of ``futures``, in order, waiting while the cluster has workers.

    A task's own exception is raised as it is.

    Raises
    ------
    ClusterError
        When the cluster has had no worker for ``worker_timeout`` seconds, when Dask gave
        up on a task whose workers kept dying (``KilledWorker``), or when the scheduler
        went away.
    """
    with _cluster_errors():
        _wait(client, futures, worker_timeout)
        return list(client.gather(list(futures)))


def settle(
    client: Any, futures: Sequence[Any], *, worker_timeout: float = WORKER_TIMEOUT_S
) -> None:
    """Like :func:`gather`, leaving the results on the cluster (a failed task raises)."""
    with _cluster_errors():
        _wait(client, futures, worker_timeout)
        for future in futures:
            if future.status == "error":
                future.result()
