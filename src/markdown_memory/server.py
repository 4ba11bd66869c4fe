"""MCP server over stdio: five tools on one docs root (``markdown-memory`` with no command).

Start-up does no model load, no database work and no indexing: the engine is created on the
first tool call (see :mod:`markdown_memory.server_runtime`). stdout carries only JSON-RPC: at
start the real stdout is kept as a private file descriptor for the transport and fd 1 (plus
``sys.stdout``) is pointed at stderr (fd 0 likewise at the null device), so stray writes from any library, including native code
writing to fd 1, land on stderr. Input lines pass through :mod:`markdown_memory.server_wire`, which
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
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO, Callable

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings
    from .server_runtime import Runtime

log = logging.getLogger("markdown_memory.server")

SERVER_NAME = "markdown-memory"

INSTRUCTIONS = (
    "Project docs are indexed by Markdown section. Never read whole .md files: "
    "1) search_docs(query) first; hits carry file_path, heading_path and the section text "
    "(later hits are pointers). 2) get_document_outline(file_path) to see a document's headings. "
    "3) read_section(file_path, heading_path) to read one section. "
    "Every search answer has index_status: keyword_only=true means semantic search is off "
    "(use exact words); indexing=true means results may be incomplete; message, when set, "
    "says what to do (e.g. call index_directory)."
)

TOOL_NAMES = ("search_docs", "read_section", "get_document_outline", "list_documents", "index_directory")

_PATH_MAX = 4096
_HEADING_MAX = 2000


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
    import anyio

    from .server_runtime import Runtime

    runtime = Runtime(settings, startup_error=startup_error)
    server = build_server(runtime)
    log.info("MCP server for %s (embedder %s, auto-index %s)", settings.docs_root, settings.embedder,
             settings.auto_index)
    try:
        anyio.run(_serve, server, wire_in, wire_out, runtime.request_stop)
    finally:
        if not runtime.shutdown(timeout=5.0):
            log.warning("background work did not stop in time; exiting without waiting for it")
            sys.stderr.flush()
            os._exit(0)


async def _serve(server: Any, wire_in: BinaryIO, wire_out: BinaryIO, on_eof: Callable[[], None]) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from .server_wire import SerialWriter, WireLines

    lines = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace", newline=None))
    out = SerialWriter(io.TextIOWrapper(wire_out, encoding="utf-8", newline="\n"))
    stdin = WireLines(lines, reply=out.send, on_eof=on_eof)  # answers lines the SDK would drop
    async with stdio_server(stdin=stdin, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())


def build_server(runtime: "Runtime") -> Any:
    """The configured ``MCPServer`` with the five tools bound to ``runtime``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field, ValidationError

    from . import __version__
    from .server_runtime import dumps

    def refuse(message: str) -> CallToolResult:
        log.info("refused tool call: %s", message)
        return CallToolResult(content=[TextContent(type="text", text=dumps({"error": message}))], is_error=True)

    class Server(MCPServer):
        """Argument problems answer one compact sentence instead of pydantic's report."""

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is None:
                return refuse(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
            allowed = tool.parameters.get("properties", {})
            extra = sorted(set(arguments or {}) - set(allowed))
            if extra:
                return refuse(f"unknown argument(s) {', '.join(map(repr, extra))} for {name}; "
                              f"accepted: {', '.join(allowed)}")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                    for err in cause.errors(include_url=False)
                )
                return refuse(f"invalid arguments for {name}: {problems}")

    server = Server(name=SERVER_NAME, title="Markdown Memory", version=__version__, instructions=INSTRUCTIONS)
    reader = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)
    writer = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)

    async def call(name: str, fn: Callable[[], dict[str, Any]]) -> CallToolResult:
        return await runtime.call(name, fn)

    async def search_docs(
        query: Annotated[str, Field(min_length=1, max_length=10_000,
                                    description="What you want to know: words, a phrase, an identifier or an error message.")],
        top_k: Annotated[int, Field(ge=1, le=20, description="Maximum number of hits (1-20).")] = 5,
        path_prefix: Annotated[str | None, Field(max_length=_PATH_MAX,
                                                 description="Only documents under this folder or path, relative to the docs root.")] = None,
        max_tokens: Annotated[int, Field(ge=200, le=20_000,
                                         description="Budget for section text in the answer (200-20000 tokens).")] = 2000,
    ) -> CallToolResult:
        return await call("search_docs", lambda: runtime.search_docs(query, top_k, path_prefix, max_tokens))

    async def read_section(
        file_path: Annotated[str, Field(min_length=1, max_length=_PATH_MAX,
                                        description="Document path relative to the docs root (or a unique suffix such as 'install.md').")],
        heading_path: Annotated[str, Field(max_length=_HEADING_MAX,
                                           description="Breadcrumb such as 'Guide > Install > Linux', as returned by search_docs or get_document_outline; a unique trailing part or a close spelling also works.")],
        include_subsections: Annotated[bool, Field(description="Also return the text of every subsection below it.")] = False,
        cursor: Annotated[int | None, Field(ge=0, description="next_cursor from a previous read_section answer, to continue a long section.")] = None,
    ) -> CallToolResult:
        return await call("read_section",
                          lambda: runtime.read_section(file_path, heading_path, include_subsections, cursor))

    async def get_document_outline(
        file_path: Annotated[str, Field(min_length=1, max_length=_PATH_MAX,
                                        description="Document path relative to the docs root (or a unique suffix).")],
        max_depth: Annotated[int | None, Field(ge=1, le=6, description="Deepest heading level to list (1-6); all levels when omitted.")] = None,
    ) -> CallToolResult:
        return await call("get_document_outline", lambda: runtime.outline(file_path, max_depth))

    async def list_documents(
        directory: Annotated[str | None, Field(max_length=_PATH_MAX,
                                               description="Only documents under this folder, relative to the docs root.")] = None,
        offset: Annotated[int, Field(ge=0, description="Skip this many documents (use next_offset from the previous page).")] = 0,
    ) -> CallToolResult:
        return await call("list_documents", lambda: runtime.list_documents(directory, offset))

    async def index_directory(
        directory: Annotated[str | None, Field(max_length=_PATH_MAX,
                                               description="Only re-index this folder inside the docs root; the whole root when omitted.")] = None,
        force: Annotated[bool, Field(description="Re-parse and re-embed every file even if unchanged (slow).")] = False,
    ) -> CallToolResult:
        return await call("index_directory", lambda: runtime.index_directory(directory, force))

    server.add_tool(
        search_docs, name="search_docs", title="Search project docs", annotations=reader, structured_output=False,
        description=(
            "Search the project's Markdown docs (keyword + semantic) and get the best matching sections. "
            "Use this first, before opening any .md file. Each hit has file_path, heading_path, start_line, "
            "end_line, tokens, score and content (the verbatim section text) while the total stays within "
            "max_tokens; hits past the budget are pointers with a short preview: fetch one with read_section. "
            "confidence 'none' means nothing clearly matched. A hit with stale (modified/missing/unreadable) comes "
            "from a file changed since it was indexed: its text may be outdated and message says how to refresh. "
            "index_status.keyword_only=true: prefer exact terms; index_status.message says how to fix the index."
        ),
    )
    server.add_tool(
        read_section, name="read_section", title="Read one doc section", annotations=reader, structured_output=False,
        description=(
            "Read one section of a Markdown document verbatim, by file_path and heading_path (from search_docs or "
            "get_document_outline). Returns content with start_line/end_line and tokens. When next_cursor is "
            "not null, call again with cursor=next_cursor for the rest (a cursor past the section's last line is "
            "an error). A heading that does not resolve lists candidates: retry with one of them."
        ),
    )
    server.add_tool(
        get_document_outline, name="get_document_outline", title="Outline of one document", annotations=reader,
        structured_output=False,
        description=(
            "List the heading tree of one Markdown document (no bodies): each heading's heading_path, level, "
            "start_line, end_line and tokens of its own text (the lines read_section returns), and "
            "end_line_with_children and tokens_with_children including its subsections (what read_section with "
            "include_subsections returns), plus the title and front-matter keys. Use it to pick the one section "
            "to read_section instead of reading the file."
        ),
    )
    server.add_tool(
        list_documents, name="list_documents", title="List indexed documents", annotations=reader,
        structured_output=False,
        description=(
            "List indexed Markdown documents (optionally under a folder): path, title, sections, tokens, "
            "modified; 200 per page, continue with offset=next_offset. Also returns index_status."
        ),
    )
    server.add_tool(
        index_directory, name="index_directory", title="Update the docs index", annotations=writer,
        structured_output=False,
        description=(
            "Bring the index up to date for the docs root (or one folder in it): only changed files are "
            "re-read. Call it when index_status.message asks for it or after editing docs. Returns counts, "
            "warnings and files that could not be indexed. If a run is already in progress it answers at "
            "once with in_progress=true."
        ),
    )
    for name in TOOL_NAMES:
        server._tool_manager.get_tool(name).parameters["additionalProperties"] = False
    return server
