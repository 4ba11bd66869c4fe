"""The service's operations: an :class:`Op` names a request dataclass and its handler, which
gets the service (as :class:`ServiceContext`) and the decoded request and returns a reply
dataclass, or a :class:`Session` to take over the connection after the ok reply.

The service knows only :data:`BUILTIN_OPS` (``ping``, ``stop``); the adapters declare their own
ops beside their code and the process that runs the service passes them to ``server.serve``
(``cli/serve.py``: ``mcp`` from ``mcp/service_op.py``, ``hook`` from ``hook/service_op.py``,
``search`` from ``cli/search_op.py``), so no module of ``service/`` imports an adapter.

A handler raising ``MarkdownMemoryError`` gets an error reply built with
``errors.describe_error``; a request that does not fit its dataclass a ``config`` error reply;
any other exception an "internal" error reply (its traceback goes to the service's log).
Handlers import what they need inside their bodies: the service binds its socket before the
engine, numpy or the model are imported, so op modules stay light.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, Protocol, TypeVar

from .. import __version__
from .wire import Empty, PingReply

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..engine import Engine

log = logging.getLogger("markdown_memory.service")

Request = TypeVar("Request")


class ServiceContext(Protocol):
    """What a handler may use of the running service."""

    @property
    def uptime(self) -> float:
        """Seconds since the service started."""

    @property
    def http_port(self) -> int | None: ...

    @property
    def http_error(self) -> str | None: ...

    def engine(self, settings: Settings, *, foreground: bool = False) -> Engine:
        """The shared engine of ``settings``' docs root database (``foreground``: the CLI's kind)."""

    def roots(self) -> list[str]:
        """The docs roots served so far (sorted)."""

    def request_stop(self) -> None:
        """Ask the service to shut down."""


@dataclass(frozen=True)
class Session:
    """A handler's answer that keeps the connection: the service sends the ok reply with
    ``reply`` (a dataclass, None: ``{}``), then calls ``run(wire_in, wire_out)`` (buffered binary
    streams of the connection) in the connection's thread; the connection closes when it
    returns."""

    run: Callable[[BinaryIO, BinaryIO], None]
    reply: object = None


@dataclass(frozen=True)
class Op(Generic[Request]):
    """One operation: its ``name`` (the request line's ``op``), the dataclass its request fields
    are read into, and the handler answering it (a reply dataclass or a :class:`Session`)."""

    name: str
    request: type[Request]
    handle: Callable[[ServiceContext, Request], object]


def ping(service: ServiceContext, request: Empty) -> PingReply:
    """The service is alive, and what it serves (:class:`~.wire.PingReply`)."""
    return PingReply(pid=os.getpid(), version=__version__, uptime_s=round(service.uptime, 3),
                     roots=service.roots(), http_port=service.http_port, http_error=service.http_error)


def stop(service: ServiceContext, request: Empty) -> Empty:
    """Nothing; the service then shuts down (listener closed, socket removed, engines stopped)."""
    log.info("stop requested by a client")
    service.request_stop()
    return Empty()


#: the ops every service has
BUILTIN_OPS: tuple[Op[Any], ...] = (Op("ping", Empty, ping), Op("stop", Empty, stop))


def registry(extra: Sequence[Op[Any]] = ()) -> Mapping[str, Op[Any]]:
    """The built-in ops and ``extra`` by name. Raises ValueError for a name given twice."""
    ops: dict[str, Op[Any]] = {}
    for op in (*BUILTIN_OPS, *extra):
        if op.name in ops:
            raise ValueError(f"two service ops are named {op.name!r}")
        ops[op.name] = op
    return ops
