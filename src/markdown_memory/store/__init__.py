"""The one package that talks SQL: every statement markdown-memory runs is in here
(``tests/test_sql_confined.py`` fails on an ``execute`` anywhere else).

One SQLite database per docs root holds documents, their sections and passages, the FTS5
keyword index and the sqlite-vec (vec0) vectors.

Modules (find a query by the table it reads):

* ``connection`` — ``Store``: open (pragmas, WAL with a retried switch), ``transaction``,
  ``meta``, ``counts``, ``integrity_problem``, ``close``.
* ``driver`` — stdlib ``sqlite3`` or ``sqlean``, loading sqlite-vec.
* ``schema`` — DDL, ``SCHEMA_VERSION``, migrations, the vec0 tables.
* ``documents`` — the ``documents`` table; deleting a document with everything derived from it.
* ``sections`` / ``passages`` — the sections of a document and the passages that get embedded.
* ``fts`` — the keyword index: writing a section's row and the queries search runs.
* ``vectors`` — vector space, vector writes and reuse, ``knn`` and ``VectorCache``.
* ``failures`` — files that could not be indexed.
* ``root`` — one database belongs to one docs root (``bind_root``).
* ``errors`` — what a SQLite error means: transient, corruption, read-only, a rejected query.
* ``common`` — ``IN (...)`` batching, ``LIKE`` escaping.

Repositories: ``store.links`` (``links.LinkTable``: links, block ids, the names and headings
link resolution reads) and ``store.code`` (``code.CodeIndex``: the drift check's code side) hold
the connection and are reached only through those attributes. Narrow views per consumer live in
``views`` (``SearchReads``, ``IndexWrites``, ``LinkWrites``): ``index/`` and ``reading/links.py``
are annotated with theirs, ``search/`` is checked against its own by a test.

Convention (the other tables, until they move into repositories): each table module holds plain
functions whose first argument is the ``Store``
(``documents.has_documents(store)``), and the ``Store`` class lists every one of them as a
method (``has_documents = documents.has_documents``), so callers outside the package write
``store.has_documents()`` and a reader finds the SQL in the module named for the table. The
exceptions are ``knn`` (also ``Store.knn``) and ``VectorCache``, whose state outlives one
connection (one cache per database, shared by the connections of several threads). Rows leave
the store as typed records, never as bare positional tuples: a ``NamedTuple`` where callers
unpack them, a frozen dataclass (or ``TypedDict`` for search's row dicts) where they read fields.
"""

from __future__ import annotations

from .connection import BUSY_TIMEOUT_MS, Store
from .documents import DocumentFile, DocumentHeader, DocumentListRow, HeadingRow, Signature, StoredDocument
from .driver import Driver, pick_driver, reset_driver_cache
from .errors import (
    QueryNotParsedError,
    is_corruption,
    is_readonly,
    is_transient,
    move_aside,
    readonly_as_user_error,
    readonly_error,
)
from .failures import FailureRecord
from .fts import KeywordMatch
from .pages import PageMatch
from .passages import PassageSpan, PendingPassage
from .root import bind_root
from .schema import SCHEMA_VERSION
from .sections import SectionRecord, SectionRow
from .vectors import ReusableVector, VectorCache, blob_vector, knn, vector_blob

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DocumentFile",
    "DocumentHeader",
    "DocumentListRow",
    "Driver",
    "FailureRecord",
    "HeadingRow",
    "KeywordMatch",
    "PageMatch",
    "PassageSpan",
    "PendingPassage",
    "QueryNotParsedError",
    "ReusableVector",
    "SCHEMA_VERSION",
    "SectionRecord",
    "SectionRow",
    "Signature",
    "Store",
    "StoredDocument",
    "VectorCache",
    "bind_root",
    "blob_vector",
    "is_corruption",
    "is_readonly",
    "is_transient",
    "knn",
    "move_aside",
    "pick_driver",
    "readonly_as_user_error",
    "readonly_error",
    "reset_driver_cache",
    "vector_blob",
]
