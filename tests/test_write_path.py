"""The write path stores a ``ParsedDocument`` as parsed: every section, passage, name and tag
read back from the store equals what ``parse_document`` made of the file (the store adds
ids only), over the hand-written corpus and the real-world failure cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from markdown_memory.index.embedding import passage_keys
from markdown_memory.markdown import parse_document
from markdown_memory.store import DocumentFile, Store
from markdown_memory.store.testing import stored_passages

FIXTURES = Path(__file__).parent / "fixtures"
FILES = sorted(p for d in ("guide", "cases") for p in (FIXTURES / d).rglob("*.md") if p.is_file())


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("write") / "index.db")
    yield s
    s.close()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_a_parsed_document_reads_back_as_parsed(store: Store, path: Path) -> None:
    rel = path.relative_to(FIXTURES).as_posix()
    text = path.read_text(encoding="utf-8", errors="replace")
    doc = parse_document(text, rel)
    with store.transaction():
        doc_id = store.insert_document(DocumentFile(rel, "0" * 64, (1, 2, 3), 4.0, ("decoded oddly",)), doc,
                                       passage_keys(doc))
    sections = store.sections_of(doc_id)
    assert [(s.ordinal, s.heading_path, s.base_path, s.title, s.level, s.part, s.start_line, s.end_line,
             s.tokens, s.text) for s in sections] == [
        (s.ordinal, s.heading_path, s.base_path, s.title, s.level, s.part, s.start_line, s.end_line, s.tokens, s.text)
        for s in doc.sections]
    stored = sorted(stored_passages(store, rel), key=lambda p: p.id)
    assert [(p.heading_path, p.kind, p.start_line, p.end_line, p.text, p.embed_key) for p in stored] == [
        (doc.sections[p.section].heading_path, p.kind, p.start_line, p.end_line, p.text, key)
        for p, key in zip(doc.passages, passage_keys(doc))]
    header = store.document_header(rel)
    assert header is not None and (header.title, header.metadata) == (doc.title, doc.metadata)
    assert store.document_warnings(rel) == ["decoded oddly", *doc.warnings]
    assert store.document_signature(rel) == (1, 2, 3)
    assert set(store.tags_of([doc_id]).get(doc_id, ())) == set(doc.vault.tag_names())
