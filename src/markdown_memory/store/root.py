"""One index database belongs to one docs root.

The database records the real path of the docs root it was built for (``meta`` key
``docs_root``) the first time it is opened for one. Opening it for another root raises
:class:`~markdown_memory.errors.RootMismatchError` before any document is read or written:
otherwise a ``--db`` / ``MARKDOWN_MEMORY_DB`` shared by two projects would let each index run
remove the other project's documents (they are not on disk under its root), and searches would
answer from the other project.

Roots are compared by real path (symlinks resolved), and as the same directory on disk
(``os.path.samefile``) while the recorded one still exists, so a symlinked path or another
spelling of the same folder is the same root; the root is also recorded as given (absolute,
symlinks not resolved), so a symlink switched to another release is the same root too. A database
file that lives inside the docs root it is opened for belongs to that root (it moves and copies
with the project) when its sampled documents are found there as indexed. A database is adopted (the new root recorded) by the root that opens it when it
records none (written before roots were recorded) or when its recorded root no longer exists (the
project folder was moved or renamed), unless most of its sampled documents are missing under the
new root or differ in size from what was indexed: then it is another project's index and is
refused.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RootMismatchError
from .documents import count_documents, document_sample
from .errors import is_readonly

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

log = logging.getLogger("markdown_memory.store")

ROOT_KEY = "docs_root"
#: the root as given when recorded (absolute, symlinks not resolved: a switched symlink matches)
GIVEN_KEY = "docs_root_given"
#: documents checked (by ``lstat``) when a database without a recorded root is adopted
ADOPT_SAMPLE = 50


def bind_root(store: Store, root: Path) -> None:
    """Make sure ``store`` belongs to ``root``: record the root (its real path, and the path as
    given: absolute, symlinks not resolved) when the database has none yet (a new database, or
    one written before roots were recorded), when the database file lives inside ``root`` (it
    moves and copies with the project: ``cp -a``, a re-clone beside the old folder), or when the
    recorded root no longer exists and the sampled documents are found, as indexed, under
    ``root`` (the project folder was moved or renamed); else compare. A root given by the same
    path as recorded is the same root even when that path is a symlink now pointing elsewhere.

    Reads two ``meta`` rows when the recorded root matches (no write lock). Raises
    RootMismatchError (naming both roots and the fixes) when the database belongs to another root.
    """
    real = os.path.realpath(root)
    given = os.path.abspath(root)
    recorded = store.get_meta(ROOT_KEY)
    recorded_given = store.get_meta(GIVEN_KEY)
    if recorded is not None and same_root(recorded, real):
        if recorded_given is None:  # written before the given path was recorded
            _record(store, recorded, real, given, adopt=False)
        return
    inside = recorded is not None and _db_inside(store, real) and not _db_inside(store, recorded)
    if recorded is not None and recorded_given == given:
        log.debug("index database %s: the docs root %s now resolves to %s (was %s)", store.path, given, real,
                  recorded)
    elif inside:
        # a copied or moved project: adopted only when its documents are there, as indexed; a
        # command run from a parent folder of the docs root must not take the index over
        log.debug("index database %s lives inside the docs root %s: it now belongs to it if its documents are "
                  "there (was %s; the project was copied or moved)", store.path, real, recorded)
        _record(store, recorded, real, given, adopt=True, sizes=False)
        return
    elif recorded is not None and os.path.isdir(recorded):
        raise RootMismatchError(mismatch_message(str(store.path), recorded, real))
    else:
        _record(store, recorded, real, given, adopt=True)
        return
    _record(store, recorded, real, given, adopt=False)


def _db_inside(store: Store, root: str) -> bool:
    """True when the database file lives inside (below) the directory ``root``."""
    db = os.path.realpath(store.path)
    top = os.path.realpath(root)
    return db.startswith(top.rstrip(os.sep) + os.sep)


def _record(store: Store, recorded: str | None, real: str, given: str, *, adopt: bool,
            sizes: bool = True) -> None:
    """Write ``real`` and ``given`` as the database's root (after ``_check_documents_fit`` when
    ``adopt``, comparing sizes unless ``sizes`` is false); in a read-only database only the
    checks run."""
    try:
        with store.transaction():
            current = store.get_meta(ROOT_KEY)  # another process may have recorded one meanwhile
            if current is not None and current != recorded:
                if same_root(current, real):
                    return
                raise RootMismatchError(mismatch_message(str(store.path), current, real))
            if adopt:
                _check_documents_fit(store, real, recorded, sizes=sizes)
            store.set_meta(ROOT_KEY, real)
            store.set_meta(GIVEN_KEY, given)
    except store.driver.module.OperationalError as exc:
        if not is_readonly(exc):
            raise
        log.debug("cannot record the docs root in the read-only database %s", store.path)
        if adopt:
            _check_documents_fit(store, real, recorded, sizes=sizes)


def same_root(recorded: str, real: str) -> bool:
    """True when the recorded root and ``real`` name the same directory (equal real paths, or
    the same inode while the recorded path exists)."""
    if recorded == real or os.path.realpath(recorded) == real:
        return True
    try:
        return os.path.samefile(recorded, real)
    except OSError:
        return False


FIXES = ("use another database for this root (--db or MARKDOWN_MEMORY_DB), or leave both unset to use the "
         "default per-project location")


def _delete_hint(db: str, root: str) -> str:
    return f"delete {db!r} (with its -wal and -shm files, if any) to rebuild it for {root!r}"


def mismatch_message(db: str, recorded: str, root: str) -> str:
    """The one-sentence refusal: which database, which two roots, and the fixes (the rebuild
    first when the recorded root no longer exists: the project folder was moved or renamed)."""
    if not os.path.isdir(recorded):
        return (f"the index database {db!r} was built for the docs root {recorded!r}, which no longer exists "
                f"(moved or renamed?), not for {root!r}; {_delete_hint(db, root)}, or {FIXES}")
    return (f"the index database {db!r} belongs to the docs root {recorded!r}, not to {root!r} (one database "
            f"per docs root); {FIXES}, or {_delete_hint(db, root)}")


def _check_documents_fit(store: Store, real: str, recorded: str | None, *, sizes: bool = True) -> None:
    """Before a database is adopted by ``real`` (it records no root, or its ``recorded`` root no
    longer exists): refuse it unless most of its first ``ADOPT_SAMPLE`` documents are under
    ``real`` with the size they were indexed with. Common names (README.md, docs/guide.md) are
    present in other projects too: a different project's files differ in size. One ``stat``
    per sampled document. ``sizes`` false: only their presence counts (a copied project whose
    files were edited since is still that project; a parent folder of the docs root is not)."""
    rows = document_sample(store, ADOPT_SAMPLE)
    unfit = [p for p, size in rows
             if not (_same_size(os.path.join(real, p), size) if sizes else os.path.lexists(os.path.join(real, p)))]
    db = str(store.path)
    if rows and len(unfit) * 2 > len(rows):
        if recorded is not None:
            raise RootMismatchError(mismatch_message(db, recorded, real))
        total = count_documents(store)
        raise RootMismatchError(
            f"the index database {db!r} was written by an older markdown-memory that did not record its docs "
            f"root, and most of its {total} documents (e.g. {unfit[0]!r}) are not under {real!r} as they were "
            f"indexed, so it looks like another project's index; {FIXES}, or {_delete_hint(db, real)}"
        )
    if recorded is not None:
        log.warning("index database %s was built for %s; its documents are under %s as indexed, so it now "
                    "belongs to that root (the project folder was moved or copied)", db, recorded, real)
    elif rows:
        log.info("index database %s had no recorded docs root; it now belongs to %s", db, real)


def _same_size(path: str, size: int) -> bool:
    try:
        return os.stat(path).st_size == size
    except OSError:
        return False
