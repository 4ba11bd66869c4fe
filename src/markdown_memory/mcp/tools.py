"""The MCP tools, declared once each: :data:`TOOLS` is a list of :class:`ToolSpec` (name, title,
read-only or not, description, the strict input model, the engine call), from which the tool
names, the JSON schemas agents see and the dispatch all derive (``build_tools``). A new tool is
one ``ToolSpec`` here and the engine method it calls.

The SDK validates every call against the input model (``Tool`` with ``FuncMetadata``, the
SDK's public classes): each model is strict and closed (``additionalProperties: false``), so
a misspelt argument is refused, and nothing is coerced: an ``integer`` is a JSON number with no
fractional part (``3``; ``3.0`` too, as JSON Schema counts it an integer) within the schema's
range, a ``boolean`` is ``true`` or ``false``; strings (``"3"``, ``"true"``), fractions,
``1e20`` and values out of range are refused. :func:`refusal` words the SDK's validation error
as one sentence naming the argument, the accepted values and what was sent. Offsets and
cursors go up to ``COUNT_MAX``. ``search_docs``'s input model is generated from
``request.SearchRequest`` (:func:`request_model`).
"""

# No ``from __future__ import annotations``: pydantic reads the models' annotations at run time.
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import BeforeValidator, ConfigDict, Field, ValidationError, create_model

from ..models import LIST_PAGE_SIZE
from ..request import HEADING_MAX, PATH_MAX, SearchRequest, specs

if TYPE_CHECKING:  # pragma: no cover
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool

    from .progress import ToolProgress
    from .runtime import Runtime

#: the largest list_documents offset / read_section cursor accepted (documents or lines)
COUNT_MAX = 1_000_000_000


def _integral(value: object) -> object:
    """A float without fraction as its int (JSON Schema's integer); anything else unchanged,
    for the strict check to refuse."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


#: an integer argument: strict, but 3.0 counts as 3
Whole = BeforeValidator(_integral)


class Input(ArgModelBase):
    """The base of every tool's input model: strict types, no unknown argument."""

    model_config = ConfigDict(strict=True, extra="forbid")


def request_model() -> type[Input]:
    """``search_docs``'s input model, one argument per ``SearchRequest`` field (its type,
    bounds, choices and description: the schema in ``request.py``)."""
    fields: dict[str, Any] = {}
    for f in specs():
        spec = f.spec
        constraints: dict[str, Any] = {k: v for k, v in (("ge", spec.low), ("le", spec.high), ("min_length", spec.min_length),
                                         ("max_length", spec.max_length)) if v is not None}
        kind: Any = f.type
        if f.type is tuple:
            kind = list[Annotated[str, Field(max_length=spec.item_max)]] if spec.item_max else list[str]
        elif spec.choices:
            kind = Literal[spec.choices]
        if f.optional or f.type is tuple:
            kind = kind | None
        extra = (Whole,) if f.type is int else ()
        default = ... if f.name == "query" else (None if f.type is tuple else f.default)
        fields[f.name] = (Annotated[kind, Field(description=spec.doc, **constraints), *extra], default)
    model: type[Input] = create_model("search_docsArguments", __base__=Input, **fields)
    return model


def search_request(args: Any) -> SearchRequest:
    """The ``SearchRequest`` of a validated ``search_docs`` input."""
    values = {f.name: getattr(args, f.name) for f in specs()}
    return SearchRequest(values.pop("query"), **{k: v for k, v in values.items() if v is not None})


_FILE = "Document path relative to the docs root (or a unique suffix)."


class ReadInput(Input):
    model_config = ConfigDict(title="read_sectionArguments")
    file_path: Annotated[str, Field(min_length=1, max_length=PATH_MAX, description=(
        "Document path relative to the docs root (or a unique suffix such as 'install.md')."))]
    heading_path: Annotated[str, Field(max_length=HEADING_MAX, description=(
        "Breadcrumb such as 'Guide > Install > Linux', as returned by search_docs or get_document_outline; a "
        "unique trailing part or a close spelling also works. May be omitted when file_path is a link target "
        "such as 'note#Heading' or '[[note#Heading]]'."))] = ""
    include_subsections: Annotated[bool, Field(description="Also return the text of every subsection below it.")] = False
    cursor: Annotated[int | None, Field(ge=0, le=COUNT_MAX, description=(
        "next_cursor from a previous read_section answer, to continue a long section.")), Whole] = None


class OutlineInput(Input):
    model_config = ConfigDict(title="get_document_outlineArguments")
    file_path: Annotated[str, Field(min_length=1, max_length=PATH_MAX, description=_FILE)]
    max_depth: Annotated[int | None, Field(ge=1, le=6, description=(
        "Deepest heading level to list (1-6); all levels when omitted.")), Whole] = None


class LinksInput(Input):
    model_config = ConfigDict(title="get_linksArguments")
    file_path: Annotated[str, Field(min_length=1, max_length=PATH_MAX, description=(
        "Document path relative to the docs root (or a unique suffix, or a note name)."))]
    offset: Annotated[int, Field(ge=0, le=COUNT_MAX, description=(
        "Skip this many links of each list (use next_offset from the previous page).")), Whole] = 0


class ListInput(Input):
    model_config = ConfigDict(title="list_documentsArguments")
    directory: Annotated[str | None, Field(max_length=PATH_MAX, description=(
        "Only documents under this folder, relative to the docs root."))] = None
    offset: Annotated[int, Field(ge=0, le=COUNT_MAX, description=(
        "Skip this many documents (use next_offset from the previous page).")), Whole] = 0
    tags: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=32, description=(
        "Only documents carrying one of these tags (or a tag nested in one)."))] = None


class DriftInput(Input):
    model_config = ConfigDict(title="find_driftArguments")


class IndexInput(Input):
    model_config = ConfigDict(title="index_directoryArguments")
    directory: Annotated[str | None, Field(max_length=PATH_MAX, description=(
        "Only re-index this folder inside the docs root; the whole root when omitted."))] = None
    force: Annotated[bool, Field(description="Re-parse and re-embed every file even if unchanged (slow).")] = False


#: what a tool body gets: the runtime (engine, freshness policy, session memory), the validated
#: input, and the progress reporter of the call (None when the client asked for none)
Run = Callable[["Runtime", Any, "ToolProgress | None"], dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: ``name``, ``title``, ``writes`` (False: read-only), the ``description``
    agents read, the strict ``input`` model, and ``run``: the engine call, answering the tool's
    JSON object (raising a ``MarkdownMemoryError`` for an error result)."""

    name: str
    title: str
    writes: bool
    description: str
    input: type[Input]
    run: Run


#: The tools, in the order ``tools/list`` gives them.
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("search_docs", "Search project docs", False, (
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
), request_model(),
             lambda rt, a, _p: rt.search_docs(search_request(a))),
    ToolSpec("read_section", "Read one doc section", False, (
        "Read one section of a Markdown document verbatim, by file_path and heading_path (from search_docs or "
        "get_document_outline), or by a link target as file_path alone ('note#Heading', '[[note#Heading]]'). Returns content with start_line/end_line and tokens. When next_cursor is "
        "not null, call again with cursor=next_cursor for the rest (a cursor past the section's last line is "
        "an error). A heading that does not resolve lists candidates: retry with one of them."
), ReadInput,
             lambda rt, a, _p: rt.engine.read(a.file_path, a.heading_path, include_subsections=a.include_subsections,
                                              cursor=a.cursor or 0, freshness=rt.freshness).to_dict()),
    ToolSpec("get_document_outline", "Outline of one document", False, (
        "List the heading tree of one Markdown document (no bodies): each heading's heading_path, level, "
        "start_line, end_line and tokens of its own text (the lines read_section returns), and "
        "end_line_with_children and tokens_with_children including its subsections (what read_section with "
        "include_subsections returns), plus the title, aliases, tags, description, dates and front-matter keys. Use it to pick the one section "
        "to read_section instead of reading the file."
), OutlineInput,
             lambda rt, a, _p: rt.engine.outline(a.file_path, a.max_depth, freshness=rt.freshness).to_dict()),
    ToolSpec("get_links", "Links and backlinks of one document", False, (
        "List one Markdown document's outgoing links (wikilinks, embeds, relative Markdown links) and its "
        "backlinks (links in other documents that lead to it), each with the section it sits in "
        "(heading_path, line). An outgoing link has status resolved / no_heading / ambiguous / unresolved and, "
        "when found, target_path and target_heading_path to pass to read_section (an ambiguous one lists its "
        "candidates). 50 of each per page; "
        "continue with offset=next_offset."
), LinksInput,
             lambda rt, a, _p: rt.engine.links(a.file_path, offset=a.offset, freshness=rt.freshness).to_dict()),
    ToolSpec("list_documents", "List indexed documents", False, (
        "List indexed Markdown documents (optionally under a folder or with given tags): path, title, sections, "
        f"tokens, modified, tags; {LIST_PAGE_SIZE} per page, continue with offset=next_offset. Also returns index_status."
), ListInput,
             lambda rt, a, _p: rt.engine.list_documents(a.directory, offset=a.offset, limit=LIST_PAGE_SIZE,
                                                        freshness=rt.freshness, tags=a.tags).to_dict(agent=True)),
    ToolSpec("find_drift", "Docs sections the code contradicts", True, (
        "List the doc sections that name CLI flags, environment variables, repository paths or functions "
        "the code no longer has (the docs may be stale there): each with file_path, heading_path, "
        "start_line and the missing names with their lines and kinds. The code side is the git work tree "
        "holding the docs root, read once and then kept current. search_docs hits carry the same names "
        "as drift once this has run."
), DriftInput,
             lambda rt, a, _p: rt.engine.drift(agent=True).to_dict()),
    ToolSpec("index_directory", "Update the docs index", True, (
        "Bring the index up to date for the docs root (or one folder in it): only changed files are "
        "re-read. Call it when index_status.message asks for it or after editing docs. Returns counts, "
        "warnings and files that could not be indexed. If a run is already in progress it answers at "
        "once with in_progress=true."
), IndexInput,
             lambda rt, a, p: rt.index_directory(a.directory, a.force, p)),
)
SPECS = {spec.name: spec for spec in TOOLS}
TOOL_NAMES = tuple(SPECS)


def _schema(spec: ToolSpec) -> dict[str, Any]:
    """The JSON schema of ``spec``'s input (closed: ``additionalProperties`` false, last)."""
    schema = spec.input.model_json_schema(by_alias=True)
    schema.pop("additionalProperties", None)
    title = schema.pop("title")
    schema["type"] = schema.pop("type")  # the SDK's key order, which the wire fixtures pin
    return {**schema, "title": title, "additionalProperties": False}


def tool_set(runtime: "Runtime") -> "tuple[MCPServer, dict[str, Tool]]":
    """(the SDK's ``MCPServer`` holding the tools bound to ``runtime``, the tools by name)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
    from mcp_types import ToolAnnotations

    from .. import __version__
    from .identity import INSTRUCTIONS, SERVER_NAME

    tools: dict[str, Tool] = {}
    for spec in TOOLS:
        notes = ToolAnnotations(read_only_hint=not spec.writes, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)
        tools[spec.name] = Tool(fn=_body(runtime, spec), name=spec.name, title=spec.title,
                                description=spec.description, parameters=_schema(spec),
                                fn_metadata=FuncMetadata(arg_model=spec.input), is_async=True,
                                context_kwarg="ctx", annotations=notes)
    app = MCPServer(name=SERVER_NAME, title="Markdown Memory", version=__version__, instructions=INSTRUCTIONS,
                    tools=list(tools.values()))
    return app, tools


def _body(runtime: "Runtime", spec: ToolSpec) -> Callable[..., Any]:
    """The SDK's tool function of ``spec``: gets the validated arguments (and the request
    context ``ctx``), runs ``spec.run`` in a worker thread (``Runtime.call``)."""

    async def body(ctx: Any, **arguments: Any) -> Any:
        import anyio.lowlevel

        from .progress import ToolProgress

        try:
            ctx.request_context  # noqa: B018 - present when served over a session, not on a direct call
            progress: ToolProgress | None = ToolProgress(ctx.report_progress, anyio.lowlevel.current_token())
        except ValueError:
            progress = None
        args = spec.input.model_construct(**arguments)
        return await runtime.call(spec.name, lambda: spec.run(runtime, args, progress))

    return body


def refusal(tool: str, arguments: Mapping[str, object], error: ValidationError) -> str:
    """The one sentence refusing ``arguments`` of ``tool`` that its input model did not accept
    (``error``: the SDK's validation): unknown arguments by name; an integer or boolean argument
    with the accepted range and what was sent; else each problem as pydantic words it."""
    from .. import messages

    spec = SPECS[tool]
    props = _schema(spec).get("properties", {})
    problems = error.errors(include_url=False)
    extra = sorted({str(e["loc"][0]) for e in problems if e["type"] == "extra_forbidden" and e["loc"]})
    if extra:
        return f"unknown argument(s) {', '.join(map(repr, extra))} for {tool}; accepted: {', '.join(props)}"
    wrong = {str(e["loc"][0]) for e in problems if e["loc"]}
    for name, value in arguments.items():
        prop = props.get(name)
        if name not in wrong or not isinstance(prop, dict):
            continue
        branches = prop.get("anyOf", [prop])
        nullable = any(b.get("type") == "null" for b in branches)
        integer = next((b for b in branches if b.get("type") == "integer"), None)
        if integer is not None:
            low, high = integer.get("minimum"), integer.get("maximum")
            expected = "a whole number" + (f" from {low}" if low is not None else "") + (
                f" to {high}" if high is not None else "") + (" or null" if nullable else "")
            return messages.invalid_argument(tool, name, expected, _shown(value))
        if any(b.get("type") == "boolean" for b in branches):
            return messages.invalid_argument(tool, name, "true or false", _shown(value))
        shape = _shape(branches, nullable)
        if shape is not None:
            return messages.invalid_argument(tool, name, shape, _shown(value))
    listed = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in problems)
    return f"invalid arguments for {tool}: {listed}"


def _shape(branches: list[dict[str, Any]], nullable: bool) -> str | None:
    """What a string or array argument must be, in words ("a non-empty string of at most 4096
    characters", "a list of strings"), from its JSON schema ``branches``; None for another type."""
    text = next((b for b in branches if b.get("type") == "string"), None)
    items = next((b for b in branches if b.get("type") == "array"), None)
    if text is not None:
        low, high = text.get("minLength", 0), text.get("maxLength")
        shape = ("a non-empty string" if low == 1 else f"a string of at least {low} characters" if low else "a string") + (
            f" of at most {high} characters" if high is not None else "")
    elif items is not None:
        most = items.get("maxItems")
        shape = "a list of strings" + (f" (at most {most})" if most is not None else "")
    else:
        return None
    return shape + (" or null" if nullable else "")


def _shown(value: object) -> str:
    """``value`` as JSON, at most 60 characters (infinities as Python spells them)."""
    shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, float) or math.isfinite(value) else str(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
