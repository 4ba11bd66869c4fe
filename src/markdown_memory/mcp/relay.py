"""The stdio MCP server as a thin relay to the resident service (``markdown-memory`` with no
command, when the service can be had).

An agent window starts one stdio server; with the service each is this relay (the interpreter,
the standard library and the service's light client: about 10-15 MB), and the service holds the
one engine and model for every window. The relay opens an ``mcp`` session on the service with
its resolved settings, then copies lines: stdin -> socket, socket -> stdout (stdout carries only
JSON-RPC; logs go to stderr).

It keeps what it needs to resume a session elsewhere: the ``initialize`` request line, the
``notifications/initialized`` line, and every request sent but not yet answered (each line is
parsed as JSON: cheap). When the service dies mid-session (EOF or reset while stdin is still
open) the relay opens a new session (starting a new service), replays ``initialize`` (its reply,
matched by id, is swallowed: the agent already has one), ``initialized`` and the unanswered
requests in order; when no service can be had it runs the in-process server as a child
(``python -m markdown_memory`` with the same arguments and ``MARKDOWN_MEMORY_SERVICE=off``) and
replays the same to it. The agent sees answers, never the switch.

Imports: the standard library and ``service.client`` only (never the MCP SDK, anyio, pydantic,
numpy or onnxruntime).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from ..service import client

if TYPE_CHECKING:  # pragma: no cover
    pass

log = logging.getLogger("markdown_memory.relay")

#: seconds to wait, once stdin closed, for the session's last answers before exiting
DRAIN_SECONDS = 10.0


class Link:
    """One session's line pipe: the service's socket or an in-process server child."""

    name = "link"

    def send(self, line: bytes) -> None:  # pragma: no cover - abstract
        """Write one line (newline included). Raises OSError when the other end is gone."""
        raise NotImplementedError

    def readline(self) -> bytes:  # pragma: no cover - abstract
        """The next line, b"" at EOF. Raises OSError on a reset."""
        raise NotImplementedError

    def end_input(self) -> None:  # pragma: no cover - abstract
        """No more lines will be sent: the other end sees EOF."""
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class SocketLink(Link):
    """A session on the resident service (after the ok reply of op ``mcp``)."""

    name = "service"

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")

    def send(self, line: bytes) -> None:
        self.sock.sendall(line)

    def readline(self) -> bytes:
        return self.reader.readline()

    def end_input(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        for closer in (self.reader.close, self.sock.close):
            try:
                closer()
            except OSError:
                pass


class ChildLink(Link):
    """The in-process server run as a child (the service could not be had)."""

    name = "in-process server"

    def __init__(self, argv: list[str]) -> None:
        import subprocess

        env = {**os.environ, client.MODE_ENV: "off"}
        self.proc = subprocess.Popen([sys.executable, "-m", "markdown_memory", *argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout

    def send(self, line: bytes) -> None:
        self.stdin.write(line)
        self.stdin.flush()

    def readline(self) -> bytes:
        return self.stdout.readline()

    def end_input(self) -> None:
        try:
            self.stdin.close()
        except OSError:
            pass

    def close(self) -> None:
        import subprocess

        self.end_input()
        try:
            self.proc.wait(timeout=DRAIN_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _id_key(message: dict[str, Any]) -> str:
    """A JSON-RPC id as a dict key (1 and "1" differ)."""
    return json.dumps(message.get("id"), sort_keys=True)


class Relay:
    """Copies one MCP session between stdio and a :class:`Link` (see module docstring).

    ``connect()`` returns a new session link (raises ServiceUnavailable / ServiceError);
    ``fallback()`` the in-process server child. ``out`` receives the lines for stdout."""

    def __init__(self, connect: Callable[[], Link], fallback: Callable[[], Link], out: IO[bytes]) -> None:
        self._connect = connect
        self._fallback = fallback
        self._out = out
        self._send_lock = threading.Lock()  # writes to the link, and the switch to a new one
        self._state_lock = threading.Lock()  # the replay state below
        self._out_lock = threading.Lock()
        self._init: tuple[str, bytes] | None = None  # (id key, line) of `initialize`
        self._initialized: bytes | None = None
        self._pending: dict[str, bytes] = {}  # id key -> request line, in send order
        self._swallow: dict[Link, str] = {}  # link -> id key of the replayed initialize's reply
        self._stdin_open = True
        self._done = threading.Event()  # the current link reached EOF after stdin closed
        self.link: Link | None = None
        #: how many times the session moved to a new link (tests and logs read it)
        self.switches = 0

    # -- stdin -> link ------------------------------------------------------------------------
    def start(self, link: Link) -> None:
        """Begin with ``link`` (already open)."""
        self.link = link
        self._reader(link)

    def forward(self, line: bytes) -> None:
        """One line from stdin: remember what a replay needs, then send it on."""
        self._remember(line)
        with self._send_lock:
            link = self.link
            if link is None:
                return
            try:
                link.send(line)
            except OSError as exc:
                log.warning("the %s went away (%s); resuming the session", link.name, exc)
                self._switch(link)  # replays the line if it was a request

    def _remember(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        with self._state_lock:
            if method == "initialize" and "id" in message:
                self._init = (_id_key(message), line)
            elif method == "notifications/initialized":
                self._initialized = line
            elif method == "notifications/cancelled":
                params = message.get("params")
                if isinstance(params, dict):
                    self._pending.pop(json.dumps(params.get("requestId"), sort_keys=True), None)
            if isinstance(method, str) and "id" in message and method != "initialize":
                self._pending[_id_key(message)] = line

    def end(self) -> None:
        """stdin closed: the link sees EOF too; waits (a while) for the session's last lines."""
        with self._send_lock:
            self._stdin_open = False
            link = self.link
            if link is not None:
                link.end_input()
        self._done.wait(DRAIN_SECONDS)
        if link is not None:
            link.close()

    # -- link -> stdout -----------------------------------------------------------------------
    def _reader(self, link: Link) -> None:
        threading.Thread(target=self._pump, args=(link,), name=f"mm-relay-{link.name}", daemon=True).start()

    def _pump(self, link: Link) -> None:
        """Copy ``link``'s lines to stdout until EOF; then resume elsewhere if stdin is open."""
        while True:
            try:
                line = link.readline()
            except (OSError, ValueError):
                line = b""
            if not line:
                break
            if self._answered(link, line):
                with self._out_lock:
                    self._out.write(line if line.endswith(b"\n") else line + b"\n")
                    self._out.flush()
        with self._send_lock:
            if not self._stdin_open or self.link is not link:
                self._done.set()
                return
            log.warning("the %s ended the session; resuming it", link.name)
            self._switch(link)

    def _answered(self, link: Link, line: bytes) -> bool:
        """Note a response's id as answered; False for the replayed initialize's reply (swallowed)."""
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return True
        key = _id_key(message)
        with self._state_lock:
            if self._swallow.get(link) == key:
                del self._swallow[link]
                return False
            self._pending.pop(key, None)
        return True

    # -- resuming -----------------------------------------------------------------------------
    def _switch(self, dead: Link) -> None:
        """Move the session off ``dead`` (caller holds the send lock): a new service session,
        else the in-process child; replay initialize, initialized and the unanswered requests."""
        if self.link is not dead:
            return
        dead.close()
        self.switches += 1
        try:
            link = self._connect()
        except (client.ServiceUnavailable, client.ServiceError) as exc:
            log.warning("no service to resume on (%s); running the server in this session's own process", exc)
            try:
                link = self._fallback()
            except OSError as exc2:  # nothing can answer: end like a server that died
                log.error("cannot run the server: %s", exc2)
                sys.stderr.flush()
                os._exit(1)
        with self._state_lock:
            replay = [self._init[1]] if self._init is not None else []
            if self._init is not None:
                self._swallow[link] = self._init[0]
            replay += [self._initialized] if self._initialized is not None else []
            replay += list(self._pending.values())
        self.link = link
        try:
            for line in replay:
                link.send(line)
        except OSError as exc:  # the new one died at once: its reader resumes once more
            log.warning("the %s went away during the replay: %s", link.name, exc)
        self._reader(link)


#: attempts, and seconds between them, to open a session on a new service after the old one died
RECONNECT_ATTEMPTS, RECONNECT_PAUSE_SECONDS = 4, 0.25


def _reconnect(connect: Callable[[], Link]) -> Link:
    """A new session after the service died. A service killed a moment ago may still hold its
    listening socket while it exits (a connection then is reset, which the client does not take
    for "no service"): a few attempts apart let it go, and the next attempt starts a new one.
    Raises ServiceUnavailable / ServiceError as the last attempt did."""
    import time

    for attempt in range(RECONNECT_ATTEMPTS):
        try:
            return connect()
        except client.ServiceUnavailable:
            if attempt == RECONNECT_ATTEMPTS - 1:
                raise
            time.sleep(RECONNECT_PAUSE_SECONDS)
    raise AssertionError("unreachable")  # pragma: no cover


def run_relay(settings_wire: dict[str, object], argv: list[str]) -> int:
    """Relay this process's stdio to an ``mcp`` session on the service until stdin closes.
    ``argv``: this command's arguments (the in-process child gets the same). Raises
    ServiceUnavailable / ServiceError when no session can be opened at start (the caller runs
    the in-process server instead); returns 0."""

    def connect() -> Link:
        return SocketLink(client.open_session("mcp", {"settings": settings_wire}))

    first = connect()
    stdin = sys.stdin.buffer
    relay = Relay(lambda: _reconnect(connect), lambda: ChildLink(argv), sys.stdout.buffer)
    relay.start(first)
    while True:
        line = stdin.readline()
        if not line:
            break
        relay.forward(line)
    relay.end()
    return 0


def main(argv: list[str]) -> int:
    """``python -m markdown_memory.mcp.relay SETTINGS_JSON ARGS...``: the relay in a fresh
    interpreter holding nothing but what relaying needs (the console script resolves the
    settings, then replaces itself with this: ~5 MB less per agent window). When no session can
    be opened at start, it becomes the in-process server (``python -m markdown_memory ARGS``
    with the service switched off)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="markdown-memory: %(message)s")
    settings_wire, rest = json.loads(argv[0]), argv[1:]
    if sys.stdin.isatty():  # a person started it by hand: say what it is waiting for (as the server does)
        log.warning("markdown-memory MCP server for %s: waiting for JSON-RPC on stdin (an MCP client starts "
                    "this command); press Ctrl-C to stop, or see `markdown-memory --help` for the CLI",
                    settings_wire.get("docs_root"))
    try:
        return run_relay(settings_wire, rest)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        log.info("the resident service is not available (%s); serving in this process", exc)
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "markdown_memory", *rest], {**os.environ, client.MODE_ENV: "off"})
    return 1  # pragma: no cover - execve does not return


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
