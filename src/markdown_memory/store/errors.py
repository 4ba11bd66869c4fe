"""What a SQLite error means for the index: lock contention (``is_transient``), a damaged file
(``is_corruption``, then ``move_aside``), a database that cannot be written (``is_readonly``,
``readonly_error``, ``readonly_as_user_error``), or a keyword query SQLite's FTS5 rejected
(``QueryNotParsedError``, raised by ``fts``). The classification reads SQLite's messages, so it
lives in one place; callers outside the store catch the typed errors instead.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import DatabaseReadOnlyError, MarkdownMemoryError, QueryError, QueryNotParsedError  # noqa: F401 (re-export)

log = logging.getLogger("markdown_memory.store")

# QueryNotParsedError lives with the other errors; the store raises it (re-exported here).


_CORRUPT_MARKERS = ("not a database", "malformed", "corrupt", "disk image", "unsupported file format")


def is_transient(exc: BaseException) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED style errors: another connection holds a lock.
    These are never a reason to treat a database as damaged."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_corruption(exc: BaseException) -> bool:
    """True when ``exc`` says the database file itself is unusable (not a database, malformed
    image), as opposed to a transient lock, a missing directory or a refusal of ours (whose
    message may quote a path containing such words)."""
    if is_transient(exc) or isinstance(exc, MarkdownMemoryError):
        return False
    text = str(exc).lower()
    return any(marker in text for marker in _CORRUPT_MARKERS)


def is_query_rejection(exc: BaseException) -> bool:
    """True when an error of a keyword (FTS5 MATCH) query means SQLite refused the query text
    itself (``fts5: syntax error near ...``, ``no such column``), not the database: never for
    lock contention or damage, which keep their own meaning."""
    return not (is_transient(exc) or is_corruption(exc))


_READONLY_MARKERS = ("readonly database", "read-only", "unable to open database file")
_READONLY_ERRNOS = (errno.EACCES, errno.EPERM, errno.EROFS)


def is_readonly(exc: BaseException) -> bool:
    """True when ``exc`` says the database, its folder or a file beside it cannot be written
    or opened (read-only file or filesystem, no permission): SQLite's "attempt to write a
    readonly database" / "unable to open database file", or an OSError with EACCES, EPERM or
    EROFS. Never true for damage, lock contention or a refusal of ours."""
    if isinstance(exc, MarkdownMemoryError) or is_transient(exc):
        return False
    if isinstance(exc, OSError):
        return exc.errno in _READONLY_ERRNOS
    text = str(exc).lower()
    return any(marker in text for marker in _READONLY_MARKERS)


def readonly_error(path: Path, exc: BaseException) -> DatabaseReadOnlyError:
    """The one-sentence user error for a database that cannot be written (see ``is_readonly``):
    which database, the cause, and the fixes."""
    cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename and str(exc.filename) != str(path) else ""
    return DatabaseReadOnlyError(
        f"the index database {str(path)!r} cannot be written ({cause}{where}): SQLite needs to write the file and "
        "to create its -wal, -shm and .lock files beside it; make the file and its folder writable, or point "
        "--db / MARKDOWN_MEMORY_DB at a writable location"
    )


def move_aside(path: Path) -> Path:
    """Rename a damaged database (and its -wal/-shm files) to ``<name>.corrupt-<UTC time>``
    beside it; never deletes anything. Returns the new path of the main file."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    for suffix in ("-wal", "-shm", "-journal"):
        side = Path(str(path) + suffix)
        if side.exists():
            os.replace(side, Path(str(target) + suffix))
    if path.exists():
        os.replace(path, target)
    log.warning("index database %s was damaged; moved it aside to %s and rebuilding", path, target)
    return target


@contextmanager
def readonly_as_user_error(path: Path, catch: type[BaseException] | tuple[type[BaseException], ...] = Exception
                           ) -> Iterator[None]:
    """Run the block; an exception of type ``catch`` that ``is_readonly`` becomes
    ``readonly_error(path, exc)`` (a DatabaseReadOnlyError, chained); any other propagates
    unchanged. ``catch=OSError`` for file operations whose other errors must never be read by
    their message (a lock timeout naming a "read-only" folder is not a read-only database)."""
    try:
        yield
    except catch as exc:
        if is_readonly(exc):
            raise readonly_error(path, exc) from exc
        raise
