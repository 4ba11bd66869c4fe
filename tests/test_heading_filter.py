"""The ``heading`` search filter (``--heading`` / search_docs ``heading``): only sections whose
breadcrumb contains the text (ASCII case ignored), so a heading's name selects it and every
section below it, and ``A > B`` that part of the tree. Applied before ranking, through the CLI
and the MCP tool alike, from the one request schema (``request.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.config import Settings
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest
from markdown_memory.search.filters import clean_heading


@pytest.fixture
def runtime(docs_root: Path, tmp_path: Path):
    rt = Runtime(Settings.load(docs_root, tmp_path / "mcp.db", "none", auto_index=False))
    rt.engine.index()
    yield rt
    rt.shutdown()


def _paths(answer: dict) -> list[str]:
    return [h["heading_path"] for h in answer["results"]]


def test_cli_heading_keeps_only_sections_under_a_matching_heading(docs_root: Path, tmp_path: Path, cli_main) -> None:
    env = {"MARKDOWN_MEMORY_DB": str(tmp_path / "cli.db")}
    wide = json.loads(cli_main("--embedder", "none", "search", "install", "--docs-dir", str(docs_root), "--top-k", "10",
                               "--json", env=env).stdout)
    assert any("linux" not in p.lower() for p in _paths(wide)), "the query alone finds sections elsewhere"
    out = cli_main("--embedder", "none", "search", "install", "--docs-dir", str(docs_root), "--heading", "LINUX",
                   "--top-k", "10", "--json", env=env)
    assert out.returncode == 0, out.stderr
    narrowed = _paths(json.loads(out.stdout))
    assert narrowed == ["Installation Guide > Linux"]
    text = cli_main("--embedder", "none", "search", "install", "--docs-dir", str(docs_root),
                    "--heading", "installation guide>linux", env=env)
    assert "Installation Guide > Linux" in text.stdout and "macOS" not in text.stdout


def test_a_breadcrumb_prefix_selects_the_heading_and_every_section_below_it(runtime: Runtime) -> None:
    answer = runtime.answer("search_docs", {"query": "install linux macos windows uninstall", "top_k": 20,
                                            "heading": "Installation Guide"})
    assert set(_paths(answer)) >= {"Installation Guide > Linux", "Installation Guide > macOS"}
    assert all(p.startswith("Installation Guide") for p in _paths(answer))


def test_mcp_heading_filter_and_its_no_match_sentence(runtime: Runtime) -> None:
    answer = runtime.answer("search_docs", {"query": "timeout", "heading": "network"})
    assert _paths(answer) and all("network" in p.lower() for p in _paths(answer))
    empty = runtime.answer("search_docs", {"query": "timeout", "heading": "no such heading"})
    assert empty["results"] == []
    assert empty["message"].startswith("filter heading matched nothing: no indexed section matches heading "
                                       "'no such heading'")
    together = runtime.answer("search_docs", {"query": "timeout", "heading": "Linux", "kind": "table"})
    assert together["results"] == [] or all("linux" in p.lower() for p in _paths(together))


def test_the_mcp_schema_offers_heading_from_the_request_schema(runtime: Runtime) -> None:
    from markdown_memory.mcp.tools import tool_set

    _app, tools = tool_set(runtime)
    prop = tools["search_docs"].parameters["properties"]["heading"]
    assert prop["anyOf"][0] == {"maxLength": 2000, "type": "string"} and "breadcrumb" in prop["description"]
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        runtime.answer("search_docs", {"query": "x", "heading": 3})


@pytest.mark.parametrize(("raw", "clean"), [("Guide>Install", "Guide > Install"), ("  a   b ", "a b"),
                                            ("Guide >", "Guide"), (" > ", None), ("", None), (None, None)])
def test_a_heading_filter_is_spelled_as_a_breadcrumb(raw: str | None, clean: str | None) -> None:
    assert clean_heading(raw) == clean


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_hit_contains_the_heading_text(runtime: Runtime, data: st.DataObject) -> None:
    """Property: for any piece of an indexed breadcrumb, in any ASCII case, each hit's breadcrumb
    holds that piece, and the section it was taken from is among the hits of its own words."""
    crumbs = sorted({s for d in runtime.answer("list_documents", {})["documents"]
                     for s in [h["heading_path"] for h in runtime.answer("get_document_outline", {"file_path": d["path"]})["headings"]]})
    crumb = data.draw(st.sampled_from(crumbs))
    start = data.draw(st.integers(0, len(crumb) - 1))
    piece = crumb[start:data.draw(st.integers(start + 1, len(crumb)))].strip()
    if not clean_heading(piece):
        return
    piece = data.draw(st.sampled_from([piece, piece.upper(), piece.lower()]))
    answer = runtime.engine.search(SearchRequest(crumb.split(" > ")[-1], heading=piece, top_k=50))
    wanted = clean_heading(piece)
    assert wanted is not None
    assert all(wanted.lower() in h.heading_path.lower() for h in answer.results)
