"""The store's engine-facing reads and the typed error of a keyword query SQLite rejects."""

from __future__ import annotations

from pathlib import Path

import pytest

from markdown_memory.errors import QueryError
from markdown_memory.models import SearchRequest
from markdown_memory.store import DocumentHeader, DocumentListRow, QueryNotParsedError, SectionRecord, Store


@pytest.fixture
def store(docs_root: Path, make_engine):
    (docs_root / "a_b").mkdir()
    (docs_root / "a_b" / "x.md").write_text("# X\n\nunder a_b\n")
    (docs_root / "axb").mkdir()
    (docs_root / "axb" / "y.md").write_text("# Y\n\nunder axb\n")
    (docs_root / "broken.md").write_bytes(b"\x00binary")
    engine = make_engine(docs_root, "none")
    engine.index()
    return engine.store


def test_document_reads(store: Store, docs_root: Path) -> None:
    paths = store.indexed_paths()
    assert paths == sorted(paths) and "ops/troubleshooting.md" in paths and "broken.md" not in paths
    assert store.has_documents()
    assert store.has_documents_under("ops") and store.has_documents_under("install.md")
    assert store.has_documents_under("a_b") and not store.has_documents_under("a%")  # _ and % are literal
    assert not store.has_documents_under("op")
    st = (docs_root / "install.md").stat()
    assert store.document_signature("install.md")[:2] == (st.st_size, st.st_mtime_ns)
    assert store.document_signature("missing.md") is None
    header = store.document_header("install.md")
    assert isinstance(header, DocumentHeader) and header.path == "install.md" and isinstance(header.metadata, dict)
    assert store.document_header("missing.md") is None


def test_sections_of_are_in_file_order(store: Store) -> None:
    header = store.document_header("install.md")
    sections = store.sections_of(header.id)
    assert sections and all(isinstance(s, SectionRecord) for s in sections)
    assert [s.ordinal for s in sections] == sorted(s.ordinal for s in sections)
    assert [s.start_line for s in sections] == sorted(s.start_line for s in sections)


def test_document_list_and_count(store: Store) -> None:
    total = store.count_documents(None)
    assert total == len(store.indexed_paths())
    rows = store.document_list(None, 3, 1)
    assert [r.path for r in rows] == store.indexed_paths()[1:4]
    assert all(isinstance(r, DocumentListRow) and r.sections > 0 for r in rows)
    assert store.count_documents("ops") == 2 and [r.path for r in store.document_list("ops", 10, 0)] == [
        "ops/release-notes.md", "ops/troubleshooting.md"]
    assert store.count_documents("a_b") == 1  # not axb/y.md: "_" is not a wildcard


def test_failures(store: Store) -> None:
    assert store.failed_file_count() == 1
    assert store.failures() == [{"path": "broken.md", "kind": "failed", "reason": store.failure_reason("broken.md")}]
    assert "binary" in store.failure_reason("broken.md")
    assert store.failure_reason("install.md") is None


def test_clear_moved_aside_in_and_outside_a_transaction(store: Store) -> None:
    for wrapped in (False, True):
        with store.transaction():
            store.set_meta("moved_aside", "/somewhere")
            store.set_meta("moved_aside_reason", "damaged")
        if wrapped:
            with store.transaction():
                store.clear_moved_aside()
        else:
            store.clear_moved_aside()
        assert store.get_meta("moved_aside") is None and store.get_meta("moved_aside_reason") is None


def test_a_match_expression_sqlite_rejects_is_a_query_error(store: Store, docs_root: Path, make_engine,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(QueryNotParsedError, match=r"could not be parsed by the keyword index \(unterminated string\)"):
        store.keyword_matches('"unterminated AND (', None, 10, 3.0)
    with pytest.raises(QueryNotParsedError):
        store.match_count("a (b")
    assert issubclass(QueryNotParsedError, QueryError)
    from markdown_memory.search.query import AnalysedQuery

    monkeypatch.setattr(AnalysedQuery, "match_expression", lambda self: "a (b")
    engine = make_engine(docs_root, "none")
    with pytest.raises(QueryNotParsedError, match="rephrase it with plain words and without quotes or operators"):
        engine.search(SearchRequest("anything"))
