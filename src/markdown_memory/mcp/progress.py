"""MCP progress notifications of a tool call (``index_directory``), sent from the worker thread
running the tool body."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("markdown_memory.server")


#: Seconds between two MCP progress notifications of one index_directory call
PROGRESS_INTERVAL_SECONDS = 0.5


class ToolProgress:
    """An indexer progress callback ``(phase, done, total)`` that sends MCP progress
    notifications for the tool call being served (the SDK's ``report_progress``: nothing is sent
    when the client gave no ``progressToken``). Called from the worker thread running the tool;
    each notification is sent on the event loop (``token``) and waited for. The value only grows,
    as the protocol requires: files parsed, then files plus passages embedded (the total grows
    when embedding starts). At most one notification per :data:`PROGRESS_INTERVAL_SECONDS`, plus
    each phase's last."""

    def __init__(self, report: Callable[[float, float | None, str | None], Any], token: Any) -> None:
        self._report = report  # async (progress, total, message)
        self._token = token
        self._offset = 0  # units of finished phases
        self._phase: str | None = None
        self._last_value = -1.0
        self._last_time = 0.0
        self._broken = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        from .. import messages

        if self._broken or total <= 0:
            return
        if self._phase is not None and phase != self._phase:
            self._offset = int(self._last_value) if self._last_value > 0 else 0
        self._phase = phase
        value, whole = float(self._offset + done), float(self._offset + total)
        now = time.monotonic()
        if value <= self._last_value or (done < total and now - self._last_time < PROGRESS_INTERVAL_SECONDS):
            return
        import anyio.from_thread

        try:
            anyio.from_thread.run(self._report, value, whole, messages.tool_progress(phase, done, total),
                                  token=self._token)
        except Exception as exc:  # noqa: BLE001 - progress must never fail the run (client gone, loop closing)
            log.debug("progress notification not sent: %s", exc)
            self._broken = True
            return
        self._last_value, self._last_time = value, now
