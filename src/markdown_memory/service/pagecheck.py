"""The service's page check: every page of each database it served is read (``PRAGMA
quick_check``, ``Engine.check_pages``) once the service has been idle for
``$MARKDOWN_MEMORY_SERVICE_CHECK`` seconds after use, and at once when a request met damage, so
damage no query touched (pages overwritten under the running service) is found, moved aside and
rebuilt. Not on every open: quick_check reads the whole file (about 0.1 s per 30 MB measured on
the eval corpus's indexes), too slow for every CLI or hook process, cheap once per idle moment.

Light at import (the service imports it before any engine exists).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from .pool import Pool

log = logging.getLogger("markdown_memory.service")

#: environment: seconds without a request before the page check; 0 = never
CHECK_ENV = "MARKDOWN_MEMORY_SERVICE_CHECK"
DEFAULT_CHECK_SECONDS = 10.0


def check_after() -> float:
    """``$MARKDOWN_MEMORY_SERVICE_CHECK`` seconds, else 10. Raises ConfigError for a bad value."""
    raw = os.environ.get(CHECK_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_CHECK_SECONDS
    except ValueError:
        raise ConfigError(f"{CHECK_ENV}={raw!r} is not a number of seconds") from None
    if value < 0:
        raise ConfigError(f"{CHECK_ENV}={raw!r} is negative; use 0 for never")
    return value


class PageCheck:
    """When the check runs (one at a time, once per burst of use) and the check itself."""

    def __init__(self) -> None:
        #: seconds idle before the check (:func:`check_after`)
        self.after = check_after()
        self._lock = threading.Lock()
        self._running = False
        self._upto = 0.0  # the service's last activity (monotonic seconds) the last check covered

    def claim(self, activity: float, idle: float | None, *, now: bool = False) -> bool:
        """True (the check is then marked running) when it should start: ``now`` (a request met
        damage) whenever none is running; else after ``after`` seconds ``idle`` (None: the
        service is busy) and a request since the last check (``activity``: the monotonic time
        of the last one)."""
        if not now and (self.after <= 0 or idle is None or idle < self.after or activity <= self._upto):
            return False
        with self._lock:
            if self._running:
                return False
            self._running, self._upto = True, activity
        return True

    def start(self, pool: Pool, stopping: Callable[[], bool]) -> None:
        """Run :meth:`run` in its own thread (after a True :meth:`claim`)."""
        threading.Thread(target=self.run, args=(pool, stopping), name="service-check", daemon=True).start()

    def run(self, pool: Pool, stopping: Callable[[], bool]) -> None:
        """Check each database of the pool's engines once (whichever engine holds it); a damaged
        one is moved aside and rebuilt (``Engine.check_pages``), which this log line and the
        answers' index status say. Never raises."""
        try:
            seen: set[str] = set()
            for engine in pool.engines():
                db = str(engine.settings.db_path)
                if db in seen or stopping():
                    continue
                seen.add(db)
                started = time.monotonic()
                try:
                    moved = engine.check_pages()
                except Exception as exc:  # noqa: BLE001 - a refused or missing database: its calls say why
                    log.info("page check of %s not done: %s", db, exc)
                    continue
                finally:
                    engine.close()  # this thread's connection
                if moved is not None:
                    log.warning("page check of %s found damage: moved aside to %s; rebuilding it from the files",
                                db, moved)
                else:
                    log.info("page check of %s: ok (%.2f s)", db, time.monotonic() - started)
        finally:
            with self._lock:
                self._running = False
