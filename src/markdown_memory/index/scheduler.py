"""Background catch-up indexing for a long-running process (the MCP server).

``BackgroundIndexer(hooks)`` keeps an index up to date without the agent asking (the engine
creates it and gives it :class:`IndexHooks`, callables and not the engine itself; ``enabled``
only in background mode with auto-index on):

* Nothing runs before the first call. The first ``on_call()`` (the engine's ``REFRESH``
  freshness policy calls it for every answer but a folder listing) starts a catch-up run in a
  daemon thread and returns at once; the caller answers from the index as it stands
  (``engine.indexing`` is already true for that answer: the run is announced to
  ``hooks.activity`` before its thread starts). Documents are committed one by one,
  so keyword search sees them as they land; vectors fill in afterwards, batch by batch.
* Later calls run a cheap stat probe of the indexed files (``StatusReporter.changed_files``; about
  5 us per file, cached ``probe_ttl`` seconds). When it sees a file edited, deleted or
  unreadable and at least ``min_gap`` seconds passed since the last run ended, a run starts
  and the call waits up to ``refresh_wait`` seconds for it (a few changed files take well
  under a second), so the answer is fresh. Otherwise a full walk (the only way new files are
  found) starts at most every ``walk_interval`` seconds while calls keep coming, without
  waiting.
* One run at a time in this process; across processes the engine's writer lock decides (a
  run that cannot get it within ``lock_wait`` seconds is skipped: another process is indexing).
* ``shutdown()`` asks the run to stop between two documents (or two embedding batches);
  the next run resumes where it stopped because indexing is incremental.
* The probe result only schedules runs: it may be ``probe_ttl`` seconds old, so it never
  decides whether a hit is current. The files of the hits themselves are checked when the
  answer is made (one ``stat`` each: the engine re-indexes them or flags the hit ``stale``),
  with or without this scheduler.

Disabled (a CLI process, or ``--no-auto-index`` / ``MARKDOWN_MEMORY_AUTO_INDEX=0``):
``on_call`` does nothing and ``index_status.message`` tells the agent to call index_directory.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import IndexBusyError, MarkdownMemoryError
from ..models import IndexReport
from .activity import IndexActivity

log = logging.getLogger("markdown_memory.index")
#: How long ``shutdown`` waits for a run to stop by default (seconds).
SHUTDOWN_SECONDS = 5.0

MIN_GAP_SECONDS = 10.0
PROBE_TTL_SECONDS = 3.0
WALK_INTERVAL_SECONDS = 300.0
REFRESH_WAIT_SECONDS = 2.0
LOCK_WAIT_SECONDS = 0.5


@dataclass(frozen=True)
class IndexHooks:
    """What the scheduler needs from the engine. ``index(wait_seconds, should_stop)``: one
    incremental run of the whole root (raises IndexBusyError when another process holds the
    writer lock longer than ``wait_seconds``, MarkdownMemoryError for a user-fixable state);
    ``changed_files()``: ``{path: "modified" | "missing" | "unreadable"}`` of the indexed files
    that differ on disk; ``close()``: close the calling thread's database connection;
    ``activity``: this process's index activity; ``root``: the docs root (for the log)."""

    index: Callable[[float, Callable[[], bool]], IndexReport]
    changed_files: Callable[[], dict[str, str]]
    close: Callable[[], None]
    activity: IndexActivity
    root: Path


class BackgroundIndexer:
    """Schedules background index runs for one docs root (see module docstring).

    All times are seconds. ``clock`` is the monotonic clock (tests may pass their own).
    Thread-safe: ``on_call`` may be called from any number of worker threads.
    """

    def __init__(
        self,
        hooks: IndexHooks,
        *,
        enabled: bool,
        min_gap: float = MIN_GAP_SECONDS,
        probe_ttl: float = PROBE_TTL_SECONDS,
        walk_interval: float = WALK_INTERVAL_SECONDS,
        refresh_wait: float = REFRESH_WAIT_SECONDS,
        lock_wait: float = LOCK_WAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._hooks = hooks
        self.enabled = enabled
        self.min_gap = min_gap
        self.probe_ttl = probe_ttl
        self.walk_interval = walk_interval
        self.refresh_wait = refresh_wait
        self.lock_wait = lock_wait
        self._clock = clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._done.set()
        self._started_at: float | None = None  # start of the last run (any reason)
        self._ended_at: float | None = None
        self._probe: tuple[float, dict[str, str]] | None = None
        self.runs = 0  # runs started by this scheduler
        self.last_reason: str | None = None
        self.last_report: IndexReport | None = None
        self.last_error: str | None = None

    # -- public API ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while a run started by this scheduler is in progress."""
        return not self._done.is_set()

    @property
    def thread(self) -> threading.Thread | None:
        """The thread of the current (or last) run, or None before the first run."""
        return self._thread

    @property
    def first_run_running(self) -> bool:
        """True while the first run this scheduler started (the catch-up) is in progress."""
        return self.runs == 1 and self.last_reason == "first" and self.running

    @property
    def stopping(self) -> bool:
        """True once ``request_stop`` or ``shutdown`` was called: runs stop between documents.
        Pass it as ``should_stop`` to index runs started outside the scheduler."""
        return self._stop.is_set()

    def request_stop(self) -> None:
        """Stop scheduling and ask a running run to stop between two documents; returns at once."""
        self._stop.set()

    def start_rebuild(self) -> bool:
        """Start a run now, whatever the gap since the last one (a damaged database was moved
        aside and the index is empty); False when disabled, stopping, or a run is going."""
        if not self.start_now("rebuild"):
            return False
        log.info("the damaged index database was moved aside; rebuilding it in the background")
        return True

    def start_now(self, reason: str) -> bool:
        """Start a run now, whatever the gap since the last one (``reason`` is logged: the file
        watcher's ``"watch"`` after many changes, or for the vectors of refreshed files);
        returns at once. False when disabled, stopping, or a run is going."""
        if not self.enabled or self._stop.is_set():
            return False
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return False
            self._start(reason, self._clock())
        return True

    def on_call(self, kind: str = "search") -> str | None:
        """Note a tool call (``kind`` is only logged) and start a run when one is due.

        Returns the reason a run was started (``"first"``, ``"changed"``, ``"walk"``) or None.
        Returns at once except for ``"changed"``, which waits up to ``refresh_wait`` seconds
        for the refresh. Never raises: a failing probe is logged and treated as "no change".
        """
        if not self.enabled or self._stop.is_set():
            return None
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return None
            now = self._clock()
            if self._started_at is None:
                reason = "first"
            else:
                since_end = now - (self._ended_at if self._ended_at is not None else self._started_at)
                if since_end >= self.min_gap and (self._hooks.activity.vectors_due or self._changed(now)):
                    reason = "changed"
                elif now - self._started_at >= self.walk_interval:
                    reason = "walk"
                else:
                    return None
            self._start(reason, now)
        log.info("%s call started a %s index run", kind, reason)
        if reason == "changed" and self.refresh_wait > 0:
            self._done.wait(self.refresh_wait)
        return reason

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current run (if any) ends; True when none is running afterwards."""
        return self._done.wait(timeout)

    def shutdown(self, timeout: float = SHUTDOWN_SECONDS) -> bool:
        """Stop scheduling, ask a running run to stop between two documents, and wait up to
        ``timeout`` seconds. True when no run is left running."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread.is_alive():
            thread.join(timeout)
            return not thread.is_alive()
        return True

    # -- internals ----------------------------------------------------------------------------
    def _changed(self, now: float) -> dict[str, str]:
        """Probe result, cached ``probe_ttl`` seconds. Caller holds ``_lock``."""
        if self._probe is not None and now - self._probe[0] < self.probe_ttl:
            return self._probe[1]
        try:
            found = self._hooks.changed_files()
        except Exception:  # a probe must never fail a tool call
            log.exception("stat probe of indexed files failed")
            found = {}
        self._probe = (now, found)
        return found

    def _start(self, reason: str, now: float) -> None:
        self._started_at = now
        self._done.clear()
        self.runs += 1
        self.last_reason = reason
        self._hooks.activity.announce()  # visible to the answer of the call that started the run
        self._thread = threading.Thread(target=self._run, args=(reason,), name="mm-auto-index", daemon=True)
        self._thread.start()

    def _run(self, reason: str) -> None:
        hooks = self._hooks
        try:
            report = hooks.index(self.lock_wait, self._stop.is_set)
            self.last_report = report
            self.last_error = None
            for failure in report.failed[:50]:
                log.warning("not indexed: %s: %s", failure["path"], failure["reason"])
            log.info("%s index run: %d added, %d updated, %d removed, %d failed in %.2f s%s", reason,
                     report.added, report.updated, report.removed, len(report.failed), report.seconds,
                     " (stopped; the next run resumes)" if report.interrupted else "")
        except IndexBusyError:
            log.info("%s index run skipped: another process is indexing %s", reason, hooks.root)
        except MarkdownMemoryError as exc:  # a user-fixable state (root gone, read-only database, disk full)
            error = f"{type(exc).__name__}: {exc}"
            # said once while it lasts (a full disk stops every catch-up run the same way)
            (log.debug if error == self.last_error else log.warning)("%s index run stopped: %s", reason, exc)
            self.last_error = error
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.exception("%s index run failed", reason)
        finally:
            hooks.activity.withdraw()
            hooks.activity.mark_parsed()  # a run that failed early must not keep answers waiting
            try:
                hooks.close()  # this thread's read connection, if any was opened
            except Exception:  # pragma: no cover
                log.debug("closing the run thread's connection failed", exc_info=True)
            with self._lock:
                self._ended_at = self._clock()
                self._probe = None
            self._done.set()
