"""The service's operations: :data:`OPS` maps a request's ``op`` to its handler.

``Handler = Callable[[Service, dict[str, Any]], Any]``: it gets the service and the request's
fields and returns the reply's JSON ``result``, or a :class:`Session` to take over the
connection after the ok reply (the ``mcp`` op). A handler raising ``MarkdownMemoryError`` gets an
error reply built with ``errors.describe_error``; any other exception an "internal" error reply
(its traceback goes to the service's log).

Handlers import what they need inside their bodies: the service binds its socket before the
engine, numpy or the model are imported, so this module stays light.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import __version__
from ..errors import ConfigError
from . import client_ops

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from .server import Service

log = logging.getLogger("markdown_memory.service")

Handler = Callable[["Service", dict[str, Any]], Any]


@dataclass(frozen=True)
class Session:
    """A handler's answer that keeps the connection: the service sends the ok reply with
    ``result``, then calls ``run(wire_in, wire_out)`` (buffered binary streams of the connection)
    in the connection's thread; the connection closes when it returns."""

    run: Callable[[BinaryIO, BinaryIO], None]
    result: Any = field(default_factory=dict)


def settings_field(fields: dict[str, Any]) -> Settings:
    """The request's ``settings`` (``Settings.to_wire()`` form) as Settings. Raises ConfigError
    when missing or unreadable."""
    from ..config import Settings

    data = fields.get("settings")
    if not isinstance(data, dict):
        raise ConfigError("the request has no settings object")
    return Settings.from_wire(data)


def ping(service: Service, fields: dict[str, Any]) -> dict[str, Any]:
    """``{"pid", "version", "uptime_s", "roots", "http_port", "http_error"}``: the service is alive,
    and what it serves (``http_port``: the MCP-over-HTTP endpoint's port, or null when it is off;
    ``http_error``: why it is off when it was asked for and could not start, else null)."""
    return {"pid": os.getpid(), "version": __version__, "uptime_s": round(time.monotonic() - service.started, 3),
            "roots": service.roots(), "http_port": service.http_port,
            "http_error": service.http_error}


def stop(service: Service, fields: dict[str, Any]) -> dict[str, Any]:
    """``{}``; the service then shuts down (listener closed, socket removed, engines stopped)."""
    log.info("stop requested by a client")
    service.request_stop()
    return {}


def mcp(service: Service, fields: dict[str, Any]) -> Session:
    """An MCP session over the connection: after the ok reply, raw MCP JSON-RPC lines both ways
    (the stdio framing) on the engine the service keeps for ``settings``' docs root. Raises
    ConfigError for unreadable settings."""
    settings = settings_field(fields)

    def run(wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        from ..mcp.runtime import Runtime
        from ..mcp.server import serve_streams

        serve_streams(Runtime(settings, engine_factory=service.engine), wire_in, wire_out)

    return Session(run)


#: op name -> handler (``hook`` and ``search``: the thin clients' ops, :mod:`.client_ops`)
OPS: dict[str, Handler] = {
    "ping": ping,
    "stop": stop,
    "mcp": mcp,
    "hook": client_ops.hook,
    "search": client_ops.search,
}
