"""The ``documents`` table: one row per indexed file (path relative to the docs root, sha256,
stat signature, title, front matter, warnings, token count), and deleting a document with
everything derived from it.

Paths are POSIX paths relative to the docs root (``docs/guide.md``). A stat signature is
``(size, mtime_ns, ctime_ns)`` (``walk.stat_signature``).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from . import pages, passages, schema, sections, tags
from .common import bound_chunks, delete_rowids, marks, under_clause
from .scope import Scope, document_clause

if TYPE_CHECKING:  # pragma: no cover
    from ..markdown.frontmatter import Metadata
    from ..markdown.parse import ParsedDocument
    from .connection import Store

Signature = tuple[int, int, int]


class StoredDocument(NamedTuple):
    """What the indexer and the freshness probe compare a file on disk with."""

    id: int
    sha256: str
    signature: Signature  # (size, mtime_ns, ctime_ns) when it was indexed


def _json_value(value: Any) -> str:
    """A front-matter value JSON has no type for: dates and times in ISO 8601 (``2024-03-04T05:06:07+00:00``,
    with ``T`` as docs/cli.md says, not ``str``'s space), anything else as its text."""
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    return str(value)

@dataclass(frozen=True)
class DocumentHeader:
    """A document as ``outline`` and ``read`` start from: ``metadata`` is its front matter
    (a dict, ``{}`` when it has none)."""

    id: int
    path: str
    title: str
    metadata: Metadata


@dataclass(frozen=True)
class DocumentListRow:
    """One ``list_documents`` entry: ``tokens`` of the whole file, ``mtime_ns`` when it was
    indexed, ``sections`` stored for it, ``tags`` it carries (``tags.tags_of``)."""

    path: str
    title: str
    tokens: int
    mtime_ns: int
    sections: int
    tags: tuple[str, ...] = ()


# -- reads ----------------------------------------------------------------------------------
def documents_by_path(store: Store, paths: list[str] | None = None) -> dict[str, StoredDocument]:
    """``{path: StoredDocument(id, sha256, (size, mtime_ns, ctime_ns))}`` for every indexed
    document, or only for those of ``paths`` (unknown ones are left out)."""
    sql = "SELECT path, id, sha256, size, mtime_ns, ctime_ns FROM documents"
    if paths is None:  # every freshness probe reads the whole table: reused until it changes
        rows = store.versioned("documents_by_path", lambda: store.conn.execute(sql).fetchall())
    else:
        rows = []
        for chunk in bound_chunks(list(dict.fromkeys(paths))):
            rows += store.conn.execute(f"{sql} WHERE path IN ({marks(len(chunk))})", chunk).fetchall()
    return {r[0]: StoredDocument(r[1], r[2], (r[3], r[4], r[5])) for r in rows}


def has_documents(store: Store) -> bool:
    """True when at least one document is indexed."""
    return store.conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None


def has_documents_under(store: Store, prefix: str) -> bool:
    """True when the document ``prefix`` or one below the folder ``prefix`` is indexed
    (``prefix`` taken literally and case-sensitively: ``common.under_clause``)."""
    under, params = under_clause(prefix)
    row = store.conn.execute(f"SELECT 1 FROM documents WHERE path = ? OR {under} LIMIT 1", [prefix, *params]).fetchone()
    return row is not None


def indexed_paths(store: Store) -> list[str]:
    """Every indexed document's path, sorted (by SQLite's binary collation)."""
    return [r[0] for r in store.conn.execute("SELECT path FROM documents ORDER BY path")]


def document_id(store: Store, path: str) -> int | None:
    """The id of the document ``path``, or None when it is not indexed."""
    row = store.conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
    return int(row[0]) if row else None


def document_signature(store: Store, path: str) -> Signature | None:
    """``(size, mtime_ns, ctime_ns)`` the document ``path`` was indexed with, or None."""
    row = store.conn.execute("SELECT size, mtime_ns, ctime_ns FROM documents WHERE path = ?", (path,)).fetchone()
    return (row[0], row[1], row[2]) if row else None


def document_header(store: Store, path: str) -> DocumentHeader | None:
    """Id, path, title and front matter (parsed) of the document ``path``, or None."""
    row = store.conn.execute("SELECT id, path, title, metadata FROM documents WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    return DocumentHeader(int(row[0]), row[1], row[2], json.loads(row[3] or "{}"))


def document_warnings(store: Store, path: str) -> list[str]:
    """The warnings recorded when ``path`` was indexed (decoding, parsing); [] for none or an
    unknown path."""
    row = store.conn.execute("SELECT warnings FROM documents WHERE path = ?", (path,)).fetchone()
    return list(json.loads(row[0])) if row and row[0] != "[]" else []


def _under(prefix: str | None, tagged: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """``list_documents``' filters: paths below ``prefix/`` (not ``prefix`` itself), and
    documents carrying one of ``tagged`` (or a tag nested in one, see ``scope.Scope``)."""
    where, params = "WHERE 1 = 1", list[Any]()
    if prefix is not None:
        under, params = under_clause(prefix, "d.path")
        where = f"WHERE {under}"
    if tagged:
        clause, more = document_clause(Scope(tags=tuple(tagged)))
        where += clause
        params += more
    return ("", []) if where == "WHERE 1 = 1" else (where, params)


def count_documents(store: Store, prefix: str | None = None, tagged: Sequence[str] = ()) -> int:
    """How many documents are indexed, or how many below the folder ``prefix`` (a path
    relative to the root without the trailing ``/``; the folder itself is not a document),
    carrying one of the tags ``tagged`` when given."""
    where, params = _under(prefix, tagged)
    return int(store.conn.execute(f"SELECT count(*) FROM documents d {where}", params).fetchone()[0])


def document_list(store: Store, prefix: str | None, limit: int, offset: int,
                  tagged: Sequence[str] = ()) -> list[DocumentListRow]:
    """At most ``limit`` documents (all of them, or those below the folder ``prefix`` and
    carrying one of ``tagged``, as ``count_documents`` counts them) from position ``offset``
    (negative = 0), ordered by path; each with its tags."""
    where, params = _under(prefix, tagged)
    rows = store.conn.execute(
        "SELECT d.path, d.title, d.tokens, d.mtime_ns, (SELECT count(*) FROM sections s WHERE s.doc_id = d.id), d.id "
        f"FROM documents d {where} ORDER BY d.path LIMIT ? OFFSET ?",
        [*params, limit, max(0, int(offset))],
    ).fetchall()
    labels = tags.tags_of(store, [r[5] for r in rows])
    return [DocumentListRow(r[0], r[1], r[2], r[3], r[4], tuple(labels.get(r[5], ()))) for r in rows]


class HeadingRow(NamedTuple):
    """One row of the docs map: a document (``path``, ``title``, whole-file ``tokens``) and one of
    its headings (``level`` 1-6 and plain ``heading`` text; both None for a document with no
    heading), in file order."""

    path: str
    title: str
    tokens: int
    level: int | None
    heading: str | None


def document_headings(store: Store, max_level: int = 4) -> list[HeadingRow]:
    """Every document by path with its headings of ``#`` level <= ``max_level`` in file order
    (the first piece of a section stored in ``(Part n)`` pieces only); a document without such
    headings comes once, with ``level`` and ``heading`` None."""
    rows = store.conn.execute(
        "SELECT d.path, d.title, d.tokens, s.level, s.title FROM documents d "
        "LEFT JOIN sections s ON s.doc_id = d.id AND s.part <= 1 AND s.level BETWEEN 1 AND ? "
        "ORDER BY d.path, s.ordinal",
        (int(max_level),),
    ).fetchall()
    return [HeadingRow(*r) for r in rows]


def document_sample(store: Store, limit: int) -> list[tuple[str, int]]:
    """``[(path, size)]`` of the first ``limit`` documents indexed (by id)."""
    return [(r[0], r[1]) for r in store.conn.execute(f"SELECT path, size FROM documents ORDER BY id LIMIT {int(limit)}")]


# -- writes (call inside a transaction) -----------------------------------------------------
def touch_document(store: Store, doc_id: int, signature: Signature) -> None:
    """Record a new stat signature for an unchanged (same sha256) document."""
    store.conn.execute("UPDATE documents SET size = ?, mtime_ns = ?, ctime_ns = ? WHERE id = ?", (*signature, doc_id))


def delete_document(store: Store, doc_id: int) -> None:
    """Remove a document and everything derived from it (sections, passages, keyword rows,
    vectors). Call inside a transaction."""
    section_ids = sections.section_ids_of(store, doc_id)
    if store.has_vec_tables() and store.vec_available:
        embedded = passages.embedded_passage_ids(store, doc_id)
        delete_rowids(store, "vec_passages", embedded)
        if schema.has_exact_table(store):
            delete_rowids(store, schema.EXACT_TABLE, embedded)
        delete_rowids(store, "vec_sections", section_ids)
    delete_rowids(store, "sections_fts", section_ids)
    tags.delete_vault(store, doc_id)
    pages.delete_page(store, doc_id)
    store.links.delete(doc_id)
    store.conn.execute("DELETE FROM passages WHERE doc_id = ?", (doc_id,))
    store.conn.execute("DELETE FROM sections WHERE doc_id = ?", (doc_id,))
    store.conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))


@dataclass(frozen=True)
class DocumentFile:
    """What a document row holds besides the parse: the file's ``path`` (POSIX, relative to the
    docs root), ``sha256`` of its bytes, stat ``signature``, ``indexed_at`` (epoch seconds) and
    the warnings of reading it (decoding), stored before the parser's."""

    path: str
    sha256: str
    signature: Signature
    indexed_at: float = 0.0
    warnings: tuple[str, ...] = ()


def insert_document(store: Store, file: DocumentFile, doc: ParsedDocument, embed_keys: Sequence[str]) -> int:
    """Insert a parsed document (``markdown.ParsedDocument``) with its sections, their keyword
    rows, its passages (pending, ``embed_keys[i]`` the key of ``doc.passages[i]``), names, tags,
    links, block ids and page row (``pages.py``). Returns the new document id. Call inside a transaction."""
    size, mtime_ns, ctime_ns = file.signature
    cur = store.conn.execute(
        "INSERT INTO documents(path, sha256, size, mtime_ns, ctime_ns, title, metadata, warnings, line_count, "
        "tokens, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            file.path, file.sha256, size, mtime_ns, ctime_ns, doc.title,
            json.dumps(doc.metadata, default=_json_value, ensure_ascii=False),
            json.dumps([*file.warnings, *doc.warnings], ensure_ascii=False),
            doc.line_count, doc.tokens, file.indexed_at,
        ),
    )
    doc_id = int(cur.lastrowid)
    section_ids = sections.insert_sections(store, doc_id, doc)
    passages.insert_passages(store, doc_id, section_ids, zip(doc.passages, embed_keys, strict=True))
    tags.insert_vault(store, doc_id, section_ids, doc.names, doc.vault.tags)
    store.links.insert(doc_id, section_ids, doc.links, doc.block_ids)
    if doc.sections:
        pages.index_page(store, doc_id, file.path, [doc.title, *(n for n, _src in doc.names)],
                         doc.vault.description, doc.lead)
    return doc_id
