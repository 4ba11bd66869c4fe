"""MCP over streamable HTTP: the seven tools of every docs root, one URL per root, on loopback.

``http://127.0.0.1:PORT/roots/<id>/mcp`` serves the docs root ``<id>`` names
(:mod:`.http_access`: the id is the root's default index folder name, mapped back through the
registry ``setup --http`` writes or the index folder itself). Each root gets one
:class:`~.runtime.Runtime` (its engine from ``engine_factory``: the resident service's shared
engine per root) and one low-level server from :func:`.server.build_server`, run by the SDK's
``StreamableHTTPSessionManager`` in stateful mode: every client session has its session id
(``Mcp-Session-Id``) and its own memory of the section texts already sent, as a stdio server
has; the answers are the stdio server's.

Every request passes these checks, in this order, before the SDK's session manager sees it
(checks 1 and 2 are the SDK's own ``TransportSecurityMiddleware``, with the settings its
transport also gets; the refusals here word them):

1. ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT`` (a DNS-rebinding page's host is
   refused): 421.
2. ``Origin``, when present, must be ``http://127.0.0.1:PORT`` or ``http://localhost:PORT``,
   as the MCP spec asks of local servers (a web page's script cannot reach the tools): 403.
   CLI clients send none and pass.
3. The path must be ``/roots/<id>/mcp``: else 404.
4. ``Authorization: Bearer <token>`` with the token of ``http_access.load_token`` (constant-time
   compare; the token is read once, when the server starts): else 401 with ``WWW-Authenticate: Bearer``. Checked before the id is resolved, so
   a client without the token cannot probe which roots exist.
5. ``<id>`` must name a registered or indexed docs root that still exists: else 404.

``/ui`` and below is the local page (``ui/app.py``, docs/ui.md): checks 1-2 here, then its own
token rule (a one-time link exchanged for a cookie, or the same bearer token).

The server listens on 127.0.0.1 only. :class:`HttpServer` runs uvicorn in a thread of its own
(its own event loop): the resident service starts it beside its socket listener; tests start it
on an ephemeral port. Refusals answer a JSON-RPC error body (``id`` null) with the sentence.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..config import Settings
from ..errors import ConfigError
from . import http_access

if TYPE_CHECKING:  # pragma: no cover
    from anyio.abc import TaskGroup, TaskStatus
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from ..engine import Engine
    from .runtime import Runtime

log = logging.getLogger("markdown_memory.http")

#: seconds uvicorn waits for open connections (SSE streams) when the server stops
GRACEFUL_SHUTDOWN_SECONDS = 2
#: seconds :meth:`HttpServer.start` waits for the server to be up
START_TIMEOUT_SECONDS = 30.0
_PREFIX, _SUFFIX = "/roots/", "/mcp"


#: live sessions per docs root (each holds a server task and its memory; ~200 KB): while that many
#: are open a new ``initialize`` answers 503 until one ends (DELETE) or idles out
MAX_SESSIONS_PER_ROOT = 64
#: seconds without a request after which a session is closed (its client starts a new one)
SESSION_IDLE_SECONDS = 600.0
#: seconds a root's settings are trusted before the registry is read again (``setup --http`` run
#: again, e.g. with another embedder, takes effect within this time, without a restart)
RECHECK_SECONDS = 1.0


@dataclass
class _Root:
    runtime: Runtime
    manager: StreamableHTTPSessionManager
    checked: float = 0.0  # time.monotonic() of the last lookup that confirmed the settings
    manager_scope: Any = None  # the anyio.CancelScope running the manager (cancel: the root is dropped)


class McpHttpApp:
    """The ASGI app (see the module docstring). ``port``: the port it is reached on (the Host
    and Origin checks name it); ``token``: the bearer token; ``engine_factory``: the engine of a
    docs root's settings (None: one engine per settings made here, shared by the root's MCP
    sessions and its page, stopped by :meth:`close`); ``lookup``: settings
    of a root id or None (default :func:`.http_access.lookup`); ``on_request``: called for each
    request that passed the token check (the service's activity clock). Needs the ASGI lifespan (uvicorn
    ``lifespan="on"``): the roots' session managers run in its task group."""

    def __init__(self, port: int, token: str, *, engine_factory: Callable[[Settings], Engine] | None = None,
                 lookup: Callable[[str], Settings | None] = http_access.lookup,
                 on_request: Callable[[], object] | None = None) -> None:
        self._token = token
        self._on_request = on_request
        #: the engine of a root's settings, for its MCP runtime and its page alike
        self._engine_factory = engine_factory or self._own_engine
        #: the engines made here when no ``engine_factory`` was given (one per settings; :meth:`close` stops them)
        self._owned: dict[str, Engine] = {}  # by the settings' wire form (Settings is mutable: no hash)
        self._owned_lock = threading.Lock()
        self._lookup = lookup
        from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings

        self._hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        #: checks 1 and 2 (Host, then Origin): the SDK's, with the settings its transport gets too
        self._security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                                   allowed_hosts=sorted(self._hosts),
                                                   allowed_origins=sorted(f"http://{host}" for host in self._hosts))
        self._host_origin = TransportSecurityMiddleware(self._security)
        self._roots: dict[str, _Root] = {}
        self._task_group: TaskGroup | None = None
        self._roots_lock: Any = None  # an anyio.Lock, made on the server's event loop
        self._ui_app: Any = None  # the local page under /ui (ui/app.py), made on first use

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        import anyio

        await receive()  # lifespan.startup
        self._roots_lock = anyio.Lock()
        async with anyio.create_task_group() as tg:
            self._task_group = tg
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            tg.cancel_scope.cancel()
        self._task_group = None
        self.close()
        await send({"type": "lifespan.shutdown.complete"})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request

        request = Request(scope)
        if str(scope.get("path", "")).split("/")[1:2] == ["ui"]:  # the local page (ui/app.py): checks 1-2, then its own
            await (await self._check_local(request) or self._ui())(scope, receive, send)
            return
        ident, refusal = await self._check(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        assert ident is not None
        if self._on_request is not None:
            self._on_request()
        try:
            root = await self._root(ident)
        except ConfigError as exc:
            await _refuse(500, str(exc))(scope, receive, send)
            return
        if root is None:
            await _refuse(404, f"no docs root has the id {ident!r} (was it moved or deleted?): run `markdown-memory "
                               f"setup claude-code --http --yes` in the docs root's folder (or with --docs-dir DIR) and use "
                               f"the URL it prints")(scope, receive, send)
            return
        await root.manager.handle_request(scope, receive, send)

    async def _check_local(self, request: Any) -> Any:
        """None for a request that passes checks 1-2, else the refusal. They are the SDK's
        (``TransportSecurityMiddleware``): 421 for the Host, 403 for the Origin; the refusal here
        words them."""
        headers = request.headers
        denied = await self._host_origin.validate_request(request)
        if denied is not None and denied.status_code == 421:
            log.warning("refused a request for host %r (DNS rebinding?)", headers.get("host"))
            return _refuse(421, f"this server answers only at {' or '.join(sorted(self._hosts))}")
        if denied is not None:
            origin = headers.get("origin")
            log.warning("refused a request from origin %r", origin)
            return _refuse(403, f"requests from origin {origin!r} are refused (only local clients may call)")
        return None

    def _ui(self) -> Any:
        """The local page's app (``ui.app.UiApp``: its own token and cookie rules), made on first use."""
        if self._ui_app is None:
            from ..ui.app import UiApp

            self._ui_app = UiApp(self._token, engine_factory=self._engine_factory, lookup=self._lookup,
                                 on_request=self._on_request)
        return self._ui_app

    async def _check(self, request: Any) -> tuple[str | None, Any]:
        """(the root id, None) for a request that passes checks 1-4, else (None, the refusal)."""
        refusal = await self._check_local(request)
        if refusal is not None:
            return None, refusal
        headers, path = request.headers, str(request.scope.get("path", ""))
        if not (path.startswith(_PREFIX) and path.endswith(_SUFFIX)) or len(path) <= len(_PREFIX + _SUFFIX):
            return None, _refuse(404, "not found: the MCP endpoints are /roots/<id>/mcp")
        presented = http_access.bearer(headers.get("authorization"))
        if not presented or not http_access.token_matches(presented, self._token):
            error = ', error="invalid_token"' if presented else ""  # RFC 6750 3.1: no error code without a token
            return None, _refuse(401, "missing or wrong bearer token: send `Authorization: Bearer <token>`; run "
                                      "`markdown-memory setup claude-code --http --yes` to get the token and the line that "
                                      "registers this server", {"WWW-Authenticate": f'Bearer realm="markdown-memory"{error}'})
        return unquote(path[len(_PREFIX):-len(_SUFFIX)]), None

    async def _root(self, ident: str) -> _Root | None:
        """The runtime and running session manager of root ``ident``, made on first use; None
        when no root has that id. A root whose folder is gone is dropped at once (the client
        gets the 404 saying how to register it again, not the stdio server's advice); its
        settings are looked up again after :data:`RECHECK_SECONDS` and a root whose registered
        settings changed gets a new runtime (its clients start new sessions)."""
        import time

        import anyio

        root = self._roots.get(ident)
        now = time.monotonic()
        if root is not None and now - root.checked < RECHECK_SECONDS and root.runtime.settings.docs_root.is_dir():
            return root
        async with self._roots_lock:
            root = self._roots.get(ident)
            if root is not None and now - root.checked < RECHECK_SECONDS and root.runtime.settings.docs_root.is_dir():
                return root
            settings = await anyio.to_thread.run_sync(self._lookup, ident)
            if root is not None and settings == root.runtime.settings:
                root.checked = time.monotonic()
                return root
            if root is not None:
                del self._roots[ident]
                root.manager_scope.cancel()
                log.info("stopped serving %s at /roots/%s/mcp: %s", root.runtime.settings.docs_root, ident,
                         "its folder is gone" if settings is None else "its registered settings changed")
            if settings is None or self._task_group is None:
                return None
            root = self._make_root(settings)
            root.checked = time.monotonic()
            await self._task_group.start(_run_manager, root)
            self._roots[ident] = root
            log.info("serving %s at /roots/%s/mcp", settings.docs_root, ident)
            return root

    def _make_root(self, settings: Settings) -> _Root:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from .runtime import Runtime
        from .server import build_server

        runtime = Runtime(settings, engine_factory=self._engine_factory)
        manager = StreamableHTTPSessionManager(build_server(runtime), security_settings=self._security,
                                               session_idle_timeout=SESSION_IDLE_SECONDS,
                                               max_sessions=MAX_SESSIONS_PER_ROOT)
        return _Root(runtime, manager)

    def _own_engine(self, settings: Settings) -> Engine:
        """The engine of ``settings`` when no ``engine_factory`` was given: one per settings,
        background mode (as a stdio server's), shared by the root's MCP sessions and its page."""
        import json

        key = json.dumps(settings.to_wire(), sort_keys=True)
        with self._owned_lock:
            engine = self._owned.get(key)
            if engine is None:
                from ..engine import Engine

                engine = self._owned[key] = Engine(settings, background=True)
            return engine

    def close(self, timeout: float = 5.0) -> None:
        """Stop the background work of the engines made here (an engine from ``engine_factory``
        belongs to its owner)."""
        with self._owned_lock:
            owned, self._owned = list(self._owned.values()), {}
        for engine in owned:
            engine.shutdown(timeout)
        self._roots.clear()


async def _run_manager(root: _Root, *, task_status: TaskStatus[None]) -> None:
    """Run ``root``'s session manager until the server stops or ``root.manager_scope`` is
    cancelled (the root is dropped: its sessions end)."""
    import anyio

    with anyio.CancelScope() as scope:
        root.manager_scope = scope
        async with root.manager.run():
            task_status.started()
            await anyio.sleep_forever()


def _refuse(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    """A starlette response: a JSON-RPC error body (``id`` null) carrying ``message``."""
    from starlette.responses import JSONResponse

    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class HttpServer:
    """The endpoint in a thread: :meth:`start` binds ``127.0.0.1:port`` (0: an ephemeral port,
    then read :attr:`port`) and returns once it answers; :meth:`stop` ends it. ``token``: the
    bearer token (default: :func:`.http_access.load_token`); ``engine_factory``, ``lookup`` and
    ``on_request`` as :class:`McpHttpApp` takes them. Raises ConfigError from :meth:`start` when the port is
    taken or the token file is unsafe."""

    def __init__(self, port: int, *, engine_factory: Callable[[Settings], Engine] | None = None,
                 token: str | None = None, lookup: Callable[[str], Settings | None] = http_access.lookup,
                 on_request: Callable[[], object] | None = None) -> None:
        self._requested_port = port
        self._lookup = lookup
        self._on_request = on_request
        self._engine_factory = engine_factory
        self._token = token
        self.port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        import uvicorn

        token = self._token if self._token is not None else http_access.load_token()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((http_access.HOST, self._requested_port))
        except OSError as exc:
            sock.close()
            raise ConfigError(f"cannot listen on {http_access.HOST}:{self._requested_port} ({exc.strerror or exc}); "
                              "choose another port with --http-port or MARKDOWN_MEMORY_HTTP_PORT") from exc
        self.port = sock.getsockname()[1]
        app = McpHttpApp(self.port, token, engine_factory=self._engine_factory, lookup=self._lookup,
                         on_request=self._on_request)
        config = uvicorn.Config(app, lifespan="on", log_config=None, access_log=False,
                                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS, ws="none")
        self._server = uvicorn.Server(config)
        thread = self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                                 name="mcp-http", daemon=True)
        thread.start()
        if not _wait_until(lambda: self._server.started or not thread.is_alive(), START_TIMEOUT_SECONDS) \
                or not self._server.started:
            self.stop()
            raise ConfigError(f"the MCP HTTP endpoint on port {self.port} did not start; the log has details")
        log.debug("MCP over HTTP at http://%s:%d/roots/<id>/mcp", http_access.HOST, self.port)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and wait up to ``timeout`` seconds for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


def _wait_until(ready: Callable[[], bool], timeout: float) -> bool:
    """Poll ``ready`` until it is true or ``timeout`` seconds pass (uvicorn sets a flag, no event)."""
    import time

    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True

