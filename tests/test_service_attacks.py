"""The resident service under attack (issue 37's findings 1-6), each over a real ``serve``
process: links planted in the runtime folder, a deeply nested request line, unterminated and
trickled lines, a connection flood, a file that is no index of ours named as the database,
damage under a running service, a full listen backlog and a refused runtime folder.

Reuses test_service.py's fixtures: ``runtime`` (a private runtime folder, the service stopped at
the end), ``wait_until`` and ``_lock_free``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from test_service import _lock_free, runtime, wait_until  # noqa: F401 - runtime is a fixture

__all__ = ["runtime"]


def _send_raw(path: Path, payload: bytes, timeout: float = 30) -> dict[str, Any]:
    """Send ``payload`` on a new connection to the socket at ``path``; the one reply line."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(payload)
        line = sock.makefile("rb").readline()
    assert line, "the service closed the connection without a reply"
    reply: dict[str, Any] = json.loads(line)
    return reply


# -- finding 2: a request line nested 50,000 levels ---------------------------------------------

@pytest.mark.parametrize("opening, closing", [(b"[", b"]"), (b'{"a":', b"}")])
def test_a_deeply_nested_request_line_gets_the_protocol_refusal(runtime: Path, opening: bytes,  # noqa: F811
                                                                 closing: bytes) -> None:
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    reply = _send_raw(runtime / "service.sock", opening * 50_000 + b"1" + closing * 50_000 + b"\n")
    assert reply["ok"] is False and reply["error"]["kind"] == "protocol", reply
    assert "nested too deeply" in reply["error"]["message"]
    assert client.request("ping", {}, start=False)["pid"] == pid  # and it still serves
