"""The ``sections`` table: one row per section of a document, in file order (``ordinal``), as
``outline`` and ``read`` use them (``sections_of``) and as search hits carry them
(``section_rows``). Inserting a document's sections also writes their keyword rows (``fts.index_sections``).

A section's ``heading_path`` is its unique address (``"Install > Linux (Part 2)"``),
``base_path`` the breadcrumb its ``(Part n)`` pieces share; ``level`` 0 is the preamble (text
before the first heading); lines are 1-based lines of the file, inclusive.

Sections are written as ``markdown.Section`` (the parser's type) and read back as two types:
``SectionRecord`` (a document's sections for ``outline`` and ``read``) and ``SectionRow``
(any sections joined with their document's path and title, the ranker's view of a hit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from . import fts
from .common import marks

if TYPE_CHECKING:  # pragma: no cover
    from ..markdown.parse import ParsedDocument
    from .connection import Store


@dataclass(frozen=True)
class SectionRecord:
    """One stored section of a document, as ``outline`` and ``read`` need it. ``part`` is the
    piece number of a long section stored in ``(Part n)`` pieces (0 for a whole section)."""

    heading_path: str
    base_path: str
    title: str
    level: int
    part: int
    start_line: int
    end_line: int
    tokens: int
    text: str
    ordinal: int


class SectionRow(TypedDict):
    """A section as the ranker and the hits use it (by key), with its document's path (as
    ``file_path``) and title (``doc_title``); ``parent_ordinal`` is the ordinal of the section
    it is nested in (None at the top)."""

    id: int
    file_path: str
    heading_path: str
    base_path: str
    level: int
    part: int
    start_line: int
    end_line: int
    text: str
    tokens: int
    ordinal: int
    parent_ordinal: int | None
    doc_id: int
    doc_title: str


_ROW_KEYS = ("id", "file_path", "heading_path", "base_path", "level", "part", "start_line", "end_line", "text",
             "tokens", "ordinal", "parent_ordinal", "doc_id", "doc_title")


def sections_of(store: Store, doc_id: int) -> list[SectionRecord]:
    """Every section of document ``doc_id``, in file order (by ordinal)."""
    rows = store.conn.execute(
        "SELECT heading_path, base_path, title, level, part, start_line, end_line, tokens, text, ordinal "
        "FROM sections WHERE doc_id = ? ORDER BY ordinal",
        (doc_id,),
    ).fetchall()
    return [SectionRecord(*r) for r in rows]


def section_ids_of(store: Store, doc_id: int) -> list[int]:
    """The ids of document ``doc_id``'s sections (in no particular order)."""
    return [r[0] for r in store.conn.execute("SELECT id FROM sections WHERE doc_id = ?", (doc_id,))]


def section_rows(store: Store, section_ids: list[int]) -> dict[int, SectionRow]:
    """``{section id: SectionRow}`` for the given ids (one query; unknown ids are left out)."""
    if not section_ids:
        return {}
    rows = store.conn.execute(
        "SELECT s.id, d.path, s.heading_path, s.base_path, s.level, s.part, s.start_line, s.end_line, s.text, "
        "s.tokens, s.ordinal, s.parent_ordinal, s.doc_id, d.title FROM sections s JOIN documents d ON d.id = s.doc_id "
        f"WHERE s.id IN ({marks(len(section_ids))})",
        section_ids,
    ).fetchall()
    return {int(r[0]): dict(zip(_ROW_KEYS, r)) for r in rows}  # type: ignore[misc]


def children(store: Store, parents: Iterable[tuple[int, int | None]]) -> dict[tuple[int, int | None], list[tuple[int, str]]]:
    """``{(doc_id, parent_ordinal): [(section id, title) of each section directly under it]}``
    in file order, for each given pair (``parent_ordinal`` None: the document's top-level
    sections); the pieces of a long section count once (its first)."""
    out: dict[tuple[int, int | None], list[tuple[int, str]]] = {}
    for doc_id, parent in set(parents):
        rows = store.conn.execute("SELECT id, title FROM sections WHERE doc_id = ? AND parent_ordinal IS ? "
                                  "AND part <= 1 ORDER BY ordinal", (doc_id, parent)).fetchall()  # IS: NULL too
        out[(doc_id, parent)] = [(int(r[0]), str(r[1])) for r in rows]
    return out


def section_id_at(store: Store, doc_id: int, ordinal: int) -> int | None:
    """The id of document ``doc_id``'s section number ``ordinal``, or None."""
    row = store.conn.execute("SELECT id FROM sections WHERE doc_id = ? AND ordinal = ?", (doc_id, ordinal)).fetchone()
    return int(row[0]) if row else None


def section_count(store: Store) -> int:
    """How many sections the index holds (every document); reused until the database changes
    (``Store.versioned``: a search asks up to three times, ~1 ms each at 16x the eval corpus)."""
    return int(store.versioned("section_count", lambda: store.conn.execute("SELECT count(*) FROM sections").fetchone()[0]))


def insert_sections(store: Store, doc_id: int, doc: ParsedDocument) -> list[int]:
    """Insert the sections of ``doc`` (stored as document ``doc_id``) in order, and their
    keyword rows; the first also carries the front-matter keywords
    (``fts.front_matter_keywords``). Returns the new section ids in the same order. Call inside
    a transaction."""
    section_ids: list[int] = []
    keyword_rows: list[tuple[int, str, str]] = []
    for s in doc.sections:
        cur = store.conn.execute(
            "INSERT INTO sections(doc_id, ordinal, heading_path, base_path, title, level, part, start_line, "
            "end_line, text, tokens, parent_ordinal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc_id, s.ordinal, s.heading_path, s.base_path, s.title, s.level, s.part, s.start_line,
             s.end_line, s.text, s.tokens, s.parent),
        )
        sid = int(cur.lastrowid)
        section_ids.append(sid)
        keyword_rows.append((sid, s.base_path, s.text))
    fts.index_sections(store, doc.title, doc.metadata, keyword_rows)
    return section_ids
