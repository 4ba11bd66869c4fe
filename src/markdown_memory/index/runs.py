"""Index runs of one docs root: a full incremental run under the writer lock, and the quick
refresh of a few changed files before an answer.

``IndexRuns.index`` takes the cross-process writer lock (waiting up to ``wait_seconds``),
leaves the run marker while ``index_tree`` runs (a killed run leaves it behind, and the next
run checks the database first), and reports progress into ``IndexActivity``.
``IndexRuns.refresh`` re-indexes edited, deleted and new files (keyword index only) found by a
stat probe whose frequency is bounded by its own cost.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import filelock

from .. import messages
from ..config import Settings
from ..embed.base import Embedder
from ..embed.loader import ModelLoader
from ..errors import IndexBusyError
from ..files.freshness import remember_folders, stale_paths
from ..models import IndexReport
from ..store.database import Database
from ..store.errors import is_disk_full
from ..store.peek import NAMED_EMBEDDER_KEY
from .activity import IndexActivity
from .embedding import Progress
from .indexer import index_tree, refresh_paths

log = logging.getLogger("markdown_memory.engine")

#: refresh(): a new stat probe starts once this many times the last probe's cost has passed.
PROBE_COST_FACTOR = 4.0


class IndexRuns:
    """Runs over one database (see module docstring). ``clock``: monotonic seconds."""

    def __init__(self, settings: Settings, database: Database, loader: ModelLoader, activity: IndexActivity, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.database = database
        self.loader = loader
        self.activity = activity
        self._clock = clock
        self._refreshed_at = float("-inf")
        self._probe_seconds = 0.0  # how long the last stat probe took

    def index(self, target: Path | None, *, force: bool, wait_seconds: float, progress: Progress | None,
              should_stop: Callable[[], bool] | None) -> IndexReport:
        """One incremental run over the root (or folder ``target``). Raises IndexBusyError when
        another process holds the writer lock longer than ``wait_seconds``,
        DatabaseReadOnlyError when the database cannot be written, and DiskFullError when its
        filesystem is full (the run stops; what it wrote so far stays)."""
        root = self.database.root
        lock = self.database.writer_lock()
        try:
            try:
                self.database.acquire(lock, 0)
            except filelock.Timeout:
                if wait_seconds <= 0:
                    raise
                log.warning("another process is indexing %s; waiting up to %g s for it to finish",
                            root, round(wait_seconds, 1))
                self.database.acquire(lock, wait_seconds)
        except filelock.Timeout as exc:
            raise IndexBusyError(messages.index_busy(root)) from exc
        self.activity.begin()

        def track(phase: str, done: int, total: int) -> None:
            self.activity.report(phase, done, total)
            if progress:
                progress(phase, done, total)

        try:
            with self.database.readonly_guard():
                return self._run(target, force, track, should_stop)
        finally:
            self.activity.end()
            lock.release()

    def _run(self, target: Path | None, force: bool, track: Progress,
             should_stop: Callable[[], bool] | None) -> IndexReport:
        """The body of ``index`` (caller holds the writer lock): open the writer, leave the run
        marker while ``index_tree`` runs, clear a recorded move-aside after a full run."""
        writer = self.database.writer()
        marker = self.database.run_marker()

        def embedder() -> Embedder | None:
            self.activity.mark_parsed()  # index_tree asks for the model only once every file is parsed
            return self.loader.for_index(should_stop)

        try:
            if self.settings.embedder_named and writer.get_meta(NAMED_EMBEDDER_KEY) != self.settings.embedder:
                with writer.transaction():  # a named preset is kept by later runs (embed/choice.py); written
                    writer.set_meta(NAMED_EMBEDDER_KEY, self.settings.embedder)  # only when it changes
            marker.write_text(str(os.getpid()))  # stays if this process dies mid-run
            report = index_tree(
                writer, self.database.root,
                embedder=None if self.settings.embedder == "none" else embedder,
                weights_id=self.loader.expected_weights_id(),
                exclude=self.settings.exclude, directory=target, force=force, progress=track,
                should_stop=should_stop, max_file_bytes=self.settings.max_file_bytes,
            )
            if not report.interrupted and not target and writer.get_meta("moved_aside"):
                with writer.transaction():
                    writer.clear_moved_aside()
                self.database.moved_aside = None
            marker.unlink(missing_ok=True)  # only a run that returned: a crash leaves it behind
        except Exception as exc:
            if is_disk_full(exc, self.database.path):  # SQLite rolled the failed write back: the
                marker.unlink(missing_ok=True)  # database is whole, nothing to check next time
            raise
        finally:
            writer.close()
        return report

    def refresh(self, paths: list[str] | None, *, ttl: float) -> IndexReport | None:
        """Re-index, now, the files that changed since they were indexed (edited, deleted,
        unreadable, or new in a folder the last walk knew), or exactly ``paths``.

        Keyword index only (milliseconds per file): new text gets vectors in the next index
        run, unchanged passages keep theirs. The stat probe of every indexed file and folder
        (~7 ms for 700 files here) runs again once ``PROBE_COST_FACTOR`` times its last cost
        has passed (at most ``ttl`` seconds later): an edit followed at once by a search is
        seen, while probing never takes more than about 1/``PROBE_COST_FACTOR`` of the time on
        a huge tree. Explicit ``paths`` are always refreshed and do not count as a probe.
        Returns the report, or None when nothing was stale. Safe beside a running index run
        (each document is replaced in one transaction). Raises DocsRootMissingError,
        DatabaseReadOnlyError and DiskFullError."""
        self.database.require_root()
        root = self.database.root
        probe = paths is None
        chosen_ns = time.time_ns()  # before the probe: folders changed since are looked at again
        if paths is None:
            now = self._clock()
            if now - self._refreshed_at < min(ttl, PROBE_COST_FACTOR * self._probe_seconds):
                return None
            paths = stale_paths(self.database.connection(), root, self.settings.exclude)
            self._probe_seconds = self._clock() - now
            self._refreshed_at = now
        if not paths:
            return None
        with self.database.readonly_guard():
            writer = self.database.refresher()
            try:
                report = refresh_paths(writer, root, paths, self.settings.exclude, self.settings.max_file_bytes)
                with writer.transaction():
                    remember_folders(writer, root, paths, chosen_ns)
            finally:
                writer.close()
        if probe:
            self._refreshed_at = self._clock()
        self.activity.changed()
        if report.added or report.updated:
            self.activity.need_vectors()  # new text waits for the next index run to get vectors
        log.info("refreshed %d file(s): %d added, %d updated, %d removed", len(paths), report.added,
                 report.updated, report.removed)
        return report
