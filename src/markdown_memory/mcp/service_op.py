"""The resident service's ``mcp`` op (registered by ``cli/serve.py``): an MCP session over the
connection. Request :class:`McpCall`; after the ok reply (``{}``) raw MCP JSON-RPC lines flow both
ways (the stdio framing) on the engine the service keeps for the settings' docs root
(``mcp/relay.py`` is its client). Light at import: the server is imported by the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from ..config import Settings
from ..service.ops import Op, ServiceContext, Session


@dataclass(frozen=True)
class McpCall:
    """``{"settings": Settings.to_wire()}``: the docs root and settings the session serves."""

    settings: Settings


def session(service: ServiceContext, call: McpCall) -> Session:
    """The session serving ``call.settings`` with the service's shared engine."""

    def run(wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        from .runtime import Runtime
        from .server import serve_streams

        serve_streams(Runtime(call.settings, engine_factory=service.engine), wire_in, wire_out)

    return Session(run)


OP = Op("mcp", McpCall, session)
