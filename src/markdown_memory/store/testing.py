"""What the tests read from an index and check in it, here so that SQL stays in ``store/``:
tests call these instead of writing queries (a schema change is then one edit here). The
package itself never calls them.

Paths are POSIX paths relative to the docs root; lines are 1-based and inclusive.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store


class StoredPassage(NamedTuple):
    """One stored passage with its document's ``path`` and its section's ``heading_path``;
    ``has_vector`` False while it waits for its embedding."""

    id: int
    section_id: int
    path: str
    heading_path: str
    kind: str
    start_line: int
    end_line: int
    text: str
    embed_key: str
    has_vector: bool


def stored_passages(store: Store, paths: str | Iterable[str] | None = None) -> list[StoredPassage]:
    """Every stored passage, or those of the document ``paths`` (one path or several), ordered
    by path, start line, then id (insertion order)."""
    where, params = "", []
    if paths is not None:
        wanted = [paths] if isinstance(paths, str) else list(paths)
        where, params = f"WHERE d.path IN ({', '.join('?' * len(wanted))}) ", wanted
    rows = store.conn.execute(
        "SELECT p.id, p.section_id, d.path, s.heading_path, p.kind, p.start_line, p.end_line, p.text, p.embed_key, p.has_vector "
        "FROM passages p JOIN sections s ON s.id = p.section_id JOIN documents d ON d.id = p.doc_id "
        f"{where}ORDER BY d.path, p.start_line, p.id",
        params,
    ).fetchall()
    return [StoredPassage(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], bool(r[9])) for r in rows]


def stored_texts(store: Store) -> dict[str, list[str]]:
    """Every stored text column an answer can show: ``{"sections.heading_path": [...],
    "sections.title", "sections.text", "passages.text", "documents.title"}``."""
    columns = (("sections", "heading_path"), ("sections", "title"), ("sections", "text"),
               ("passages", "text"), ("documents", "title"))
    return {f"{t}.{c}": [r[0] for r in store.conn.execute(f"SELECT {c} FROM {t}")] for t, c in columns}


def consistency_problems(store: Store) -> list[str]:
    """The index's broken invariants, [] when none: SQLite's and FTS5's integrity checks, one
    keyword row per section, no section without its document nor passage without its section,
    one vector row per embedded passage (none without the vector tables)."""
    c = store.conn
    problems = [r[0] for r in c.execute("PRAGMA integrity_check") if r[0] != "ok"]
    try:
        c.execute("INSERT INTO sections_fts(sections_fts) VALUES('integrity-check')")
    except sqlite3.DatabaseError as exc:
        problems.append(f"keyword index: {exc}")
    checks = {
        "keyword rows != sections": "SELECT (SELECT count(*) FROM sections_fts) != (SELECT count(*) FROM sections)",
        "keyword rows without a section": "SELECT count(*) FROM sections_fts WHERE rowid NOT IN (SELECT id FROM sections)",
        "sections without a document": "SELECT count(*) FROM sections WHERE doc_id NOT IN (SELECT id FROM documents)",
        "passages without a section": "SELECT count(*) FROM passages WHERE section_id NOT IN (SELECT id FROM sections)",
    }
    if store.has_vec_tables():
        checks["vector rows != embedded passages"] = (
            "SELECT (SELECT count(*) FROM vec_passages) != (SELECT count(*) FROM passages WHERE has_vector = 1)")
        checks["vector rows without an embedded passage"] = (
            "SELECT count(*) FROM vec_passages WHERE rowid NOT IN (SELECT id FROM passages WHERE has_vector = 1)")
        if store.vec_available and not has_exact_copy(store):
            problems.append("no exact copy of the vectors")
        elif store.vec_available:
            checks["exact copy != vector rows"] = (
                "SELECT (SELECT count(*) FROM vec_passages_exact) != (SELECT count(*) FROM vec_passages)"
                " OR EXISTS (SELECT 1 FROM vec_passages v LEFT JOIN vec_passages_exact e ON e.id = v.rowid"
                " WHERE e.embedding IS NOT v.embedding)")
    else:
        checks["embedded passages without vector tables"] = "SELECT count(*) FROM passages WHERE has_vector = 1"
    problems += [name for name, sql in checks.items() if c.execute(sql).fetchone()[0]]
    return problems


class FileCheck(NamedTuple):
    """A database file as a plain SQLite connection sees it (no ``Store``: nothing recovered or
    migrated): ``integrity`` is ``"ok"`` when sound."""

    integrity: str
    documents: int
    sections: int
    failures: int


def check_file(db: Path) -> FileCheck:
    """Open ``db`` with plain ``sqlite3`` (no lock taken, no recovery) and check it."""
    conn = sqlite3.connect(db)
    try:
        def one(sql: str) -> Any:
            return conn.execute(sql).fetchone()[0]

        return FileCheck(one("PRAGMA integrity_check"), one("SELECT count(*) FROM documents"),
                         one("SELECT count(*) FROM sections"), one("SELECT count(*) FROM failures"))
    finally:
        conn.close()


_PEEKS = {
    "documents": "SELECT count(*) FROM documents",
    "embedded": "SELECT count(*) FROM passages WHERE has_vector = 1",
}


def peek_count(db: Path, what: str) -> int:
    """How many ``what`` (``"documents"`` or ``"embedded"`` passages) ``db`` holds, read-only
    without a lock while another process may write it (0 while it is absent or busy)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
        try:
            return int(conn.execute(_PEEKS[what]).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def peek_meta(db: Path, key: str) -> str | None:
    """The ``meta`` value ``key`` of ``db``, read as ``peek_count`` reads (None when absent or busy)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def peek_paths(db: Path) -> list[str]:
    """Every document path ``db`` holds, sorted, read with plain ``sqlite3`` (no ``Store``, so
    nothing is bound, migrated or recovered)."""
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT path FROM documents ORDER BY path")]
    finally:
        conn.close()


def stored_vectors(store: Store) -> tuple[dict[int, list[bytes]], dict[int, bytes]]:
    """(``{section id: [float32 blob of each of its embedded passages]}``, ``{section id: its
    section vector}``) as stored in the vec tables (needs them: ``store.has_vec_tables()``)."""
    by_section: dict[int, list[bytes]] = {}
    for sid, blob in store.conn.execute("SELECT p.section_id, v.embedding FROM passages p "
                                        "JOIN vec_passages v ON v.rowid = p.id"):
        by_section.setdefault(sid, []).append(blob)
    sections = {int(r[0]): r[1] for r in store.conn.execute("SELECT rowid, embedding FROM vec_sections")}
    return by_section, sections


def vector_rows(store: Store) -> int:
    """How many rows the passage vector table holds (0 without the vec tables)."""
    if not store.has_vec_tables():
        return 0
    return int(store.conn.execute("SELECT count(*) FROM vec_passages").fetchone()[0])


def drop_exact_copy(store: Store) -> None:
    """Make the database look as schema v7 left it: no ``vec_passages_exact`` (migration tests)."""
    with store.transaction():
        store.conn.execute("DROP TABLE IF EXISTS vec_passages_exact")
        store.conn.execute("PRAGMA user_version = 7")


def has_exact_copy(store: Store) -> bool:
    """True when ``vec_passages_exact`` exists."""
    return store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_passages_exact'").fetchone() is not None
