"""What index runs in this process are doing, shared by the engine and its scheduler.

One object per engine. Index runs report into it (``begin``/``progress``/``parsed``/``end``);
the scheduler announces a run it is about to start (``announce``/``withdraw``) so the answer of
the call that started it already says "indexing"; answers read it. Thread-safe.
"""

from __future__ import annotations

import threading

from ..models import IndexProgress


class IndexActivity:
    """Index runs of this process (see module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._announced = 0
        self._progress: IndexProgress | None = None
        self._parsed = threading.Event()
        #: bumped by every index run or refresh in this process (cache key for status facts)
        self.generation = 0
        self._vectors_due = False

    @property
    def indexing(self) -> bool:
        """True while a run of this process is under way or about to start."""
        return self._running > 0 or self._announced > 0

    @property
    def progress(self) -> IndexProgress | None:
        """The running run's progress (None: no run, or it has not reported yet)."""
        return self._progress if self._running else None

    @property
    def vectors_due(self) -> bool:
        """True when text was written without vectors (a refresh) or with another model's
        vectors in the index: the next index run has embedding to do."""
        return self._vectors_due

    def need_vectors(self) -> None:
        self._vectors_due = True

    # -- reported by the scheduler ------------------------------------------------------------
    def announce(self) -> None:
        """A run is about to start in another thread."""
        with self._lock:
            self._announced += 1

    def withdraw(self) -> None:
        """The announced run ended (or never started)."""
        with self._lock:
            self._announced = max(0, self._announced - 1)

    # -- reported by index runs -------------------------------------------------------------
    def begin(self) -> None:
        with self._lock:
            self._running += 1
            self._vectors_due = False  # this run embeds whatever a refresh left without vectors

    def report(self, phase: str, done: int, total: int) -> None:
        self._progress = IndexProgress(phase, done, total)

    def mark_parsed(self) -> None:
        """Every file of the run was parsed: the keyword index is searchable."""
        self._parsed.set()

    def end(self) -> None:
        with self._lock:
            self._running = max(0, self._running - 1)
            if not self._running:
                self._progress = None
            self.generation += 1
        self._parsed.set()

    def changed(self) -> None:
        """A refresh changed the index."""
        with self._lock:
            self.generation += 1

    def wait_parsed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until a run of this process has parsed every file."""
        return self._parsed.wait(timeout)
