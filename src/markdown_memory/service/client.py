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
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .. import __version__
from . import paths
from .protocol import PROTOCOL_VERSION, JsonObject, ProtocolError, encode, recv_message_exact
from .wire import Empty, PingReply, WireError, decode, encode_object

Reply = TypeVar("Reply")

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

#: environment: the switch (see module docstring)
MODE_ENV = "MARKDOWN_MEMORY_SERVICE"
MODES = ("auto", "off", "attach")

#: seconds start_service waits for a spawned service's socket
START_WAIT_SECONDS = 10.0

#: seconds a version-mismatched service gets to go away after ``stop``
STOP_WAIT_SECONDS = 10.0

#: seconds to connect (a live service accepts at once; a full backlog is a busy service), and
#: to keep retrying a busy one
CONNECT_TIMEOUT = 5.0

#: seconds between attempts at a busy service (full backlog, its most connections open)
BUSY_PAUSE_SECONDS = 0.05


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


class _Refused(ServiceUnavailable):
    """The runtime folder, or one of its files, is refused (another user's, shared, a link): no
    service can be used or started until the user fixes it; said once per process on stderr."""


#: this process already said on stderr why the service is not used (:func:`_say_refused`)
_said_refused = False


def _say_refused(exc: _Refused) -> None:
    """Say once per process, on stderr (stdout may be the MCP transport), that the commands work
    in process because the runtime folder is refused, and why (else only ``serve --status`` would
    tell)."""
    global _said_refused
    if _said_refused:
        return
    _said_refused = True
    sys.stderr.write(f"markdown-memory: the resident service is not used ({exc}); working in this process\n")
    sys.stderr.flush()


def mode() -> str:
    """``$MARKDOWN_MEMORY_SERVICE`` as "auto" | "off" | "attach" (unset, empty or unknown: "auto")."""
    value = os.environ.get(MODE_ENV, "").strip().lower()
    return value if value in MODES else "auto"


def _connect() -> tuple[socket.socket, str | None]:
    """A socket connected to the running service and the TCP token (None over a Unix socket).
    Raises _NotRunning when there is none (no socket file, refused with the lock free, no port
    file), _Refused when the runtime folder or one of its files is refused (a link), and
    ServiceUnavailable when the service stayed busy (see :func:`_dial`)."""
    address: str | tuple[str, int]
    token: str | None
    try:
        kind = paths.transport()
        if kind == "unix":
            where = str(paths.socket_path())
            paths.refuse_linked_socket(Path(where))
            family, address, token = socket.AF_UNIX, where, None
        else:
            port = int(paths.read_private(paths.port_path()).strip())
            token = paths.read_private(paths.token_path()).strip()
            family, address = socket.AF_INET, ("127.0.0.1", port)
    except (OSError, ValueError) as exc:
        raise _NotRunning(f"no service: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - ConfigError: the runtime folder is refused (none can start)
        raise _Refused(str(exc)) from exc
    return _dial(family, address), token


def _dial(family: int, address: str | tuple[str, int]) -> socket.socket:
    """A socket connected to ``address``. A service that is there but cannot take the connection
    now is busy, not absent: EAGAIN (its listen backlog is full) and ECONNREFUSED while a process
    holds the service lock (a service binding its socket, or going away) are retried for up to
    :data:`CONNECT_TIMEOUT` seconds, then ServiceUnavailable (never _NotRunning: starting a second
    service would only see the lock taken). Raises _NotRunning for any other failure."""
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            busy = isinstance(exc, BlockingIOError) or (isinstance(exc, ConnectionRefusedError)
                                                        and family != socket.AF_INET and _lock_held())
            if not busy:
                raise _NotRunning(f"no service at {address}: {exc.strerror or exc}") from exc
            if time.monotonic() > deadline:
                raise ServiceUnavailable(f"the service at {address} is busy (it did not take a connection "
                                         f"within {CONNECT_TIMEOUT:g} s: {exc.strerror or exc})") from exc
        time.sleep(BUSY_PAUSE_SECONDS)


def _lock_held() -> bool:
    """True when a process holds the service lock (a probe with a shared non-blocking ``flock``,
    released at once; the service tolerates it, see ``server.take_lock``); False when there is
    no lock file, it is refused, or there is no ``flock``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fd = paths.open_private(paths.lock_path(), os.O_RDONLY)
    except Exception:  # noqa: BLE001 - absent or refused: nothing holds it that we may trust
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _exchange(op: str, fields: Mapping[str, object], timeout: float | None) -> tuple[socket.socket, JsonObject]:
    """Connect, send the request line, read the reply line (without reading past it). Returns the
    still-open socket and the reply. A "busy" refusal (the service serves its most connections)
    is retried for up to :data:`CONNECT_TIMEOUT` seconds, then returned. Raises ServiceUnavailable."""
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        sock, reply = _exchange_once(op, fields, timeout)
        error = reply.get("error")
        if reply.get("ok") or not isinstance(error, dict) or error.get("kind") != "busy" \
                or time.monotonic() > deadline:
            return sock, reply
        sock.close()
        time.sleep(BUSY_PAUSE_SECONDS)


def _exchange_once(op: str, fields: Mapping[str, object], timeout: float | None) -> tuple[socket.socket, JsonObject]:
    """One :func:`_exchange` attempt."""
    sock, token = _connect()
    request: JsonObject = {**fields, "v": PROTOCOL_VERSION, "op": op, "version": __version__}
    if token is not None:
        request["token"] = token
    try:
        sock.settimeout(timeout)
        reply = _ask(sock, encode(request))
    except (OSError, ProtocolError) as exc:
        sock.close()
        raise ServiceUnavailable(f"the service did not answer {op!r}: {exc}") from exc
    return sock, reply


def _ask(sock: socket.socket, request: bytes) -> JsonObject:
    """Send ``request`` (one encoded line) on a connected ``sock`` and read the reply line.
    A service at its connection limit writes its "busy" line and closes without reading: a
    request sent after that close fails (EPIPE, ECONNRESET) while the refusal already waits in
    this socket, so it is read before the send's error counts. Raises OSError or ProtocolError."""
    try:
        sock.sendall(request)
    except (BrokenPipeError, ConnectionResetError) as exc:
        try:
            return recv_message_exact(sock)
        except (OSError, ProtocolError):
            raise exc from None
    return recv_message_exact(sock)


def _open(op: str, fields: Mapping[str, object], start: bool, timeout: float | None) -> tuple[socket.socket, object]:
    """The exchange, starting a service first when there is none and ``start`` allows it, and
    replacing a service of another version once. Returns the socket and the reply's result.
    Raises ServiceUnavailable or ServiceError."""
    current = mode()
    if current == "off":
        raise ServiceUnavailable(f"{MODE_ENV}=off: the service is not used")
    start = start and current == "auto"
    try:
        try:
            sock, reply = _exchange(op, fields, timeout)
        except _NotRunning:  # (one that fails mid-call is not restarted here: the caller falls back)
            if not start:
                raise
            start_service()
            sock, reply = _exchange(op, fields, timeout)
    except _Refused as exc:
        _say_refused(exc)
        raise
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


def _error_of(reply: JsonObject) -> ServiceError:
    """The ServiceError an error reply carries."""
    raw = reply.get("error")
    error: dict[object, object] = raw if isinstance(raw, dict) else {}
    return ServiceError(str(error.get("message") or "the service refused the request"), str(error.get("kind") or "error"))


def request(op: str, fields: Mapping[str, object], *, start: bool = True, timeout: float = 60.0) -> object:
    """Send one request (its fields as JSON) and return the reply's ``result`` (JSON): the wire
    itself; adapters use :func:`call`.

    ``start``: start a service when none runs (only in mode "auto"). ``timeout``: seconds for the
    whole exchange once connected. Raises ServiceUnavailable (mode "off", no service and none
    started, version still wrong after one restart, the service died or timed out mid-call) or
    ServiceError (an error reply).
    """
    sock, result = _open(op, fields, start, timeout)
    sock.close()
    return result


def call(op: str, message: object, reply: type[Reply], *, start: bool = True, timeout: float = 60.0) -> Reply:
    """Send ``message`` (the op's request dataclass) and return the reply read into the
    ``reply`` dataclass (``wire.decode``). Raises as :func:`request`, and ServiceUnavailable
    for a reply that does not fit ``reply`` (a service of another build)."""
    result = request(op, encode_object(message), start=start, timeout=timeout)
    try:
        return decode(reply, result)
    except WireError as exc:
        raise ServiceUnavailable(f"the service's {op!r} reply could not be read: {exc}") from exc


def ping(*, start: bool = True, timeout: float = 60.0) -> PingReply:
    """The service's ``ping`` reply (:func:`call`; ``start`` as there). Raises as :func:`call`."""
    return call("ping", Empty(), PingReply, start=start, timeout=timeout)


def open_session(op: str, message: object, *, start: bool = True) -> socket.socket:
    """Send ``message`` (the op's request dataclass: ``mcp``) and return the connected socket after its ok reply, blocking
    and without timeout, positioned at the first byte after the reply line: the caller owns it
    and speaks the op's session protocol on it. Raises as :func:`request`."""
    sock, _result = _open(op, encode_object(message), start, 60.0)
    sock.settimeout(None)
    return sock


def status() -> PingReply | None:
    """The running service's ``ping`` reply whatever the switch says (a person's
    ``serve --status``), or None when none answers (or its reply cannot be read). Raises
    ServiceError for an error reply."""
    try:
        sock, reply = _exchange("ping", encode_object(Empty()), 10.0)
    except ServiceUnavailable:
        return None
    sock.close()
    if not reply.get("ok"):
        raise _error_of(reply)
    try:
        return decode(PingReply, reply.get("result"))
    except WireError:
        return None


def stop_service(wait: float = STOP_WAIT_SECONDS) -> int | None:
    """Ask the running service to stop whatever the switch says (a person's ``serve --stop``),
    and wait up to ``wait`` seconds for its address to go and its process to exit (so a new
    one can start at once). Returns its pid, or None when none was running. Raises
    ServiceUnavailable when it did not go in time."""
    try:
        sock, reply = _exchange("stop", encode_object(Empty()), 10.0)
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
        raise _Refused(str(exc)) from exc
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


def spawn(args: Sequence[str] = ()) -> None:
    """Spawn a service as :func:`start_service` does, without waiting for it (the prompt hook:
    for the next prompt). Raises ServiceUnavailable when it cannot be spawned."""
    try:
        log = paths.log_path()
    except Exception as exc:  # noqa: BLE001 - ConfigError: the runtime folder is refused
        raise ServiceUnavailable(str(exc)) from exc
    _spawn(log, args)


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
    """``log`` opened for appending (0600, never through a link) as a file descriptor, closed
    afterwards. Raises ServiceUnavailable when it cannot be opened or is refused."""
    try:
        fd = paths.open_private(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # never through a link
    except OSError as exc:
        raise ServiceUnavailable(f"cannot open the service log {log}: {exc.strerror or exc}") from exc
    except Exception as exc:  # noqa: BLE001 - ConfigError: a link planted at the log's path
        raise _Refused(str(exc)) from exc
    try:
        yield fd
    finally:
        os.close(fd)
