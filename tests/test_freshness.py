"""Reads and searches answer from the files as they are now, not as they were indexed."""

from __future__ import annotations

import os
import time

import pytest

from markdown_memory.errors import DocumentNotFoundError
from markdown_memory.models import SearchRequest


class FakeClock:
    """A monotonic clock that moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def bump(path):
    """Give a rewritten file a clearly newer mtime (coarse filesystem clocks)."""
    later = time.time_ns() + 2_000_000_000
    os.utime(path, ns=(later, later))


@pytest.fixture
def engine(docs_root, make_engine):
    eng = make_engine(docs_root, embedder="none")
    eng.index()
    return eng


def test_read_after_an_edit_returns_the_new_text_and_lines(engine, docs_root):
    path = docs_root / "install.md"
    text = path.read_text().replace("## Windows\n", "Inserted line.\n\nAnother.\n\n## Windows\n")
    path.write_text(text.replace("MSI installer", "Windows installer package"))
    bump(path)
    section = engine.read("install.md", "Windows")
    assert "Windows installer package" in section.content and "MSI" not in section.content
    lines = path.read_text().split("\n")
    assert lines[section.start_line - 1] == "## Windows"


def test_read_of_a_deleted_file_is_not_found_not_cached_text(engine, docs_root):
    (docs_root / "cli.md").unlink()
    with pytest.raises(DocumentNotFoundError, match="no longer indexed|no indexed document"):
        engine.read("cli.md", "Flags")


def test_new_file_is_readable_and_searchable_without_a_full_run(engine, docs_root):
    new = docs_root / "ops" / "upgrade.md"
    new.write_text("# Upgrade\n\n## Zero downtime\n\nDrain one node at a time with `acme drain`.\n")
    bump(new.parent)
    assert engine.refresh() is not None  # the folder's mtime changed: the new file is found
    assert engine.search(SearchRequest("acme drain")).results[0].file_path == "ops/upgrade.md"
    brand_new = docs_root / "faq.md"
    brand_new.write_text("# FAQ\n\n## Licence\n\nMIT.\n")
    assert "MIT." in engine.read("faq.md", "Licence").content  # on-demand, no probe needed


def test_refresh_after_edit_replaces_search_content(engine, docs_root):
    path = docs_root / "ops" / "troubleshooting.md"
    path.write_text(path.read_text().replace("14 days", "30 days"))
    bump(path)
    report = engine.refresh()
    assert report is not None and report.updated == 1
    hit = engine.search(SearchRequest("nightly backups kept")).results[0]
    assert "30 days" in hit.content and "14 days" not in hit.content
    assert engine.refresh() is None  # nothing stale any more (and the probe is cached)


def test_unreadable_file_reports_why_on_read(engine, docs_root, monkeypatch):
    target = docs_root / "configuration.md"
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(target) else real_access(p, m))
    with pytest.raises(DocumentNotFoundError, match="permission denied"):
        engine.read("configuration.md", "Logging")


def test_server_tools_answer_from_edited_files_at_once(docs_root, tmp_path):
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    runtime = Runtime(Settings.load(docs_root, tmp_path / "srv.db", "none"))
    runtime.engine.index()
    runtime.search_docs(SearchRequest("nightly backups"))
    path = docs_root / "ops" / "troubleshooting.md"
    path.write_text(path.read_text().replace("Nightly", "Hourly"))
    bump(path)
    time.sleep(0.6)  # the stat probe runs at most every REFRESH_TTL_SECONDS (an agent's next call)
    answer = runtime.search_docs(SearchRequest("hourly backups"))
    hit = answer["results"][0]
    assert hit["file_path"] == "ops/troubleshooting.md" and "Hourly" in hit["content"]
    assert "stale" not in hit
    section = runtime.answer("read_section", {"file_path": "ops/troubleshooting.md", "heading_path": "Backups", "include_subsections": False, "cursor": None})
    assert "Hourly" in section["content"]
    runtime.shutdown()


def test_server_search_soon_after_an_edit_answers_from_the_new_text(docs_root, tmp_path, monkeypatch):
    """Regression: a search within the probe throttle (0.5 s) of the previous call returned the
    old text and lines of an edited file as fresh (no re-index, no ``stale`` flag). The server's
    engine (background, auto-index, ``Freshness.REFRESH`` as the MCP tools use it) runs on a
    clock that stands still except that every stat probe takes 0.1 s of it, as if probes were
    slow: each later probe is throttled, so the edit always lands inside the throttle, however
    slow the machine."""
    import markdown_memory.index.runs as runs_module
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.models import Freshness

    clock = FakeClock()
    real_probe = runs_module.stale_paths
    probes = []

    def slow_probe(*args, **kwargs):
        probes.append(clock.now)
        clock.now += 0.1
        return real_probe(*args, **kwargs)

    monkeypatch.setattr(runs_module, "stale_paths", slow_probe)
    engine = Engine(Settings.load(docs_root, tmp_path / "srv.db", "none", auto_index=True), background=True,
                    clock=clock)

    def search_docs(query: str) -> dict:
        return engine.search(SearchRequest(query, top_k=5, max_tokens=2000), freshness=Freshness.REFRESH).to_dict(agent=True)

    engine.index()
    before = search_docs("backups kept for days")["results"][0]
    assert engine._scheduler.wait(30)  # the first call's catch-up run (nothing to do) is over
    search_docs("backups kept for days")  # the probe this edit follows
    probed = len(probes)
    path = docs_root / "ops" / "troubleshooting.md"
    text = path.read_text().replace("## Backups\n", "A new note.\n\nAnother line.\n\n## Backups\n")
    path.write_text(text.replace("kept for 14 days", "kept for 30 days"))
    bump(path)
    (docs_root / "cli.md").unlink()
    answer = search_docs("backups kept for days")
    hit = answer["results"][0]
    assert hit["file_path"] == "ops/troubleshooting.md" and "stale" not in hit
    assert "30 days" in hit["content"] and "14 days" not in hit["content"]
    assert hit["start_line"] == before["start_line"] + 4
    assert path.read_text().split("\n")[hit["start_line"] - 1] == "## Backups"
    gone = search_docs("machine-readable output flag")["results"]
    assert all(h["file_path"] != "cli.md" for h in gone)
    assert len(probes) == probed, "the probe of all files was throttled: the hits' own check did this"
    assert engine.shutdown()
    engine.close()


def test_server_search_right_after_adding_text_finds_it(docs_root, tmp_path):
    """Regression (tester): over MCP, 83 of 100 edit-then-search pairs missed text just added to
    a file: the probe of all files ran at most every 0.5 s, and the per-hit check cannot see new
    text in a file that is not a hit. The probe now reruns once 4x its own cost has passed
    (well under a millisecond for a small tree), so a search right after an edit sees it."""
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    runtime = Runtime(Settings.load(docs_root, tmp_path / "srv.db", "none", auto_index=True))
    runtime.engine.index()
    runtime.search_docs(SearchRequest("backups kept for days"))
    assert runtime.engine._scheduler.wait(30)
    for n in range(5):  # each time within milliseconds of the previous call
        runtime.search_docs(SearchRequest("backups kept for days"))
        path = docs_root / "cli.md"
        path.write_text(path.read_text() + f"\n## Zebra crossing {n}\n\nStripes number {n}.\n")
        bump(path)
        hits = runtime.search_docs(SearchRequest(f"zebra crossing stripes number {n}"))["results"]
        assert hits and hits[0]["file_path"] == "cli.md" and hits[0]["heading_path"].endswith(f"Zebra crossing {n}")
    runtime.shutdown()


def test_rewrite_that_restores_size_and_mtime_is_still_noticed(engine, docs_root):
    """cp -p / rsync -t / tar keep size and mtime; the inode change time still moves."""
    path = docs_root / "cli.md"
    before = path.stat()
    text = path.read_text()
    assert "machine-readable" in text
    path.write_text(text.replace("machine-readable", "machine-parsable"))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    report = engine.index()
    assert report.updated == 1
    assert "machine-parsable" in engine.read("cli.md", "Flags").content


def test_schema_v1_database_is_migrated_in_place(tmp_path, docs_root, make_engine):
    import sqlite3

    eng = make_engine(docs_root, embedder="none", db=tmp_path / "old.db")
    eng.index()
    eng.close()
    raw = sqlite3.connect(tmp_path / "old.db")
    raw.execute("ALTER TABLE documents DROP COLUMN ctime_ns")
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    again = make_engine(docs_root, embedder="none", db=tmp_path / "old.db")
    report = again.index()
    assert report.added == 0 and report.updated == 0 and report.unchanged == 5  # re-hashed, not re-parsed
    assert again.index().unchanged == 5


def test_stray_utf16_mark_on_utf8_text_is_ignored_with_a_warning(docs_root, make_engine):
    (docs_root / "odd.md").write_bytes(b"\xff\xfe# Head\n\nplain words here\n")
    eng = make_engine(docs_root, embedder="none")
    report = eng.index()
    assert any("byte-order mark" in w["message"] for w in report.warnings if w["path"] == "odd.md")
    assert [n.heading_path for n in eng.outline("odd.md").headings] == ["Head"]
    assert eng.search(SearchRequest("plain words")).results[0].file_path == "odd.md"


def test_real_utf16_file_is_decoded(docs_root, make_engine):
    (docs_root / "wide.md").write_bytes("# Wide\n\nutf sixteen text\n".encode("utf-16"))
    eng = make_engine(docs_root, embedder="none")
    eng.index()
    assert eng.search(SearchRequest("sixteen")).results[0].heading_path == "Wide"
