"""One exception hierarchy, and one mapping from an exception to what an adapter shows.

Every message is one sentence a user (or an agent) can act on. :func:`describe_error` turns
any exception into an :class:`ErrorReport`; the MCP server renders ``tool_payload()`` and the
CLI ``cli_payload()`` from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: an MCP error result lists at most this many candidates
TOOL_CANDIDATES = 20


class MarkdownMemoryError(Exception):
    """Base class for every error the engine raises on purpose. ``candidates``: paths or
    breadcrumbs the request may have meant (None: the error never has any); ``ambiguous``:
    whether they are several matches rather than near misses (None: not applicable)."""

    candidates: list[str] | None = None
    ambiguous: bool | None = None


class ConfigError(MarkdownMemoryError):
    """A setting, flag or environment variable is invalid (e.g. docs root missing)."""


class PathOutsideRootError(MarkdownMemoryError):
    """A requested path resolves outside the docs root (``../``, absolute elsewhere, symlink)."""


class DocumentNotFoundError(MarkdownMemoryError):
    """No indexed Markdown document matches the requested path."""

    def __init__(self, message: str, candidates: list[str] | None = None) -> None:
        super().__init__(message)
        self.candidates: list[str] | None = candidates or []


class SectionNotFoundError(MarkdownMemoryError):
    """No section of the document matches the requested heading path.

    ``candidates`` holds the nearest breadcrumbs (for a miss) or every match (when ambiguous).
    """

    def __init__(self, message: str, candidates: list[str] | None = None, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.candidates: list[str] | None = candidates or []
        self.ambiguous: bool | None = ambiguous


class QueryError(MarkdownMemoryError):
    """A request argument is unusable: an empty query, a folder that is not inside the docs
    root, a read cursor outside the section."""


class InvalidRequestError(QueryError):
    """A search request field is outside its bounds (``models.SearchRequest``): a ``top_k`` or
    ``max_tokens`` that is not a whole number in range. The message names the field, the
    accepted values and what was given."""


class QueryNotParsedError(QueryError):
    """SQLite's FTS5 rejected a keyword query (a syntax problem the query analyser missed).
    ``cause``: the driver's error (or its text); ``query``: the query as the user gave it, when
    known. The message is one sentence telling the user to rephrase."""

    def __init__(self, cause: BaseException | str, query: str = "") -> None:
        super().__init__(
            f"the query could not be parsed by the keyword index ({cause}); rephrase it with plain words "
            "and without quotes or operators"
        )
        self.query = query


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


class DiskFullError(MarkdownMemoryError):
    """The filesystem holding the index database (or its -wal, -shm, lock or run-marker
    files) has no space left (SQLite's "database or disk is full", ENOSPC, EDQUOT, or a disk
    I/O error on a filesystem with no free space). An index run stops at the first one and keeps
    every document it committed; searches keep answering from what is indexed. ``folder``: the
    folder to free space in, which the message names (the store raises it with the folder only:
    the sentence is made here, from the data)."""

    def __init__(self, message: str | None = None, folder: str = "") -> None:
        super().__init__(message if message is not None else (
            f"disk full: free space at {folder} (the index database there cannot grow); what is indexed stays "
            "searchable, and the next index run resumes where this one stopped"))
        self.folder = folder


class IndexBusyError(MarkdownMemoryError):
    """Another process holds the writer lock for this docs root."""


class EmbedderUnavailableError(MarkdownMemoryError):
    """The configured embedding model cannot be loaded; the message says how to fix it."""


class ModelNotInstalledError(EmbedderUnavailableError):
    """None of the model's files are where they belong (never downloaded or copied): the fix is
    ``--download-model`` or another preset, not a repair of damaged files."""


class ModelDownloadError(MarkdownMemoryError):
    """The model could not be downloaded or failed verification."""


class QuestionsFileError(MarkdownMemoryError):
    """A questions file for ``markdown-memory eval`` cannot be read or breaks its format."""


class UsageError(ConfigError):
    """A command line the parser rejects (unknown flag, missing or out-of-range argument)."""


@dataclass(frozen=True)
class ErrorReport:
    """An exception as the adapters show it: ``message`` one sentence, ``kind`` a snake_case
    name ("document_not_found", "usage", "internal", ...), ``expected`` False for a bug."""

    message: str
    kind: str
    expected: bool
    candidates: tuple[str, ...] | None = None
    ambiguous: bool | None = None
    detail: str = ""

    def tool_payload(self, tool: str) -> dict[str, object]:
        """The JSON body of an MCP error result: ``{"error": sentence, "candidates"?: [...],
        "ambiguous"?: true}``. A bug is logged with its traceback by ``describe_error``'s
        caller; the agent gets no traceback."""
        if not self.expected:
            return {"error": f"internal error in {tool} ({self.detail}); the server's stderr log has details — "
                             "retry, or report it if it persists"}
        payload: dict[str, Any] = {"error": self.message}
        if self.candidates:
            payload["candidates"] = list(self.candidates)[:TOOL_CANDIDATES]
            if self.ambiguous:
                payload["ambiguous"] = True
        return payload

    def cli_payload(self) -> dict[str, object]:
        """``--json``'s error object: ``{"error": {"message", "type", "candidates"?,
        "ambiguous"?}}``."""
        if not self.expected:
            return {"error": {"message": f"internal error ({self.detail}); the traceback is on stderr",
                              "type": self.kind}}
        error: dict[str, Any] = {"message": self.message, "type": self.kind}
        if self.candidates is not None:
            error["candidates"] = list(self.candidates)
        if self.ambiguous is not None:
            error["ambiguous"] = self.ambiguous
        return {"error": error}


def sentence_of(exc: BaseException) -> str:
    """``exc``'s message as it was raised: a ``reader.ProgramSentence`` stays one (``str(exc)``
    is plain text, worded for this process's program)."""
    given = exc.args[0] if len(exc.args) == 1 else None
    return given if isinstance(given, str) and given == str(exc) else str(exc)


def describe_error(exc: BaseException, program: str | None = None) -> ErrorReport:
    """The one mapping from an exception to what users see. Expected errors
    (MarkdownMemoryError) keep their sentence, worded for a reader typing ``program`` when
    given (the resident service answering a client; ``reader.for_reader``); a
    KeyboardInterrupt is "interrupted"; anything else is an internal error (the caller logs its
    traceback)."""
    if isinstance(exc, MarkdownMemoryError):
        from .reader import for_reader

        kind = re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__.removesuffix("Error")).lower() or "error"
        candidates = tuple(exc.candidates) if exc.candidates is not None else None
        message = str(exc) if program is None else str(for_reader(sentence_of(exc), program))
        return ErrorReport(message, kind, True, candidates, exc.ambiguous)
    if isinstance(exc, KeyboardInterrupt):
        return ErrorReport("interrupted", "interrupted", True)
    return ErrorReport(str(exc), "internal", False, detail=f"{type(exc).__name__}: {exc}")
