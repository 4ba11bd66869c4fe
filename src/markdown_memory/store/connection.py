"""``Store``: one connection to an index database (one database per docs root).

Opening sets the pragmas (busy timeout, WAL with a retried switch, synchronous NORMAL), loads
sqlite-vec when the driver can (``driver``), creates or migrates the schema (``schema``) and,
given the docs root, checks the database belongs to it (``root``). The class itself holds the
connection-level operations (transactions, ``meta``, counts, the integrity check); the rest of
its methods are the plain functions of the table modules, listed at the end of the class by
module: ``store.documents_by_path()`` is ``documents.documents_by_path(store)``.
"""

from __future__ import annotations

import functools
import logging
import os
import time
import urllib.parse
from pathlib import Path
from typing import Any

from . import documents, fts, hook_log, names, pages, passages, schema, scope, sections, tags, vectors
from . import failures as failure_log  # not ``failures``: that name is also a method below
from .code import CodeIndex
from .driver import load_vec, pick_driver
from .errors import (
    disk_full_error,
    is_disk_full,
    is_io_error,
    is_readonly,
    is_transient,
    readonly_as_user_error,
    readonly_error,
)
from .links import LinkTable
from .root import bind_root

log = logging.getLogger("markdown_memory.store")

BUSY_TIMEOUT_MS = 30_000
JOURNAL_SWITCH_RETRY_SECONDS = 0.02  # between tries of a journal-mode switch another connection blocks
#: ``meta`` keys recording where a damaged database was moved (until a full run rebuilt it)
MOVED_ASIDE_KEYS = ("moved_aside", "moved_aside_reason")


class Store:
    """A connection to one index database plus the read and write operations the engine, the
    indexer and search need (see the module docstring and ``markdown_memory.store``).

    Raises SchemaError when the file was written by a newer schema, DatabaseReadOnlyError when
    the database cannot be opened or set up because it (or its folder) is not writable,
    DiskFullError when that fails because its filesystem is full. ``immutable=True`` opens the
    file read-only without its -wal and -shm files (``Database.connection`` on a full disk);
    ``absent=True`` opens an empty index in memory for a file not created yet (``Database.connection``
    before the first index run: reading creates nothing). With ``root`` (the docs root the caller serves) the database must belong to it (``root.bind_root``:
    recorded on first use) or RootMismatchError is raised. Not thread-safe: use one Store per
    thread (a ``VectorCache`` may be shared).
    """

    def __init__(self, path: Path, *, create: bool = True, root: Path | None = None, immutable: bool = False,
                 absent: bool = False) -> None:
        self.path = path
        self.driver = pick_driver()
        #: opened read-only as an immutable file (``immutable``): no -wal, -shm or lock is used,
        #: so it reads on a full disk; it never sees later writes (reopen it)
        self.immutable = immutable
        #: an empty index in memory standing for the file at ``path``, which does not exist yet
        #: (``absent``): a read of a never-indexed root creates no file or folder; its writes are
        #: lost, and it never sees the file once created (``Database.connection`` reopens)
        self.absent = absent
        with readonly_as_user_error(path):
            if absent:
                self.conn = self.driver.module.connect(":memory:", check_same_thread=False)
            elif immutable:
                uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro&immutable=1"
                self.conn = self.driver.module.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                                       check_same_thread=False)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = self.driver.module.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000,
                                                       check_same_thread=False)
        self.conn.isolation_level = None  # explicit BEGIN/COMMIT
        #: results of whole-table reads, by name: (data_version key, value); see ``versioned``
        self._versioned: dict[str, tuple[tuple[int, int], Any]] = {}
        self.vec_available = False
        if self.driver.vec_available:
            try:
                load_vec(self.conn)
                self.vec_available = True
            except Exception as exc:
                log.warning("vector search disabled: sqlite-vec failed to load: %s", exc)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # sorts and temporary b-trees in memory, never in a temp file: a search must work on a
        # full disk (the queries' temporary data is small)
        self.conn.execute("PRAGMA temp_store = MEMORY")
        try:
            self.journal_mode = "immutable" if immutable else "memory" if absent else self._set_journal_mode()
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = OFF")
            if create:
                schema.migrate(self)
                schema.ensure_exact_table(self)
            if root is not None and not absent:
                bind_root(self, root)
        except BaseException as exc:
            self.close()
            if is_disk_full(exc, path):
                raise disk_full_error(path) from exc
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
                if not is_io_error(exc) or is_disk_full(exc, self.path):
                    raise  # a full disk is not a filesystem without shared memory
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

    def transaction(self) -> _Transaction:
        """``with store.transaction():`` -> BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error)."""
        return _Transaction(self.conn)

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # pragma: no cover - closing twice
            pass

    # -- meta -----------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """The ``meta`` value of ``key``, or ``default``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        """Set the ``meta`` value of ``key``. Call inside a transaction."""
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def clear_moved_aside(self) -> None:
        """Forget where a damaged database was moved (``meta`` keys ``moved_aside`` and
        ``moved_aside_reason``): a full run rebuilt the index. Runs in its own transaction
        unless the caller's is open."""
        sql = f"DELETE FROM meta WHERE key IN ({','.join('?' * len(MOVED_ASIDE_KEYS))})"
        if self.conn.in_transaction:
            self.conn.execute(sql, MOVED_ASIDE_KEYS)
            return
        with self.transaction():
            self.conn.execute(sql, MOVED_ASIDE_KEYS)

    # -- counts ---------------------------------------------------------------------------
    def versioned(self, name: str, compute: Any) -> Any:
        """``compute()``'s value, reused until the database changes: SQLite's ``data_version``
        (changes when another connection, of this process or another, commits) plus this
        connection's own ``total_changes``. For whole-table reads a search repeats on every
        call (counts ~13 ms on 38k passages, the document list); callers must not mutate the value,
        except a cache made to be filled (``fts.term_frequencies``: ``compute`` is ``dict``)."""
        key = (int(self.conn.execute("PRAGMA data_version").fetchone()[0]), int(self.conn.total_changes))
        hit = self._versioned.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = compute()
        self._versioned[name] = (key, value)
        return value

    def counts(self) -> dict[str, int]:
        """documents, sections, passages, vectors (embedded passages), pending_vectors (not yet)."""
        return dict(self.versioned("counts", self._count_rows))

    def _count_rows(self) -> dict[str, int]:
        c = self.conn
        docs = c.execute("SELECT count(*) FROM documents").fetchone()[0]
        secs = c.execute("SELECT count(*) FROM sections").fetchone()[0]
        pas = c.execute("SELECT count(*) FROM passages").fetchone()[0]
        # the pending ones through their partial index (has_vector = 1 would scan every passage:
        # ~0.1 s per status at 16x the eval corpus)
        pending = c.execute("SELECT count(*) FROM passages WHERE has_vector = 0").fetchone()[0]
        return {"documents": docs, "sections": secs, "passages": pas, "vectors": pas - pending, "pending_vectors": pending}

    @functools.cached_property
    def code(self) -> CodeIndex:
        """The code side's tables (``drift``): a repository over this connection."""
        return CodeIndex(self)

    @functools.cached_property
    def links(self) -> LinkTable:
        """The link tables (``reading/links.py``, the indexer): a repository over this connection."""
        return LinkTable(self.conn)

    # -- the table modules' functions as methods (first argument: this Store) -------------
    # documents.py
    documents_by_path = documents.documents_by_path
    has_documents = documents.has_documents
    has_documents_under = documents.has_documents_under
    indexed_paths = documents.indexed_paths
    document_id = documents.document_id
    document_signature = documents.document_signature
    document_header = documents.document_header
    document_warnings = documents.document_warnings
    count_documents = documents.count_documents
    document_list = documents.document_list
    document_headings = documents.document_headings
    touch_document = documents.touch_document
    delete_document = documents.delete_document
    insert_document = documents.insert_document
    # sections.py
    sections_of = sections.sections_of
    section_ids_of = sections.section_ids_of
    section_rows = sections.section_rows
    section_id_at = sections.section_id_at
    children = sections.children
    section_count = sections.section_count
    # passages.py
    passage_embed_keys = passages.passage_embed_keys
    passages_of_sections = passages.passages_of_sections
    passage_sections = passages.passage_sections
    pending_passages = passages.pending_passages
    set_embed_keys = passages.set_embed_keys
    # fts.py
    keyword_matches = fts.keyword_matches
    match_count = fts.match_count
    heading_matches = fts.heading_matches
    has_match = fts.has_match
    term_frequencies = fts.term_frequencies
    # pages.py
    page_matches = pages.page_matches
    # tags.py and scope.py (vault names and tags; search filters)
    tags_of = tags.tags_of
    aliases_of = tags.aliases_of
    named_documents = names.named_documents
    allowed_passages = scope.allowed_passages
    has_scoped_sections = scope.has_scoped_sections
    sections_in_scope = scope.sections_in_scope
    empty_filters = scope.empty_filters
    # vectors.py
    has_vec_tables = vectors.has_vec_tables
    vector_space = vectors.vector_space
    ensure_vector_space = vectors.ensure_vector_space
    old_vectors = vectors.old_vectors
    reusable_vectors = vectors.reusable_vectors
    attach_vectors = vectors.attach_vectors
    refresh_section_vectors = vectors.refresh_section_vectors
    knn = vectors.knn
    # failures.py
    record_failure = failure_log.record_failure
    clear_failures = failure_log.clear_failures
    all_failures = failure_log.all_failures
    failures = failure_log.failures
    failed_file_count = failure_log.failed_file_count
    failure_reason = failure_log.failure_reason
    # hook_log.py (what the prompt hook did with each prompt; the local page shows it)
    add_hook_entry = hook_log.add_hook_entry
    hook_entries = hook_log.hook_entries
    hook_sessions = hook_log.hook_sessions
    clear_hook_log = hook_log.clear_hook_log


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
