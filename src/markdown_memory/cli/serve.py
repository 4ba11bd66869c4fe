"""``markdown-memory serve``: the resident service (docs/service.md).

Clients (the stdio MCP server, the hook, the CLI) start it on demand; a person rarely runs it.
Without ``--foreground`` and on a terminal it starts the service in the background and returns
once it answers; otherwise (``--foreground``, or started by a client with no terminal) it runs
in this process until stopped (``stop`` request, ``serve --stop``, SIGTERM, Ctrl-C) or idle.
``--status`` says whether one runs; ``--stop`` stops it. Neither starts one.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="run the resident service (clients start it on demand)",
                            description="Run the resident service that the MCP server, the hook and the CLI use "
                            "(one per user; see docs/service.md).")
    parser.add_argument("--idle-timeout", type=_seconds, metavar="SECONDS",
                        help="exit after this many seconds without a connection (default: "
                        "$MARKDOWN_MEMORY_SERVICE_IDLE or 900; 0 = never)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--foreground", action="store_true",
                      help="run in this terminal (logs here; Ctrl-C stops it) instead of starting it in the background")
    what.add_argument("--status", action="store_true", help="say whether the service runs (pid, uptime, docs roots)")
    what.add_argument("--stop", action="store_true", help="stop the running service")
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
    """Start, run, report or stop the service. Returns the exit status: 0 (also when one already
    runs, or none runs for ``--stop``). Raises ConfigError (runtime folder refused, no start)."""
    if args.status:
        return _status()
    if args.stop:
        return _stop()
    if not args.foreground and sys.stdin is not None and sys.stdin.isatty():
        return _start_detached()
    from ..service.server import serve

    return serve(args.idle_timeout)


def _status() -> int:
    from ..service import client, paths

    try:
        info = client.status()
    except client.ServiceError as exc:
        raise ConfigError(f"the service refused: {exc.message}") from exc
    if info is None:
        sys.stdout.write(f"the service is not running (runtime folder {paths.runtime_dir()})\n")
        return 0
    roots = info.get("roots") or []
    sys.stdout.write(f"the service is running: pid {info.get('pid')}, version {info.get('version')}, "
                     f"up {float(info.get('uptime_s') or 0):.0f} s, {len(roots)} docs root(s)\n")
    if client.mode() == "off":
        sys.stdout.write("(MARKDOWN_MEMORY_SERVICE=off: commands in this shell do not use it)\n")
    for root in roots:
        sys.stdout.write(f"  {root}\n")
    return 0


def _stop() -> int:
    from ..service import client

    try:
        pid = client.stop_service()
    except client.ServiceUnavailable as exc:
        raise ConfigError(str(exc)) from exc
    sys.stdout.write("the service is not running\n" if pid is None else f"stopped the service (pid {pid})\n")
    return 0


def _start_detached() -> int:
    from ..service import client, paths

    if client.mode() == "off":
        raise ConfigError("MARKDOWN_MEMORY_SERVICE=off: unset it (or use --foreground) to start the service")
    try:
        client.start_service()
        info = client.request("ping", {}, start=False)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        raise ConfigError(f"the service did not start: {exc}") from exc
    sys.stdout.write(f"the service is running (pid {info.get('pid')}); log: {paths.log_path()}\n")
    return 0
