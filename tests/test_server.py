"""The MCP server end to end: a real subprocess over stdio, driven by the SDK's own client.

One server (``--embedder minilm``) serves a copy of tests/fixtures/guide for the whole module;
it is indexed through the ``index_directory`` tool, then every tool is checked on real
sections, including the errors an agent will hit (path escapes, a missing heading, bad
arguments).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import link_derived

FIXTURES = Path(__file__).parent / "fixtures"
TOOLS = {"search_docs", "read_section", "get_document_outline", "get_links", "list_documents", "find_drift",
         "index_directory"}


def server_env(root: Path, db: Path, home: Path, embedder: str, **extra: str) -> dict[str, str]:
    """Everything the server subprocess needs (the SDK client passes only a minimal env)."""
    env = {
        "MARKDOWN_MEMORY_DOCS_DIR": str(root),
        "MARKDOWN_MEMORY_DB": str(db),
        "MARKDOWN_MEMORY_EMBEDDER": embedder,
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        # a model cache of its own that shares the session's derived int8 graph
        "MARKDOWN_MEMORY_MODEL_CACHE": str(link_derived(home / "models")),
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        # the in-process server, never a relay to a resident service (conftest switches it off for
        # this process; the SDK client does not pass the environment on)
        "MARKDOWN_MEMORY_SERVICE": os.environ.get("MARKDOWN_MEMORY_SERVICE", "off"),
        "MARKDOWN_MEMORY_RUNTIME_DIR": os.environ.get("MARKDOWN_MEMORY_RUNTIME_DIR", ""),
    }
    env.update(extra)
    return env


class McpClient:
    """A synchronous wrapper over the SDK's stdio client + ClientSession (for pytest)."""

    def __init__(self, env: dict[str, str], stderr_path: Path, args: tuple[str, ...] = ()) -> None:
        from anyio.from_thread import start_blocking_portal
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=sys.executable, args=["-m", "markdown_memory.cli", *args], env=env)
        self._errlog = open(stderr_path, "w", encoding="utf-8")
        self._portal_cm = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._stdio = self.portal.wrap_async_context_manager(stdio_client(params, errlog=self._errlog))
        read, write = self._stdio.__enter__()
        self._session_cm = self.portal.wrap_async_context_manager(ClientSession(read, write, read_timeout_seconds=120))
        self.session = self._session_cm.__enter__()
        self.init = self.portal.call(self.session.initialize)

    def list_tools(self) -> list[Any]:
        return self.portal.call(self.session.list_tools).tools

    def call_raw(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.session.call_tool, name, arguments)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> tuple[bool, Any]:
        """(is_error, parsed JSON body) of one tool call; the body must be one JSON text block."""
        result = self.call_raw(name, arguments or {})
        assert len(result.content) == 1 and result.content[0].type == "text"
        assert result.structured_content is None  # no duplicate structured copy
        text = result.content[0].text
        try:
            body = json.loads(text)
        except json.JSONDecodeError:
            body = text  # SDK-level argument validation errors are plain text
        return bool(result.is_error), body

    def close(self) -> None:
        try:
            self._session_cm.__exit__(None, None, None)
            self._stdio.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._errlog.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """(client, docs root, stderr path): a minilm server over a fresh copy of the guide, indexed
    through the index_directory tool."""
    base = tmp_path_factory.mktemp("mcp")
    root = base / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    (root / "notes.txt").write_text("not markdown\n", encoding="utf-8")
    stderr_path = base / "stderr.log"
    client = McpClient(server_env(root, base / "index.db", base / "home", "minilm",
                                  MARKDOWN_MEMORY_AUTO_INDEX="0"), stderr_path)
    is_error, report = client.call("index_directory")
    assert not is_error, report
    client.index_report = report  # type: ignore[attr-defined]
    yield client, root, stderr_path
    client.close()


def _lines(root: Path, rel: str, start: int, end: int) -> str:
    return "\n".join(root.joinpath(rel).read_text(encoding="utf-8").split("\n")[start - 1 : end])


def test_seven_tools_with_titles_bounds_and_annotations(served) -> None:
    client, _root, _ = served
    tools = {t.name: t for t in client.list_tools()}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.title and len(tool.description or "") > 80, name
        assert tool.annotations is not None, name
        assert tool.output_schema is None, name
        expect_reader = name not in ("index_directory", "find_drift")  # both write the index
        assert tool.annotations.read_only_hint is expect_reader, name
    idx = tools["index_directory"].annotations
    assert idx.destructive_hint is False and idx.idempotent_hint is True
    props = tools["search_docs"].input_schema["properties"]
    assert (props["top_k"]["minimum"], props["top_k"]["maximum"]) == (1, 50)
    assert (props["max_tokens"]["minimum"], props["max_tokens"]["maximum"]) == (500, 20000)
    assert "maxLength" not in props["query"] and "100,000 characters" in props["query"]["description"]
    assert tools["search_docs"].input_schema["required"] == ["query"]
    instructions = client.init.instructions or ""
    head = instructions[:400]
    assert "search_docs" in head and "read_section" in head and "index_status" in instructions


def test_index_directory_reports_the_fixture_corpus(served) -> None:
    client, root, _ = served
    report = client.index_report
    on_disk = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    assert report["added"] == len(on_disk)
    assert report["vectors_embedded"] > 0 and report["keyword_only"] is False
    # idempotent: a second run changes nothing
    is_error, again = client.call("index_directory", {})
    assert not is_error
    assert again["added"] == 0 and again["updated"] == 0 and again["unchanged"] == len(on_disk)


def test_search_docs_returns_verbatim_sections_within_budget(served) -> None:
    client, root, _ = served
    is_error, answer = client.call("search_docs", {"query": "how long does the client wait for an answer before giving up"})
    assert not is_error, answer
    hits = answer["results"]
    assert hits and hits[0]["heading_path"] == "Configuration > Network timeouts"
    for hit in hits:
        for key in ("file_path", "heading_path", "start_line", "end_line", "tokens", "score"):
            assert key in hit
        if hit.get("content") is not None:
            assert hit["content"] == _lines(root, hit["file_path"], hit["start_line"], hit["end_line"])
    status = answer["index_status"]
    assert status["documents"] == len(list(root.rglob("*.md")))
    assert status["keyword_only"] is False and status["indexing"] is False
    assert set(status) >= {"root", "sections", "coverage", "changed_files", "failures", "embedder", "message"}


def test_search_docs_small_budget_turns_later_hits_into_pointers(served) -> None:
    client, _root, _ = served
    is_error, answer = client.call("search_docs", {"query": "install upgrade release", "top_k": 10, "max_tokens": 500})
    assert not is_error
    hits = answer["results"]
    assert len(hits) >= 2
    assert sum(h["tokens"] for h in hits if h.get("content") is not None) <= 500
    pointers = [h for h in hits if h.get("content") is None]
    # a 500-token budget cannot hold every hit in full: later hits come as pointers, and those
    # that do not fit even so are counted in the message
    assert pointers or "left out to fit 500 tokens" in (answer["message"] or ""), answer["message"]
    assert all(len(h["preview"]) <= 100 for h in pointers)


@pytest.mark.parametrize("max_tokens", [500, 600, 900, 1200])
@pytest.mark.parametrize("query", ["install upgrade release", "how long does the client wait", "configuration"])
def test_search_docs_whole_answer_fits_max_tokens(served, query: str, max_tokens: int) -> None:
    """The whole JSON an agent receives (hits, pointers, message, index_status) fits the budget it
    asked for, not only the section text (issue 13: 27% of answers exceeded it, up to 3.3x)."""
    from markdown_memory.text import count_tokens

    client, _root, _ = served
    result = client.call_raw("search_docs", {"query": query, "top_k": 10, "max_tokens": max_tokens})
    text = result.content[0].text
    assert not result.is_error, text
    assert count_tokens(text) <= max_tokens
    assert json.loads(text)["results"], "one hit always stays"


def test_search_docs_path_prefix_limits_results(served) -> None:
    client, _root, _ = served
    is_error, answer = client.call("search_docs", {"query": "server", "path_prefix": "ops"})
    assert not is_error
    assert answer["results"] and all(h["file_path"].startswith("ops/") for h in answer["results"])


def test_read_section_verbatim_by_suffix_and_fragment(served) -> None:
    client, root, _ = served
    is_error, section = client.call("read_section", {"file_path": "troubleshooting.md", "heading_path": "backups"})
    assert not is_error, section
    assert section["file_path"] == "ops/troubleshooting.md"
    assert section["heading_path"] == "Troubleshooting > Backups"
    assert section["content"] == _lines(root, "ops/troubleshooting.md", section["start_line"], section["end_line"])
    assert section["tokens"] > 0 and section["next_cursor"] is None


def test_read_section_with_subsections_covers_children(served) -> None:
    client, root, _ = served
    is_error, whole = client.call("read_section", {"file_path": "install.md", "heading_path": "Installation Guide",
                                                   "include_subsections": True})
    assert not is_error
    assert "## Linux" in whole["content"] and "## Uninstall" in whole["content"]
    is_error, own = client.call("read_section", {"file_path": "install.md", "heading_path": "Installation Guide"})
    assert not is_error and "## Linux" not in own["content"]


def test_get_document_outline_lists_headings_without_bodies(served) -> None:
    client, root, _ = served
    is_error, outline = client.call("get_document_outline", {"file_path": "configuration.md"})
    assert not is_error
    paths = [h["heading_path"] for h in outline["headings"]]
    on_disk = [line.lstrip("# ").strip() for line in root.joinpath("configuration.md").read_text().splitlines()
               if line.startswith("## ")]
    assert paths[0] == "Configuration" and [p.split(" > ")[-1] for p in paths[1:]] == on_disk
    assert outline["front_matter_keys"], "configuration.md starts with front matter"
    top = outline["headings"][0]
    assert top["tokens_with_children"] >= sum(h["tokens"] for h in outline["headings"][1:])
    assert top["end_line"] < top["end_line_with_children"] == outline["headings"][-1]["end_line_with_children"]
    assert "content" not in json.dumps(outline)
    is_error, shallow = client.call("get_document_outline", {"file_path": "configuration.md", "max_depth": 1})
    assert not is_error and [h["level"] for h in shallow["headings"]] == [1]


def test_list_documents_with_directory_and_status(served) -> None:
    client, root, _ = served
    is_error, listing = client.call("list_documents", {})
    assert not is_error
    assert [d["path"] for d in listing["documents"]] == sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    assert listing["next_offset"] is None and "index_status" in listing
    is_error, ops = client.call("list_documents", {"directory": "ops"})
    assert not is_error and {d["path"] for d in ops["documents"]} == {"ops/release-notes.md", "ops/troubleshooting.md"}


@pytest.mark.parametrize("file_path", ["../x.md", "/etc/passwd", "ops/../../outside.md"])
def test_path_escapes_are_refused_naming_the_root(served, file_path: str) -> None:
    client, root, _ = served
    for tool, args in (("read_section", {"file_path": file_path, "heading_path": "x"}),
                       ("get_document_outline", {"file_path": file_path})):
        is_error, body = client.call(tool, args)
        assert is_error, body
        assert "outside the docs root" in body["error"] and str(root) in body["error"]


def test_missing_heading_lists_candidates(served) -> None:
    client, _root, _ = served
    is_error, body = client.call("read_section", {"file_path": "install.md", "heading_path": "Installation Guide > Solaris"})
    assert is_error
    assert "Solaris" in body["error"]
    assert body["candidates"] and all(c.startswith("Installation Guide") for c in body["candidates"])


def test_non_markdown_and_unknown_documents_are_errors(served) -> None:
    client, _root, _ = served
    is_error, body = client.call("get_document_outline", {"file_path": "notes.txt"})
    assert is_error and body["error"]
    is_error, body = client.call("get_document_outline", {"file_path": "nope.md"})
    assert is_error and "list_documents" in body["error"]


def test_bad_arguments_are_rejected_with_one_sentence(served) -> None:
    client, _root, _ = served
    for args, word in (({"query": "x", "top_k": 0}, "top_k"), ({"query": "x", "max_tokens": 50}, "max_tokens"),
                       ({"query": ""}, "query"), ({}, "query"), ({"query": "x", "bogus": 1}, "bogus")):
        is_error, body = client.call("search_docs", args)
        assert is_error, args
        assert word in body["error"] and "\n" not in body["error"] and "Traceback" not in body["error"]
    is_error, body = client.call("search_docs", {"query": "   "})
    assert is_error and "empty" in body["error"]
    is_error, body = client.call("read_everything", {})
    assert is_error and "search_docs" in body["error"]
    tools = {t.name: t for t in client.list_tools()}
    assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())


def test_a_query_over_100000_characters_is_searched_by_its_start_as_on_the_cli(served) -> None:
    """Trial finding: the CLI searched a 104 KB query (the engine cut it to 10,000 characters,
    silently) while the MCP tool refused anything over 10,000 with the SDK's schema error. One
    rule now (engine.search): its first 10,000 characters are searched and the message says so."""
    client, root, _ = served
    query = "which port must be free for the server to start " + "padding " * 13_000
    is_error, body = client.call("search_docs", {"query": query})
    assert not is_error, body
    assert body["results"] and body["message"].startswith(
        f"the query is {len(query):,} characters long; only its first 100,000 were searched")
    short_error, short = client.call("search_docs", {"query": query[:100_000]})
    assert not short_error and "characters long" not in (short.get("message") or "")
    assert [h["heading_path"] for h in short["results"]] == [h["heading_path"] for h in body["results"]]


def test_index_directory_refuses_a_directory_outside_the_root(served) -> None:
    client, root, _ = served
    is_error, body = client.call("index_directory", {"directory": "../"})
    assert is_error and str(root) in body["error"]


def test_server_stderr_has_no_traceback_for_expected_errors(served) -> None:
    _client, _root, stderr_path = served
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8", errors="replace")
