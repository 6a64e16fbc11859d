"""``plb serve``: the REST service and web page; ``plb refit``: ask it to refit now;
``plb models add``: register models with it."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import secrets
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import check_at_least, read_log
from service.cli.errors import UsageError
from service.cli.report import write_atomically
from service.pipeline import FitConfig, fit_all, load_fit, manifest_document, write_result

__all__ = ["add_parser"]

DEMO_DIR = "plb-demo"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb serve``."""
    parser = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"].help,
        description="Serve a fit directory over REST (docs/SPEC.md section 4) with the web "
        "page at / and the embeddable widget under /widget/. Settings come from PLB_* environment "
        "variables (PLB_INGEST_KEY, PLB_ADMIN_KEY, PLB_REDIS_URL, ...; see the README); the "
        "options here override them. Without PLB_REDIS_URL the embedded store (a SQLite "
        "file) keeps the votes.",
    )
    parser.add_argument("fit_dir", nargs="?", metavar="DIR", help="a fit directory of 'plb fit'")
    parser.add_argument(
        "--demo",
        action="store_true",
        help=f"simulate an arena, fit it, write its report and serve it, all under "
        f"--demo-dir (./{DEMO_DIR}); a second run reuses the fit; ingest and admin keys are "
        "generated into keys.json there",
    )
    parser.add_argument(
        "--demo-dir", default=DEMO_DIR, metavar="DIR", help=f"folder of --demo (./{DEMO_DIR})"
    )
    parser.add_argument(
        "--users", type=int, default=300, metavar="N", help="simulated users of --demo (300)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8000, help="port (8000; 0: any free port, printed)"
    )
    parser.add_argument(
        "--store", metavar="FILE", help="the embedded store's file (PLB_STORE_PATH)"
    )
    parser.add_argument("--redis-url", metavar="URL", help="keep state in Redis (PLB_REDIS_URL)")
    parser.set_defaults(run=run)


def _demo_simulate(sim: Path, users: int) -> None:
    """The demo's arena: ``plb simulate``'s defaults, ``users`` users."""
    from data.simulate import simulate
    from data.simulation_files import write_simulation

    write_simulation(simulate(users), sim)


def _demo_pipeline(sim: Path, fit_dir: Path) -> None:
    """The demo's fit: the pipeline of ``plb fit``, with the simulation's truth."""
    battles = str(sim / "battles.jsonl.gz")
    config = FitConfig(truth=str(sim / "truth.json"))
    read = read_log([battles], skip_invalid=config.skip_invalid)
    with progress.stages() as stages:
        result = fit_all(read.battles, config, stages, note=progress.note)
    write_result(fit_dir, result, manifest_document(result, config, [battles]))


def _demo_report(fit_dir: Path, out: Path) -> None:
    """The demo's report, as ``plb report`` writes it."""
    try:
        from service.report.document import build_report
    except ImportError as error:  # matplotlib is needed only here
        raise UsageError(f"plb report needs matplotlib ({error}); pip install matplotlib") from None
    write_atomically(out, build_report(load_fit(fit_dir)).html)


def _demo_fit(args: argparse.Namespace) -> Path:
    """Simulate and fit once into ``--demo-dir``; later runs reuse the fit."""
    root = Path(args.demo_dir)
    fit_dir = root / "fit"
    if (fit_dir / "manifest.json").exists():
        try:
            load_fit(fit_dir)
        except ValueError as error:  # from an older version, or damaged: fit it again
            print(f"plb serve: not reusing the demo fit ({error}); fitting again", file=sys.stderr)
        else:
            print(f"plb serve: reusing the demo fit in {fit_dir}", file=sys.stderr)
            return fit_dir
    sim, report = root / "sim", fit_dir / "report.html"  # served at /report
    # Each step, with the command that does the same on its own.
    steps: list[tuple[str, Callable[[], None]]] = [
        (
            f"plb simulate --out {sim} --users {args.users}",
            lambda: _demo_simulate(sim, args.users),
        ),
        (
            f"plb fit {sim / 'battles.jsonl.gz'} --truth {sim / 'truth.json'} --out {fit_dir}",
            lambda: _demo_pipeline(sim, fit_dir),
        ),
        (f"plb report {fit_dir} --out {report}", lambda: _demo_report(fit_dir, report)),
    ]
    quiet = progress.quiet()
    if not quiet:
        print(
            f"plb serve --demo: simulating an arena of {args.users} made-up users and models, "
            f"fitting it and writing its report into {root} (a few minutes, once)",
            file=sys.stderr,
        )
    for number, (command, step) in enumerate(steps, 1):
        if not quiet:
            print(f"plb serve --demo: [{number}/{len(steps)}] {command}", file=sys.stderr)
        step()
    return fit_dir


def demo_notice(fit_dir: Path) -> str:
    """What ``plb serve --demo`` says of the arena it serves: simulated, and the way out."""
    manifest = load_fit(fit_dir).manifest
    models = [str(m) for m in manifest.get("models", [])]
    shown = ", ".join(models[:3]) + (", ..." if len(models) > 3 else "")
    users = manifest.get("n_users")
    return (
        f"plb serve --demo: this arena is SIMULATED: {len(models)} made-up models ({shown}) "
        f"and {users} simulated users; no real model, vote or person is in it.\n"
        "plb serve --demo: to serve real battle logs instead: "
        "plb fit YOUR_LOG --out DIR, then plb serve DIR"
    )


def _demo_keys(root: Path) -> None:
    """Make ingest and admin keys for the demo (kept in the demo folder), unless set."""
    keys = root / "keys.json"
    if keys.exists():
        known = json.loads(keys.read_text(encoding="utf-8"))
    else:
        known = {
            "PLB_INGEST_KEY": secrets.token_urlsafe(24),
            "PLB_ADMIN_KEY": secrets.token_urlsafe(24),
        }
        keys.write_text(json.dumps(known, indent=2) + "\n", encoding="utf-8")
        keys.chmod(0o600)
    for name, value in known.items():
        os.environ.setdefault(name, value)
    print(f"plb serve --demo: ingest and admin keys are in {keys}", file=sys.stderr)


#: glibc's ``mallopt`` parameter for the number of malloc arenas.
_M_ARENA_MAX = -8


def _limit_malloc_arenas(arenas: int = 2) -> None:
    """Cap glibc's malloc arenas, as ``MALLOC_ARENA_MAX=2`` would, unless that is set.

    With one arena per thread (glibc's default, up to 8 per core) the request thread
    pool grows the resident memory over hours of mixed load without any leak; two
    arenas keep it flat (bench/RESULTS.md, section I). A no-op off glibc.
    """
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # another C library: nothing to do
        pass


def _configure_logging() -> None:
    from service.api.observability import JsonFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("plb.access", "service"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False


def check_options(args: argparse.Namespace) -> None:
    """Reject options that cannot work, before anything is simulated, read or bound."""
    if args.demo == (args.fit_dir is not None):
        raise UsageError("give either a fit directory DIR or --demo")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    if args.demo:
        check_at_least("--users", args.users, 1)
        demo_dir = Path(args.demo_dir)
        if demo_dir.exists() and not demo_dir.is_dir():
            raise UsageError(f"--demo-dir {args.demo_dir!r} is a file, not a folder")


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port``, not yet listening.

    Binding first, before the demo's fit or the service's start, makes a port in use a
    one-line usage error rather than a failure of uvicorn's after the URL was printed;
    uvicorn then serves this very socket, so nothing can take the port in between.

    Raises
    ------
    UsageError
        When the port is in use, forbidden, or the host is not an address of this
        machine.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise UsageError(f"--host {host!r} is not a known address ({error.strerror})") from None
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind(address)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            other = 8001 if port in (0, 65535) else port + 1
            raise UsageError(
                f"port {port} on {host} is already in use (try --port {other}, or stop what "
                "listens there)"
            ) from None
        if error.errno == errno.EACCES:
            raise UsageError(
                f"port {port} on {host}: permission denied (ports below 1024 need "
                "privileges; try --port 8000)"
            ) from None
        if error.errno == errno.EADDRNOTAVAIL:
            raise UsageError(f"--host {host!r} is not an address of this machine") from None
        raise UsageError(f"cannot listen on {host} port {port}: {error.strerror}") from None
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket, host: str) -> str:
    port = sock.getsockname()[1]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` under uvicorn on the bound, listening ``sock`` until interrupted.

    uvicorn's own reading of ``X-Forwarded-For`` is off (it trusts loopback): the app
    reads proxy headers from ``PLB_TRUSTED_PROXIES`` only. Connections are bounded by the
    app's settings (:mod:`service.api.connections`): a deadline on each request's
    headers, their size, and the open connections in all and per address.
    """
    import uvicorn

    from service.api.connections import ConnectionLimits, guarded_protocol
    from service.live.rates import parse_networks

    settings = app.state.settings
    limits = ConnectionLimits(
        header_timeout_s=settings.header_timeout_s,
        max_header_bytes=settings.max_header_bytes,
        max_connections=settings.max_connections,
        max_connections_per_address=settings.max_connections_per_address,
        trusted=parse_networks(settings.trusted_proxies),
    )
    config = uvicorn.Config(
        app,
        access_log=False,
        proxy_headers=False,
        http=guarded_protocol(limits),
        h11_max_incomplete_event_size=settings.max_header_bytes,
    )
    uvicorn.Server(config).run(sockets=[sock])


def run(args: argparse.Namespace) -> None:
    """Execute ``plb serve``."""
    check_options(args)
    sock = bind(args.host, args.port)
    try:
        _run(args, sock)
    finally:
        sock.close()


def _run(args: argparse.Namespace, sock: socket.socket) -> None:
    fit_dir = _demo_fit(args) if args.demo else Path(args.fit_dir)
    if args.demo:
        _demo_keys(Path(args.demo_dir))
        os.environ.setdefault("PLB_STORE_PATH", str(Path(args.demo_dir) / "store.sqlite"))
    overrides: dict[str, object] = {"fit_dir": fit_dir}
    if args.store:
        overrides["store_path"] = Path(args.store)
    if args.redis_url:
        overrides["redis_url"] = args.redis_url

    from pydantic import ValidationError  # heavy imports: only for this command

    from service.api.app import create_app, open_engine
    from service.live.settings import Settings

    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        first = error.errors()[0]
        field = "PLB_" + "_".join(str(p) for p in first["loc"]).upper()
        raise UsageError(f"{field}: {first['msg']}") from None
    _limit_malloc_arenas()
    engine = open_engine(settings)  # fails here, with a one-line reason, on a bad fit or store
    _configure_logging()
    app = create_app(settings, engine=engine)
    if args.demo:
        print(demo_notice(fit_dir), file=sys.stderr)
    sock.listen(2048)  # uvicorn's backlog; connections wait from now on, none is refused
    print(f"plb serve: {_url(sock, args.host)}  (API docs at /docs)", file=sys.stderr, flush=True)
    serve(app, sock)
