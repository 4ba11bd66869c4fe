"""The service's wire framing: one UTF-8 JSON object per line (``\\n``), at most
:data:`MAX_LINE` bytes.

A connection starts with one request line from the client,
``{"v": 1, "op": OP, "version": CLIENT_VERSION, "token"?: TCP_SECRET, ...op fields}``, and one
reply line from the service, ``{"ok": true, "version", "pid", "result"}`` or
``{"ok": false, "version", "pid", "error": {"message", "kind"}}``. After the ``mcp`` op's ok
reply the connection carries raw MCP JSON-RPC lines (the stdio framing) both ways.

Standard library only: the light client imports it.
"""

from __future__ import annotations

import json
import socket
from typing import BinaryIO

#: a JSON object as a line carries it
JsonObject = dict[str, object]

#: the "v" of every request line
PROTOCOL_VERSION = 1

#: the longest line either side reads (bytes, newline included): 64 MiB
MAX_LINE = 64 * 1024 * 1024


class ProtocolError(Exception):
    """A line that is not one JSON object, is too long, or the peer closed before a full line."""


class ConnectionClosed(ProtocolError):
    """The peer closed without sending a byte (a client probing whether the service is up)."""


def encode(message: JsonObject) -> bytes:
    """``message`` as one line: compact JSON, UTF-8, ``\\n``-terminated (JSON escapes any
    newline inside strings, so the line has exactly one)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line: bytes) -> JsonObject:
    """One line (with or without its ``\\n``) as a JSON object. Raises ProtocolError."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a line of more than {MAX_LINE} bytes")
    try:
        data = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"not a JSON line: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError("a JSON line that is not an object")
    return data


def read_message(stream: BinaryIO) -> JsonObject:
    """The next line of a buffered binary stream as a JSON object. Raises ConnectionClosed on EOF
    before any byte, ProtocolError on EOF before a complete line, a line over :data:`MAX_LINE`,
    or bad JSON; OSError (timeouts included) as the stream raises it."""
    line = stream.readline(MAX_LINE + 1)
    if not line:
        raise ConnectionClosed("the connection closed before a request")
    if not line.endswith(b"\n"):
        if len(line) > MAX_LINE:
            raise ProtocolError(f"a line of more than {MAX_LINE} bytes")
        raise ProtocolError("the connection closed before a complete line")
    return decode(line)


def recv_message_exact(sock: socket.socket) -> JsonObject:
    """The next line read from ``sock`` without consuming a byte past its ``\\n`` (peeks, then
    reads exactly the line), so the bytes after it (an MCP session) stay in the socket for the
    next reader. Raises ProtocolError / OSError as :func:`read_message`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        peeked = sock.recv(65536, socket.MSG_PEEK)
        if not peeked:
            raise ProtocolError("the connection closed before a complete line")
        end = peeked.find(b"\n")
        take = len(peeked) if end < 0 else end + 1
        chunk = sock.recv(take)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_LINE:
            raise ProtocolError(f"a line of more than {MAX_LINE} bytes")
        if end >= 0 and len(chunk) == take:
            return decode(b"".join(chunks))
