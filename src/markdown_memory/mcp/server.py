"""MCP server over stdio: seven tools and the docs map resource (``docs://map``) on one docs root
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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from .identity import INSTRUCTIONS as INSTRUCTIONS  # re-exported (mcp/__init__.py)
from .identity import SERVER_NAME as SERVER_NAME

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from .runtime import Runtime

log = logging.getLogger("markdown_memory.server")

#: the docs map resource (reading/map.py)
MAP_URI = "docs://map"

TOOL_NAMES = ("search_docs", "read_section", "get_document_outline", "get_links", "list_documents",
              "find_drift", "index_directory")



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
    """The low-level MCP ``Server`` serving the seven tools bound to ``runtime`` (see module
    docstring): argument problems answer one compact sentence instead of pydantic's report,
    and unknown tools or arguments are refused by name."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from .. import __version__
    from .runtime import dumps
    from .tools import argument_problem, tool_set

    app, tools = tool_set(runtime)

    def refuse(message: str) -> types.CallToolResult:
        log.info("refused tool call: %s", message)
        return types.CallToolResult(content=[types.TextContent(type="text", text=dumps({"error": message}))],
                                    is_error=True)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await app.list_tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        from mcp.server.mcpserver import Context
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import ValidationError

        name, arguments = params.name, params.arguments or {}
        tool = tools.get(name)
        if tool is None:
            return refuse(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
        allowed = tool.parameters.get("properties", {})
        extra = sorted(set(arguments) - set(allowed))
        if extra:
            return refuse(f"unknown argument(s) {', '.join(map(repr, extra))} for {name}; "
                          f"accepted: {', '.join(allowed)}")
        problem = argument_problem(name, tool.parameters, arguments)
        if problem:
            return refuse(problem)
        try:
            # the request's context, so index_directory can send progress notifications
            return await app.call_tool(name, arguments, Context(request_context=ctx, mcp_server=app))
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                log.error("%s failed", name, exc_info=exc)
                return refuse(f"internal error in {name} ({exc}); the server's stderr log has details")
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in cause.errors(include_url=False)
            )
            return refuse(f"invalid arguments for {name}: {problems}")

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

    async def initialized(ctx: Any, params: Any) -> None:
        runtime.start_catch_up()  # returns at once: the engine is made in a thread

    server = Server(SERVER_NAME, version=__version__, title="Markdown Memory", instructions=INSTRUCTIONS,
                    on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
                    on_read_resource=read_resource)
    server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    return server
