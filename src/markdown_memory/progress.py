"""Progress of a long CLI run on stderr (``index``, and the refresh ``search`` runs first).

On a terminal a one-line bar redrawn in place, at most every :data:`BAR_SECONDS`. Otherwise (stderr piped or redirected, as when an
agent or a script runs the command) one plain line every :data:`INTERVAL_SECONDS` seconds, from
:func:`~markdown_memory.messages.progress_line`: units done of the total, the rate and the time
left. A run that ends within the first interval prints nothing; a phase that printed a line
also prints its last one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from . import messages

#: Seconds between two progress lines when stderr is not a terminal.
INTERVAL_SECONDS = 5.0
#: Seconds between two redraws of the bar on a terminal (a redraw per file wrote 60 KB a second to
#: a terminal; a slow or unread one then blocks the run, Ctrl-C included)
BAR_SECONDS = 0.1


class Progress:
    """An indexer progress callback ``(phase, done, total)``; ``phase`` is ``parse`` or ``embed``.

    ``stream`` defaults to ``sys.stderr`` (read when called, so a redirected stderr is honoured);
    ``clock`` returns seconds (monotonic)."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self.tty = self.stream.isatty()
        self.shown = False  # the bar is on screen (needs a newline at the end)
        self._phase: str | None = None
        self._phase_start = self._last_call = clock()
        self._last_line: float | None = None  # when this phase printed its last plain line
        self._last_bar: float | None = None  # when the bar was last drawn
        self._closed = False  # finish() was called (the run ended or was interrupted): draw nothing more

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def __call__(self, phase: str, done: int, total: int) -> None:
        if total <= 0 or self._closed:
            return
        now = self._clock()
        if phase != self._phase:  # its first report comes after its first work: time it from the last one
            self._phase, self._phase_start, self._last_line, self._last_bar = phase, self._last_call, None, None
        self._last_call = now
        if self.tty:
            if self._last_bar is None or now - self._last_bar >= BAR_SECONDS or done >= total:
                self._bar(phase, done, total)
                self._last_bar = now
            return
        due = now - (self._last_line if self._last_line is not None else self._phase_start) >= INTERVAL_SECONDS
        last = done >= total and self._last_line is not None
        if due or last:
            self._line(phase, done, total, now)

    def _bar(self, phase: str, done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total)
        label = "parsing " if phase == "parse" else "embedding"
        self.stream.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        self.stream.flush()
        self.shown = True

    def _line(self, phase: str, done: int, total: int, now: float) -> None:
        elapsed = max(now - self._phase_start, 1e-9)
        rate = done / elapsed
        left = (total - done) / rate if rate > 0 else None
        self.stream.write(f"markdown-memory: {messages.progress_line(phase, done, total, rate, left)}\n")
        self.stream.flush()
        self._last_line = now

    def finish(self) -> None:
        """End the bar's line (nothing to do for plain lines); later calls draw nothing (work
        still reporting after Ctrl-C must not draw over "interrupted")."""
        self._closed = True
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
