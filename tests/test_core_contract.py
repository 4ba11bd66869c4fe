"""The redesigned core's promises, through the public API: typed answers, one freshness
policy with one wording for every adapter, and agents and people told the same things."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import pytest

from markdown_memory import Engine, Freshness, SearchAnswer, Settings
from markdown_memory.errors import QueryError, SectionNotFoundError, describe_error
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", docs)
    return docs


def _engine(root: Path, **kw: object) -> Engine:
    return Engine(Settings.load(root, root.parent / "index.db", "none"), **kw)  # type: ignore[arg-type]


def _touch(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    later = time.time() + 5  # a different mtime even on a coarse clock
    os.utime(path, (later, later))


def test_answers_are_frozen_models_whose_to_dict_is_the_wire_format(root: Path) -> None:
    eng = _engine(root)
    eng.index()
    answer = eng.search(SearchRequest("ACME_CACHE_DIR"))
    assert isinstance(answer, SearchAnswer)
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.results[0].score = 1.0  # type: ignore[misc]
    person, agent = answer.to_dict(), answer.to_dict(agent=True)
    assert list(person) == ["results", "confidence", "p_answer", "keyword_only", "message", "index_status"]
    assert "database" in person["index_status"] and "database" not in agent["index_status"]
    first = answer.results[0]
    assert first.content is not None
    assert "preview" in person["results"][0] and "preview" not in agent["results"][0]


def test_a_prefix_without_documents_says_keyword_only_like_its_status(root: Path) -> None:
    # regression: the early answer for an empty prefix claimed keyword_only=false under --embedder none
    eng = _engine(root)
    eng.index()
    answer = eng.search(SearchRequest("cache", path_prefix="nothing/here"))
    assert answer.results == ()
    assert answer.keyword_only is True and answer.index_status is not None and answer.index_status.keyword_only
    assert "no indexed documents under 'nothing/here'" in (answer.message or "")


def test_stale_hits_get_one_wording_whatever_the_policy_and_refresh_fixes_them(root: Path) -> None:
    eng = _engine(root)
    eng.index()
    _touch(root / "configuration.md", "\n\nACME_CACHE_DIR appears once more.\n")
    flagged = eng.search(SearchRequest("ACME_CACHE_DIR"), freshness=Freshness.FLAG)
    stale = [h for h in flagged.results if h.stale]
    assert stale and {h.stale for h in stale} == {"modified"}
    assert (flagged.message or "").startswith(f"{len(stale)} hit(s) marked stale: their file changed on disk")
    assert f"run `markdown-memory --embedder none index {root}` to refresh the index (`markdown-memory read` reads" in (
        flagged.message or "")  # a person is told CLI commands (naming the root), not MCP tools
    assert "index_directory" not in (flagged.message or "")
    fresh = eng.search(SearchRequest("ACME_CACHE_DIR"), freshness=Freshness.REFRESH)
    assert not any(h.stale for h in fresh.results)
    assert "marked stale" not in (fresh.message or "")
    assert any("appears once more" in (h.content or "") for h in fresh.results)


def test_the_mcp_runtime_and_the_engine_say_the_same_about_stale_hits(root: Path) -> None:
    settings = Settings.load(root, root.parent / "index.db", "none", auto_index=False)
    _engine(root).index()
    _touch(root / "configuration.md", "\n\nACME_CACHE_DIR again.\n")
    runtime = Runtime(settings)
    try:
        over_mcp = runtime.search_docs(SearchRequest("ACME_CACHE_DIR"))
        direct = Engine(settings, background=True).search(SearchRequest("ACME_CACHE_DIR"), freshness=Freshness.FLAG).to_dict(
            agent=True)  # the server's engine: background mode, and its reader is an agent
    finally:
        runtime.shutdown(1)
    assert over_mcp["message"] == direct["message"] and "marked stale" in over_mcp["message"]
    assert [h.get("stale") for h in over_mcp["results"]] == [h.get("stale") for h in direct["results"]]


def test_list_past_the_end_says_so_to_agents_too(root: Path) -> None:
    eng = _engine(root)
    eng.index()
    page = eng.list_documents(offset=50)
    assert page.documents == () and page.total == 5
    assert page.message == "offset 50 is past the end: 5 documents in all; pass an offset below 5"


def test_one_error_mapping_for_both_adapters() -> None:
    err = SectionNotFoundError("no section 'Solaris' in install.md", ["Install > Linux"], ambiguous=False)
    report = describe_error(err)
    assert report.tool_payload("read_section") == {"error": str(err), "candidates": ["Install > Linux"]}
    assert report.cli_payload() == {"error": {"message": str(err), "type": "section_not_found",
                                              "candidates": ["Install > Linux"], "ambiguous": False}}
    bug = describe_error(RuntimeError("boom"))
    assert bug.cli_payload()["error"]["type"] == "internal"
    assert "internal error in search_docs (RuntimeError: boom)" in bug.tool_payload("search_docs")["error"]
    assert describe_error(QueryError("query is empty")).kind == "query"


def test_an_injected_embedder_is_used_without_loading_a_model(root: Path, minilm: object) -> None:
    eng = Engine(Settings.load(root, root.parent / "m.db", "minilm"), embedder=minilm)  # type: ignore[arg-type]
    eng.index()
    assert eng._loader.embedder is minilm
    answer = eng.search(SearchRequest("where does the cache live"))
    assert not answer.keyword_only and any("vector" in h.matched_by for h in answer.results)


def test_a_huge_list_offset_is_past_the_end_not_an_internal_error(root: Path) -> None:
    # regression (new-user trial): offset 10**30 overflowed SQLite's integers (OverflowError)
    eng = _engine(root)
    eng.index()
    page = eng.list_documents(offset=10**30)
    assert page.documents == () and page.total == 5 and "is past the end" in (page.message or "")
    runtime = Runtime(Settings.load(root, root.parent / "index.db", "none", auto_index=False))
    try:
        # through the tool, the input model bounds the offset (tools.COUNT_MAX); its largest is past the end too
        assert "is past the end" in runtime.answer("list_documents", {"offset": 1_000_000_000})["message"]
    finally:
        runtime.shutdown(1)


def test_status_counts_every_changed_file_and_lists_the_first_twenty(tmp_path: Path) -> None:
    # regression (new-user trial): 30 deleted files were reported as "20 indexed file(s) changed"
    docs = tmp_path / "many"
    docs.mkdir()
    for i in range(30):
        (docs / f"page{i:02}.md").write_text(f"# Page {i}\n\nword{i}\n", encoding="utf-8")
    eng = Engine(Settings.load(docs, tmp_path / "many.db", "none"))
    eng.index()
    for i in range(30):
        (docs / f"page{i:02}.md").unlink()
    status = eng.status()
    assert len(status.changed_files) == 20
    assert (status.message or "").startswith("30 indexed file(s) changed on disk")


def test_a_hybrid_search_over_partly_embedded_passages_says_so(root: Path, minilm: object) -> None:
    # regression (new-user trial): after a stopped run most vectors were missing and the search
    # answer said nothing (only index_status did)
    eng = Engine(Settings.load(root, root.parent / "p.db", "minilm"), embedder=minilm)  # type: ignore[arg-type]
    eng.index()
    assert "partly keyword-only" not in (eng.search(SearchRequest("where does the cache live")).message or "")
    _touch(root / "configuration.md", "\n\n## Retention\n\nOld cache entries are pruned after thirty days.\n")
    eng.refresh()  # keyword index only: the new passages wait for vectors
    answer = eng.search(SearchRequest("how long are cache entries kept"))
    pending = answer.index_status.counts.pending_vectors if answer.index_status else 0
    assert not answer.keyword_only and pending > 0
    assert (answer.message or "").startswith(f"search is partly keyword-only: {pending} of ")
    assert "markdown-memory --embedder minilm index" in (answer.message or "")
