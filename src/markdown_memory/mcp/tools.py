"""The seven MCP tools: their signatures (the JSON schemas agents see), descriptions and
annotations, each bound to one :class:`~markdown_memory.mcp.runtime.Runtime` method.

Built with the SDK's public ``Tool.from_function`` and handed to ``MCPServer(tools=...)``;
every schema is closed (``additionalProperties: false``) so a misspelt argument is refused.

Argument policy (numbers and switches): an argument must have the JSON type its schema names,
and lie in the schema's range. An ``integer`` is a JSON number with no fractional part (``3``;
``3.0`` too, as JSON Schema counts it an integer) from ``minimum`` to ``maximum``; a
``boolean`` is ``true`` or ``false``. Strings (``"3"``, ``"true"``), booleans given for
numbers, fractions, ``1e20`` and values out of range are refused with one sentence naming the
argument, the accepted values and what was sent (:func:`argument_problem`, checked by the
server before the SDK converts anything): nothing is silently coerced or clamped. Offsets and
cursors go up to ``COUNT_MAX``.
"""

# No ``from __future__ import annotations``: the SDK reads the tool functions' annotations at
# run time, and they name objects imported inside _query_tools and _document_tools.
from typing import TYPE_CHECKING, Annotated, Any, Literal

from ..models import LIST_PAGE_SIZE

if TYPE_CHECKING:  # pragma: no cover
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool

    from .runtime import Runtime

_PATH_MAX = 4096
_HEADING_MAX = 2000
#: the largest list_documents offset / read_section cursor accepted (documents or lines)
COUNT_MAX = 1_000_000_000


def argument_problem(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The one sentence refusing an integer or boolean argument of ``arguments`` that does not
    meet the policy in the module docstring under the tool's JSON ``schema`` (its
    ``properties``, as the SDK generated them; ``anyOf`` with ``null`` for optional ones), or
    None when every such argument is fine. Other types (strings) are left to the SDK's
    validation."""
    import json
    import math

    from .. import messages

    for name, value in arguments.items():
        prop = schema.get("properties", {}).get(name)
        if not isinstance(prop, dict):
            continue
        branches = prop.get("anyOf", [prop])
        types = {b.get("type") for b in branches if isinstance(b, dict)}
        if value is None and "null" in types:
            continue
        shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, float) or math.isfinite(value) else str(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        integer = next((b for b in branches if b.get("type") == "integer"), None)
        if integer is not None:
            low, high = integer.get("minimum"), integer.get("maximum")
            expected = "a whole number" + (f" from {low}" if low is not None else "") + (
                f" to {high}" if high is not None else "") + (" or null" if "null" in types else "")
            whole = (isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, float) and math.isfinite(value) and value.is_integer())
            if not whole or (low is not None and value < low) or (high is not None and value > high):
                return messages.invalid_argument(tool, name, expected, shown)
        elif "boolean" in types and not isinstance(value, bool):
            return messages.invalid_argument(tool, name, "true or false", shown)
    return None


#: Each tool's title, whether it writes (the index), and the description agents read; in the
#: order ``tools/list`` gives them. A new tool: a line here, its function in ``_query_tools`` or
#: ``_document_tools`` (the schema), its body in ``runtime.Runtime`` (one engine call).
_TOOLS: dict[str, tuple[str, bool, str]] = {
    "search_docs": ("Search project docs", False, (
        "Search the project's Markdown docs (keyword + semantic) and get the best matching sections. "
        "Use this first, before opening any .md file. Filters (tags, kind, lang, path_prefix) apply before "
        "ranking, e.g. kind='code' with lang='bash' for a shell snippet. Each hit has file_path, heading_path, start_line, "
        "end_line, tokens, score and content (the verbatim section text) while the total stays within "
        "max_tokens; hits past the budget are pointers with a short preview: fetch one with read_section. "
        "A pointer with already_sent=true is a section whose text this session already received in full "
        "(pass resend=true to get such texts again). "
        "confidence 'none' means nothing clearly matched. A hit with stale (modified/missing/unreadable) comes "
        "from a file changed since it was indexed: its text may be outdated and message says how to refresh. "
        "index_status.keyword_only=true: prefer exact terms; index_status.message says how to fix the index."
    )),
    "read_section": ("Read one doc section", False, (
        "Read one section of a Markdown document verbatim, by file_path and heading_path (from search_docs or "
        "get_document_outline), or by a link target as file_path alone ('note#Heading', '[[note#Heading]]'). Returns content with start_line/end_line and tokens. When next_cursor is "
        "not null, call again with cursor=next_cursor for the rest (a cursor past the section's last line is "
        "an error). A heading that does not resolve lists candidates: retry with one of them."
    )),
    "get_document_outline": ("Outline of one document", False, (
        "List the heading tree of one Markdown document (no bodies): each heading's heading_path, level, "
        "start_line, end_line and tokens of its own text (the lines read_section returns), and "
        "end_line_with_children and tokens_with_children including its subsections (what read_section with "
        "include_subsections returns), plus the title, aliases, tags, description, dates and front-matter keys. Use it to pick the one section "
        "to read_section instead of reading the file."
    )),
    "get_links": ("Links and backlinks of one document", False, (
        "List one Markdown document's outgoing links (wikilinks, embeds, relative Markdown links) and its "
        "backlinks (links in other documents that lead to it), each with the section it sits in "
        "(heading_path, line). An outgoing link has status resolved / no_heading / ambiguous / unresolved and, "
        "when found, target_path and target_heading_path to pass to read_section (an ambiguous one lists its "
        "candidates). 50 of each per page; "
        "continue with offset=next_offset."
    )),
    "list_documents": ("List indexed documents", False, (
        "List indexed Markdown documents (optionally under a folder or with given tags): path, title, sections, "
        f"tokens, modified, tags; {LIST_PAGE_SIZE} per page, continue with offset=next_offset. Also returns index_status."
    )),
    "find_drift": ("Docs sections the code contradicts", True, (
        "List the doc sections that name CLI flags, environment variables, repository paths or functions "
        "the code no longer has (the docs may be stale there): each with file_path, heading_path, "
        "start_line and the missing names with their lines and kinds. The code side is the git work tree "
        "holding the docs root, read once and then kept current. search_docs hits carry the same names "
        "as drift once this has run."
    )),
    "index_directory": ("Update the docs index", True, (
        "Bring the index up to date for the docs root (or one folder in it): only changed files are "
        "re-read. Call it when index_status.message asks for it or after editing docs. Returns counts, "
        "warnings and files that could not be indexed. If a run is already in progress it answers at "
        "once with in_progress=true."
    )),
}


def tool_set(runtime: "Runtime") -> "tuple[MCPServer, dict[str, Tool]]":
    """(the ``MCPServer`` holding the tools, the tools by name)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import ToolAnnotations

    from .. import __version__
    from .identity import INSTRUCTIONS, SERVER_NAME

    reader = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)
    writer = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)
    functions = {**_query_tools(runtime), **_document_tools(runtime)}
    tools: dict[str, Tool] = {}
    for name, (title, writes, description) in _TOOLS.items():
        made = Tool.from_function(functions[name], name=name, title=title, description=description,
                                  annotations=writer if writes else reader, structured_output=False)
        made.parameters["additionalProperties"] = False
        tools[name] = made
    app = MCPServer(name=SERVER_NAME, title="Markdown Memory", version=__version__, instructions=INSTRUCTIONS,
                    tools=list(tools.values()))
    return app, tools


def _query_tools(runtime: "Runtime") -> dict[str, Any]:
    """``search_docs`` and ``index_directory``, bound to ``runtime`` (their signatures are the
    JSON schemas)."""
    from mcp.server.mcpserver import Context
    from mcp_types import CallToolResult
    from pydantic import Field

    from ..config import MAX_QUERY_CHARS
    from ..models import (
        DEFAULT_MAX_TOKENS,
        DEFAULT_TOP_K,
        MAX_MAX_TOKENS,
        MAX_TOP_K,
        MIN_MAX_TOKENS,
        SearchRequest,
    )

    async def search_docs(
        query: Annotated[str, Field(min_length=1, description=(
            "What you want to know: words, a phrase, an identifier or an error message (a query longer "
            f"than {MAX_QUERY_CHARS:,} characters is searched by its first {MAX_QUERY_CHARS:,}; the answer's message says so)."))],
        top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K,
                                    description=f"Maximum number of hits (1-{MAX_TOP_K}).")] = DEFAULT_TOP_K,
        path_prefix: Annotated[str | None, Field(max_length=_PATH_MAX,
                                                 description="Only documents under this folder or path, relative to the docs root.")] = None,
        max_tokens: Annotated[int, Field(ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS, description=(
            f"Budget for the whole answer ({MIN_MAX_TOKENS}-{MAX_MAX_TOKENS} tokens; {MIN_MAX_TOKENS} is what the "
            "smallest answer needs: one pointer, the message and index_status)."))] = DEFAULT_MAX_TOKENS,
        tags: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(
            max_length=32, description="Only documents carrying these tags (front matter or inline #tags); "
                                       "a tag also matches its nested tags ('project' matches 'project/alpha').")] = None,
        tags_mode: Annotated[Literal["any", "all"], Field(
            description="'any': a document with one of the tags; 'all': with every one.")] = "any",
        kind: Annotated[Literal["code", "table", "list", "prose"] | None, Field(
            description="Only sections holding a block of this kind; the preview shows that block.")] = None,
        lang: Annotated[str | None, Field(max_length=50, description=(
            "Only sections holding a fenced code block in this language ('bash' also matches sh, shell, "
            "console); implies kind 'code'."))] = None,
        resend: Annotated[bool, Field(description="Send the text of sections already sent in full earlier in this session again (default false: they come as pointers with already_sent=true).")] = False,
    ) -> CallToolResult:
        return await runtime.call("search_docs", lambda: runtime.search_docs(SearchRequest(
            query, top_k=top_k, max_tokens=max_tokens, path_prefix=path_prefix, tags=tags, tags_mode=tags_mode,
            kind=kind, lang=lang, resend=resend)))

    async def index_directory(
        ctx: Context,  # injected by the SDK, not in the schema
        directory: Annotated[str | None, Field(max_length=_PATH_MAX,
                                               description="Only re-index this folder inside the docs root; the whole root when omitted.")] = None,
        force: Annotated[bool, Field(description="Re-parse and re-embed every file even if unchanged (slow).")] = False,
    ) -> CallToolResult:
        import anyio.lowlevel

        from .runtime import ToolProgress

        try:
            ctx.request_context  # noqa: B018 - present when served over a session, not on a direct call
            progress = ToolProgress(ctx.report_progress, anyio.lowlevel.current_token())
        except ValueError:
            progress = None
        return await runtime.call("index_directory", lambda: runtime.index_directory(directory, force, progress))

    return {"search_docs": search_docs, "index_directory": index_directory}


def _document_tools(runtime: "Runtime") -> dict[str, Any]:
    """``read_section``, ``get_document_outline``, ``get_links``, ``list_documents`` and
    ``find_drift``, bound to ``runtime``."""
    from mcp_types import CallToolResult
    from pydantic import Field

    async def read_section(
        file_path: Annotated[str, Field(min_length=1, max_length=_PATH_MAX,
                                        description="Document path relative to the docs root (or a unique suffix such as 'install.md').")],
        heading_path: Annotated[str, Field(max_length=_HEADING_MAX,
                                           description="Breadcrumb such as 'Guide > Install > Linux', as returned by search_docs or get_document_outline; a unique trailing part or a close spelling also works. May be omitted when file_path is a link target such as 'note#Heading' or '[[note#Heading]]'.")] = "",
        include_subsections: Annotated[bool, Field(description="Also return the text of every subsection below it.")] = False,
        cursor: Annotated[int | None, Field(ge=0, le=COUNT_MAX, description="next_cursor from a previous read_section answer, to continue a long section.")] = None,
    ) -> CallToolResult:
        return await runtime.call("read_section",
                          lambda: runtime.read_section(file_path, heading_path, include_subsections, cursor))

    async def get_document_outline(
        file_path: Annotated[str, Field(min_length=1, max_length=_PATH_MAX,
                                        description="Document path relative to the docs root (or a unique suffix).")],
        max_depth: Annotated[int | None, Field(ge=1, le=6, description="Deepest heading level to list (1-6); all levels when omitted.")] = None,
    ) -> CallToolResult:
        return await runtime.call("get_document_outline", lambda: runtime.outline(file_path, max_depth))

    async def get_links(
        file_path: Annotated[str, Field(min_length=1, max_length=_PATH_MAX,
                                        description="Document path relative to the docs root (or a unique suffix, or a note name).")],
        offset: Annotated[int, Field(ge=0, le=COUNT_MAX, description="Skip this many links of each list (use next_offset from the previous page).")] = 0,
    ) -> CallToolResult:
        return await runtime.call("get_links", lambda: runtime.get_links(file_path, offset))

    async def list_documents(
        directory: Annotated[str | None, Field(max_length=_PATH_MAX,
                                               description="Only documents under this folder, relative to the docs root.")] = None,
        offset: Annotated[int, Field(ge=0, le=COUNT_MAX, description="Skip this many documents (use next_offset from the previous page).")] = 0,
        tags: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(
            max_length=32, description="Only documents carrying one of these tags (or a tag nested in one).")] = None,
    ) -> CallToolResult:
        return await runtime.call("list_documents", lambda: runtime.list_documents(directory, offset, tags))

    async def find_drift() -> CallToolResult:
        return await runtime.call("find_drift", runtime.find_drift)

    return {"read_section": read_section, "get_document_outline": get_document_outline, "get_links": get_links,
            "list_documents": list_documents, "find_drift": find_drift}
