"""Answers that must not mislead: a search on an index that holds nothing, read cursors outside
the section, and outline line ranges that agree with read_section."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from markdown_memory.config import Settings
from markdown_memory.errors import QueryError
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest


# -- search on an index that holds no document ------------------------------------------------
def test_search_on_a_never_indexed_root_says_so_instead_of_no_match(docs_root: Path, tmp_path: Path,
                                                                    cli_main) -> None:
    """Regression (tester): with --no-auto-index (MCP) or `search --no-refresh` (CLI) a search on a
    never-indexed root answered 'no confident match: nothing in the docs clearly answers this
    query', and an agent concluded the docs do not cover the topic."""
    runtime = Runtime(Settings.load(docs_root, tmp_path / "i.db", "none", auto_index=False))
    result = anyio.run(runtime.call, "search_docs", lambda: runtime.search_docs(SearchRequest("install on linux")))
    answer = json.loads(result.content[0].text)
    assert not result.is_error and answer["results"] == []
    assert "has not been indexed yet" in answer["message"] and "index_directory" in answer["message"]
    assert "no confident match" not in answer["message"]
    prefixed = runtime.search_docs(SearchRequest("install", path_prefix="ops"))
    assert "has not been indexed yet" in prefixed["message"]

    out = cli_main("--embedder", "none", "search", "--no-refresh", "install on linux", "--docs-dir", str(docs_root),
                   "--json", env={"MARKDOWN_MEMORY_DB": str(tmp_path / "cli.db")})
    answer = json.loads(out.stdout)
    assert out.returncode == 0 and answer["results"] == []
    assert "has not been indexed yet" in answer["message"] and "markdown-memory --embedder none index" in answer["message"]
    assert "no confident match" not in answer["message"]


def test_search_while_the_first_run_is_under_way_and_on_an_empty_root(docs_root: Path, make_engine,
                                                                     tmp_path: Path) -> None:
    engine = make_engine(docs_root, "none")
    engine._activity.announce()  # as while the first (background) run is about to parse
    assert engine.indexing
    assert "is being indexed" in engine.search(SearchRequest("install")).message
    engine._activity.withdraw()
    assert not engine.indexing
    empty = tmp_path / "empty"
    empty.mkdir()
    bare = make_engine(empty, "none")
    bare.index()
    message = bare.search(SearchRequest("install")).message
    assert "holds no documents" in message and "no confident match" not in message
    engine.index()
    missing = engine.search(SearchRequest("zzzunknownword"))
    assert missing.message.startswith("no confident match")  # an indexed root keeps the old answer


# -- read_section cursors ---------------------------------------------------------------------
def test_read_cursor_outside_the_section_is_an_error_naming_the_valid_range(docs_root: Path, make_engine) -> None:
    """Regression (tester): cursor=1000000000 answered start_line 1000000001, end_line 1000000000
    and empty content without an error; a negative cursor was silently read as 0."""
    engine = make_engine(docs_root, "none")
    engine.index()
    whole = engine.read("install.md", "Installation Guide > Linux")
    n = whole.content.count("\n") + 1
    last = engine.read("install.md", "Installation Guide > Linux", cursor=n - 1)
    assert last.start_line == last.end_line == whole.end_line and last.next_cursor is None
    for cursor in (n, 1_000_000_000, -1):
        with pytest.raises(QueryError) as refused:
            engine.read("install.md", "Installation Guide > Linux", cursor=cursor)
        message = str(refused.value)
        assert f"cursor {cursor}" in message and f"{n} line(s)" in message and f"0..{n - 1}" in message


def test_read_section_tool_answers_a_bad_cursor_as_a_tool_error(docs_root: Path, tmp_path: Path) -> None:
    runtime = Runtime(Settings.load(docs_root, tmp_path / "i.db", "none", auto_index=False))
    runtime.engine.index()
    result = anyio.run(runtime.call, "read_section",
                       lambda: runtime.answer("read_section", {"file_path": "install.md", "heading_path": "Installation Guide", "include_subsections": False, "cursor": 1_000_000_000}))
    body = json.loads(result.content[0].text)
    assert result.is_error and "valid cursors are 0.." in body["error"] and "internal" not in body["error"]


# -- outline line ranges ----------------------------------------------------------------------
def test_outline_end_line_is_what_read_section_returns(docs_root: Path, make_engine) -> None:
    """Regression (tester): outline's end_line included the subsections (e.g. 29-329) while
    read_section of that heading returned 29-104 with next_cursor null, and the same entry's
    tokens counted its own text only. end_line is now the section's own end, like tokens, and
    end_line_with_children covers the subsections, like tokens_with_children."""
    engine = make_engine(docs_root, "none")
    engine.index()
    outline = engine.outline("install.md")
    top = outline.headings[0]
    assert top.heading_path == "Installation Guide" and len(outline.headings) > 1
    for node in outline.headings:
        own = engine.read("install.md", node.heading_path)
        assert (node.start_line, node.end_line) == (own.start_line, own.end_line)
        assert own.next_cursor is None
        assert node.tokens == own.tokens
        full = engine.read("install.md", node.heading_path, include_subsections=True)
        assert node.end_line_with_children == full.end_line >= node.end_line
    assert top.end_line < top.end_line_with_children == outline.headings[-1].end_line


def test_outline_tool_description_names_both_line_ranges(tmp_path: Path) -> None:
    from mcp import Client

    from markdown_memory.mcp.server import build_server

    server = build_server(Runtime(Settings.load(tmp_path, tmp_path / "i.db", "none")))

    async def listed():  # tools/list through an in-process client, as an agent sees it
        async with Client(server) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t.description for t in anyio.run(listed)}
    described = tools["get_document_outline"]
    assert "end_line_with_children" in described and "tokens_with_children" in described
    assert "the lines read_section returns" in described
