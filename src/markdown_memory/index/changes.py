"""Applying a :class:`~markdown_memory.files.changes.ChangeSet` to one docs root's index
(``Engine.apply_changes``; the file watcher's one door into the engine).

* ``probe``: the stat probe finds the changed files first (``files.freshness.stale_paths``);
  many of them while an index run is going are that run's work still to do: nothing is done
  (``deferred``), the probe after the run finds what is left.
* ``folders`` stand for the Markdown files a walk finds below them; ``gone`` paths for the
  indexed file of that path or the indexed files below it (others are dropped).
* At most ``limit`` files: re-indexed now, keyword index only (``IndexRuns.refresh``);
  vectors follow in a later index run. More, or ``full``: one index run of the whole root,
  started in the background (the scheduler), or run in the calling thread when the engine has
  no background indexing; ``deferred`` while another run of this process is going.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import IndexBusyError, MarkdownMemoryError
from ..files.changes import FULL, ChangeSet
from ..files.freshness import stale_paths
from ..files.walk import walk_markdown
from ..store.database import Database
from .activity import IndexActivity
from .runs import IndexRuns

log = logging.getLogger("markdown_memory.engine")

#: an index run's ``should_stop`` (None: runs to the end)
StopCheck = Callable[[], bool] | None
#: ``Engine.index``: one index run of the whole root in the calling thread
RunHere = Callable[..., object]


@dataclass(frozen=True)
class ChangeOutcome:
    """What applying a change set did. ``refreshed``: files re-indexed now (keyword index);
    ``text_changed``: some got new text (an index run will embed it); ``run``: an index run
    of the whole root was started (or ran); ``deferred``: nothing was done because another run
    of this process is going: apply the set again later."""

    refreshed: int = 0
    text_changed: bool = False
    run: bool = False
    deferred: bool = False


class ChangeApplier:
    """See module docstring. ``start_run(why)``: start a background run of the whole root,
    False when none can start (auto-index off, stopping, one going); ``run_here``: the
    fallback run in the calling thread (``Engine.index``: called with ``wait_seconds`` and
    ``should_stop``)."""

    def __init__(self, database: Database, runs: IndexRuns, activity: IndexActivity,
                 start_run: Callable[[str], bool], run_here: RunHere) -> None:
        self._database = database
        self._runs = runs
        self._activity = activity
        self._start_run = start_run
        self._run_here = run_here

    def apply(self, changes: ChangeSet, *, limit: int, why: str, should_stop: StopCheck = None) -> ChangeOutcome:
        """Apply ``changes`` (module docstring). Raises DocsRootMissingError,
        DatabaseReadOnlyError, DiskFullError (the refresh), and what a run in this thread
        raises besides IndexBusyError (then ``deferred``)."""
        if changes.probe:
            found = stale_paths(self._database.connection(), self._database.root, self._runs.settings.exclude)
            if found and self._activity.indexing and len(found) > limit:
                return ChangeOutcome(deferred=True)  # the run going does most of it
            changes = ChangeSet(changes.files | frozenset(found), changes.folders, changes.gone, full=changes.full)
        paths = None if changes.full else self._paths(changes, limit)
        if paths is None:
            return self._run(why, should_stop)
        if not paths:
            return ChangeOutcome()
        report = self._runs.refresh(sorted(paths), ttl=0.0)
        return ChangeOutcome(refreshed=len(paths),
                             text_changed=report is not None and bool(report.added or report.updated))

    def _paths(self, changes: ChangeSet, limit: int) -> set[str] | None:
        """The files to refresh for ``changes``, or None when there are more than ``limit``."""
        root, exclude = self._database.root, self._runs.settings.exclude
        out = set(changes.files)
        for rel in sorted(changes.folders):
            out.update(entry.rel for entry in walk_markdown(root, exclude, root / rel).files)
            if len(out) > limit:
                return None
        if changes.gone:
            indexed = self._database.connection().indexed_paths()
            known = set(indexed)
            for rel in changes.gone:
                if rel in known:
                    out.add(rel)
                else:  # maybe a folder that was
                    below = rel + "/"
                    out.update(p for p in indexed if p.startswith(below))
        return None if len(out) > limit else out

    def _run(self, why: str, should_stop: StopCheck) -> ChangeOutcome:
        """One index run of the whole root: in the background, else here; deferred while one goes."""
        if self._activity.indexing:
            return ChangeOutcome(deferred=True)
        if not self._start_run(f"watch ({why})"):
            if self._activity.indexing:
                return ChangeOutcome(deferred=True)
            try:  # no background scheduler (auto-index off): run here, stoppable
                self._run_here(wait_seconds=0.5, should_stop=should_stop)
            except IndexBusyError:  # another process is indexing: try again later
                return ChangeOutcome(deferred=True)
            except MarkdownMemoryError as exc:  # root gone, read-only database, disk full
                log.warning("index run after file changes stopped: %s", exc)
        log.info("index run of %s after file changes (%s)", self._database.root, why)
        return ChangeOutcome(run=True)


__all__ = ["FULL", "ChangeApplier", "ChangeOutcome", "ChangeSet", "StopCheck"]
