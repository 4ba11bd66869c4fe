"""The code side of a docs root, for the drift check (``drift/``): ``code_files`` (one row per
file of the code root: path relative to it, stat signature, sha256, ``tokenized`` 1 when its
tokens are held) and ``code_tokens`` (the distinct identifiers, flag words and file names of
each tokenized file). The tables are made on first use (``ensure_tables``), not by the schema
migration: a database that never ran ``drift`` has none, and search then adds no drift notes.
``meta`` key ``code_root`` records the real path the tables were read from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..text import glob_escape
from .common import bound_chunks, marks, under_clause

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

CODE_ROOT_KEY = "code_root"

DDL = (
    "CREATE TABLE IF NOT EXISTS code_files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
    "size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, tokenized INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS code_tokens(file_id INTEGER NOT NULL, token TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS code_tokens_token ON code_tokens(token)",
    "CREATE INDEX IF NOT EXISTS code_tokens_file ON code_tokens(file_id)",
)


class CodeFile(NamedTuple):
    """A stored code file: ``size`` bytes, ``mtime_ns``, content ``sha256`` (hex)."""

    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str


class SectionText(NamedTuple):
    """One stored section, as the drift check reads it (``start_line`` 1-based)."""

    file_path: str
    heading_path: str
    start_line: int
    text: str


class CodeIndex:
    """The code side's tables over one connection: what ``drift/`` reads and writes (the
    store's ``code`` repository: ``store.code.held_path(path)``)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def has_index(self) -> bool:
        """True when ``drift`` has read a code side into this database."""
        row = self._store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'code_files'").fetchone()
        return row is not None and self._store.get_meta(CODE_ROOT_KEY) is not None


    def ensure_tables(self) -> None:
        """Create the code tables when missing. Call inside a transaction."""
        for statement in DDL:
            self._store.conn.execute(statement)


    def clear(self) -> None:
        """Forget every code file and token (the code root changed). Call inside a transaction."""
        self._store.conn.execute("DELETE FROM code_tokens")
        self._store.conn.execute("DELETE FROM code_files")


    def files(self) -> dict[str, CodeFile]:
        """``{path: CodeFile}`` of every stored code file."""
        rows = self._store.conn.execute("SELECT id, path, size, mtime_ns, sha256 FROM code_files").fetchall()
        return {r[1]: CodeFile(int(r[0]), r[1], int(r[2]), int(r[3]), r[4]) for r in rows}


    def put_file(self, path: str, size: int, mtime_ns: int, sha256: str,
                      tokens: Iterable[str] | None) -> None:
        """Insert or replace ``path``; ``tokens`` None keeps no tokens (a file that is not code).
        Call inside a transaction."""
        row = self._store.conn.execute("SELECT id FROM code_files WHERE path = ?", (path,)).fetchone()
        if row is not None:
            self._store.conn.execute("DELETE FROM code_tokens WHERE file_id = ?", (row[0],))
            self._store.conn.execute("DELETE FROM code_files WHERE id = ?", (row[0],))
        cur = self._store.conn.execute(
            "INSERT INTO code_files(path, size, mtime_ns, sha256, tokenized) VALUES (?, ?, ?, ?, ?)",
            (path, size, mtime_ns, sha256, 0 if tokens is None else 1))
        file_id = cur.lastrowid
        if tokens is not None:
            self._store.conn.executemany("INSERT INTO code_tokens(file_id, token) VALUES (?, ?)",
                                   [(file_id, t) for t in tokens])


    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record a new stat signature for unchanged content. Call inside a transaction."""
        self._store.conn.execute("UPDATE code_files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id))


    def delete_files(self, file_ids: Sequence[int]) -> None:
        """Remove files (and their tokens) by id. Call inside a transaction."""
        for chunk in bound_chunks(list(file_ids)):
            self._store.conn.execute(f"DELETE FROM code_tokens WHERE file_id IN ({marks(len(chunk))})", list(chunk))
            self._store.conn.execute(f"DELETE FROM code_files WHERE id IN ({marks(len(chunk))})", list(chunk))


    def held_tokens(self, names: Iterable[str]) -> set[str]:
        """The subset of ``names`` some tokenized code file holds (exact, case-sensitive)."""
        wanted = sorted(set(names))
        found: set[str] = set()
        for chunk in bound_chunks(wanted):
            rows = self._store.conn.execute(
                f"SELECT DISTINCT token FROM code_tokens WHERE token IN ({marks(len(chunk))})", list(chunk)).fetchall()
            found.update(r[0] for r in rows)
        return found


    def held_path(self, path: str) -> bool:
        """True when ``path`` (relative, ``/``-separated, no trailing slash) is a code file, a folder
        holding one, or the tail of one (``app/config.py`` matches ``src/app/config.py``)."""
        # Exact and case-sensitive like every path test of the store: a folder is a range
        # (common.under_clause), a tail a GLOB (LIKE would take `API/` for `api/`).
        under, params = under_clause(path)
        row = self._store.conn.execute(f"SELECT 1 FROM code_files WHERE path = ? OR {under} LIMIT 1", [path, *params]).fetchone()
        if row is not None:
            return True
        esc = glob_escape(path)
        row = self._store.conn.execute("SELECT 1 FROM code_files WHERE path GLOB ? OR path GLOB ? LIMIT 1",
                                 ("*/" + esc, "*/" + esc + "/*")).fetchone()
        return row is not None


    def top_folders(self) -> set[str]:
        """The first path component of every code file in a folder (``src``, ``docs``, ...)."""
        rows = self._store.conn.execute(
            "SELECT DISTINCT substr(path, 1, instr(path, '/') - 1) FROM code_files WHERE instr(path, '/') > 0").fetchall()
        return {r[0] for r in rows}


    def all_sections(self) -> list[SectionText]:
        """Every stored section in file and section order."""
        rows = self._store.conn.execute(
            "SELECT d.path, s.heading_path, s.start_line, s.text FROM sections s JOIN documents d ON d.id = s.doc_id "
            "ORDER BY d.path, s.ordinal").fetchall()
        return [SectionText(r[0], r[1], int(r[2]), r[3]) for r in rows]


    def tokens_in_range(self, low: str, high: str, min_len: int, max_len: int, limit: int = 5000) -> list[str]:
        """Distinct tokens ``t`` with ``low <= t < high`` and ``min_len <= len(t) <= max_len`` (an
        index range: the near spellings of a name share its first letters), at most ``limit``."""
        rows = self._store.conn.execute(
            "SELECT DISTINCT token FROM code_tokens WHERE token >= ? AND token < ? AND length(token) BETWEEN ? AND ? "
            "LIMIT ?", (low, high, min_len, max_len, limit)).fetchall()
        return [r[0] for r in rows]
