"""Answer from the files as they are now: find what changed since indexing, cheaply.

``stale_paths`` costs one ``stat`` per indexed file and one per indexed folder (about 3 us per
file here, on ``str`` paths: pathlib's joins cost ten times the ``stat``): a file whose
size or mtime differs, or that is gone or unreadable, is stale; a folder whose mtime differs
from the last full walk gained, lost or renamed entries, so its Markdown files are listed
(one ``scandir``) and the ones no index knows are new. Folders created since the last walk
are walked. ``Engine.refresh`` re-indexes exactly those paths (keyword index at once; vectors
of new text in the next index run) before a read or a search answers.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..store import Store, StoredDocument
from .walk import is_markdown_name, name_is_text, stat_signature, walk_markdown


def changed_documents(
    root: Path, known: dict[str, StoredDocument], limit: int | None = None
) -> list[dict[str, str]]:
    """Indexed files (``known`` = ``Store.documents_by_path()``) that differ on disk, one
    ``stat`` each: ``[{"path", "change": "modified"|"missing"|"unreadable"}]``, at most
    ``limit`` entries (all when None). Never raises."""
    out: list[dict[str, str]] = []
    prefix = os.path.join(os.fspath(root), "")
    for path, (_id, _sha, signature) in known.items():
        full = prefix + path  # a str path: pathlib's joins cost 10x the stat itself
        try:
            st = os.stat(full)
        except OSError:
            out.append({"path": path, "change": "missing"})
        else:
            if stat_signature(st) != signature:
                out.append({"path": path, "change": "modified"})
            elif not os.access(full, os.R_OK):
                out.append({"path": path, "change": "unreadable"})
        if limit is not None and len(out) >= limit:
            break
    return out


def stale_paths(store: Store, root: Path, exclude: list[str] | None = None) -> list[str]:
    """POSIX paths (relative to ``root``) that a refresh must look at, sorted. Never raises."""
    known = store.documents_by_path()
    out: set[str] = {c["path"] for c in changed_documents(root, known)}
    raw = store.get_meta("dir_mtimes")
    if not raw:
        return sorted(out)
    try:
        dirs: dict[str, int] = json.loads(raw)
    except ValueError:
        return sorted(out)
    base = os.fspath(root)
    for rel_dir, mtime in dirs.items():
        try:
            if os.stat(os.path.join(base, rel_dir) if rel_dir else base).st_mtime_ns == mtime:
                continue
            folder = root / rel_dir if rel_dir else root
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue  # a folder that vanished: its files are already stale above
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and rel not in dirs:
                sub = walk_markdown(root, exclude, folder / entry.name)
                out.update(e.rel for e in sub.files if e.rel not in known)
            elif not is_dir and is_markdown_name(entry.name) and rel not in known:
                out.add(rel)
    return sorted(p for p in out if name_is_text(p))  # other names are never indexed (walk.py)


#: A folder is recorded as :data:`UNSETTLED` when its mtime is at most this much older than the
#: moment the refresh began: a change made while the refresh ran (or within one tick of a
#: coarse file system clock: 4 ms on ext4, 1-2 s on some) would otherwise hide behind the mtime
#: recorded after it (git's "racily clean" entries).
RACY_NS = 2_000_000_000
#: A recorded folder mtime that matches no real one: the next probe lists the folder again.
UNSETTLED = -1


def remember_folders(store: Store, root: Path, paths: list[str], since_ns: int | None = None) -> None:
    """After a refresh, record the current mtime of every folder on the way to ``paths``, so
    the same additions are not found again (new folders are tracked from now on). A folder
    changed after ``since_ns`` (wall clock, ns: when the refresh's paths were chosen) less
    :data:`RACY_NS` is recorded :data:`UNSETTLED`: what changed there since may not be in
    ``paths`` (a rename right after a delete was refreshed, case: the polled rename), so the next
    probe looks again. Call inside a transaction; does nothing before the first full walk."""
    raw = store.get_meta("dir_mtimes")
    if not raw:
        return
    dirs: dict[str, int] = json.loads(raw)
    racy = (time.time_ns() if since_ns is None else since_ns) - RACY_NS
    for path in paths:
        parts = path.split("/")[:-1]
        for k in range(len(parts) + 1):
            rel_dir = "/".join(parts[:k])
            try:
                mtime = os.stat(root / rel_dir if rel_dir else root).st_mtime_ns
            except OSError:
                break
            dirs[rel_dir] = UNSETTLED if mtime >= racy else mtime
    store.set_meta("dir_mtimes", json.dumps(dirs, separators=(",", ":")))
