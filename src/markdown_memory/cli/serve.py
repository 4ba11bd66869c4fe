"""``markdown-memory serve``: the resident service (docs/service.md).

Clients (the stdio MCP server, the hook, the CLI) start it on demand; a person rarely runs it.
Without ``--foreground`` and on a terminal it starts the service in the background and returns
once it answers; otherwise (``--foreground``, or started by a client with no terminal) it runs
in this process until stopped (``stop`` request, SIGTERM, Ctrl-C) or idle.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="run the resident service (clients start it on demand)",
                            description="Run the resident service that the MCP server, the hook and the CLI use "
                            "(one per user; see docs/service.md).")
    parser.add_argument("--idle-timeout", type=_seconds, metavar="SECONDS",
                        help="exit after this many seconds without a connection (default: "
                        "$MARKDOWN_MEMORY_SERVICE_IDLE or 900; 0 = never)")
    parser.add_argument("--foreground", action="store_true",
                        help="run in this terminal (logs here; Ctrl-C stops it) instead of starting it in the background")
    parser.set_defaults(handler=run)


def _seconds(raw: str) -> float:
    """argparse type: a number of seconds >= 0."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 (never) or more seconds, got {raw}")
    return value


def run(args: argparse.Namespace) -> int:
    """Start (or run) the service. Returns the exit status (0, also when one already runs)."""
    if not args.foreground and sys.stdin is not None and sys.stdin.isatty():
        return _start_detached()
    from ..service.server import serve

    return serve(args.idle_timeout)


def _start_detached() -> int:
    from ..errors import ConfigError
    from ..service import client

    try:
        client.start_service()
        info = client.request("ping", {}, start=False)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        raise ConfigError(f"the service did not start: {exc}") from exc
    from ..service import paths

    sys.stdout.write(f"markdown-memory service running (pid {info.get('pid')}); log: {paths.log_path()}\n")
    return 0
