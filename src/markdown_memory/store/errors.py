"""What a SQLite error means for the index: lock contention (``is_transient``), a damaged file
(``is_corruption``, then ``move_aside``; ``PagesDamaged`` for damage a page check found), a
database that cannot be written (``is_readonly``, ``readonly_error``, ``readonly_as_user_error``),
a full filesystem (``is_disk_full``, ``disk_full_error``: also mapped by
``readonly_as_user_error``), another I/O failure (``is_io_error``), a duplicate key
(``is_duplicate_key``), or a keyword query SQLite's FTS5 rejected (``QueryNotParsedError``,
raised by ``fts``). The classification reads SQLite's messages, so it lives here and nowhere
else; callers outside the store catch the typed errors instead.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import (
    DatabaseReadOnlyError,
    DiskFullError,
    MarkdownMemoryError,
)
from ..errors import QueryNotParsedError as QueryNotParsedError  # re-exported: the store raises it

log = logging.getLogger("markdown_memory.store")

# QueryNotParsedError lives with the other errors; the store raises it (re-exported here).


# "vtable constructor failed": how older SQLite builds (Debian's stdlib sqlite3) report an FTS5
# table whose pages were overwritten, where newer ones say "malformed"
_CORRUPT_MARKERS = ("not a database", "malformed", "corrupt", "disk image", "unsupported file format",
                    "vtable constructor failed")


class PagesDamaged(Exception):
    """``PRAGMA quick_check`` found damage (``problems``: its first lines); ``is_corruption``
    says yes to it by its type."""

    def __init__(self, problems: str) -> None:
        super().__init__(f"the page check found the database corrupt: {problems}")


def is_transient(exc: BaseException) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED style errors: another connection holds a lock.
    These are never a reason to treat a database as damaged."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_corruption(exc: BaseException) -> bool:
    """True when ``exc`` says the database file itself is unusable (not a database, malformed
    image), as opposed to a transient lock, a missing directory or a refusal of ours (whose
    message may quote a path containing such words)."""
    if isinstance(exc, PagesDamaged):
        return True
    if is_transient(exc) or isinstance(exc, MarkdownMemoryError):
        return False
    text = str(exc).lower()
    return any(marker in text for marker in _CORRUPT_MARKERS)


def is_duplicate_key(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite refusing a row whose key is taken ("UNIQUE constraint
    failed", as sqlite-vec's vec0 tables say it of a rowid too)."""
    return "unique" in str(exc).lower()


def is_io_error(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite's disk I/O error (SQLITE_IOERR, by its code where the driver
    gives one, else by its message); ``is_disk_full`` tells a full disk among them."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (isinstance(code, int) and code & 0xFF == _SQLITE_IOERR) or "disk i/o error" in str(exc).lower()


def is_query_rejection(exc: BaseException) -> bool:
    """True when an error of a keyword (FTS5 MATCH) query means SQLite refused the query text
    itself (``fts5: syntax error near ...``, ``no such column``), not the database: never for
    lock contention, damage, a full disk or another I/O error, which keep their own meaning."""
    if is_transient(exc) or is_corruption(exc):
        return False
    text = str(exc).lower()  # SQLite's own phrases, never a quoted query word: "syntax error near ..."
    return not (text.startswith(("disk i/o error", "database or disk is full", "out of memory"))
                or is_disk_full(exc))


_FULL_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_SQLITE_FULL = 13  # SQLITE_FULL; extended codes keep it in the low byte
_SQLITE_IOERR = 10
#: a disk I/O error on a filesystem with less free space than this is taken for a full disk
#: (SQLite reports a failed write of its -shm or -wal file as SQLITE_IOERR, not SQLITE_FULL)
LOW_SPACE_BYTES = 1024 * 1024


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged process may still write on the filesystem holding ``path`` (its
    nearest existing parent), or None when that cannot be asked (no ``statvfs``, or an error)."""
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    try:
        stats = os.statvfs(probe)
    except (AttributeError, OSError):
        return None
    return stats.f_bavail * stats.f_frsize


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling (at most 8)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def is_disk_full(exc: BaseException, path: Path | None = None) -> bool:
    """True when ``exc`` (or an exception in its chain) says the filesystem is full: a
    DiskFullError, an OSError with ENOSPC or EDQUOT, SQLite's SQLITE_FULL ("database or disk is
    full"), or, given the database ``path``, a SQLite disk I/O error while its filesystem has
    less than ``LOW_SPACE_BYTES`` free. Never true for lock contention or damage."""
    for item in _chain(exc):
        if isinstance(item, DiskFullError):
            return True
        if isinstance(item, MarkdownMemoryError):
            return False
        if isinstance(item, OSError) and item.errno in _FULL_ERRNOS:
            return True
        code = getattr(item, "sqlite_errorcode", None)
        text = str(item).lower()
        if (isinstance(code, int) and code & 0xFF == _SQLITE_FULL) or "database or disk is full" in text:
            return True
        if path is not None and is_io_error(item):
            free = free_bytes(path)
            if free is not None and free < LOW_SPACE_BYTES:
                return True
    return False


def disk_full_error(path: Path) -> DiskFullError:
    """The one-sentence user error for a full filesystem under the database ``path``."""
    folder = path.parent
    return DiskFullError(folder=str(folder))


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
    """Run the block; an exception of type ``catch`` that ``is_disk_full`` becomes
    ``disk_full_error(path)`` (a DiskFullError), one that ``is_readonly`` becomes
    ``readonly_error(path, exc)`` (a DatabaseReadOnlyError), both chained; any other propagates
    unchanged. ``catch=OSError`` for file operations whose other errors must never be read by
    their message (a lock timeout naming a "read-only" folder is not a read-only database)."""
    try:
        yield
    except catch as exc:
        if is_disk_full(exc, path) and not isinstance(exc, DiskFullError):
            raise disk_full_error(path) from exc
        if is_readonly(exc):
            raise readonly_error(path, exc) from exc
        raise
