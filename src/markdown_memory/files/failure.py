"""Why a file was not indexed (or was indexed with a caveat), decided where the fact is known
(the walk, the read, the decode, the parse) instead of from the reason's wording."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class FailureKind(Enum):
    """What went wrong with one path. ``SYMLINK`` and ``SKIPPED`` are warnings (the file is
    left out by policy, nothing is broken); every other kind is a failure."""

    UNREADABLE = "unreadable"  # an OS error listing, opening or reading it, or it changed during the run
    SPECIAL = "special"  # not a regular file (FIFO, socket, device)
    SYMLINK = "symlink"  # a symbolic link the walk does not follow (to a folder, outside, dangling, looping)
    SKIPPED = "skipped"  # left out by the file-name policy (other extension, undecodable name)
    TOO_LARGE = "too_large"  # over the size limit
    BINARY = "binary"  # NUL bytes
    ENCODING = "encoding"  # text that cannot be decoded (invalid UTF-16)
    INTERNAL = "internal"  # a bug while parsing or writing it
    REFUSED = "refused"  # a refresh's single-path check refused it (``walk.walk_one``): reported as failed


_WARNING_KINDS = frozenset({FailureKind.SYMLINK, FailureKind.SKIPPED})


@dataclass(frozen=True)
class Failure:
    """One path that was not indexed: ``path`` POSIX relative to the docs root, ``message`` the
    reason shown to the user, word for word."""

    path: str
    kind: FailureKind
    message: str

    @property
    def is_warning(self) -> bool:
        """True when it is reported as a warning, not as a failed file."""
        return self.kind in _WARNING_KINDS

    @property
    def severity(self) -> str:
        """``"warning"`` or ``"failed"``: the ``kind`` column of the store's ``failures`` table."""
        return "warning" if self.is_warning else "failed"
