"""One exception hierarchy. Every message is one sentence a user (or an agent) can act on."""

from __future__ import annotations


class MarkdownMemoryError(Exception):
    """Base class for every error the engine raises on purpose."""


class ConfigError(MarkdownMemoryError):
    """A setting, flag or environment variable is invalid (e.g. docs root missing)."""


class PathOutsideRootError(MarkdownMemoryError):
    """A requested path resolves outside the docs root (``../``, absolute elsewhere, symlink)."""


class DocumentNotFoundError(MarkdownMemoryError):
    """No indexed Markdown document matches the requested path."""

    def __init__(self, message: str, candidates: list[str] | None = None) -> None:
        super().__init__(message)
        self.candidates = candidates or []


class SectionNotFoundError(MarkdownMemoryError):
    """No section of the document matches the requested heading path.

    ``candidates`` holds the nearest breadcrumbs (for a miss) or every match (when ambiguous).
    """

    def __init__(self, message: str, candidates: list[str] | None = None, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.candidates = candidates or []
        self.ambiguous = ambiguous


class QueryError(MarkdownMemoryError):
    """A request argument is unusable: an empty query, a folder that is not inside the docs
    root, a read cursor outside the section."""


class SchemaError(MarkdownMemoryError):
    """The database was written by a newer markdown-memory (schema version too new)."""


class RootMismatchError(MarkdownMemoryError):
    """The index database was built for another docs root (one database per docs root:
    ``--db`` / ``MARKDOWN_MEMORY_DB`` shared by two projects). Refused before anything is read
    or written; the message names both roots and the fixes."""


class DocsRootMissingError(MarkdownMemoryError):
    """The docs root is no longer an existing directory (moved, renamed or deleted while a
    server runs). Raised before any folder or file is created or the index is changed: the
    index stays intact for when the root comes back."""


class DatabaseReadOnlyError(MarkdownMemoryError):
    """The index database (or its folder: SQLite's -wal/-shm files, the writer lock) cannot be
    written or opened: read-only file or filesystem, missing permission. The message names the
    database, the cause and the fixes."""


class IndexBusyError(MarkdownMemoryError):
    """Another process holds the writer lock for this docs root."""


class EmbedderUnavailableError(MarkdownMemoryError):
    """The configured embedding model cannot be loaded; the message says how to fix it."""


class ModelDownloadError(MarkdownMemoryError):
    """The model could not be downloaded or failed verification."""
