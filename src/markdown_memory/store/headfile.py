"""Reading the first bytes of an index file without dropping this process's SQLite locks.

SQLite locks the database file with POSIX advisory locks, which belong to the process: closing
*any* descriptor of the file releases all of them (sqlite.org/howtocorrupt.html, section 2.2).
A header check that opened and closed the file beside this process's open connections let
another process take them for gone, checkpoint and delete the ``-wal`` and ``-shm`` files, and
every later query here failed with "disk I/O error". So the descriptors opened for header
reads stay open, one per file (device, inode), and are closed only once the file has no name
left (deleted: no process can open it again) or, past ``MAX_KEPT``, the least recently read.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path

#: descriptors kept for header reads; a process touching more index files than this (a test
#: run) closes the least recently read one, whose connections are long closed
MAX_KEPT = 128

_kept: OrderedDict[tuple[int, int], int] = OrderedDict()
_lock = threading.Lock()


def read_head(path: Path, size: int = 16) -> bytes:
    """The first ``size`` bytes of the regular file at ``path`` (fewer for a shorter file, b""
    for an empty one or a folder). Raises OSError as ``open`` does (no such file, no
    permission). Never blocks on a FIFO."""
    with _lock:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return b""
        key = (info.st_dev, info.st_ino)
        fd = _kept.get(key)
        if fd is None:
            fd = _open_kept(path)
        else:
            _kept.move_to_end(key)
        return os.pread(fd, size, 0)


def _open_kept(path: Path) -> int:
    """Open ``path`` read-only and keep the descriptor (see the module docstring). Caller holds
    the lock."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino)
    if key in _kept:  # the name moved to a file already kept meanwhile: closing this one would drop its locks
        _kept.move_to_end(key)
        _kept[(-1, fd)] = fd  # kept too, under a key no file has
        return fd
    _kept[key] = fd
    _forget_unused()
    return fd


def _forget_unused() -> None:
    """Close the kept descriptors of deleted files, then the oldest past ``MAX_KEPT``."""
    for key, fd in list(_kept.items()):
        try:
            gone = os.fstat(fd).st_nlink == 0
        except OSError:
            gone = True
        if gone:
            del _kept[key]
            os.close(fd)
    while len(_kept) > MAX_KEPT:
        _, fd = _kept.popitem(last=False)
        os.close(fd)
