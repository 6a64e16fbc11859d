"""``plb refit`` and ``plb models add``: admin requests to a running ``plb serve``.

Both are HTTP clients of the service's admin routes (the key from ``PLB_ADMIN_KEY``); they
load nothing of the fit pipeline, so they start as fast as the command line can.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import urllib.error
import urllib.request
from typing import Any

from service.cli.commands import COMMANDS
from service.cli.common import add_output_options, emit
from service.cli.errors import UsageError

__all__ = ["add_models_parser", "add_refit_parser", "run_models_add", "run_refit"]


def add_refit_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb refit``."""
    parser = subparsers.add_parser(
        "refit",
        help=COMMANDS["refit"].help,
        description="Ask a running 'plb serve' to refit the aggregate and per-user agreement "
        "on all battles and publish a new model version. The admin key comes from "
        "PLB_ADMIN_KEY.",
    )
    parser.add_argument(
        "--url", default="http://127.0.0.1:8000", help="the service (http://127.0.0.1:8000)"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait (600)")
    add_output_options(parser)
    parser.set_defaults(run=run_refit)


def _admin_post(url: str, path: str, body: Any, timeout: float) -> dict[str, Any]:
    """POST ``body`` (JSON, or nothing when None) to an admin route with PLB_ADMIN_KEY."""
    if not (math.isfinite(timeout) and timeout > 0):
        raise UsageError(f"--timeout must be a positive number of seconds, not {timeout}")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--url must start with http:// or https://, not {url!r}")
    key = os.environ.get("PLB_ADMIN_KEY")
    if not key:
        raise UsageError("set PLB_ADMIN_KEY to the service's admin key")
    headers = {"Authorization": f"Bearer {key}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(
        url.rstrip("/") + path, data=data, method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            document: dict[str, Any] = json.load(response)
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")
        raise UsageError(f"{url} answered {error.code}: {detail}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise UsageError(f"cannot reach {url}: {error}") from None
    return document


def run_refit(args: argparse.Namespace) -> None:
    """Execute ``plb refit``."""
    document = _admin_post(args.url, "/v1/admin/refit", None, args.timeout)
    emit(document, f"published model version {document['version']}", args.format)


def add_models_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb models add``."""
    parser = subparsers.add_parser(
        "models",
        help=COMMANDS["models"].help,
        description="Manage the model catalogue of a running 'plb serve': votes naming a "
        "model outside it are rejected. The admin key comes from PLB_ADMIN_KEY.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    add = actions.add_parser(
        "add",
        help="register models",
        description="Register models with a running 'plb serve' (POST /v1/admin/models), "
        "so that votes naming them are accepted; each is ranked on the public boards once "
        "it has PLB_MIN_MODEL_VOTES votes. The admin key comes from PLB_ADMIN_KEY.",
    )
    add.add_argument("names", nargs="+", metavar="NAME", help="model names, as votes name them")
    add.add_argument(
        "--url", default="http://127.0.0.1:8000", help="the service (http://127.0.0.1:8000)"
    )
    add.add_argument("--timeout", type=float, default=60.0, help="seconds to wait (60)")
    add_output_options(add)
    add.set_defaults(run=run_models_add)


def run_models_add(args: argparse.Namespace) -> None:
    """Execute ``plb models add``."""
    empty = [n for n in args.names if not n.strip()]
    if empty:
        raise UsageError(f"NAME must not be empty, not {empty[0]!r}")
    document = _admin_post(args.url, "/v1/admin/models", {"models": args.names}, args.timeout)
    lines = [f"added: {', '.join(document['added']) or 'none'}"]
    if document["known"]:
        lines.append(f"already known: {', '.join(document['known'])}")
    emit(document, "\n".join(lines), args.format)
