"""The resident service process (``markdown-memory serve``): one per user, listening on a Unix
socket in the runtime folder (or loopback TCP with a token), a thread per connection, one engine
per docs root kept in :mod:`.pool`.

Start-up order matters for the clients waiting on it: take the lock, bind the socket, and only
then (on the first request that needs it) import the engine, numpy and the model, so a client
that spawned the service connects within a few hundred milliseconds.

* One per user: an exclusive non-blocking ``flock`` on ``service.lock`` held for the process's
  life. A second ``serve`` finds it taken and exits 0 saying "already running (pid N)". With the
  lock held, a socket file left behind (its process died) is stale: it is unlinked and re-bound.
* Each connection: the peer's uid is checked (``SO_PEERCRED`` on Linux; the folder's 0700 and the
  socket's 0600 refuse other users first), over TCP the token, then one request line and one
  reply line (:mod:`.protocol`, ops in :mod:`.ops`).
* Idle exit: no open connection, no request for ``idle_timeout`` seconds and no index run going.
* ``stop`` op, SIGTERM, SIGINT: clean exit (listener closed, socket removed, engines stopped).

Logs go to stderr (a service started by a client has ``service.log`` as its stderr).
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import secrets
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import __version__
from ..errors import ConfigError, MarkdownMemoryError, describe_error
from ..files.private import write_private
from . import paths
from .ops import Op, Session, registry
from .pagecheck import PageCheck
from .protocol import (
    MAX_REQUEST_LINE,
    PROTOCOL_VERSION,
    ConnectionClosed,
    JsonObject,
    ProtocolError,
    encode,
    recv_message_exact,
)
from .wire import WireError, decode, encode_object

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..engine import Engine
    from .pool import EngineHook, Pool

log = logging.getLogger("markdown_memory.service")

#: environment: default idle timeout in seconds (0 = never exit when idle)
IDLE_ENV = "MARKDOWN_MEMORY_SERVICE_IDLE"
DEFAULT_IDLE_SECONDS = 900.0

#: seconds a connection may take to send its whole request line (one deadline for the line, not
#: per read: a sender trickling a byte at a time is refused when it passes)
REQUEST_READ_TIMEOUT = 30.0

#: connections served at once (MCP sessions included); the next ones get a "busy" refusal (the
#: client retries briefly, then answers in process). Each open agent window holds one session, a
#: hook or CLI call one connection for its request: 64 is far above a person's use, and bounds
#: what unfinished request lines can hold to 64 x MAX_REQUEST_LINE = 64 MiB (what a single
#: connection could buffer before the request line had a cap).
MAX_CONNECTIONS = 64

#: the listen backlog (the kernel caps it at net.core.somaxconn): connects beyond it fail with
#: EAGAIN at once; a burst of clients (every window's hook at one prompt, a script's parallel
#: searches) must queue, not look like "no service"
LISTEN_BACKLOG = socket.SOMAXCONN

#: seconds the shutdown waits for requests being answered (sessions are cut at once)
SHUTDOWN_WAIT_SECONDS = 5.0


def default_idle_timeout() -> float:
    """``$MARKDOWN_MEMORY_SERVICE_IDLE`` seconds, else 900. Raises ConfigError for a bad value."""
    raw = os.environ.get(IDLE_ENV, "").strip()
    if not raw:
        return DEFAULT_IDLE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{IDLE_ENV}={raw!r} is not a number of seconds") from None
    if value < 0:
        raise ConfigError(f"{IDLE_ENV}={raw!r} is negative; use 0 for never")
    return value


class AlreadyRunning(Exception):
    """Another service holds the lock; ``pid`` is the one written in the lock file (or None)."""

    def __init__(self, pid: int | None) -> None:
        super().__init__(f"already running (pid {pid if pid is not None else 'unknown'})")
        self.pid = pid


class Service:
    """The running service's state shared by the connection threads: start time, the engine
    pool, activity (for the idle exit) and the stop request."""

    def __init__(self, idle_timeout: float, token: str | None, on_new_engine: EngineHook | None = None,
                 ops: Sequence[Op[Any]] = ()) -> None:
        self.started = time.monotonic()
        #: the ops it answers: the built-in ones and ``ops`` (the adapters'), by name
        self.ops = registry(ops)
        self._on_new_engine = on_new_engine
        self.idle_timeout = idle_timeout
        #: the TCP transport's secret (None over a Unix socket)
        self.token = token
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._open = 0  # connections being served
        self._admitted = 0  # connections accepted and not yet closed (at most MAX_CONNECTIONS)
        #: the page check of the databases served (:mod:`.pagecheck`)
        self.page_check = PageCheck()
        self._last_activity = time.monotonic()
        self._pool: Pool | None = None
        self._sessions: set[socket.socket] = set()
        self._wake_r, self._wake_w = socket.socketpair()
        #: the port of the MCP-over-HTTP endpoint (mcp/http.py, started as an extra), None when off
        self.http_port: int | None = None
        #: why the HTTP endpoint asked for could not start (port taken, token file), None otherwise
        self.http_error: str | None = None

    # -- what handlers use (ops.ServiceContext) -------------------------------------------------
    @property
    def uptime(self) -> float:
        """Seconds since the service started."""
        return time.monotonic() - self.started

    @property
    def pool(self) -> Pool:
        """The engine pool, created (and :mod:`.pool` imported) on first use."""
        with self._lock:
            if self._pool is None:
                from .pool import Pool

                self._pool = Pool(self._on_new_engine)
            return self._pool

    def engine(self, settings: Settings, *, foreground: bool = False) -> Engine:
        """The shared engine for ``settings``' docs root database (created on first use;
        ``foreground``: the CLI's kind, see ``Pool.engine``)."""
        return self.pool.engine(settings, foreground=foreground)

    def roots(self) -> list[str]:
        """The docs roots served so far (sorted)."""
        return self._pool.roots() if self._pool is not None else []

    def request_stop(self) -> None:
        """Ask the main loop to shut down (thread- and signal-safe)."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- activity ---------------------------------------------------------------------------
    def touch(self) -> None:
        """Note a request served outside the socket (an extra such as the HTTP endpoint): the
        idle time starts again."""
        with self._lock:
            self._last_activity = time.monotonic()

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """The service is not idle while the block runs (a connection, an HTTP request)."""
        with self._lock:
            self._open += 1
            self._last_activity = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                self._last_activity = time.monotonic()

    @contextlib.contextmanager
    def connection(self, conn: socket.socket) -> Iterator[None]:
        """Count ``conn`` as open while the block runs (see :meth:`active`)."""
        try:
            with self.active():
                yield
        finally:
            with self._lock:
                self._sessions.discard(conn)

    def check_pages(self, *, now: bool = False) -> None:
        """Start the page check (:mod:`.pagecheck`) when it is due: idle long enough after use,
        or ``now`` (a request met damage); never before an engine exists or while one runs."""
        pool = self._pool
        if pool is not None and self.page_check.claim(self._last_activity, None if now else self.idle_for(), now=now):
            self.page_check.start(pool, lambda: self.stopping)

    def admit(self) -> bool:
        """Count one more accepted connection; False (nothing counted) when MAX_CONNECTIONS are
        open: the caller refuses it. Each True is matched by one :meth:`release`."""
        with self._lock:
            if self._admitted >= MAX_CONNECTIONS:
                return False
            self._admitted += 1
            return True

    def release(self) -> None:
        """An admitted connection closed."""
        with self._lock:
            self._admitted -= 1

    def add_session(self, conn: socket.socket) -> None:
        """``conn`` carries a session: the shutdown cuts it instead of waiting for it."""
        with self._lock:
            self._sessions.add(conn)

    def idle_for(self) -> float | None:
        """Seconds since the last connection closed, or None while one is open or an index run
        is going (never idle then)."""
        with self._lock:
            if self._open:
                return None
            since = time.monotonic() - self._last_activity
        if self._pool is not None and self._pool.busy():
            return None
        return since

    def open_requests(self) -> int:
        """Connections open that are not sessions (requests being answered)."""
        with self._lock:
            return self._open - len(self._sessions)

    def cut_sessions(self) -> None:
        """Shut down every session's socket (their MCP loops see EOF and end)."""
        with self._lock:
            sessions = list(self._sessions)
        for conn in sessions:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def close(self, timeout: float) -> bool:
        """Stop the pool's engines (background work gets ``timeout`` seconds); True when all
        background work stopped."""
        stopped = self._pool.shutdown(timeout) if self._pool is not None else True
        self._wake_r.close()
        self._wake_w.close()
        return stopped


# -- the lock and the listener ---------------------------------------------------------------

#: seconds a new service waits for the lock of one that is going away (its address already gone)
LOCK_WAIT_SECONDS = 10.0

#: seconds a new service keeps trying a lock that is taken while the address is there: a client
#: probing whether a service holds it (``client._lock_held``) holds it shared for microseconds
LOCK_PROBE_GRACE_SECONDS = 0.2


def take_lock(path: Path, address: Path | None = None) -> IO[str]:
    """Open ``path`` and take the exclusive lock, writing this pid into it. Returns the open file
    (the lock lives as long as it). While the holder's ``address`` (socket or port file) is absent
    it is taken to be shutting down (a ``stop`` just went through), and the lock is waited for
    up to :data:`LOCK_WAIT_SECONDS`. Raises AlreadyRunning when another process holds it, and
    ConfigError when ``path`` is a link (``paths.open_private``: never opened through one)."""
    fd = paths.open_private(path, os.O_RDWR | os.O_CREAT)  # never through a link planted there
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o600)
    handle = os.fdopen(fd, "r+", encoding="ascii")  # held for the process's life
    started = time.monotonic()
    while True:
        try:
            _lock_file(handle)
            break
        except OSError:
            going = address is not None and not address.exists()
            if time.monotonic() - started > (LOCK_WAIT_SECONDS if going else LOCK_PROBE_GRACE_SECONDS):
                handle.seek(0)
                text = handle.read().strip()
                handle.close()
                raise AlreadyRunning(int(text) if text.isdigit() else None) from None
            time.sleep(0.02)
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def _lock_file(handle: IO[str]) -> None:
    """flock (POSIX) or msvcrt.locking (Windows), exclusive and non-blocking; OSError when taken."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` (0600 from the start: bound under umask 0177). A file
    already there is stale (the caller holds the lock): it is removed first."""
    if path.exists() or path.is_symlink():
        log.warning("stale socket taken over: %s (its service is gone)", path)
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(LISTEN_BACKLOG)
    return listener


def bind_tcp(port_file: Path, token_file: Path) -> tuple[socket.socket, str]:
    """A listening socket on 127.0.0.1 (ephemeral port) and its secret: the token is written to
    ``token_file`` (0600) before the port to ``port_file``, each by an atomic rename, so a client
    that sees the port can read the token."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(LISTEN_BACKLOG)
    token = secrets.token_hex(32)
    write_private(token_file, token + "\n")
    write_private(port_file, f"{listener.getsockname()[1]}\n")
    return listener, token


def peer_uid(conn: socket.socket) -> int | None:
    """The connected peer's uid (``SO_PEERCRED``, Linux), or None where it cannot be read
    (other systems rely on the 0700 folder and 0600 socket, TCP on the token)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or conn.family != getattr(socket, "AF_UNIX", None):
        return None
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


# -- one connection --------------------------------------------------------------------------

def _reply(ok: bool, payload: object) -> JsonObject:
    key = "result" if ok else "error"
    return {"ok": ok, "version": __version__, "pid": os.getpid(), key: payload}


def _error(message: str, kind: str) -> JsonObject:
    return _reply(False, {"message": message, "kind": kind})


def _forbidden(message: str) -> JsonObject:
    """The reply to a peer that is not let in: no pid or version (nothing about the service)."""
    return {"ok": False, "error": {"message": message, "kind": "forbidden"}}


def _refusal(service: Service, conn: socket.socket, request: JsonObject) -> JsonObject | None:
    """The error reply refusing ``request`` (another uid, a wrong token, another protocol or
    version, an unknown op), or None to serve it."""
    uid = peer_uid(conn)
    getuid = getattr(os, "getuid", None)
    if uid is not None and getuid is not None and uid != getuid():
        log.warning("refused a connection from uid %d", uid)
        return _forbidden("the service serves only the user who started it")
    if service.token is not None and not hmac.compare_digest(str(request.get("token", "")), service.token):
        log.warning("refused a connection with a wrong or missing token")
        return _forbidden("wrong or missing token")
    if request.get("v") != PROTOCOL_VERSION:
        return _error(f"protocol {request.get('v')!r} is not {PROTOCOL_VERSION}", "protocol")
    op = request.get("op")
    if not isinstance(op, str) or op not in service.ops:
        return _error(f"unknown op {op!r}; the ops are {', '.join(sorted(service.ops))}", "unknown_op")
    if request.get("version") != __version__ and op not in ("ping", "stop"):
        return _error(f"this service is version {__version__}, the client {request.get('version')}; "
                      "stop the service and retry", "version_mismatch")
    return None


def _answer(service: Service, request: JsonObject) -> tuple[JsonObject, Session | None]:
    """Run the request's op: the reply, and the session to run after it (or None)."""
    op = service.ops[str(request["op"])]
    fields = {k: v for k, v in request.items() if k not in ("v", "op", "version", "token")}
    try:
        result = op.handle(service, decode(op.request, fields))
    except WireError as exc:
        return _error(f"the {op.name} request could not be read: {exc}", "config"), None
    except MarkdownMemoryError as exc:
        report = describe_error(exc)
        return _error(report.message, report.kind), None
    except Exception as exc:  # noqa: BLE001 - the client gets one sentence, the log the traceback
        log.error("op %s failed", op.name, exc_info=exc)
        from ..store.errors import is_corruption

        if is_corruption(exc):  # damage surfaced: find it and move it aside now, not at the next idle moment
            service.check_pages(now=True)
        return _error(f"internal error in the service's {op.name} ({type(exc).__name__}: {exc}); see its log",
                      "internal"), None
    if isinstance(result, Session):
        return _reply(True, encode_object(result.reply)), result
    return _reply(True, encode_object(result)), None


def handle_connection(service: Service, conn: socket.socket) -> None:
    """Serve one connection (its own thread): one request line, one reply line, then the op's
    session if it has one. Never raises."""
    with service.connection(conn), conn:
        try:
            wire_out = conn.makefile("wb")
            try:  # read exactly the line: what follows (an MCP session) stays for wire_in
                request = recv_message_exact(conn, limit=MAX_REQUEST_LINE,
                                             deadline=time.monotonic() + REQUEST_READ_TIMEOUT)
            except ConnectionClosed:
                return  # a client checking that the service is up
            except ProtocolError as exc:
                log.info("bad request line: %s", exc)
                wire_out.write(encode(_error(f"bad request line: {exc}", "protocol")))
                wire_out.flush()
                return
            refusal = _refusal(service, conn, request)
            reply, session = (refusal, None) if refusal is not None else _answer(service, request)
            conn.settimeout(None)
            wire_in = conn.makefile("rb")
            if session is not None:
                service.add_session(conn)
            wire_out.write(encode(reply))
            wire_out.flush()
            if session is not None and not service.stopping:
                session.run(wire_in, wire_out)
        except OSError as exc:
            log.info("connection ended: %s", exc)
        except Exception as exc:  # noqa: BLE001 - a bad session must not take the service down
            log.error("connection failed", exc_info=exc)


# -- the main loop ---------------------------------------------------------------------------

def _on_signals(service: Service) -> None:
    def stop(signum: int, _frame: object) -> None:
        log.info("stopping on %s", signal.Signals(signum).name)
        service.request_stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(sig, stop)


def _loop(service: Service, listener: socket.socket) -> None:
    """Accept connections until a stop request or the idle timeout."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(service._wake_r, selectors.EVENT_READ)
    listener.setblocking(False)
    while not service.stopping:
        idle = service.idle_for()
        wait = 1.0
        if service.idle_timeout > 0 and idle is not None:
            if idle >= service.idle_timeout:
                log.info("idle for %.0f s: exiting", idle)
                break
            wait = min(wait, service.idle_timeout - idle)
        for key, _events in selector.select(max(wait, 0.01)):
            if key.fileobj is listener:
                _accept(service, listener)
        service.check_pages()
    selector.close()


def _accept(service: Service, listener: socket.socket) -> None:
    try:
        conn, _addr = listener.accept()
    except (BlockingIOError, InterruptedError):
        return
    except OSError as exc:  # e.g. too many open files: keep serving the others
        log.error("accept failed: %s", exc)
        time.sleep(0.05)
        return
    if not service.admit():
        _refuse_busy(conn)
        return
    conn.setblocking(True)
    threading.Thread(target=_serve_admitted, args=(service, conn), name="service-conn", daemon=True).start()


def _serve_admitted(service: Service, conn: socket.socket) -> None:
    """:func:`handle_connection` for a connection :meth:`Service.admit` counted, released after."""
    try:
        handle_connection(service, conn)
    finally:
        service.release()


def _refuse_busy(conn: socket.socket) -> None:
    """Answer a connection over MAX_CONNECTIONS with a "busy" error line (no thread: a short line
    to a new socket never blocks) and close it."""
    log.info("refused a connection: %d connections are open, the limit", MAX_CONNECTIONS)
    with contextlib.suppress(OSError), conn:
        conn.setblocking(False)
        conn.send(encode(_error(f"the service is serving {MAX_CONNECTIONS} connections, its limit; retry "
                                "later", "busy")))


#: started beside the socket listener once it is bound (an HTTP endpoint): called with the service,
#: returns a callable that stops it (called at shutdown)
Extra = Callable[[Service], Callable[[], object]]


def serve(idle_timeout: float | None = None, *, ops: Sequence[Op[Any]] = (), on_new_engine: EngineHook | None = None,
          extras: Sequence[Extra] = (), raise_if_running: bool = False) -> int:
    """Run the service until stopped or idle. Returns the exit status: 0 (also when another
    service already runs: said on stderr, unless ``raise_if_running``: AlreadyRunning is raised
    for the caller to judge). ``on_new_engine``: called with each engine the pool makes (the
    file watcher), returns its stopper. ``ops``: the adapters' ops besides ``ping`` and ``stop``
    (``ops.Op``). ``extras``: started after the socket is bound, stopped
    first at shutdown. Raises ConfigError (runtime folder refused, bad idle value) and what an
    extra's start raises."""
    timeout = default_idle_timeout() if idle_timeout is None else idle_timeout
    folder = paths.runtime_dir()
    transport = paths.transport()
    try:
        lock = take_lock(paths.lock_path(), paths.socket_path() if transport == "unix" else paths.port_path())
    except AlreadyRunning as exc:
        if raise_if_running:
            raise
        sys.stderr.write(f"markdown-memory: the service is {exc}\n")
        return 0
    token: str | None = None
    if transport == "unix":
        address = paths.socket_path()
        listener = bind_unix(address)
        cleanup = [address]
    else:
        listener, token = bind_tcp(paths.port_path(), paths.token_path())
        cleanup = [paths.port_path(), paths.token_path()]
        address = Path(f"127.0.0.1:{listener.getsockname()[1]}")
    service = Service(timeout, token, on_new_engine, ops)
    _on_signals(service)
    if log.getEffectiveLevel() > logging.INFO:  # the service's own log says when it starts and stops
        log.setLevel(logging.INFO)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the stdio server (mcp/server.py): before numpy
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    log.info("service %s (pid %d) listening on %s (runtime folder %s, idle exit %s)", __version__, os.getpid(),
             address, folder, f"after {timeout:g} s" if timeout > 0 else "never")
    stoppers: list[Callable[[], object]] = []
    try:
        for extra in extras:
            stoppers.append(extra(service))
        _loop(service, listener)
    finally:
        for stop_extra in reversed(stoppers):
            try:
                stop_extra()
            except Exception as exc:  # noqa: BLE001 - the socket and engines still get closed
                log.warning("could not stop %s cleanly: %s", stop_extra, exc)
        listener.close()
        for path in cleanup:
            with contextlib.suppress(OSError):
                path.unlink()
        service.cut_sessions()
        deadline = time.monotonic() + SHUTDOWN_WAIT_SECONDS
        while service.open_requests() > 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        stopped = service.close(timeout=SHUTDOWN_WAIT_SECONDS)
        log.info("service (pid %d) stopped", os.getpid())
        lock.close()
    if not stopped:  # a model still loading cannot be interrupted: do not wait for it at exit
        log.warning("background work did not stop in time; exiting without waiting for it")
        sys.stderr.flush()
        os._exit(0)
    return 0
