"""The service's wire framing: one UTF-8 JSON object per line (``\\n``), at most
:data:`MAX_LINE` bytes (a request line the service reads: at most :data:`MAX_REQUEST_LINE`).

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
import time
from typing import BinaryIO

#: a JSON object as a line carries it
JsonObject = dict[str, object]

#: the "v" of every request line
PROTOCOL_VERSION = 1

#: the longest line either side reads (bytes, newline included): 64 MiB (a reply may carry a
#: long answer; the client trusts its service)
MAX_LINE = 64 * 1024 * 1024

#: the longest request line the service reads (bytes, newline included): 1 MiB. The largest real
#: request is a ``search`` whose query is the 100,000 characters the engine searches at most
#: (``config.MAX_QUERY_CHARS``): under 600 KB as JSON even if every character were a ``\\uXXXX``
#: escape; an ``mcp`` request is ~260 bytes, a ``hook`` request ~1 KB plus the prompt (cut to
#: 4,000 characters by the service). A longer line is refused: the client then answers in process.
MAX_REQUEST_LINE = 1024 * 1024


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
    except RecursionError:  # arrays or objects nested deeper than the interpreter's stack allows
        raise ProtocolError("a JSON line nested too deeply") from None
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


def recv_message_exact(sock: socket.socket, *, limit: int = MAX_LINE,
                       deadline: float | None = None) -> JsonObject:
    """The next line read from ``sock`` without consuming a byte past its ``\\n`` (peeks, then
    reads exactly the line), so the bytes after it (an MCP session) stay in the socket for the
    next reader. ``limit``: the longest line accepted (bytes; never more than ``limit + 1``
    are read). ``deadline``: a ``time.monotonic()`` by which the whole line must have come (a
    sender trickling a byte at a time cannot hold the reader longer), else ProtocolError; without
    it the socket's own timeout applies to each read. Raises ConnectionClosed (EOF before any
    byte), ProtocolError / OSError as :func:`read_message`."""
    line = bytearray()
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProtocolError("no complete line within the time allowed")
            sock.settimeout(left)
        try:
            peeked = sock.recv(65536, socket.MSG_PEEK)
        except TimeoutError:
            if deadline is None:
                raise
            raise ProtocolError("no complete line within the time allowed") from None
        if not peeked:
            if not line:
                raise ConnectionClosed("the connection closed before a request")
            raise ProtocolError("the connection closed before a complete line")
        end = peeked.find(b"\n")
        take = min(len(peeked) if end < 0 else end + 1, limit + 1 - len(line))
        chunk = sock.recv(take)
        line += chunk
        if len(line) > limit:
            raise ProtocolError(f"a line of more than {limit} bytes")
        if line.endswith(b"\n"):
            return decode(bytes(line))
