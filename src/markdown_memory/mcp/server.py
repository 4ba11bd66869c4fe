"""MCP server over stdio: the tools of ``tools.TOOLS`` and the docs map resource (``docs://map``) on one docs root
(``markdown-memory`` with no command).

Start-up does no model load, no database work and no indexing, so the handshake is answered
at once; when it is done (the client's ``notifications/initialized``) the engine is created in
a thread and, with auto-index on, starts its catch-up index run (a new docs root gets indexed
without waiting for a tool call; see :mod:`markdown_memory.mcp.runtime`). Only the MCP SDK's public API is used:
the tools are ``Tool`` objects handed to ``MCPServer``, and a low-level ``Server`` whose
``tools/list`` and ``tools/call`` handlers call ``MCPServer.list_tools`` / ``call_tool`` runs
them on the guarded streams. stdout carries only JSON-RPC: at
start the real stdout is kept as a private file descriptor for the transport and fd 1 (plus
``sys.stdout``) is pointed at stderr (fd 0 likewise at the null device), so stray writes from any library, including native code
writing to fd 1, land on stderr. Input lines pass through :mod:`markdown_memory.mcp.wire`, which
repairs lone surrogate escapes and answers unparsable lines with a JSON-RPC error instead of
letting the SDK drop them unanswered. Tool bodies run in worker threads so the event loop stays
responsive. The server returns when stdin closes.

Every tool answers one compact JSON text block; errors are tool results with ``is_error`` set
and a JSON body ``{"error": sentence, "candidates"?: [...]}``, never a traceback.
"""

import io
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from .identity import INSTRUCTIONS as INSTRUCTIONS  # re-exported (mcp/__init__.py)
from .identity import SERVER_NAME as SERVER_NAME

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from .runtime import Runtime

log = logging.getLogger("markdown_memory.server")

#: the docs map resource (reading/map.py)
MAP_URI = "docs://map"


def __getattr__(name: str) -> Any:
    """``TOOL_NAMES``: the tools' names (``tools.TOOLS``), read on first use so that importing
    this module stays light (the tools' models import pydantic and the SDK)."""
    if name == "TOOL_NAMES":
        from .tools import TOOL_NAMES

        return TOOL_NAMES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")



def _protect_stdout() -> BinaryIO:
    """Keep a private duplicate of fd 1 for the protocol and point fd 1 and ``sys.stdout``
    at stderr. Returns the binary file the transport writes JSON-RPC to."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    wire_fd = os.dup(1)  # non-inheritable: child processes never get the protocol pipe
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(wire_fd, "wb", buffering=io.DEFAULT_BUFFER_SIZE)


def _protect_stdin() -> BinaryIO:
    """Keep a private duplicate of fd 0 for the protocol and point fd 0 at the null device, so
    nothing else (a library, a child process) can consume protocol bytes."""
    wire_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(wire_fd, "rb")


def run_server(settings: "Settings", startup_error: Exception | None = None) -> None:
    """Serve the MCP tools for ``settings.docs_root`` on stdin/stdout until stdin closes.

    Never writes anything but JSON-RPC to the real stdout. When stdin closes, running tool
    bodies and background work (catch-up indexing) are asked to stop; if they do not finish
    within a few seconds (a model still loading cannot be interrupted) the process exits
    without waiting for them. ``startup_error`` (e.g. a refused docs root) is returned by every
    tool call as an error result, after a normal handshake.
    """
    wire_out = _protect_stdout()
    wire_in = _protect_stdin()
    _single_threaded_blas()
    from .runtime import Runtime

    runtime = Runtime(settings, startup_error=startup_error)
    _stop_on_signals(runtime)
    if wire_in.isatty():  # a person started it by hand: say what it is waiting for
        log.warning("markdown-memory MCP server for %s: waiting for JSON-RPC on stdin (an MCP client starts "
                    "this command); press Ctrl-C to stop, or see `markdown-memory --help` for the CLI",
                    settings.docs_root)
    log.info("MCP server for %s (embedder %s, auto-index %s)", settings.docs_root,
             settings.embedder if settings.embedder_named else "not named: chosen from the index on first use",
             settings.auto_index)
    try:
        serve_streams(runtime, wire_in, wire_out)
    finally:
        if not runtime.shutdown(timeout=5.0):
            log.warning("background work did not stop in time; exiting without waiting for it")
            sys.stderr.flush()
            os._exit(0)


#: numpy's BLAS thread pool for the server process (read by OpenBLAS when numpy is imported).
#: Each search multiplies one query vector by the passage matrix (KNN, store/vectors.py). On
#: 2 cores, 38k x 384 float32, 200 runs: best 3.3 ms with two BLAS threads vs 4.5 ms with one,
#: but median 24 vs 15 ms with the cores busy (OpenBLAS threads wait for each other), so the
#: server keeps one.
SERVER_BLAS_THREADS = "1"


def _single_threaded_blas() -> None:
    """One BLAS thread unless the user set the variable (before numpy is first imported: the
    server's imports are lazy, so numpy is not loaded yet)."""
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, SERVER_BLAS_THREADS)


def _stop_on_signals(runtime: "Runtime") -> None:
    """Ctrl-C (SIGINT) and SIGTERM end the server at once: the stdin reader thread cannot be
    cancelled, so waiting for the event loop would wait for the next input line. Background
    work gets a few seconds to stop at a file boundary; the index tolerates a kill anyway (the
    run marker makes the next run resume)."""
    import signal

    def stop(signum: int, _frame: object) -> None:
        log.warning("stopping on %s", signal.Signals(signum).name)
        runtime.shutdown(timeout=3.0)
        sys.stderr.flush()
        os._exit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, stop)
        except (ValueError, OSError):  # not the main thread (tests driving run_server in-process)
            pass


def serve_streams(runtime: "Runtime", wire_in: BinaryIO, wire_out: BinaryIO) -> None:
    """Serve one MCP session for ``runtime`` on a pair of binary streams carrying JSON-RPC lines
    (the stdio framing), in this thread's own event loop, until ``wire_in`` reaches EOF; then
    ``runtime.request_stop()`` is called (a runtime on a shared engine leaves the engine alone).
    The stdio server passes its guarded stdin/stdout; the resident service a socket's two
    files (one session per connection thread). The streams may be closed when it returns."""
    import anyio

    anyio.run(_serve, build_server(runtime), wire_in, wire_out, runtime.request_stop)


async def _serve(server: Any, wire_in: BinaryIO, wire_out: BinaryIO, on_eof: Callable[[], None]) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from .wire import SerialWriter, WireLines

    lines = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace", newline=None))
    out = SerialWriter(io.TextIOWrapper(wire_out, encoding="utf-8", newline="\n"))
    stdin = WireLines(lines, reply=out.send, on_eof=on_eof)  # answers lines the SDK would drop
    async with stdio_server(stdin=stdin, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())


def build_server(runtime: "Runtime") -> Any:
    """The low-level MCP ``Server`` serving ``tools.TOOLS`` bound to ``runtime`` and the docs map:
    the SDK validates each call against the tool's input model; a refused call answers one
    sentence (``tools.refusal``), an unknown tool names the tools."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver import Context

    from .. import __version__
    from .runtime import CURRENT_SESSION
    from .tools import TOOL_NAMES, tool_set

    app, tools = tool_set(runtime)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await app.list_tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        name, arguments = params.name, params.arguments or {}
        if name not in tools:
            return _refuse(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
        headers = getattr(getattr(ctx, "request", None), "headers", None)  # streamable HTTP only
        session = CURRENT_SESSION.set(headers.get("mcp-session-id") if headers is not None else None)
        try:  # the request's context: index_directory sends progress notifications
            return await app.call_tool(name, arguments, Context(request_context=ctx, mcp_server=app))
        except Exception as exc:  # noqa: BLE001 - the SDK's ToolError: a refusal or a failure, one sentence
            return _refuse(_tool_error(name, arguments, exc))
        finally:
            CURRENT_SESSION.reset(session)

    async def initialized(ctx: Any, params: Any) -> None:
        runtime.start_catch_up()  # returns at once: the engine is made in a thread

    list_resources, read_resource = _map_resource(runtime)
    server = Server(SERVER_NAME, version=__version__, title="Markdown Memory", instructions=INSTRUCTIONS,
                    on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
                    on_read_resource=read_resource)
    server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    return server


def _refuse(message: str) -> Any:
    """A tool error result carrying ``{"error": message}``."""
    import mcp_types as types

    from .runtime import dumps

    log.info("refused tool call: %s", message)
    return types.CallToolResult(content=[types.TextContent(type="text", text=dumps({"error": message}))],
                                is_error=True)


def _tool_error(name: str, arguments: Mapping[str, object], exc: Exception) -> str:
    """The sentence of the SDK's error ``exc`` for a call of ``name``: the refused arguments
    (``tools.refusal``), else an internal error (logged with its traceback)."""
    from pydantic import ValidationError

    from .tools import refusal

    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        return refusal(name, arguments, cause)
    log.error("%s failed", name, exc_info=exc)
    return f"internal error in {name} ({exc}); the server's stderr log has details"


def _map_resource(runtime: "Runtime") -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The ``resources/list`` and ``resources/read`` handlers of the docs map (``docs://map``)."""
    import mcp_types as types

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        from .. import messages

        return types.ListResourcesResult(resources=[types.Resource(
            uri=MAP_URI, name="docs-map", title="Docs map", description=messages.MAP_RESOURCE,
            mime_type="text/markdown")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        import anyio
        from mcp.shared.exceptions import MCPError

        if params.uri != MAP_URI:
            raise MCPError(-32002, f"unknown resource {params.uri!r}; the server has {MAP_URI}")
        text = await anyio.to_thread.run_sync(runtime.docs_map)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=MAP_URI, mime_type="text/markdown",
                                                                             text=text)])

    return list_resources, read_resource
