"""The MCP server on stdio: :mod:`.server` (start-up, stdout/stdin guard, the low-level
server), :mod:`.tools` (one ``ToolSpec`` per tool: schema, description, engine call), :mod:`.runtime`
(the engine, session memory, error results), :mod:`.wire` (every stdin line gets an answer).

Importing this package imports nothing heavy: the MCP handshake must stay fast.
"""

from typing import Any

from .server import INSTRUCTIONS, SERVER_NAME, run_server


def __getattr__(name: str) -> Any:
    """``TOOL_NAMES`` (``tools.TOOLS``' names), imported on first use."""
    if name == "TOOL_NAMES":
        from .tools import TOOL_NAMES

        return TOOL_NAMES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["INSTRUCTIONS", "SERVER_NAME", "TOOL_NAMES", "run_server"]
