"""Read one walked file without trusting the path the walk checked.

Between the walk and the read a file can be replaced: by a symbolic link to a file outside the
docs root (whose text would then be indexed and served), by a named pipe (whose ``open`` would
block the run forever while it holds the writer lock), or a folder on its path by a link
elsewhere. So a file is opened once, and the opened file is judged, not the path:

* the path is followed from the docs root's real path one folder at a time with ``O_NOFOLLOW``
  (``openat`` on each component), so no symbolic link is followed below the root and what is
  opened lies inside it; a symlinked Markdown file the walk accepted is opened at its target's
  own path below the root, again without following links;
* the file is opened with ``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a
  writer), then ``fstat`` of the descriptor must say "regular file" before a byte is read and
  blocking mode is restored; the bytes come from that descriptor, ``limit`` at most.

Where ``openat`` or ``O_NOFOLLOW`` is missing (Windows) the file is opened by its path, still
judged by ``fstat``. Raises :class:`FileRefused` with the reason a user is shown.
"""

from __future__ import annotations

import errno
import os
import stat

from .failure import FailureKind
from .walk import WalkEntry, describe_os_error, special_file_reason

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_OPENAT = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd

#: ``ELOOP`` from ``open(O_NOFOLLOW)``: the file itself is a link now.
SWAPPED_FOR_LINK = "became a symbolic link after it was found (changed during the run); not indexed"
#: A folder on the path is no longer a real folder below the root.
FOLDER_CHANGED = "a folder on its path became a symbolic link or a file during the run; not indexed"


class FileRefused(Exception):
    """A file that will not be indexed; the message is the reason shown to the user, ``kind``
    what went wrong (``UNREADABLE`` unless given)."""

    def __init__(self, message: str, kind: FailureKind = FailureKind.UNREADABLE) -> None:
        super().__init__(message)
        self.kind = kind


class FileGone(FileRefused):
    """The file was deleted after the walk listed it: removed, not a failure."""


def _open_below(root: str, rel: str) -> int:
    """A read-only, non-blocking descriptor of ``rel`` (POSIX) below the real folder ``root``,
    reached without following any symbolic link. Raises OSError / FileRefused."""
    flags = _FLAGS | _NONBLOCK | _NOFOLLOW
    parts = rel.split("/")
    if not root or not _OPENAT:
        return os.open(os.path.join(root, *parts), flags)
    folder = os.open(root, _FLAGS | _DIRECTORY)
    try:
        for name in parts[:-1]:
            try:
                inner = os.open(name, _FLAGS | _DIRECTORY | _NOFOLLOW, dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise FileRefused(FOLDER_CHANGED) from exc
                raise
            os.close(folder)
            folder = inner
        try:
            return os.open(parts[-1], flags, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise FileRefused(SWAPPED_FOR_LINK) from exc
            raise
    finally:
        os.close(folder)


def read_entry(entry: WalkEntry, limit: int) -> bytes:
    """At most ``limit`` bytes of the file ``entry`` names, from one descriptor judged by
    ``fstat`` (module docstring). Raises FileRefused (reason for the user) for a file that is
    not a regular file when opened, a link or a changed folder, or any OSError."""
    try:
        fd = _open_below(entry.root, entry.target or entry.rel) if entry.root else \
            os.open(entry.abs, _FLAGS | _NONBLOCK | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(SWAPPED_FOR_LINK) from exc
        if exc.errno == errno.ENOENT:
            raise FileGone(describe_os_error(exc)) from exc
        raise FileRefused(describe_os_error(exc)) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(special_file_reason(st.st_mode), FailureKind.SPECIAL)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise FileRefused(describe_os_error(exc)) from exc
    finally:
        os.close(fd)
