"""Per-session memory of the sections the hook already injected, so none is injected twice.

State lives beside the index database (never in the docs root): a folder
``<database file name>.hook-sessions/`` holding one small JSON file per session (its name a
hash of the ``session_id``: a list of ``[file_path, heading_path]``, at most MAX_KEYS), each
with its own lock file, so concurrent sessions on one root never wait for each other and two
hooks of one session do not lose a write. Files not touched for MAX_AGE_SECONDS are removed by
the next hook run on that database. Every failure here (read-only folder, a lock held too
long, a damaged file) only turns dedupe off for that prompt: the hook never fails for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger("markdown_memory.hook")

MAX_AGE_SECONDS = 24 * 3600
#: sections remembered per session (the oldest are forgotten first)
MAX_KEYS = 500
#: how long a hook waits for another hook of the same session (seconds)
LOCK_SECONDS = 0.5

Key = tuple[str, str]


def state_dir(db_path: Path) -> Path:
    """The folder of session files for the database at ``db_path``."""
    return db_path.parent / f"{db_path.name}.hook-sessions"


class SessionMemory:
    """The sections already injected in session ``session_id`` (an empty id: no memory)."""

    def __init__(self, db_path: Path, session_id: str) -> None:
        self.folder = state_dir(db_path)
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        self.path = self.folder / f"{digest}.json" if session_id else None

    def _read(self) -> list[Key]:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            log.debug("session file %s unreadable; starting afresh", self.path)
            return []
        return [(str(k[0]), str(k[1])) for k in data if isinstance(k, list) and len(k) == 2] \
            if isinstance(data, list) else []

    def seen(self) -> set[Key]:
        """The keys injected so far in this session (empty on any problem)."""
        if self.path is None:
            return set()
        return set(self._read())

    def add(self, keys: Iterable[Key]) -> None:
        """Remember ``keys`` (under the session's lock; written atomically), then remove
        session files older than MAX_AGE_SECONDS. Problems are logged at debug level."""
        if self.path is None:
            return
        import filelock

        new = list(keys)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with filelock.FileLock(str(self.path) + ".lock", timeout=LOCK_SECONDS):
                known = self._read()
                have = set(known)
                merged = (known + [k for k in new if k not in have])[-MAX_KEYS:]
                tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps([list(k) for k in merged], ensure_ascii=False), encoding="utf-8")
                os.replace(tmp, self.path)
        except (OSError, filelock.Timeout) as exc:
            log.debug("could not record the injected sections in %s: %s", self.path, exc)
            return
        sweep(self.folder)


def sweep(folder: Path, now: float | None = None) -> int:
    """Remove files in ``folder`` not modified for MAX_AGE_SECONDS; returns how many."""
    cutoff = (time.time() if now is None else now) - MAX_AGE_SECONDS
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed
