"""Watch a docs root and bring the index up to date as files change, without a call to notice.

``start_watching(engine) -> Watcher`` starts one daemon thread per engine; ``Watcher.stop()``
ends it. The thread runs ``watchfiles.watch`` (its Rust watcher: inotify, FSEvents,
ReadDirectoryChangesW) and hands each group of changes to the engine's incremental machinery:

* Grouping (the debounce): changes are collected until ``QUIET_MS`` to ``2 * QUIET_MS`` pass
  without a new one (at most ``GROUP_MS``), so an editor's save (write, rename, chmod) or a
  burst of edits is one refresh.
* Scope: only what an index run would index. A group of events becomes a
  ``files.changes.ChangeSet`` by the walk's own rules (``files.changes.ScopeClassifier`` over
  ``files.walk.ScopeCheck``: Markdown names, pruned and ignored folders, ignore files,
  ``MARKDOWN_MEMORY_EXCLUDE``); the database's own files (a database kept inside the docs root)
  are dropped first, so index writes never wake the watcher into a loop. A folder created,
  moved in, moved away or deleted stands for the Markdown files under it (folder moves carry no
  event per file). A changed ``.gitignore`` / ``.markdown-memory-ignore`` changes the scope of
  the whole tree: it asks for a full run.
* The watcher's one call into the engine is ``Engine.apply_changes(changes)``
  (``index/changes.py``): at most ``MASS_CHANGE_PATHS`` changed files are re-indexed now,
  keyword index only (milliseconds per file), so an edit is searchable well within 2 s;
  vectors follow in a background index run asked for ``VECTOR_DELAY_SECONDS`` after the first
  refresh of a burst (one run per burst; none with the ``none`` embedder).
* Many (a ``git checkout`` of 5,000 files): one background index run of the whole root
  instead of thousands of refreshes. While any index run of this process is going, a due run
  is deferred and later groups fold into it: the work pending is one change set bounded by
  ``MASS_CHANGE_PATHS`` paths (else a full run), never a growing queue.
* Native watching is not always possible: on a network or FUSE file system (NFS, SMB/CIFS,
  sshfs, 9p as in WSL's ``/mnt/c``...) change notifications miss edits made on other machines,
  and inotify has a per-user watch limit (``fs.inotify.max_user_watches``). There the watcher
  polls with the index's own stat probe (``Watcher._poll``: ``ChangeSet(probe=True)``). Which mode is used, and why, is
  logged once (INFO for native, WARNING for polling). ``MARKDOWN_MEMORY_WATCH`` = ``auto``
  (default) | ``native`` | ``poll`` | ``off`` overrides the choice (``off``: no thread;
  changes are seen when a call notices them).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MarkdownMemoryError
from ..files.changes import FULL, PROBE, ChangeSet, ScopeClassifier
from ..index.runs import PROBE_COST_FACTOR

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Engine
    from ..index.changes import ChangeOutcome

log = logging.getLogger("markdown_memory.watch")

MODE_ENV = "MARKDOWN_MEMORY_WATCH"
MODES = ("auto", "native", "poll", "off")
#: a group of changes ends once this long passes without a new one (ms; checked every QUIET_MS)
QUIET_MS = 125
#: a group never waits longer than this for its first change to be handled (ms)
GROUP_MS = 1_000
#: how often the thread wakes without changes, to start due runs and see stop() (ms)
TICK_MS = 250
#: polling mode: the least pause between two probes of the indexed files (s)
POLL_SECONDS = 0.5
#: above this many changed files in one group: one index run of the root, not a refresh each
MASS_CHANGE_PATHS = 200
#: after a refresh: the pause before the background run that embeds the new text (s); a burst
#: of edits gets one run, and the run (a walk, then embedding) does not slow the next edits'
#: refreshes (measured by scripts/bench_watch.py: p95 under load 1.2 s at 4 s, 1.6 s at 1 s)
VECTOR_DELAY_SECONDS = 3.0
#: file systems where native notifications miss changes (made by other machines) or fail
NETWORK_FILE_SYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb", "smb3", "smbfs", "ncpfs", "afs", "9p", "v9fs", "ceph", "glusterfs",
    "lustre", "gpfs", "beegfs", "ocfs2", "gfs2", "davfs", "sshfs", "vboxsf", "vmhgfs", "prl_fs", "fuse",
})


@dataclass
class WatchStats:
    """What a watcher did (read by tests and the benchmark; counts since start).
    ``groups``: groups of changes that touched the index's scope; ``refreshes``: calls of
    ``Engine.refresh`` and ``refreshed``: the paths they covered; ``full_runs``: index runs of
    the whole root it started (mass changes, ignore files, vectors); ``errors``: failed steps."""

    groups: int = 0
    refreshes: int = 0
    refreshed: int = 0
    full_runs: int = 0
    errors: int = 0


def filesystem_type(path: Path) -> str | None:
    """The type of the file system holding ``path`` (``"ext4"``, ``"nfs4"``, ``"fuse.sshfs"``):
    the longest mount point of ``/proc/self/mounts`` above its real path. None off Linux or
    when unknown. Never raises."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, found = -1, None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        # the kernel writes a space in a mount point as \040 (and tab, newline, backslash alike)
        mount = fields[1].encode().decode("unicode_escape") if "\\" in fields[1] else fields[1]
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > best:
            best, found = len(mount), fields[2]
    return found


def polling_reason(root: Path) -> str | None:
    """Why ``root`` must be polled (its file system, by name), or None for native watching."""
    fstype = filesystem_type(root)
    if fstype is None:
        return None
    base = fstype.split(".", 1)[0]
    if fstype in NETWORK_FILE_SYSTEMS or base in NETWORK_FILE_SYSTEMS and fstype != "fuseblk":
        return (f"the docs root is on a {fstype} file system, where change notifications miss "
                "edits made elsewhere")
    return None


def watch_mode() -> str:
    """``MARKDOWN_MEMORY_WATCH`` (module docstring), ``auto`` when unset or not a mode."""
    value = os.environ.get(MODE_ENV, "").strip().lower() or "auto"
    if value not in MODES:
        log.warning("%s=%r is not one of %s; using auto", MODE_ENV, value, ", ".join(MODES))
        return "auto"
    return value


def start_watching(engine: Engine, *, mode: str | None = None,
                   mass_change: int = MASS_CHANGE_PATHS) -> Watcher:
    """Watch ``engine.root`` in a daemon thread (module docstring) and return at once; the
    watcher is armed when ``Watcher.ready`` is set (a change before that may be missed: the
    next call's catch-up sees it). ``mode``: ``auto`` | ``native`` | ``poll`` | ``off``
    (default: ``MARKDOWN_MEMORY_WATCH``); ``mass_change``: the group size above which one
    index run replaces the refreshes. Raises ValueError for an unknown mode."""
    mode = watch_mode() if mode is None else mode
    if mode not in MODES:
        raise ValueError(f"watch mode must be one of {', '.join(MODES)}, not {mode!r}")
    watcher = Watcher(engine, mass_change=mass_change)
    if mode == "off":
        log.info("not watching %s for changes (%s=off)", engine.root, MODE_ENV)
        watcher.ready.set()
        return watcher
    reason = None
    if mode == "poll":
        reason = f"{MODE_ENV}=poll"
    elif mode == "auto":
        reason = polling_reason(engine.root)
    watcher.start(reason)
    return watcher


class Watcher:
    """One docs root's watcher thread (see module docstring); made by :func:`start_watching`.
    ``polling``: True when it polls (set before ``ready``); ``stats``: :class:`WatchStats`."""

    def __init__(self, engine: Engine, *, mass_change: int = MASS_CHANGE_PATHS) -> None:
        self.engine = engine
        self.root = engine.root
        self.mass_change = mass_change
        self.polling = False
        self.ready = threading.Event()
        self.stats = WatchStats()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # the database's own files (-wal, -shm, .lock, .run) kept inside the root are never news
        self._classify = ScopeClassifier(self.root, engine.settings.exclude, skip=[os.fspath(engine.settings.db_path)])
        self._pending = ChangeSet()  # changes not applied yet (at most mass_change paths, else FULL)
        self._vectors_at: float | None = None  # monotonic time the vectors run is due
        self._problem: str | None = None  # the last expected error (said once until it changes)

    @property
    def alive(self) -> bool:
        """True while the watcher thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, polling_reason: str | None) -> None:
        """Start the thread: polling when ``polling_reason`` says why, else native watching."""
        self._thread = threading.Thread(target=self._main, args=(polling_reason,),
                                        name=f"mm-watch-{self.root.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop watching; True when the thread ended within ``timeout`` seconds (a refresh under
        way finishes first; a background index run it started goes on: ``Engine.shutdown``)."""
        self._stop.set()
        self.ready.set()  # nobody waits for a watcher that will not arm
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        return not self.alive

    # -- the thread -------------------------------------------------------------------------
    def _main(self, polling_reason: str | None) -> None:
        """Watch until stopped: native notifications unless ``polling_reason`` says why not,
        polling after a native failure (at start or later)."""
        try:
            reason = polling_reason
            if reason is None:
                reason = self._native()
            if reason is not None and not self._stop.is_set():
                self.polling = True
                log.warning("watching %s by polling (every %.1f s or more): %s", self.root,
                            POLL_SECONDS, reason)
                self._poll()
        except Exception:  # pragma: no cover - a bug here must not take the service down
            log.exception("the file watcher of %s stopped; changes are seen when a call notices them", self.root)
        finally:
            self.ready.set()
            self.engine.close()  # this thread's database connection, if one was opened

    def _native(self) -> str | None:
        """Watch with native notifications until stopped (None) or until they fail: then the
        reason to poll instead. ``watchfiles.watch`` groups the changes (``GROUP_MS``,
        ``QUIET_MS``) and yields an empty group every ``TICK_MS`` without one; it is armed
        before its first yield, which sets ``ready``."""
        import watchfiles  # the service's dependency, not the CLI's

        armed = False
        try:
            for group in watchfiles.watch(self.root, watch_filter=None, debounce=GROUP_MS, step=QUIET_MS,
                                          stop_event=self._stop, rust_timeout=TICK_MS, yield_on_timeout=True,
                                          debug=False, raise_interrupt=False, force_polling=False,
                                          recursive=True, ignore_permission_denied=True):
                if not armed:
                    armed = True
                    log.info("watching %s for changes (native notifications, %s)", self.root, sys.platform)
                    self.ready.set()
                if self._stop.is_set():
                    return None
                if group:
                    self._add(self._classify.classify((int(change), path) for change, path in group))
                self._work()
        except Exception as exc:  # OSError (the watch limit), WatchfilesRustInternalError
            if not armed:
                return (f"native watching failed ({exc}; if it is the inotify watch limit, raise "
                        "fs.inotify.max_user_watches)")
            self._pending = FULL  # failed mid-watch (a new folder past the limit): one run finds what was lost
            return f"native watching failed ({exc})"
        return None

    def _poll(self) -> None:
        """Poll with the index's own stat probe (``files.freshness.stale_paths``: size, mtime
        and ctime in nanoseconds of every indexed file, mtimes of the folders the last walk
        saw; ``ChangeSet(probe=True)`` applied by the engine) every ``POLL_SECONDS``, or
        ``PROBE_COST_FACTOR`` times the cost of the last probe and its refresh when that is
        longer, so probing a huge tree on a slow file system never takes more than a part of
        one core. (watchfiles' own polling compares mtimes in whole seconds: a second edit
        within the same second would be missed.) A changed ignore file is not seen by polling."""
        self.ready.set()
        interval = POLL_SECONDS
        while not self._stop.wait(interval):
            started = time.monotonic()
            self._pending |= PROBE
            self._work()
            interval = max(POLL_SECONDS, PROBE_COST_FACTOR * (time.monotonic() - started))

    # -- turning changes into work ------------------------------------------------------------
    def _add(self, changes: ChangeSet) -> None:
        """Queue a group's changes: one run instead when they come to more than ``mass_change``."""
        if not changes:
            return
        self.stats.groups += 1
        self._pending = (self._pending | changes).limited(self.mass_change)

    def _work(self) -> None:
        """Apply what is pending (a run going defers it), else start the vectors run when due."""
        if self.engine.stopping:  # Engine.shutdown: no more index work for it
            self._pending, self._vectors_at = ChangeSet(), None
            return
        if self._pending:
            outcome = self._apply(self._pending, "changes")
            if outcome is not None and outcome.deferred:
                return  # the run going covers them, or they wait for it
            self._pending = ChangeSet()
            if outcome is not None and outcome.run:
                self._vectors_at = None  # the run embeds what the refreshes left
            elif outcome is not None and outcome.text_changed and self.engine.settings.embedder != "none":
                # due a fixed time after the first refresh of a burst: later edits do not postpone it
                if self._vectors_at is None:
                    self._vectors_at = time.monotonic() + VECTOR_DELAY_SECONDS
            if outcome is None or outcome.run:
                return
        if self._vectors_at is not None and time.monotonic() >= self._vectors_at:
            outcome = self._apply(FULL, "vectors")
            if outcome is None or not outcome.deferred:
                self._vectors_at = None

    def _apply(self, changes: ChangeSet, why: str) -> ChangeOutcome | None:
        """``Engine.apply_changes``, counted in ``stats``; None when it failed (logged: an
        expected error once until it changes, e.g. the root gone; others with the traceback)."""
        try:
            outcome = self.engine.apply_changes(changes, limit=self.mass_change, why=why, stop=self._stop.is_set)
        except MarkdownMemoryError as exc:  # root gone, read-only database, disk full: said once per kind
            self.stats.errors += 1
            if str(exc) != self._problem:  # a probe's (polling, every half second) said as news, not alarm
                level = logging.INFO if changes.probe else logging.WARNING
                log.log(level, "%s failed: %s", _doing(changes, self.root), exc)
            self._problem = str(exc)
            return None
        except Exception:  # an unreadable index: the next group or probe tries again
            self.stats.errors += 1
            log.exception("%s failed", _doing(changes, self.root))
            return None
        self._problem = None
        if outcome.refreshed:
            self.stats.refreshes += 1
            self.stats.refreshed += outcome.refreshed
        if outcome.run:
            self.stats.full_runs += 1
        return outcome


def _doing(changes: ChangeSet, root: Path) -> str:
    """What applying ``changes`` is, for a log line."""
    if changes.probe:
        return f"probing {root} for changed files"
    return f"index run of {root}" if changes.full else f"refreshing {changes.size} changed path(s) of {root}"


def watch_engine(engine: Engine) -> Callable[[], object] | None:
    """The service pool's hook for each new engine: with auto-index on, a watcher of its docs
    root, returned as its stopper; None when auto-index is off or ``MARKDOWN_MEMORY_WATCH`` is
    not a mode (said once on stderr: the engine then keeps current by catch-up on each call)."""
    if not engine.settings.auto_index:
        return None
    try:
        return start_watching(engine).stop
    except ValueError as exc:
        log.warning("not watching %s: %s", engine.root, exc)
        return None
