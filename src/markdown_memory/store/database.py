"""The index database of one docs root as a resource: per-thread connections, the
cross-process writer lock, the run marker, and recovery from a damaged file.

``Database(root, path)`` opens nothing until first use. ``connection()`` is this thread's
:class:`~markdown_memory.store.Store` (WAL: readers never block the writer); ``writer()`` is an
index run's own connection, opened under the writer lock. A database that cannot be opened
because it is damaged (or that fails the integrity check after a run that was killed) is moved
aside and rebuilt; lock contention is never treated as damage.

Damage found later, under an open connection (the file truncated, overwritten or garbled while
this process runs), goes through one mechanism, :meth:`Database.recover_damaged`: every
thread's connection is dropped, the file is moved aside under the writer lock and an empty
database records where it went (``moved_aside``), which the engine then rebuilds from the files.
It is found two ways: the file's first 16 bytes are no SQLite header any more (checked, one
small read, each time a thread's open connection is handed out, before SQLite itself would
block 30 s on a WAL it cannot recover), and SQLite saying "malformed" to any call
(``Engine.recover_damaged``, from the MCP runtime).
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from ..errors import ConfigError, DiskFullError, DocsRootMissingError
from .connection import BUSY_TIMEOUT_MS, Store
from .driver import pick_driver
from .errors import (
    LOW_SPACE_BYTES,
    PagesDamaged,
    free_bytes,
    is_corruption,
    move_aside,
    readonly_as_user_error,
    readonly_error,
)
from .headfile import read_head

log = logging.getLogger("markdown_memory.engine")

#: the first 16 bytes of every SQLite 3 database file (sqlite.org/fileformat.html, "The Database Header")
SQLITE_HEADER = b"SQLite format 3\x00"


#: tables every index of ours has had since its first schema (store/schema.py)
OUR_TABLES = frozenset({"meta", "documents"})


def not_ours(path: Path) -> str | None:
    """Why the existing file at ``path`` is not recognisably an index of ours, or None: it is
    one (a SQLite header and our ``meta`` and ``documents`` tables), a SQLite database with no
    tables yet, an empty file (nothing to lose), or there is no file (or it cannot be read:
    opening it says why). Reads the header and, read-only, the list of tables (a busy database
    is not judged: None)."""
    try:
        head = read_head(path)
    except OSError:
        return None
    if not head:
        return None
    if head != SQLITE_HEADER:
        return "it does not start with a SQLite header"
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    module = pick_driver().module  # the process's one SQLite library: two would drop each other's locks
    try:
        conn = module.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except module.Error as exc:
        if not is_corruption(exc):
            return None  # locked, unreadable: not a sign either way (opening it says why)
        return f"SQLite cannot read its list of tables ({exc})"
    if tables and not OUR_TABLES <= tables:
        return f"it is a SQLite database of another program (tables: {', '.join(sorted(tables)[:6])})"
    return None


def _file_key(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def file_damage(path: Path) -> str | None:
    """Why the file at ``path`` is no SQLite database (truncated to 0 bytes, or its header
    overwritten), from its first 16 bytes; None when the header is there, or the file is
    missing or cannot be read (those are not damage). An empty file with no ``-wal`` file
    beside it is no damage either: it is a database another connection is creating (SQLite
    makes the file at connect and writes the header with the first change); a database
    truncated under open connections keeps its ``-wal``."""
    try:
        head = read_head(path)
    except OSError:
        return None
    if head == SQLITE_HEADER:
        return None
    if not head:
        return "the file was truncated to 0 bytes" if os.path.exists(f"{path}-wal") else None
    return "the file no longer starts with a SQLite header"


class Database:
    """The database at ``path`` for docs root ``root`` (see module docstring). Thread-safe."""

    def __init__(self, root: Path, path: Path, *, create_on_read: bool = False) -> None:
        self.root = root
        self.path = path
        #: False: while the file does not exist, a read gets an empty index in memory and creates
        #: nothing (a read-only command on a never-indexed root); True: the first read creates it
        #: (server mode: its open connection keeps the -wal file by which a file truncated under
        #: it is told from a new one, ``file_damage``)
        self.create_on_read = create_on_read
        self._local = threading.local()
        self._generation = 0  # bumped when the database file is replaced: threads reopen
        #: where a damaged database was moved (this process), for the status message
        self.moved_aside: str | None = None
        self._disk_full: tuple[str, int] | None = None  # (sentence, free bytes when it happened)
        #: called (no arguments) after :meth:`recover_damaged` moved a damaged file aside: the
        #: engine drops what it holds from the old file and starts the rebuild
        self.on_recover: Callable[[], None] | None = None
        # Held while a connection checks the file's header and opens it: SQLite creates a new
        # database as a 0-byte file and writes the header only with the schema, so another
        # thread must not take a file this process is still creating for one truncated to 0
        # bytes. Never held while waiting for the writer lock (an index run holds that long).
        self._open_lock = threading.RLock()
        #: (device, inode) of the files this object opened as an index of ours: one of them
        #: damaged later (its header overwritten) may be moved aside; any other file must be one
        #: of ours by its content (``not_ours``)
        self._ours: set[tuple[int, int]] = set()

    @property
    def disk_full(self) -> str | None:
        """The DiskFullError sentence of this process's last write (or open) that failed for
        lack of space, while it still holds: None once a guarded write succeeded again or the
        filesystem gained ``LOW_SPACE_BYTES`` of free space since (one ``statvfs``). Status and
        search answers carry it."""
        if self._disk_full is None:
            return None
        sentence, free_then = self._disk_full
        free = free_bytes(self.path)
        if free is not None and free >= free_then + LOW_SPACE_BYTES:
            self._disk_full = None
            return None
        return sentence

    def note_disk_full(self, exc: DiskFullError) -> bool:
        """Remember ``exc`` for ``disk_full``; True when it is news (nothing was remembered)."""
        news = self.disk_full is None
        self._disk_full = (str(exc), free_bytes(self.path) or 0)
        return news

    def require_root(self) -> None:
        """Raise DocsRootMissingError when the docs root is not an existing directory any more
        (moved, renamed or deleted while this process runs). Checked (one ``stat``) before the
        database is opened, a folder or lock file created, or the index changed: a walk of a
        missing root would remove every document, and a database path inside the old root
        would be recreated there as a stray folder."""
        if not os.path.isdir(self.root):
            raise DocsRootMissingError(
                f"the docs root {str(self.root)!r} no longer exists (moved, renamed or deleted?); the index "
                f"{str(self.path)!r} is kept unchanged: restore the folder, or restart markdown-memory "
                "with --docs-dir / MARKDOWN_MEMORY_DOCS_DIR (and --db / MARKDOWN_MEMORY_DB, if set) pointing at "
                "its new location"
            )

    # -- connections ----------------------------------------------------------------------------
    def connection(self) -> Store:
        """This thread's connection (opened, and the schema created, on first use; an empty one
        in memory, ``Store(absent=True)``, while the file does not exist: it is reopened once an
        index run or refresh created it); on a full
        disk where no WAL reader can be opened, an immutable read-only one until space is back
        (``_open_immutable``). Raises DocsRootMissingError, DatabaseReadOnlyError (the database
        or its folder is not writable), DiskFullError, RootMismatchError and SchemaError."""
        self.require_root()
        store: Store | None = getattr(self._local, "store", None)
        if store is not None and (getattr(self._local, "generation", 0) != self._generation
                                  or (store.immutable and _space_back(self.path))):
            store.close()
            store = None
        if store is not None and store.absent and os.path.lexists(self.path):
            store = None  # an index run created the file; not closed: a caller may still hold the empty one
        if store is not None and not store.immutable and not store.absent:
            damage = file_damage(self.path)
            if damage is not None:  # changed under the open connection: SQLite would say malformed or block
                self.recover_damaged(damage)
                store = None
        if store is None:
            generation = self._generation
            self._local.recovered = False
            store = self._open()
            self._local.store = store
            # a file another thread moved aside while this one opened makes the next call
            # reopen (this thread's store may be the old file); one this thread replaced is current
            self._local.generation = self._generation if self._local.recovered else generation
        return store

    def close(self) -> None:
        """Close this thread's connection, if it has one."""
        store = getattr(self._local, "store", None)
        if store is not None:
            store.close()
            self._local.store = None

    def _open(self) -> Store:
        with self._open_lock:
            if not self.create_on_read and not os.path.lexists(self.path):  # never indexed (or a mistyped --db): a read creates nothing
                return Store(self.path, absent=True)
            self.refuse_unless_ours()
            damage = file_damage(self.path)
            if damage is None:
                try:
                    return self._remember(Store(self.path, root=self.root))
                except DiskFullError as exc:
                    return self._open_immutable(exc)
                except Exception as exc:
                    if not is_corruption(exc):
                        raise
                    reason = str(exc)
        if damage is not None:
            repaired = self._repair_if_damaged()
            if repaired is not None:
                return repaired
            return self._open()  # rebuilt by someone else meanwhile
        lock = self.writer_lock()
        with self._hold(lock, BUSY_TIMEOUT_MS / 1000):
            try:  # another process may have rebuilt it while we waited for the lock
                return self._remember(Store(self.path, root=self.root))
            except Exception as exc:
                if not is_corruption(exc):
                    raise
                store = self._recover(str(exc) or reason)
        if self.on_recover is not None:  # as for damage found later: forget the old file's vectors, rebuild
            self.on_recover()
        return store

    def recover_damaged(self, problem: BaseException | str) -> str | None:
        """The one recovery from damage found while this process runs: ``problem`` (an
        exception from any call, or a sentence) that says the database file is damaged makes
        every thread drop its connection and the file move aside (under the writer lock, waiting
        at most the busy timeout) to an empty database that records where it went. Returns where
        it was moved, or None when ``problem`` is no damage, or the file was already replaced by
        a sound one (another thread or process recovered it first)."""
        if not isinstance(problem, str) and not is_corruption(problem):
            return None
        reason = str(problem)
        opened = getattr(self._local, "generation", self._generation)
        self.close()
        if opened != self._generation:  # the error came from a connection to a file already replaced
            return None
        self._generation += 1  # every other thread reopens on its next call
        with self._hold(self.writer_lock(), BUSY_TIMEOUT_MS / 1000):
            if isinstance(problem, str) and file_damage(self.path) is None:
                return None  # recovered by someone else while we waited for the lock
            store = self._recover(reason)
        self._local.store = store
        self._local.generation = self._generation
        log.warning("the index database was damaged while in use (%s); moved aside to %s", reason, self.moved_aside)
        if self.on_recover is not None:
            self.on_recover()
        return self.moved_aside

    def check_pages(self) -> str | None:
        """``PRAGMA quick_check`` on this thread's connection: reads every page of the file (about
        0.1 s per 30 MB; damage a query may never touch, pages overwritten under a running
        process). Damage found goes through :meth:`recover_damaged` (moved aside, the rebuild
        started, logged). Returns where the file was moved, or None when it is sound. Raises
        what ``connection`` raises."""
        before = self.moved_aside
        store = self.connection()
        if self.moved_aside != before:  # found damaged (and moved aside) by the open itself
            return self.moved_aside
        try:
            rows = [str(row[0]) for row in store.conn.execute("PRAGMA quick_check").fetchall()]
        except Exception as exc:
            if not is_corruption(exc):
                raise
            return self.recover_damaged(exc)
        if rows == ["ok"]:
            return None
        return self.recover_damaged(PagesDamaged("; ".join(rows[:3])))

    def _repair_if_damaged(self) -> Store | None:
        """Before a connection is opened without the writer lock: a file that is no SQLite
        database any more (``file_damage``; SQLite would open a 0-byte file as a new, empty
        database and the damage would go unseen) is moved aside under the writer lock, and the
        new empty database is returned; None when the file looks sound."""
        damage = file_damage(self.path)
        if damage is None:
            return None
        with self._hold(self.writer_lock(), BUSY_TIMEOUT_MS / 1000), self._open_lock:
            if file_damage(self.path) is None:  # rebuilt by someone else meanwhile
                return None
            store = self._recover(damage)  # bumps the generation: other threads reopen
        if self.on_recover is not None:
            self.on_recover()
        return store

    def _open_immutable(self, full: DiskFullError) -> Store:
        """A reader for a full disk, where SQLite cannot create the -shm file a WAL reader
        needs: the file opened immutable (no -wal, -shm or locks), safe only while the -wal file
        is empty or absent (every commit is in the main file), else ``full`` is raised. It is
        reopened normally once space is back (``connection``)."""
        wal = Path(str(self.path) + "-wal")
        try:
            pending = wal.stat().st_size
        except FileNotFoundError:
            pending = 0
        if pending:
            raise full
        store = Store(self.path, root=self.root, immutable=True)
        if self.note_disk_full(full):
            log.info("%s; reading the index read-only until then", full)
        return store

    def refuse_unless_ours(self) -> None:
        """Raise ConfigError naming the file when the database path holds a file that is not an
        index of ours (``not_ours``: a user's text file, another program's SQLite database, or
        one damaged beyond recognition that this object never opened): it is never moved aside,
        replaced or written to. A file this object opened as ours passes without a read."""
        key = _file_key(self.path)
        if key is None or key in self._ours:
            return
        why = not_ours(self.path)
        if why is not None:
            raise ConfigError(
                f"{str(self.path)!r} (the index database: --db / MARKDOWN_MEMORY_DB) is not a markdown-memory "
                f"index: {why}; it is left as it is. Name another file for the index, or, if it is an index "
                "that was damaged, delete it and run `markdown-memory index` to rebuild it")

    def _remember(self, store: Store) -> Store:
        """Note the file ``store`` opened as one of ours (see ``refuse_unless_ours``)."""
        key = _file_key(self.path)
        if key is not None:
            self._ours.add(key)
        return store

    def _recover(self, reason: str) -> Store:
        """Move the damaged database aside and start an empty one that records where the old
        one went. Caller holds the writer lock. Raises ConfigError for a file that is not an
        index of ours (``refuse_unless_ours``): only an index is ever moved aside."""
        self.refuse_unless_ours()
        with self._open_lock:  # the new file is whole before another thread checks its header
            target = move_aside(self.path)
            self.moved_aside = str(target)
            self._generation += 1
            self._local.recovered = True
            store = self._remember(Store(self.path, root=self.root))
            with store.transaction():
                store.set_meta("moved_aside", str(target))
                store.set_meta("moved_aside_reason", reason[:300])
        return store

    def writer(self) -> Store:
        """An index run's own connection (caller holds the writer lock). After a run that did
        not finish (its ``run_marker`` file is still there) the database is checked first and
        moved aside and rebuilt when damaged. Raises DatabaseReadOnlyError when the database
        file cannot be written."""
        self.check_writable()
        with self._open_lock:  # caller holds the writer lock: this order never inverts
            damage = file_damage(self.path)
            if damage is not None:  # truncated or overwritten: SQLite could block on its stale WAL
                return self._recover(damage)
            try:
                self.refuse_unless_ours()
                writer = self._remember(Store(self.path, root=self.root))
            except Exception as exc:
                if not is_corruption(exc):
                    raise
                return self._recover(str(exc))
        try:
            problem = writer.integrity_problem() if self.run_marker().exists() else None
        except Exception as exc:
            if not is_corruption(exc):
                writer.close()
                raise
            problem = str(exc)
        if problem is None:
            return writer
        writer.close()
        log.warning("integrity check failed after an interrupted run: %s", problem)
        return self._recover(problem)

    def refresher(self) -> Store:
        """A connection for a refresh of a few files (no writer lock: each document is
        replaced in one transaction, safe beside a running index run)."""
        self.check_writable()
        self.refuse_unless_ours()
        return self._repair_if_damaged() or self._remember(Store(self.path, root=self.root))

    def check_writable(self) -> None:
        """Raise DatabaseReadOnlyError when the database file exists but cannot be written
        (read-only file or filesystem): found before a run starts writing, so no document fails
        half-way and no run marker is left behind. One ``access`` call."""
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise readonly_error(self.path, PermissionError(errno.EACCES, "the file is read-only", str(self.path)))

    # -- the writer lock ------------------------------------------------------------------------
    def writer_lock(self) -> filelock.FileLock:
        """Cross-process writer lock next to the database (released by the OS if we die).
        Raises DocsRootMissingError before creating the database's folder, ConfigError (before
        creating the lock file) when the database path holds a file that is not an index of ours
        (``refuse_unless_ours``), and DatabaseReadOnlyError when that folder cannot be created."""
        self.require_root()
        self.refuse_unless_ours()
        path = self._lock_path()
        with readonly_as_user_error(self.path, OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
        return filelock.FileLock(str(path))

    def _lock_path(self) -> Path:
        return Path(str(self.path) + ".lock")

    def acquire(self, lock: filelock.FileLock, timeout: float) -> None:
        """``lock.acquire(timeout)``; a lock file that cannot be created or opened for writing
        raises DatabaseReadOnlyError instead of an OSError; filelock.Timeout when busy."""
        with readonly_as_user_error(self.path, OSError):
            lock.acquire(timeout=timeout)

    def _hold(self, lock: filelock.FileLock, timeout: float) -> _Held:
        self.acquire(lock, timeout)
        return _Held(lock)

    def locked_elsewhere(self) -> bool:
        """True when another process (or thread) holds the writer lock right now: a
        non-blocking acquire that is released at once. No lock file: nobody holds it (a holder
        has it open), and probing creates neither it nor the database's folder."""
        if not os.path.lexists(self._lock_path()):
            return False
        lock = self.writer_lock()
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            return True
        except OSError:
            return False
        lock.release()
        return False

    def run_marker(self) -> Path:
        """A file that exists while an index run is under way (and after one was killed): a
        file, not a database row, so a run that changes nothing writes nothing to the index."""
        return Path(str(self.path) + ".run")

    @contextmanager
    def readonly_guard(self) -> Iterator[None]:
        """Context around a write (an index run, a refresh): a read-only failure becomes
        DatabaseReadOnlyError, a full disk DiskFullError (``disk_full`` remembers its sentence
        until a guarded write succeeds again)."""
        try:
            with readonly_as_user_error(self.path):
                yield
        except DiskFullError as exc:
            self.note_disk_full(exc)
            raise
        self._disk_full = None


def _space_back(path: Path) -> bool:
    """True when the filesystem of ``path`` has room again (see ``errors.LOW_SPACE_BYTES``)."""
    free = free_bytes(path)
    return free is None or free >= LOW_SPACE_BYTES


class _Held:
    """``with``: release the lock on exit."""

    def __init__(self, lock: filelock.FileLock) -> None:
        self.lock = lock

    def __enter__(self) -> filelock.FileLock:
        return self.lock

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
