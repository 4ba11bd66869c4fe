"""The one freshness policy of an answer (``models.Freshness``), applied before and after a
search or a read: :class:`FreshnessGate` indexes, refreshes or only flags, as the call asks.
The engine owns one; it gets the engine's ``index`` and ``refresh`` as callables.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from .errors import DiskFullError, IndexBusyError, RootMismatchError
from .models import Freshness, Hit, IndexReport

if TYPE_CHECKING:  # pragma: no cover
    from .index.activity import IndexActivity
    from .index.embedding import Progress
    from .index.scheduler import BackgroundIndexer
    from .status import StatusReporter

log = logging.getLogger("markdown_memory.engine")

#: Freshness.INDEX: how long to poll another process's writer lock before answering anyway (s).
BUSY_WAIT_SECONDS = 2.0
#: Freshness.REFRESH on a never-indexed root: how long to wait for the first run's keyword index.
CATCH_UP_WAIT_SECONDS = 5.0


class FreshnessGate:
    """``index(progress, wait_seconds)`` runs an incremental index (``Engine.index``);
    ``refresh(paths)`` re-indexes changed files, keyword index only (``Engine.refresh``)."""

    def __init__(self, index: Callable[[Progress | None, float], IndexReport],
                 refresh: Callable[[list[str] | None], IndexReport | None], scheduler: BackgroundIndexer,
                 activity: IndexActivity, reporter: StatusReporter) -> None:
        self._index = index
        self._refresh = refresh
        self._scheduler = scheduler
        self._activity = activity
        self._reporter = reporter

    def prepare(self, freshness: Freshness, kind: str, *, progress: Progress | None = None,
                 schedule: bool = True) -> bool:
        """Bring the index as current as ``freshness`` asks before an answer (``kind`` names
        the call, for the log). Under ``REFRESH`` the background scheduler also hears of the
        call (``schedule``) and, while its first run on a never-indexed root is going, the
        answer waits a moment for that run's keyword index. Returns False when another
        process's run kept ``Freshness.INDEX`` from indexing (the answer says so)."""
        if freshness is Freshness.INDEX:
            deadline = time.monotonic() + BUSY_WAIT_SECONDS  # real time: a test clock may stand still
            while True:
                try:
                    self._index(progress, 0)
                    return True
                except IndexBusyError:
                    if time.monotonic() >= deadline:
                        log.info("another process is indexing this docs root; answering from the index as it stands")
                        return False
                    time.sleep(0.1)
                except DiskFullError:  # answered from the index as it stands; the answer says why
                    return True
        if freshness is Freshness.REFRESH:
            try:
                self._refresh(None)
            except RootMismatchError:  # the database is another root's: every answer is that error
                raise
            except DiskFullError:  # index_status.message says it (database.disk_full)
                pass
            except Exception:  # a refresh problem must not fail the answer; the next run retries
                log.warning("refreshing changed files failed", exc_info=True)
            if schedule:
                self._scheduler.on_call(kind)
                if kind != "list_documents" and self._scheduler.first_run_running:
                    self._activity.wait_parsed(CATCH_UP_WAIT_SECONDS)
        return True

    def current(self, freshness: Freshness, run: Callable[[], list[Hit]]) -> tuple[list[Hit], int]:
        """Run the search ``run`` and make sure no hit from a file that differs on disk passes
        for current: under ``Freshness.REFRESH`` such files (one ``stat`` per hit file, not the
        throttled probe) are re-indexed and the search runs again; whatever still differs is
        flagged ``stale``. Returns the hits and how many were flagged."""
        hits = run()
        changed = self._reporter.changed_among(h.file_path for h in hits)
        if changed and freshness is Freshness.REFRESH:
            try:
                self._refresh(sorted(changed))
            except DiskFullError:  # flagged stale below; index_status.message says it
                pass
            except Exception:  # flagged stale below; the background run retries
                log.warning("refreshing the files of search hits failed", exc_info=True)
            else:
                hits = run()
                changed = self._reporter.changed_among(h.file_path for h in hits)
        if not changed:
            return hits, 0
        self._reporter.invalidate()  # status must not contradict the flag with an older probe
        flagged = [replace(h, stale=changed[h.file_path]) if h.file_path in changed else h for h in hits]
        return flagged, sum(1 for h in flagged if h.stale)
