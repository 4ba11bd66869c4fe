"""Housekeeping of the per-root index databases (``markdown-memory roots``).

Every docs root indexed at the default location leaves one folder
``config.projects_dir()/<root name>-<12 hex>/`` (``index.db`` with its -wal, -shm and lock
files, ~12 MB for a mid-sized project). :func:`list_indexes` describes each one (the docs root
it records, size, when it was last written, whether the root still exists and whether the index
holds any document); :func:`prune_plan` picks those whose root is gone or empty and
:func:`remove` deletes them. Databases named with ``--db`` / ``MARKDOWN_MEMORY_DB`` live
elsewhere and are not listed.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .config import projects_dir

log = logging.getLogger("markdown_memory.roots")

#: ``IndexEntry.state`` values: the root is there and indexed / the recorded root no longer
#: exists / the root is an empty folder or the index holds no document (a failed or empty run)
#: / the database could not be read (kept: it may be in use or repairable)
OK, GONE, EMPTY, UNREADABLE = "ok", "gone", "empty", "unreadable"
PRUNABLE = (GONE, EMPTY)
#: what to do about a prunable index, as ``roots`` says it (its listing and the local page)
PRUNE_HINT = "'markdown-memory roots --prune' plans removing those whose docs root is gone or empty"
DB_NAME = "index.db"


@dataclass(frozen=True)
class IndexEntry:
    """One index folder under :func:`config.projects_dir`.

    ``root``: the docs root recorded in the database (None when it records none or cannot be
    read); ``size_bytes``: every file of the folder; ``last_used``: the newest modification
    time of its files (UTC; a search that refreshes the index writes too); ``documents``: indexed
    documents (None when unreadable); ``state``: one of :data:`OK`, :data:`GONE`, :data:`EMPTY`,
    :data:`UNREADABLE`; ``reason``: why, in a few words."""

    folder: Path
    root: str | None
    size_bytes: int
    last_used: datetime | None
    documents: int | None
    state: str
    reason: str

    @property
    def database(self) -> Path:
        return self.folder / DB_NAME

    @property
    def prunable(self) -> bool:
        return self.state in PRUNABLE

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: paths as strings, ``last_used`` ISO 8601 UTC (or null)."""
        return {
            "id": self.folder.name,
            "database": str(self.database),
            "root": self.root,
            "root_exists": self.root is not None and os.path.isdir(self.root),
            "documents": self.documents,
            "size_bytes": self.size_bytes,
            "last_used": self.last_used.isoformat(timespec="seconds") if self.last_used else None,
            "state": self.state,
            "reason": self.reason,
        }


def list_indexes(base: Path | None = None) -> list[IndexEntry]:
    """Every index folder under ``base`` (default :func:`config.projects_dir`), sorted by
    docs root; an empty list when the folder does not exist. Opens each database read-only
    for its recorded root and document count; never raises for one bad database (it is listed
    as :data:`UNREADABLE`)."""
    base = projects_dir() if base is None else base
    try:
        folders = sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink())
    except FileNotFoundError:
        return []
    entries = [_describe(folder) for folder in folders if (folder / DB_NAME).exists()]
    return sorted(entries, key=lambda e: (e.root or "", e.folder.name))


def describe(folder: Path) -> IndexEntry:
    """One index folder (holding ``index.db``) as :func:`list_indexes` lists it; never raises
    for an unreadable database (:data:`UNREADABLE`)."""
    return _describe(folder)


def _describe(folder: Path) -> IndexEntry:
    size, newest = _usage(folder)
    last = datetime.fromtimestamp(newest, tz=UTC) if newest else None
    try:
        root, documents = _read_index(folder / DB_NAME)
    except Exception as exc:  # one damaged or locked database never stops the listing
        log.debug("cannot read %s: %s", folder / DB_NAME, exc)
        return IndexEntry(folder, None, size, last, None, UNREADABLE, f"cannot be read: {exc}")
    if root is None:
        state, reason = (EMPTY, "no docs root recorded, no document") if documents == 0 else \
            (UNREADABLE, "no docs root recorded")
    elif not os.path.isdir(root):
        state, reason = GONE, "docs root no longer exists"
    elif documents == 0:
        state, reason = EMPTY, "no document indexed"
    elif not any(os.scandir(root)):
        state, reason = EMPTY, "docs root is an empty folder"
    else:
        state, reason = OK, f"{documents} documents"
    return IndexEntry(folder, root, size, last, documents, state, reason)


def _usage(folder: Path) -> tuple[int, float]:
    """Total bytes and newest modification time (seconds since the epoch) of ``folder``'s files."""
    size, newest = 0, 0.0
    for entry in os.scandir(folder):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        size += st.st_size
        newest = max(newest, st.st_mtime)
    return size, newest


def _read_index(db: Path) -> tuple[str | None, int]:
    """The recorded docs root and the document count of ``db`` (opened without creating or
    migrating anything; its WAL is read so that recent writes count)."""
    from .store import Store
    from .store.root import ROOT_KEY

    store = Store(db, create=False)
    try:
        return store.get_meta(ROOT_KEY), store.count_documents()
    finally:
        store.close()


def prune_plan(entries: list[IndexEntry]) -> list[IndexEntry]:
    """The entries ``roots --prune`` removes: root gone, or root / index empty."""
    return [e for e in entries if e.prunable]


def remove(entry: IndexEntry) -> str | None:
    """Delete ``entry``'s folder unless an index run holds its writer lock. Returns None when
    removed, else why not (one short phrase); never raises for one folder."""
    import filelock

    lock = filelock.FileLock(str(entry.database) + ".lock")
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        return "an index run is using it"
    except OSError as exc:
        return f"cannot lock it: {exc.strerror or exc}"
    try:
        shutil.rmtree(entry.folder)
    except OSError as exc:
        return f"cannot remove it: {exc.strerror or exc}"
    finally:
        lock.release()
    return None
