"""The MCP server on stdio: :mod:`.server` (start-up, stdout/stdin guard, the low-level
server), :mod:`.tools` (the five tools' schemas and descriptions), :mod:`.runtime` (tool
bodies: one engine call each, error results), :mod:`.wire` (every stdin line gets an answer).

Importing this package imports nothing heavy: the MCP handshake must stay fast.
"""

from .server import INSTRUCTIONS, SERVER_NAME, TOOL_NAMES, run_server

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "TOOL_NAMES", "run_server"]
