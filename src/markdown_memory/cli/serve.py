"""``markdown-memory serve``: the resident service (docs/service.md).

Clients (the stdio MCP server, the hook, the CLI) start it on demand; a person rarely runs it.
Without ``--foreground`` and on a terminal it starts the service in the background and returns
once it answers; otherwise (``--foreground``, or started by a client with no terminal) it runs
in this process until stopped (``stop`` request, ``serve --stop``, SIGTERM, Ctrl-C) or idle.
``--status`` says whether one runs; ``--stop`` stops it. Neither starts one.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .options import bounded

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Engine
    from ..service.ops import Op
    from ..service.server import Service
    from ..service.wire import PingReply

log = logging.getLogger("markdown_memory.service")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="run the resident service (clients start it on demand)",
                            description="Run the resident service that the MCP server, the hook and the CLI use "
                            "(one per user; see docs/service.md).")
    parser.add_argument("--idle-timeout", type=_seconds, metavar="SECONDS",
                        help="exit after this many seconds without a connection (default: "
                        "$MARKDOWN_MEMORY_SERVICE_IDLE or 900; 0 = never)")
    parser.add_argument("--http-port", type=bounded(1, 65535), metavar="PORT", default=None,
                        help="also serve MCP over streamable HTTP on 127.0.0.1:PORT, one URL per docs root, "
                        "with a bearer token (default: $MARKDOWN_MEMORY_HTTP_PORT; off when neither is set; "
                        "see `setup claude-code --http`); the service then does not exit when idle unless "
                        "--idle-timeout is given")
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
    from ..mcp.http_access import http_port

    port = http_port(args.http_port, default=None)
    if not args.foreground and sys.stdin is not None and sys.stdin.isatty():
        return _start_detached(port, args.idle_timeout)
    from ..service.server import AlreadyRunning, serve

    if port is None:
        return serve(args.idle_timeout, ops=_ops(), on_new_engine=_watch)
    # an agent holding the URL cannot start the service again: no idle exit unless asked for
    try:
        return serve(0.0 if args.idle_timeout is None else args.idle_timeout, ops=_ops(), on_new_engine=_watch,
                     extras=[_http_extra(port, args.idle_timeout)], raise_if_running=True)
    except AlreadyRunning as exc:
        return _already_running(port, exc.pid)


def _ops() -> tuple[Op[Any], ...]:
    """The adapters' ops the service answers besides ``ping`` and ``stop`` (each module is light:
    its handler imports the engine): the MCP session, the prompt hook, the CLI's search."""
    from ..hook.service_op import OP as HOOK
    from ..mcp.service_op import OP as MCP
    from .search_op import OP as SEARCH

    return MCP, HOOK, SEARCH


def _watch(engine: Engine) -> Callable[[], object] | None:
    """Each docs root served is watched (auto-index on): ``service.watch.watch_engine``, imported
    with the first engine, not before the socket is bound (its imports are not light)."""
    from ..service.watch import watch_engine

    return watch_engine(engine)


def _already_running(port: int, pid: int | None) -> int:
    """``serve --http-port PORT`` (no terminal: systemd, a script) found a service running: 0 when
    it serves HTTP on ``port``; otherwise ConfigError (exit 2), since nothing would answer there."""
    from ..service import client

    try:
        info: PingReply | None = client.ping(start=False)
        pid, http = (info.pid, info.http_port) if info is not None else (pid, None)
    except (client.ServiceUnavailable, client.ServiceError):
        http = None
    if http == port:
        sys.stderr.write(f"markdown-memory: the service already runs (pid {pid}) "
                         f"with MCP over HTTP on port {port}\n")
        return 0
    raise ConfigError(_other_service(pid, http, port))


def _other_service(pid: int | None, http_port: int | None, port: int) -> str:
    """The sentence for a running service (its pid and HTTP port) that does not serve HTTP on ``port``."""
    from ..service import paths

    serving = f"with HTTP on port {http_port}" if http_port else "without HTTP"
    return (f"a service already runs (pid {pid}) {serving}, not on port {port}; stop it with "
            f"`markdown-memory serve --stop`, then run this again (log: {paths.log_path()})")


def _http_extra(port: int, idle_timeout: float | None) -> Callable[[Service], Callable[[], object]]:
    """The service's extra (``service.server.Extra``) running the MCP-over-HTTP endpoint on
    ``port`` with the service's shared engines; each authenticated request counts as use (for
    an idle timeout). When the endpoint cannot start (port taken, unsafe token file) the service
    runs without it, with its usual idle exit (``idle_timeout``, else the default): the log says
    why, ``ping`` reports ``http_port`` null and the reason as ``http_error``."""
    def start(service: Service) -> Callable[[], object]:
        from ..mcp.http import HttpServer
        from ..service.server import default_idle_timeout

        http = HttpServer(port, engine_factory=service.engine, on_request=service.touch)
        try:
            http.start()
        except ConfigError as exc:  # the socket's clients still get their service, for its usual time
            service.http_error = str(exc)
            if idle_timeout is None:
                service.idle_timeout = default_idle_timeout()
            log.error("MCP over HTTP is off: %s (idle exit after %g s; 0 = never)", exc, service.idle_timeout)
            return lambda: None
        service.http_port = http.port
        log.info("MCP over HTTP at http://127.0.0.1:%d/roots/<id>/mcp", http.port)
        return http.stop

    return start


def _status() -> int:
    from ..service import client, paths

    try:
        info = client.status()
    except client.ServiceError as exc:
        raise ConfigError(f"the service refused: {exc.message}") from exc
    if info is None:
        sys.stdout.write(f"the service is not running (runtime folder {paths.runtime_dir()})\n")
        return 0
    roots = info.roots
    sys.stdout.write(f"the service is running: pid {info.pid}, version {info.version}, "
                     f"up {info.uptime_s:.0f} s, {len(roots)} docs root(s)\n")
    if info.http_port:
        sys.stdout.write(f"MCP over HTTP: http://127.0.0.1:{info.http_port}/roots/<id>/mcp\n")
    elif info.http_error:
        sys.stdout.write(f"MCP over HTTP: off, it could not start: {info.http_error}\n")
    else:
        sys.stdout.write("MCP over HTTP: off (not asked for: `serve --http-port PORT`)\n")
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


def _ping() -> PingReply | None:
    """The running service's ``ping`` answer, or None when none runs (none is started)."""
    from ..service import client

    try:
        return client.ping(start=False)
    except client.ServiceUnavailable:
        return None


def _start_detached(http_port: int | None, idle_timeout: float | None) -> int:
    """Start the service in the background with this command's flags (``http_port``,
    ``idle_timeout``: passed on as ``serve``'s flags) and say so; a service already running
    without that HTTP port is reported (it must be stopped first)."""
    from ..service import client, paths

    if client.mode() == "off":
        raise ConfigError("MARKDOWN_MEMORY_SERVICE=off: unset it (or use --foreground) to start the service")
    flags: list[str] = []
    if http_port is not None:
        flags += ["--http-port", str(http_port)]
    if idle_timeout is not None:
        flags += ["--idle-timeout", repr(idle_timeout)]
    try:
        before = _ping()
        if before is None:
            client.start_service(flags)
        info = client.ping(start=False)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        raise ConfigError(f"the service did not start: {exc}") from exc
    if http_port is not None and info.http_port != http_port:
        if before is None and info.http_error:  # the one just started: leave nothing behind
            with contextlib.suppress(client.ServiceUnavailable):
                client.stop_service()
            raise ConfigError(f"MCP over HTTP could not start, so the service was stopped: {info.http_error}")
        raise ConfigError(_other_service(info.pid, info.http_port, http_port))
    sys.stdout.write(f"the service is running (pid {info.pid}); log: {paths.log_path()}\n")
    return 0
