"""SQLite storage: one database per docs root (documents, sections, passages, FTS5, vec0).

Driver choice: the stdlib ``sqlite3`` when its connections can load extensions; otherwise the
``sqlean.py`` driver (a maintained sqlite3-compatible build that can); otherwise the stdlib
without vectors (keyword-only, said in every status). sqlite-vec is only touched here, in
``_load_vec``; parsing and FTS never import it.

Schema version lives in ``PRAGMA user_version``; older schemas migrate forward, a newer one is
refused with SchemaError. Vectors are stored in ``vec_passages``/``vec_sections`` (vec0, cosine
distance), created when the first embedder writes, sized to its dimension; ``meta`` records the
embedder ``weights_id`` they belong to.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, Sequence

import numpy as np

from .errors import SchemaError
from .fts_text import fts_text
from .store_errors import (  # noqa: F401 (re-exported)
    is_corruption, is_readonly, is_transient, move_aside, readonly_as_user_error, readonly_error,
)

log = logging.getLogger("markdown_memory.store")

SCHEMA_VERSION = 2
BUSY_TIMEOUT_MS = 30_000
JOURNAL_SWITCH_RETRY_SECONDS = 0.02  # between tries of a journal-mode switch another connection blocks

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL DEFAULT 0,
    title TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    warnings TEXT NOT NULL DEFAULT '[]',
    line_count INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sections(
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    base_path TEXT NOT NULL,
    title TEXT NOT NULL,
    level INTEGER NOT NULL,
    part INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    parent_ordinal INTEGER
);
CREATE INDEX IF NOT EXISTS sections_doc ON sections(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS passages(
    id INTEGER PRIMARY KEY,
    section_id INTEGER NOT NULL,
    doc_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    embed_key TEXT NOT NULL,
    has_vector INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id);
CREATE INDEX IF NOT EXISTS passages_section ON passages(section_id);
CREATE INDEX IF NOT EXISTS passages_key ON passages(embed_key);
CREATE INDEX IF NOT EXISTS passages_pending ON passages(has_vector) WHERE has_vector = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS sections_fts USING fts5(
    heading, body, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS sections_vocab USING fts5vocab(sections_fts, row);
CREATE TABLE IF NOT EXISTS failures(
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
"""


@dataclass
class Driver:
    """The sqlite3-compatible module in use and whether sqlite-vec loaded."""

    module: ModuleType
    name: str
    vec_available: bool
    vec_error: str | None


def _driver_candidates() -> list[str]:
    forced = os.environ.get("MARKDOWN_MEMORY_SQLITE_DRIVER", "").strip().lower()
    if forced in ("sqlite3", "sqlean"):
        return [forced]
    return ["sqlite3", "sqlean"]


def _can_load_extensions(module: ModuleType) -> bool:
    conn = module.connect(":memory:")
    try:
        return hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


def _load_vec(conn: Any) -> None:
    """Load sqlite-vec into ``conn``; raises whatever the driver raises on failure."""
    override = os.environ.get("MARKDOWN_MEMORY_VEC_PATH")
    conn.enable_load_extension(True)
    try:
        if override:
            conn.load_extension(override)
        else:
            import sqlite_vec

            sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)


_DRIVER: Driver | None = None


def pick_driver() -> Driver:
    """Choose the driver once per process (see module docstring). Never raises."""
    global _DRIVER
    if _DRIVER is not None:
        return _DRIVER
    reasons = []
    for name in _driver_candidates():
        try:
            module = importlib.import_module(name)
        except ImportError:
            reasons.append(f"{name} is not installed")
            continue
        if not _can_load_extensions(module):
            reasons.append(f"this Python's {name} cannot load extensions")
            continue
        probe = module.connect(":memory:")
        try:
            _load_vec(probe)
            _DRIVER = Driver(module, name, True, None)
            return _DRIVER
        except Exception as exc:  # any driver's OperationalError, OSError, ImportError
            reasons.append(f"sqlite-vec failed to load with {name}: {exc}")
        finally:
            probe.close()
    import sqlite3

    reason = "; ".join(reasons)
    log.warning(
        "vector search disabled: %s. Install the sqlean.py package (pip install sqlean.py) or use a "
        "Python built with --enable-loadable-sqlite-extensions; keyword search still works.",
        reason,
    )
    _DRIVER = Driver(sqlite3, "sqlite3", False, reason)
    return _DRIVER


def reset_driver_cache() -> None:
    """Forget the chosen driver (tests switch drivers through the environment)."""
    global _DRIVER
    _DRIVER = None


def vector_blob(vector: np.ndarray) -> bytes:
    """float32 little-endian bytes, the format vec0 expects."""
    return np.asarray(vector, dtype="<f4").tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


#: values bound per ``IN (...)`` query: far below SQLite's bound-parameter limit (999 before 3.32)
IN_CHUNK = 500


def _bound_chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    """``items`` in slices of at most ``IN_CHUNK``, one ``IN (...)`` query each."""
    for i in range(0, len(items), IN_CHUNK):
        yield items[i : i + IN_CHUNK]


def front_matter_keywords(title: str, metadata: dict[str, Any]) -> tuple[str, str]:
    """Front-matter text the keyword index adds to a document's first section: its ``title``
    when it differs from the document title (the H1), and its ``description``/``summary``, each
    as ``(" " + heading words, " " + body words)``; empty strings when there is none. The title
    shown stays the H1: a page is found by either name."""
    extra_title = metadata.get("title")
    heading = ""
    if isinstance(extra_title, str) and extra_title.strip() and extra_title.strip().casefold() != title.strip().casefold():
        heading = " " + extra_title.strip()
    body = " ".join(str(metadata[k]).strip() for k in ("description", "summary")
                    if isinstance(metadata.get(k), str) and metadata[k].strip())
    return heading, (" " + body if body else "")


class Store:
    """A connection to one index database plus the write and read helpers the engine needs.

    Raises SchemaError when the file was written by a newer schema, DatabaseReadOnlyError when
    the database cannot be opened or set up because it (or its folder) is not writable. With ``root`` (the docs
    root the caller serves) the database must belong to it (``rootcheck.bind_root``: recorded
    on first use) or RootMismatchError is raised. Not thread-safe: use one Store per thread.
    """

    def __init__(self, path: Path, *, create: bool = True, root: Path | None = None) -> None:
        self.path = path
        self.driver = pick_driver()
        with readonly_as_user_error(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = self.driver.module.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000,
                                                   check_same_thread=False)
        self.conn.isolation_level = None  # explicit BEGIN/COMMIT
        self.vec_available = False
        if self.driver.vec_available:
            try:
                _load_vec(self.conn)
                self.vec_available = True
            except Exception as exc:
                log.warning("vector search disabled: sqlite-vec failed to load: %s", exc)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            self.journal_mode = self._set_journal_mode()
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = OFF")
            if create:
                self._migrate()
            if root is not None:
                from .rootcheck import bind_root

                bind_root(self, root)
        except BaseException as exc:
            self.close()
            if is_readonly(exc):
                raise readonly_error(path, exc) from exc
            raise

    def _set_journal_mode(self) -> str:
        """WAL when the filesystem allows it (readers never wait for the writer); otherwise a
        rollback journal with a warning (network and FAT filesystems: WAL needs shared memory).
        Reading the mode of a database already in WAL takes no lock. Switching needs the
        database to itself, and SQLite answers "database is locked" at once, without waiting
        out busy_timeout, when two connections try it together (each holds the shared lock the
        other must lose): so a locked switch is retried until BUSY_TIMEOUT_MS has passed; by
        then the other connection has usually switched it and the first check returns."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            current = str(self.conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if current == "wal":
                return current
            try:
                mode = str(self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]).lower()
                break
            except self.driver.module.OperationalError as exc:
                if is_transient(exc) and time.monotonic() < deadline:
                    time.sleep(JOURNAL_SWITCH_RETRY_SECONDS)
                    continue
                if "disk i/o" not in str(exc).lower():
                    raise
                log.warning("WAL mode failed for %s (%s: the filesystem may not support shared memory, e.g. "
                            "a network or FAT drive); continuing with a rollback journal", self.path, exc)
                return str(self.conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]).lower()
        if mode != "wal":
            log.warning("WAL mode unavailable for %s (journal_mode=%s); continuing with a rollback journal",
                        self.path, mode)
        return mode

    def integrity_problem(self) -> str | None:
        """None when ``PRAGMA quick_check`` and the FTS5 integrity check pass, else the first
        problem found (one line). Reads every page: O(database size), ~1 s per 100 MB. Raises
        DatabaseReadOnlyError when the database cannot be written (the FTS5 check writes): that
        is not damage."""
        rows = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check").fetchall()]
        if rows != ["ok"]:
            return "; ".join(rows[:3])
        try:
            self.conn.execute("INSERT INTO sections_fts(sections_fts) VALUES('integrity-check')")
        except self.driver.module.DatabaseError as exc:
            if is_transient(exc):
                raise
            if is_readonly(exc):  # the check writes; a read-only database is not a damaged one
                raise readonly_error(self.path, exc) from exc
            return f"full-text index: {exc}"
        return None

    # -- schema ---------------------------------------------------------------------------
    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"index {str(self.path)!r} has schema version {version}, newer than this markdown-memory "
                f"supports ({SCHEMA_VERSION}); upgrade markdown-memory or delete the index file"
            )
        if version == SCHEMA_VERSION:
            return
        with self.transaction():
            # another connection may have migrated while this one waited for the write lock
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version == SCHEMA_VERSION:
                return
            if version == 0:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
            if 0 < version < 2:  # v2: ctime_ns, so a rewrite that restores size and mtime is seen
                self.conn.execute("ALTER TABLE documents ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0")
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def transaction(self) -> "_Transaction":
        """``with store.transaction():`` -> BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error)."""
        return _Transaction(self.conn)

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # pragma: no cover - closing twice
            pass

    # -- meta -----------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- vectors --------------------------------------------------------------------------
    def has_vec_tables(self) -> bool:
        row = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_passages'").fetchone()
        return row is not None

    def vector_space(self) -> tuple[str | None, int | None]:
        """(weights_id, dimension) of the stored vectors, or (None, None)."""
        wid = self.get_meta("weights_id")
        dim = self.get_meta("dimension")
        return wid, (int(dim) if dim else None)

    def ensure_vector_space(self, weights_id: str, dimension: int) -> bool:
        """Make the vec tables belong to ``weights_id``. Drops vectors of another model (they are
        never compared across models) and marks every passage pending. Returns True when the
        space was (re)created. Must run inside a transaction; requires vec_available."""
        current, dim = self.vector_space()
        if current == weights_id and dim == dimension and self.has_vec_tables():
            return False
        self.conn.execute("DROP TABLE IF EXISTS vec_passages")
        self.conn.execute("DROP TABLE IF EXISTS vec_sections")
        self.conn.execute(
            f"CREATE VIRTUAL TABLE vec_passages USING vec0(embedding float[{dimension}] distance_metric=cosine)"
        )
        self.conn.execute(
            f"CREATE VIRTUAL TABLE vec_sections USING vec0(embedding float[{dimension}] distance_metric=cosine)"
        )
        self.conn.execute("UPDATE passages SET has_vector = 0 WHERE has_vector != 0")
        self.set_meta("weights_id", weights_id)
        self.set_meta("dimension", str(dimension))
        return True

    # -- documents ------------------------------------------------------------------------
    def documents_by_path(self, paths: list[str] | None = None) -> dict[str, tuple[int, str, tuple[int, int, int]]]:
        """``{path: (id, sha256, (size, mtime_ns, ctime_ns))}`` for every indexed document, or
        only for those of ``paths`` (POSIX paths relative to the root; unknown ones are left out)."""
        sql = "SELECT path, id, sha256, size, mtime_ns, ctime_ns FROM documents"
        if paths is None:
            rows = self.conn.execute(sql).fetchall()
        else:
            rows = []
            for chunk in _bound_chunks(list(dict.fromkeys(paths))):
                rows += self.conn.execute(f"{sql} WHERE path IN ({','.join('?' * len(chunk))})", chunk).fetchall()
        return {r[0]: (r[1], r[2], (r[3], r[4], r[5])) for r in rows}

    def touch_document(self, doc_id: int, signature: tuple[int, int, int]) -> None:
        """Record a new stat signature for an unchanged (same sha256) document."""
        self.conn.execute(
            "UPDATE documents SET size = ?, mtime_ns = ?, ctime_ns = ? WHERE id = ?", (*signature, doc_id)
        )

    def delete_document(self, doc_id: int) -> None:
        """Remove a document and everything derived from it. Call inside a transaction."""
        section_ids = [r[0] for r in self.conn.execute("SELECT id FROM sections WHERE doc_id = ?", (doc_id,))]
        if self.has_vec_tables() and self.vec_available:
            passage_ids = [
                r[0] for r in self.conn.execute("SELECT id FROM passages WHERE doc_id = ? AND has_vector = 1", (doc_id,))
            ]
            self._delete_rowids("vec_passages", passage_ids)
            self._delete_rowids("vec_sections", section_ids)
        self._delete_rowids("sections_fts", section_ids)
        self.conn.execute("DELETE FROM passages WHERE doc_id = ?", (doc_id,))
        self.conn.execute("DELETE FROM sections WHERE doc_id = ?", (doc_id,))
        self.conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def _delete_rowids(self, table: str, ids: Sequence[int]) -> None:
        for chunk in _bound_chunks(ids):
            marks = ",".join("?" * len(chunk))
            self.conn.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})", list(chunk))

    def old_vectors(self, doc_id: int) -> dict[str, bytes]:
        """``{embed_key: vector blob}`` of a document's embedded passages (reused on rewrite)."""
        if not (self.vec_available and self.has_vec_tables()):
            return {}
        rows = self.conn.execute(
            "SELECT p.embed_key, v.embedding FROM passages p JOIN vec_passages v ON v.rowid = p.id "
            "WHERE p.doc_id = ? AND p.has_vector = 1",
            (doc_id,),
        )
        return {r[0]: r[1] for r in rows}

    def insert_document(self, record: dict[str, Any], sections: Iterable[Any], passages: Iterable[Any]) -> int:
        """Insert a parsed document (see indexer.write_document). Returns the new document id.

        ``sections``: parse.Section objects; ``passages``: (Passage, embed_key) pairs.
        """
        cur = self.conn.execute(
            "INSERT INTO documents(path, sha256, size, mtime_ns, ctime_ns, title, metadata, warnings, line_count, "
            "tokens, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record["path"],
                record["sha256"],
                record["size"],
                record["mtime_ns"],
                record.get("ctime_ns", 0),
                record["title"],
                json.dumps(record.get("metadata", {}), default=str, ensure_ascii=False),
                json.dumps(record.get("warnings", []), ensure_ascii=False),
                record.get("line_count", 0),
                record.get("tokens", 0),
                record.get("indexed_at", 0.0),
            ),
        )
        doc_id = int(cur.lastrowid)
        section_ids: list[int] = []
        lead_heading, lead_body = front_matter_keywords(record["title"], record.get("metadata") or {})
        for s in sections:
            cur = self.conn.execute(
                "INSERT INTO sections(doc_id, ordinal, heading_path, base_path, title, level, part, start_line, "
                "end_line, text, tokens, parent_ordinal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (doc_id, s.ordinal, s.heading_path, s.base_path, s.title, s.level, s.part, s.start_line,
                 s.end_line, s.text, s.tokens, s.parent),
            )
            sid = int(cur.lastrowid)
            section_ids.append(sid)
            self.conn.execute(
                "INSERT INTO sections_fts(rowid, heading, body) VALUES (?, ?, ?)",
                (sid, fts_text(f"{record['title']} {s.base_path}{lead_heading}"), fts_text(f"{s.text}{lead_body}")),
            )
            lead_heading = lead_body = ""  # only the document's first section carries them
        rows = []
        for p, key in passages:
            rows.append((section_ids[p.section], doc_id, p.ordinal, p.kind, p.text, p.start_line, p.end_line, key))
        self.conn.executemany(
            "INSERT INTO passages(section_id, doc_id, ordinal, kind, text, start_line, end_line, embed_key) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return doc_id

    def attach_vectors(self, pairs: Sequence[tuple[int, bytes]]) -> None:
        """Store passage vectors ``[(passage_id, float32 blob)]`` and mark them embedded. A
        passage that still has a vector row (marked pending again) gets it replaced: vec0 ignores
        ``INSERT OR REPLACE`` and would fail the whole run on the duplicate rowid, so on that
        error the batch's rows are deleted and inserted again (no extra cost otherwise)."""
        if not pairs:
            return
        sql = "INSERT INTO vec_passages(rowid, embedding) VALUES (?, ?)"
        try:
            self.conn.executemany(sql, pairs)
        except self.driver.module.DatabaseError as exc:  # OperationalError or IntegrityError by driver
            if "unique" not in str(exc).lower():
                raise
            self._delete_rowids("vec_passages", [pid for pid, _ in pairs])
            self.conn.executemany(sql, pairs)
        self.conn.executemany("UPDATE passages SET has_vector = 1 WHERE id = ?", [(pid,) for pid, _ in pairs])

    def refresh_section_vectors(self, section_ids: Iterable[int]) -> int:
        """Section vector = L2-normalised mean of its passage vectors, for sections whose passages
        are all embedded. Returns how many section vectors were written."""
        written = 0
        for sid in set(section_ids):
            rows = self.conn.execute(
                "SELECT p.has_vector, v.embedding FROM passages p LEFT JOIN vec_passages v ON v.rowid = p.id "
                "WHERE p.section_id = ?",
                (sid,),
            ).fetchall()
            if not rows or any(r[0] == 0 or r[1] is None for r in rows):
                continue
            mean = np.mean([blob_vector(r[1]) for r in rows], axis=0)
            norm = float(np.linalg.norm(mean)) or 1.0
            self.conn.execute("DELETE FROM vec_sections WHERE rowid = ?", (sid,))
            self.conn.execute(
                "INSERT INTO vec_sections(rowid, embedding) VALUES (?, ?)", (sid, vector_blob(mean / norm))
            )
            written += 1
        return written

    # -- failures -------------------------------------------------------------------------
    def record_failure(self, path: str, kind: str, reason: str, at: float) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO failures(path, kind, reason, at) VALUES (?, ?, ?, ?)", (path, kind, reason, at)
        )

    def clear_failures(self, paths: Iterable[str] | None = None) -> None:
        if paths is None:
            self.conn.execute("DELETE FROM failures")
        else:
            self.conn.executemany("DELETE FROM failures WHERE path = ?", [(p,) for p in paths])

    def counts(self) -> dict[str, int]:
        """documents, sections, passages, vectors (embedded passages), pending (not yet)."""
        c = self.conn
        docs = c.execute("SELECT count(*) FROM documents").fetchone()[0]
        secs = c.execute("SELECT count(*) FROM sections").fetchone()[0]
        pas = c.execute("SELECT count(*) FROM passages").fetchone()[0]
        vecs = c.execute("SELECT count(*) FROM passages WHERE has_vector = 1").fetchone()[0]
        return {"documents": docs, "sections": secs, "passages": pas, "vectors": vecs, "pending_vectors": pas - vecs}


class _Transaction:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> Any:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")

