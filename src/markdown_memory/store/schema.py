"""The database layout: tables, indexes, the FTS5 and vec0 virtual tables, and migrations.

The schema version lives in ``PRAGMA user_version``. ``migrate`` creates a new database and
moves an older schema forward (v1 -> v2: ``documents.ctime_ns``; v2 -> v3: the keyword index
is rebuilt in place from the stored sections, because its text rule changed to
``text.match_form``; v3 -> v4: ``passages.lang``, the vault tables ``tags`` and ``doc_names``
(``store/tags.py``), and the keyword index rebuilt with front-matter aliases); v4 -> v5: the
``links`` and ``block_ids`` tables; v5 -> v6: the keyword index rebuilt because ``fts_text``
folds optional marks and reads emoji as words (``text.keyword_form``); v6 -> v7: ``pages_fts``, the
page identity (``pages.py``; the parser version bump re-parses every file, filling it); v7 -> v8:
``vec_passages_exact``, a plain rowid table holding each passage vector again (filled once from
``vec0`` by ``ensure_exact_table``, also on a later open when sqlite-vec was not loaded then); v8 -> v9:
``hook_log``, what the prompt hook did with each prompt (``hook_log.py``, shown by the local page); a newer one
is refused with SchemaError. A change of ``text.fts_text``
is a schema change: bump the version and rebuild (``fts.rebuild``). The vector tables (``vec_passages``, ``vec_sections``: vec0, cosine distance) are
not part of the fixed schema: ``create_vector_tables`` makes them when the first embedder
writes, sized to its dimension (``vectors.ensure_vector_space``).

Tables: ``meta(key, value)``; ``documents`` (one row per indexed file: path, sha256, stat
signature, title, front matter as JSON, warnings as JSON, token count); ``sections`` (one row
per section of a document, by ``ordinal``); ``passages`` (the embedded pieces of a section,
``embed_key`` = what was embedded, ``has_vector``, ``lang`` = a fence's code language); ``sections_fts`` (FTS5: ``heading`` =
document title + breadcrumb, ``body`` = section text; rowid = section id) with its
``sections_vocab`` (fts5vocab row table: section frequency per term); ``failures`` (files
that could not be indexed, and warnings); ``links`` and ``block_ids`` (``links.py``: the links of each
section and where they lead; v3 -> v4 adds them, the parser version bump re-parses every file);
``pages_fts`` (FTS5, rowid = document id: title and names, path words, description; ``pages.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SchemaError
from . import fts, hook_log, pages, tags

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

SCHEMA_VERSION = 9

#: The plain copy of ``vec_passages`` (rowid = passage id, float32 blob): the exact distances of a
#: shortlist are read from it by rowid (``vectors.knn``), where vec0 reads a 1,024-vector chunk per row.
EXACT_TABLE = "vec_passages_exact"

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
    has_vector INTEGER NOT NULL DEFAULT 0,
    lang TEXT NOT NULL DEFAULT ''
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


def migrate(store: Store) -> None:
    """Bring the database to ``SCHEMA_VERSION`` (create it when new). Raises SchemaError for a
    database written by a newer schema. Takes the write lock only when something must change;
    a connection that waited for it re-reads the version (another one may have migrated)."""
    version = store.conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"index {str(store.path)!r} has schema version {version}, newer than this markdown-memory "
            f"supports ({SCHEMA_VERSION}); upgrade markdown-memory or delete the index file"
        )
    if version == SCHEMA_VERSION:
        return
    with store.transaction():
        # another connection may have migrated while this one waited for the write lock
        version = store.conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version == 0:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    store.conn.execute(statement)
        if version < 5:  # v5: the links tables (new databases too)
            store.links.ensure_tables()
        if 0 < version < 2:  # v2: ctime_ns, so a rewrite that restores size and mtime is seen
            store.conn.execute("ALTER TABLE documents ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0")
        columns = {row[1] for row in store.conn.execute("PRAGMA table_info(passages)")}
        if 0 < version < 4 and "lang" not in columns:  # v4: passages.lang (a fence's code language)
            store.conn.execute("ALTER TABLE passages ADD COLUMN lang TEXT NOT NULL DEFAULT ''")
        if version < 7:  # v7: the page identity table (new databases too)
            pages.create_table(store)
        tags.create_tables(store)  # v4: the vault tables (store/tags.py), filled as documents are re-parsed
        if 0 < version < 6:  # v3: keyword rows in text.match_form; v4: aliases; v6: text.keyword_form
            fts.rebuild(store)
        if version < 8:  # v8: the exact-distance copy of vec_passages, filled from vec0 once
            _fill_exact_table(store)
        if version < 9:  # v9: the prompt hook's log (hook_log.py; new databases too)
            hook_log.create_hook_log(store)
        store.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def has_exact_table(store: Store) -> bool:
    """True when ``vec_passages_exact`` exists (it then holds every ``vec_passages`` vector)."""
    row = store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (EXACT_TABLE,)).fetchone()
    return row is not None


def _fill_exact_table(store: Store) -> None:
    """Create ``vec_passages_exact`` and copy ``vec_passages`` into it, when the vec0 tables
    exist, sqlite-vec is loaded and the copy does not exist yet. Call inside a transaction."""
    if not (store.vec_available and has_vector_tables(store)) or has_exact_table(store):
        return
    store.conn.execute(f"CREATE TABLE {EXACT_TABLE}(id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    store.conn.execute(f"INSERT INTO {EXACT_TABLE}(id, embedding) SELECT rowid, embedding FROM vec_passages")


def ensure_exact_table(store: Store) -> None:
    """Fill ``vec_passages_exact`` on an open with sqlite-vec loaded when a migration without it
    left it missing (cheap check; takes the write lock only then)."""
    if not (store.vec_available and has_vector_tables(store)) or has_exact_table(store):
        return
    with store.transaction():
        _fill_exact_table(store)


def has_vector_tables(store: Store) -> bool:
    """True when the vec0 tables exist (some embedder has written vectors to this database)."""
    row = store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_passages'").fetchone()
    return row is not None


def create_vector_tables(store: Store, dimension: int) -> None:
    """(Re)create ``vec_passages``, ``vec_sections`` (and the plain copy ``vec_passages_exact``) for ``dimension``-float vectors (cosine
    distance), dropping any existing ones and their vectors. Requires sqlite-vec; call inside a
    transaction."""
    store.conn.execute("DROP TABLE IF EXISTS vec_passages")
    store.conn.execute("DROP TABLE IF EXISTS vec_sections")
    store.conn.execute(f"DROP TABLE IF EXISTS {EXACT_TABLE}")
    store.conn.execute(f"CREATE TABLE {EXACT_TABLE}(id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    store.conn.execute(
        f"CREATE VIRTUAL TABLE vec_passages USING vec0(embedding float[{dimension}] distance_metric=cosine)"
    )
    store.conn.execute(
        f"CREATE VIRTUAL TABLE vec_sections USING vec0(embedding float[{dimension}] distance_metric=cosine)"
    )
