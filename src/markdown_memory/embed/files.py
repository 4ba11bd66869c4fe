"""Model file verification: sha256 + size, and a stat "stamp" that spares re-hashing.

A :class:`FileSpec` pins one file (relative path, size in bytes, sha256 hex). :func:`check_file`
hashes a file and reports what is wrong in one sentence, or ``None`` when it matches.

After a full check of a model folder, :func:`write_stamp` records for each file its size,
``mtime_ns``, ``ctime_ns``, inode and device in ``<folder>/.markdown-memory-verified.json`` (with
the expected hashes, so a changed manifest also invalidates it). :func:`stamp_is_current` costs
one ``stat`` per file; any difference (``touch``, a copy, a rewrite even with the mtime restored,
since that changes ``ctime_ns``) means the folder must be hashed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

STAMP_NAME = ".markdown-memory-verified.json"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileSpec:
    """One pinned file: ``path`` relative to the model folder (``/`` separators), ``size`` in bytes,
    ``sha256`` as 64 lowercase hex digits."""

    path: str
    size: int
    sha256: str


def sha256_file(path: Path) -> str:
    """sha256 hex digest of the file at ``path`` (read in 1 MiB chunks). Raises OSError."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def check_file(path: Path, spec: FileSpec) -> str | None:
    """``None`` when ``path`` exists with ``spec``'s size and sha256, else why not (one phrase).

    The size is compared first so a truncated or oversized file is not hashed. Raises nothing;
    an unreadable file is reported as a reason.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return f"{spec.path} is missing"
    except OSError as exc:
        return f"{spec.path} cannot be read ({exc})"
    if st.st_size != spec.size:
        return f"{spec.path} has {st.st_size:,} bytes, expected {spec.size:,}"
    try:
        digest = sha256_file(path)
    except OSError as exc:
        return f"{spec.path} cannot be read ({exc})"
    if digest != spec.sha256:
        return f"{spec.path} fails sha256 verification (got {digest[:12]}..., expected {spec.sha256[:12]}...)"
    return None


def _fingerprint(path: Path) -> dict[str, int]:
    st = os.stat(path)
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
        "device": st.st_dev,
    }


def write_stamp(folder: Path, specs: Sequence[FileSpec], name: str = STAMP_NAME) -> bool:
    """Record the current stat fingerprint of every file in ``specs`` (call only after hashing)
    in ``folder / name`` (a folder holding several independently verified sets uses one name each).

    Written atomically (temp file + ``os.replace``). Returns False, without raising, when the
    folder is read-only: verification then simply happens on every load.
    """
    try:
        data = {
            "version": 1,
            "files": {s.path: {"sha256": s.sha256, **_fingerprint(folder / s.path)} for s in specs},
        }
        fd, tmp = tempfile.mkstemp(prefix=".stamp-", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, folder / name)
        return True
    except OSError:
        return False


def stamp_is_current(folder: Path, specs: Sequence[FileSpec], name: str = STAMP_NAME) -> bool:
    """True when the stamp ``folder / name`` exists and every file's hash pin and stat
    fingerprint are unchanged."""
    try:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        files = data["files"]
        if set(files) != {s.path for s in specs}:
            return False
        for s in specs:
            rec = dict(files[s.path])
            if rec.pop("sha256", None) != s.sha256 or rec != _fingerprint(folder / s.path):
                return False
        return True
    except (OSError, ValueError, KeyError, TypeError):
        return False


def remove_stamp(folder: Path) -> None:
    """Delete the stamp if present (before repairing files)."""
    try:
        (folder / STAMP_NAME).unlink()
    except FileNotFoundError:
        pass
    except OSError:
        pass


def folder_size(folder: Path) -> int:
    """Total bytes of regular files under ``folder`` (0 when unreadable)."""
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
