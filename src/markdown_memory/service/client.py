"""The light client of the resident service: connect (starting the service when allowed), send
one request line, read one reply line.

Imports only the standard library, :mod:`.paths`, :mod:`.protocol` and
``markdown_memory.__version__`` (``subprocess`` only to start a service): never
numpy, onnxruntime, markdown-it, sqlite-vec, mcp, anyio, pydantic or the engine, so the prompt
hook and the CLI pay only for the interpreter and a socket round trip.

The switch ``MARKDOWN_MEMORY_SERVICE``: ``auto`` (default: use the service, start it on demand),
``off`` (never contact or start one), ``attach`` (use a running one, never start one).

Callers fall back to working in process on :class:`ServiceUnavailable`; a
:class:`ServiceError` is the service's own answer (an error a user can fix, or a refused request).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from . import paths
from .protocol import PROTOCOL_VERSION, ProtocolError, encode, recv_message_exact

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

#: environment: the switch (see module docstring)
MODE_ENV = "MARKDOWN_MEMORY_SERVICE"
MODES = ("auto", "off", "attach")

#: seconds start_service waits for a spawned service's socket
START_WAIT_SECONDS = 10.0

#: seconds a version-mismatched service gets to go away after ``stop``
STOP_WAIT_SECONDS = 10.0

#: seconds to connect (a live service accepts at once; a full backlog is a busy service)
CONNECT_TIMEOUT = 5.0


class ServiceUnavailable(Exception):
    """No service, none could be started (or the switch forbids it), or it died mid-call: the
    caller does the work in process."""


class ServiceError(Exception):
    """The service answered with an error reply: ``message`` (one sentence), ``kind`` (the error
    class's snake_case name, e.g. "config", or a code such as "unknown_op", "forbidden")."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


class _NotRunning(ServiceUnavailable):
    """No service to connect to (as opposed to one that failed mid-call): one may be started."""


def mode() -> str:
    """``$MARKDOWN_MEMORY_SERVICE`` as "auto" | "off" | "attach" (unset, empty or unknown: "auto")."""
    value = os.environ.get(MODE_ENV, "").strip().lower()
    return value if value in MODES else "auto"


def _connect() -> tuple[socket.socket, str | None]:
    """A socket connected to the running service and the TCP token (None over a Unix socket).
    Raises _NotRunning when there is none (no socket file, refused, no port file), and
    ServiceUnavailable when the runtime folder is refused."""
    try:
        kind = paths.transport()
        if kind == "unix":
            where = str(paths.socket_path())
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address: Any = where
            token = None
        else:
            port = int(paths.port_path().read_text(encoding="ascii").strip())
            token = paths.token_path().read_text(encoding="ascii").strip()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            address = ("127.0.0.1", port)
    except (OSError, ValueError) as exc:
        raise _NotRunning(f"no service: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - ConfigError: the runtime folder is refused (none can start)
        raise ServiceUnavailable(f"no service: {exc}") from exc
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(address)
    except OSError as exc:
        sock.close()
        raise _NotRunning(f"no service at {address}: {exc.strerror or exc}") from exc
    return sock, token


def _exchange(op: str, fields: dict[str, Any], timeout: float | None) -> tuple[socket.socket, dict[str, Any]]:
    """Connect, send the request line, read the reply line (without reading past it). Returns the
    still-open socket and the reply. Raises ServiceUnavailable."""
    sock, token = _connect()
    request: dict[str, Any] = {**fields, "v": PROTOCOL_VERSION, "op": op, "version": __version__}
    if token is not None:
        request["token"] = token
    try:
        sock.settimeout(timeout)
        sock.sendall(encode(request))
        reply = recv_message_exact(sock)
    except (OSError, ProtocolError) as exc:
        sock.close()
        raise ServiceUnavailable(f"the service did not answer {op!r}: {exc}") from exc
    return sock, reply


def _open(op: str, fields: dict[str, Any], start: bool, timeout: float | None) -> tuple[socket.socket, Any]:
    """The exchange, starting a service first when there is none and ``start`` allows it, and
    replacing a service of another version once. Returns the socket and the reply's result.
    Raises ServiceUnavailable or ServiceError."""
    current = mode()
    if current == "off":
        raise ServiceUnavailable(f"{MODE_ENV}=off: the service is not used")
    start = start and current == "auto"
    try:
        sock, reply = _exchange(op, fields, timeout)
    except _NotRunning:  # (one that fails mid-call is not restarted here: the caller falls back)
        if not start:
            raise
        start_service()
        sock, reply = _exchange(op, fields, timeout)
    error = reply.get("error")
    if not reply.get("ok") and isinstance(error, dict) and error.get("kind") == "forbidden":
        sock.close()  # a refusal carries no version: it is not one to replace
        raise _error_of(reply)
    if reply.get("version") != __version__:
        sock.close()
        if not start:
            raise ServiceUnavailable(f"the running service is version {reply.get('version')}, this client "
                                     f"{__version__}")
        _replace_service()
        sock, reply = _exchange(op, fields, timeout)
        if reply.get("version") != __version__:
            sock.close()
            raise ServiceUnavailable(f"the service is still version {reply.get('version')} after a restart")
    if not reply.get("ok"):
        sock.close()
        raise _error_of(reply)
    return sock, reply.get("result")


def _error_of(reply: dict[str, Any]) -> ServiceError:
    """The ServiceError an error reply carries."""
    raw = reply.get("error")
    error: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return ServiceError(str(error.get("message") or "the service refused the request"), str(error.get("kind") or "error"))


def request(op: str, fields: dict[str, Any], *, start: bool = True, timeout: float = 60.0) -> Any:
    """Send one request and return the reply's ``result`` (JSON).

    ``start``: start a service when none runs (only in mode "auto"). ``timeout``: seconds for the
    whole exchange once connected. Raises ServiceUnavailable (mode "off", no service and none
    started, version still wrong after one restart, the service died or timed out mid-call) or
    ServiceError (an error reply).
    """
    sock, result = _open(op, fields, start, timeout)
    sock.close()
    return result


def open_session(op: str, fields: dict[str, Any], *, start: bool = True) -> socket.socket:
    """Send one request (``mcp``) and return the connected socket after its ok reply, blocking
    and without timeout, positioned at the first byte after the reply line: the caller owns it
    and speaks the op's session protocol on it. Raises as :func:`request`."""
    sock, _result = _open(op, fields, start, 60.0)
    sock.settimeout(None)
    return sock


def status() -> dict[str, Any] | None:
    """The running service's ``ping`` result whatever the switch says (a person's
    ``serve --status``), or None when none answers. Raises ServiceError for an error reply."""
    try:
        sock, reply = _exchange("ping", {}, 10.0)
    except ServiceUnavailable:
        return None
    sock.close()
    if not reply.get("ok"):
        raise _error_of(reply)
    result = reply.get("result")
    return result if isinstance(result, dict) else {}


def stop_service(wait: float = STOP_WAIT_SECONDS) -> int | None:
    """Ask the running service to stop whatever the switch says (a person's ``serve --stop``),
    and wait up to ``wait`` seconds for its address to go and its process to exit (so a new
    one can start at once). Returns its pid, or None when none was running. Raises
    ServiceUnavailable when it did not go in time."""
    try:
        sock, reply = _exchange("stop", {}, 10.0)
    except ServiceUnavailable:
        return None
    sock.close()
    pid = reply.get("pid")
    pid = pid if isinstance(pid, int) and pid > 0 else None
    # a service running in this very process (a thread: tests, embedding) cannot be waited out
    other = pid if pid != os.getpid() else None
    deadline = time.monotonic() + wait
    while service_address_exists() or (other is not None and _process_alive(other)):
        if time.monotonic() > deadline:
            raise ServiceUnavailable(f"the service (pid {reply.get('pid')}) did not exit within {wait:g} s; "
                                     f"it may still be finishing a write (log: {paths.log_path()})")
        time.sleep(0.02)
    return pid


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a child of ours that exited is reaped: not alive)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child: ask the kernel
    except OSError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # an exited child of another process (the one that spawned it) waits to be reaped: gone
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            return stat_file.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return True


def service_address_exists() -> bool:
    """Whether the service's socket (or TCP port file) exists: it may still be stale."""
    try:
        target = paths.socket_path() if paths.transport() == "unix" else paths.port_path()
    except Exception:  # noqa: BLE001 - ConfigError: the folder is refused, so no service is there
        return False
    return target.exists()


def _replace_service() -> None:
    """Ask the running service (another version) to stop, wait for its address to go, and start
    one of this version. Raises ServiceUnavailable when it does not go or the new one fails."""
    stop_service()
    start_service()


def start_service(args: Sequence[str] = ()) -> None:
    """Spawn ``python -m markdown_memory serve [args]`` detached (``args``: ``serve``'s flags, e.g.
    ``--idle-timeout``; its own session, in the runtime folder, this process's environment,
    stdin/stdout to the null device, stderr appended to ``log_path()``) and wait up to :data:`START_WAIT_SECONDS` for it to accept a connection. A
    spawned process that exits because another service already runs is fine: that one is waited
    for. Raises ServiceUnavailable when nothing answers in time."""
    try:
        log = paths.log_path()
    except Exception as exc:  # noqa: BLE001 - ConfigError: the runtime folder is refused
        raise ServiceUnavailable(str(exc)) from exc
    deadline = time.monotonic() + START_WAIT_SECONDS
    child = _spawn(log, args)
    while time.monotonic() < deadline:
        try:
            sock, _token = _connect()
        except _NotRunning:
            code = child.poll()
            if code is not None and code != 0:
                raise ServiceUnavailable(f"the service exited with status {code} at start; see {log}") from None
            if code == 0 and not service_address_exists():
                child = _spawn(log, args)  # the one it saw was stopping: try again
            time.sleep(0.01)
            continue
        sock.close()
        return
    raise ServiceUnavailable(f"the service did not start within {START_WAIT_SECONDS:.0f} s; see {log}")


def _spawn(log: Path, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    import subprocess

    with _log_file(log) as stderr:
        try:
            return subprocess.Popen([sys.executable, "-m", "markdown_memory", "serve", *args], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
                                    close_fds=True, cwd=log.parent)  # holds no user folder open
        except OSError as exc:
            raise ServiceUnavailable(f"could not start the service: {exc}") from exc


@contextlib.contextmanager
def _log_file(log: Path) -> Iterator[int]:
    """``log`` opened for appending (0600) as a file descriptor, closed afterwards."""
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:
        raise ServiceUnavailable(f"cannot open the service log {log}: {exc.strerror or exc}") from exc
    try:
        yield fd
    finally:
        os.close(fd)
