"""What changed below a docs root, in the index's terms: a :class:`ChangeSet`, made from file
system events by :class:`ScopeClassifier` (the walk's own rules, ``walk.ScopeCheck``) or from
the stat probe, and applied by ``Engine.apply_changes`` (``index/changes.py``).

Events are ``(kind, absolute path)`` with ``kind`` one of :data:`ADDED`, :data:`MODIFIED`,
:data:`DELETED` (the numbers of ``watchfiles.Change``; a polling probe makes none).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .walk import IGNORE_FILES, ScopeCheck

#: event kinds (``watchfiles.Change``'s values)
ADDED, MODIFIED, DELETED = 1, 2, 3


@dataclass(frozen=True)
class ChangeSet:
    """Changes below a docs root, as POSIX paths relative to it.

    ``files``: Markdown files in scope that changed or appeared; ``folders``: folders in scope
    created or moved in (their Markdown files are new: a folder move carries no event per file);
    ``gone``: paths that no longer exist (an indexed file, or a folder whose indexed files are
    gone; others are dropped when applied); ``full``: the scope itself changed (an ignore file)
    or the changes are too many to list: one index run of the whole root; ``probe``: unknown
    changes, to be found by the index's stat probe (polling)."""

    files: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()
    full: bool = False
    probe: bool = False

    def __or__(self, other: ChangeSet) -> ChangeSet:
        """Both sets of changes; a full run covers every listed path."""
        if self.full or other.full:
            return FULL
        return ChangeSet(self.files | other.files, self.folders | other.folders, self.gone | other.gone,
                         probe=self.probe or other.probe)

    def __bool__(self) -> bool:
        return bool(self.files or self.folders or self.gone or self.full or self.probe)

    @property
    def size(self) -> int:
        """How many paths it lists."""
        return len(self.files) + len(self.folders) + len(self.gone)

    def limited(self, limit: int) -> ChangeSet:
        """This set, or :data:`FULL` when it lists more than ``limit`` paths."""
        return FULL if self.size > limit else self


#: one index run of the whole root
FULL = ChangeSet(full=True)
#: find the changes with the stat probe
PROBE = ChangeSet(probe=True)


class ScopeClassifier:
    """Turns file system events below ``root`` into a :class:`ChangeSet` by the walk's rules
    (``ScopeCheck``: pruned and ignored folders, ignore files, ``exclude`` globs, Markdown
    names). Paths under one of ``skip`` (absolute prefixes: the database's own files kept
    inside the docs root, so index writes never wake a watcher into a loop) and outside the root
    are dropped. A changed ignore file in a walked folder makes the set ``full`` (the scope of
    the tree changed) and the rules are read again. Stats only paths a walk could reach."""

    def __init__(self, root: Path, exclude: list[str] | None = None, skip: Iterable[str] = ()) -> None:
        self.root = root
        self._exclude = exclude
        self._prefix = os.path.join(os.fspath(root), "")
        self._skip = tuple(skip)
        self._scope = ScopeCheck(root, exclude)

    def classify(self, events: Iterable[tuple[int, str]]) -> ChangeSet:
        """The changes ``events`` make to the index's scope (module docstring)."""
        files: set[str] = set()
        folders: set[str] = set()
        gone: set[str] = set()
        full = False
        for kind, path in events:
            if not path.startswith(self._prefix) or (self._skip and path.startswith(self._skip)):
                continue
            rel = path[len(self._prefix):].replace(os.sep, "/")
            parent, _, name = rel.rpartition("/")
            if not self._scope.folder(parent):
                continue  # never walked (pruned, ignored, a linked folder): nothing of the index
            if name in IGNORE_FILES:
                full = True
                continue
            if not os.path.lexists(path):
                gone.add(rel)  # a gone file or folder: judged against the index when applied
            elif os.path.isdir(path):
                if kind == ADDED and self._scope.folder(rel):  # a folder's mtime (polling) is no news
                    folders.add(rel)
            elif self._scope.file(rel):
                files.add(rel)
        if full:
            self._scope = ScopeCheck(self.root, self._exclude)  # the ignore files changed
            return FULL
        return ChangeSet(frozenset(files), frozenset(folders), frozenset(gone))
