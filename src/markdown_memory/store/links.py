"""The ``links`` and ``block_ids`` tables: every link a section holds (``markdown/links.py``)
and where it leads, and the ``^id`` block ids a section names.

A link row keeps what was written (``kind``, ``raw``, ``first`` / ``second``: the two sides of a
``|``), the side read as the target (``target``) and the outcome of resolution
(``reading/links.py``): ``status`` (``resolved``, ``no_heading``: the document exists but not
the heading or block, ``ambiguous``, ``unresolved``), the target document and section ids
(None when not found). Rows are written with their document (target unset) and resolved for the
whole root after an index run that changed a document, or, after a refresh of some files,
only the rows that change can reach (``set_link_targets``; ``link_sides`` / ``links_by_id``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..models import Link

if TYPE_CHECKING:  # pragma: no cover
    from ..markdown.frontmatter import Metadata
    from ..markdown.links import RawLink

DDL = """
CREATE TABLE IF NOT EXISTS links(
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    section_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    raw TEXT NOT NULL,
    first TEXT NOT NULL,
    second TEXT,
    target TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'unresolved',
    target_doc_id INTEGER,
    target_section_id INTEGER
);
CREATE INDEX IF NOT EXISTS links_doc ON links(doc_id);
CREATE INDEX IF NOT EXISTS links_target ON links(target_doc_id);
CREATE TABLE IF NOT EXISTS block_ids(
    doc_id INTEGER NOT NULL,
    section_id INTEGER NOT NULL,
    block_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS block_ids_doc ON block_ids(doc_id);
"""


class LinkRow(NamedTuple):
    """A stored link as resolution needs it (``source_path``: its document's path)."""

    id: int
    source_path: str
    first: str
    second: str | None
    kind: str
    target: str
    status: str
    target_doc_id: int | None
    target_section_id: int | None


class LinkSides(NamedTuple):
    """A stored link as incremental relinking screens it: its document, written sides and the
    document it led to at the last resolution."""

    id: int
    doc_id: int
    first: str
    second: str | None
    target_doc_id: int | None


class LinkTarget(NamedTuple):
    """A resolution outcome to store for link ``id``."""

    target: str
    status: str
    target_doc_id: int | None
    target_section_id: int | None
    id: int


class DocumentName(NamedTuple):
    """A document as link resolution names it: id, path and front matter (empty when it has no
    ``alias`` / ``aliases`` key, the only ones links read)."""

    id: int
    path: str
    metadata: Metadata


class HeadingRow(NamedTuple):
    """A section as heading fragments are matched against it (first piece of a split section)."""

    id: int
    ordinal: int
    parent_ordinal: int | None
    title: str
    base_path: str


_ROWS = ("SELECT l.id, d.path, l.first, l.second, l.kind, l.target, l.status, l.target_doc_id, l.target_section_id "
         "FROM links l JOIN documents d ON d.id = l.doc_id ")

_CHUNK = 500  # ids per IN (...): well under SQLite's bound-parameter limit

def _document_name(doc_id: int, path: str, metadata: str) -> DocumentName:
    if "alias" not in metadata and "title" not in metadata:  # nothing names the note: not parsed
        return DocumentName(int(doc_id), str(path), {})
    try:
        data = json.loads(metadata)
    except ValueError:
        data = {}
    return DocumentName(int(doc_id), str(path), data if isinstance(data, dict) else {})

_VIEW = ("SELECT d.path, s.base_path, l.line, l.kind, l.raw, l.target, l.status, td.path, ts.base_path "
         "FROM links l JOIN documents d ON d.id = l.doc_id JOIN sections s ON s.id = l.section_id "
         "LEFT JOIN documents td ON td.id = l.target_doc_id LEFT JOIN sections ts ON ts.id = l.target_section_id ")


class LinkTable:
    """The ``links`` and ``block_ids`` tables (and the document names and headings link
    resolution reads) over one connection: the store's ``links`` repository
    (``store.links.outgoing(doc_id, limit, offset)``)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def ensure_tables(self) -> None:
        """Create the tables when missing (migration to schema 4). Call inside a transaction."""
        for statement in DDL.split(";"):
            if statement.strip():
                self._conn.execute(statement)

    def insert(self, doc_id: int, section_ids: Sequence[int], links: Iterable[RawLink],
                     block_ids: Iterable[tuple[int, str]]) -> None:
        """Store a parsed document's ``markdown.links.RawLink`` objects and ``(section index, id)``
        block ids; ``section_ids``: the new ids of its sections in order. Call inside a transaction."""
        self._conn.executemany(
            "INSERT INTO links(doc_id, section_id, line, kind, raw, first, second, target) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(doc_id, section_ids[k.section], k.line, k.kind, k.raw, k.first, k.second, k.first) for k in links],
        )
        self._conn.executemany("INSERT INTO block_ids(doc_id, section_id, block_id) VALUES (?, ?, ?)",
                               [(doc_id, section_ids[i], b) for i, b in block_ids])

    def delete(self, doc_id: int) -> None:
        """Remove document ``doc_id``'s links and block ids; links to it keep their (now dangling)
        ids until the next resolution. Call inside a transaction."""
        self._conn.execute("DELETE FROM links WHERE doc_id = ?", (doc_id,))
        self._conn.execute("DELETE FROM block_ids WHERE doc_id = ?", (doc_id,))

    def all_links(self) -> list[LinkRow]:
        """Every stored link, by id."""
        return [LinkRow(*r) for r in self._conn.execute(_ROWS + "ORDER BY l.id")]

    def link_sides(self) -> list[LinkSides]:
        """Every stored link's id, document, written sides and target document, by id (plain
        tuples in ``LinkSides`` order: thousands are read per refresh)."""
        rows: list[LinkSides] = self._conn.execute(
            "SELECT id, doc_id, first, second, target_doc_id FROM links ORDER BY id").fetchall()
        return rows

    def links_by_id(self, ids: Sequence[int]) -> list[LinkRow]:
        """The stored links with these ids (as ``all_links`` gives them), by id."""
        out: list[LinkRow] = []
        for start in range(0, len(ids), _CHUNK):
            chunk = [int(i) for i in ids[start:start + _CHUNK]]
            out.extend(LinkRow(*r) for r in self._conn.execute(
                _ROWS + f"WHERE l.id IN ({','.join('?' * len(chunk))}) ORDER BY l.id", chunk))
        return sorted(out, key=lambda r: r.id)

    def document_names_at(self, paths: Sequence[str]) -> list[DocumentName]:
        """The documents indexed now at these paths (absent ones left out), by path."""
        out: list[DocumentName] = []
        unique = list(dict.fromkeys(paths))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start:start + _CHUNK]
            out.extend(_document_name(*r) for r in self._conn.execute(
                f"SELECT id, path, metadata FROM documents WHERE path IN ({','.join('?' * len(chunk))})", chunk))
        return sorted(out, key=lambda d: d.path)

    def document_names(self) -> list[DocumentName]:
        """Every document's id, path and front matter."""
        return [_document_name(*r) for r in self._conn.execute("SELECT id, path, metadata FROM documents ORDER BY path")]

    def headings_of(self, doc_id: int) -> list[HeadingRow]:
        """Document ``doc_id``'s sections in file order, one row per section (its first piece)."""
        rows = self._conn.execute("SELECT id, ordinal, parent_ordinal, title, base_path FROM sections "
                                  "WHERE doc_id = ? AND part <= 1 ORDER BY ordinal", (doc_id,)).fetchall()
        return [HeadingRow(*r) for r in rows]

    def anchor_texts_of(self, doc_id: int) -> list[tuple[int, str]]:
        """``[(section ordinal, text)]`` of document ``doc_id``'s section pieces that may define an
        explicit anchor (their text holds ``{#`` or ``<a``), in file order."""
        return [(int(r[0]), str(r[1])) for r in self._conn.execute(
            "SELECT ordinal, text FROM sections WHERE doc_id = ? AND (instr(text, '{') > 0 OR instr(lower(text), '<a') > 0)"
            " ORDER BY ordinal, part", (doc_id,))]

    def block_ids_of(self, doc_id: int) -> list[tuple[str, int]]:
        """``[(block id, section id)]`` of document ``doc_id``, in file order."""
        return [(str(r[0]), int(r[1])) for r in self._conn.execute(
            "SELECT block_id, section_id FROM block_ids WHERE doc_id = ? ORDER BY rowid", (doc_id,))]

    def set_link_targets(self, targets: Iterable[LinkTarget]) -> None:
        """Store resolution outcomes. Call inside a transaction."""
        self._conn.executemany("UPDATE links SET target = ?, status = ?, target_doc_id = ?, target_section_id = ? "
                               "WHERE id = ?", list(targets))

    def outgoing(self, doc_id: int, limit: int, offset: int) -> tuple[int, int, list[Link]]:
        """(how many, how many not ``resolved``, one page of) document ``doc_id``'s links in file order."""
        total, unresolved = self._conn.execute("SELECT count(*), coalesce(sum(status != 'resolved'), 0) FROM links "
                                               "WHERE doc_id = ?", (doc_id,)).fetchone()
        rows = self._conn.execute(_VIEW + "WHERE l.doc_id = ? ORDER BY l.line, l.id LIMIT ? OFFSET ?",
                                  (doc_id, int(limit), int(offset))).fetchall()
        return int(total), int(unresolved), [Link(*r) for r in rows]

    def ambiguous_count(self, doc_id: int) -> int:
        """How many of document ``doc_id``'s links are ``ambiguous`` (lead to several documents)."""
        return int(self._conn.execute("SELECT count(*) FROM links WHERE doc_id = ? AND status = 'ambiguous'",
                                      (doc_id,)).fetchone()[0])

    def incoming(self, doc_id: int, limit: int, offset: int) -> tuple[int, list[Link]]:
        """(how many, one page of) the links of other documents, or of its own, that lead to
        document ``doc_id``, by source path and line."""
        total = self._conn.execute("SELECT count(*) FROM links WHERE target_doc_id = ?", (doc_id,)).fetchone()[0]
        rows = self._conn.execute(_VIEW + "WHERE l.target_doc_id = ? ORDER BY d.path, l.line, l.id LIMIT ? OFFSET ?",
                                  (doc_id, int(limit), int(offset))).fetchall()
        return int(total), [Link(*r) for r in rows]
