"""The hook's log: one row per searched prompt in the root's database (``store/hook_log.py``), so
a person can see on the local page (docs/ui.md) what their agent was given, and why not.

``MARKDOWN_MEMORY_HOOK_LOG``: ``off`` (or ``0``, ``false``, ``no``) keeps no log; a number N
keeps the newest N prompts; unset, empty or ``on``: the newest :data:`DEFAULT_KEEP`. The hook's
own environment decides: the hook client sends the raw value with its request to the service.
Prompts the first-word test turns away (commands, replies, tasks) are not logged: they never
open the database. Writing never delays the prompt by more than ``store.hook_log.WRITE_WAIT_MS``
and never fails it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Engine
    from ..models import Hit, SearchAnswer
    from .payload import Payload

log = logging.getLogger("markdown_memory.hook")

ENV = "MARKDOWN_MEMORY_HOOK_LOG"
DEFAULT_KEEP = 500
#: the most prompts a log may keep (a bigger number is clamped)
MAX_KEEP = 100_000


def setting() -> str | None:
    """The raw ``MARKDOWN_MEMORY_HOOK_LOG`` of this process (sent to the service), or None."""
    return os.environ.get(ENV)


def keep(raw: object = None, *, from_env: bool = True) -> int:
    """How many prompts to keep: 0 = the log is off (see the module docstring). ``raw``: the
    setting's value (None: this process's environment when ``from_env``). A value that is not
    understood keeps the default (and says so in the debug log)."""
    value = setting() if raw is None and from_env else raw
    text = str(value or "").strip().lower()
    if text in ("", "on", "true", "yes"):
        return DEFAULT_KEEP
    if text in ("off", "0", "false", "no", "none"):
        return 0
    try:
        return max(0, min(int(text), MAX_KEEP))
    except ValueError:
        log.debug("%s=%r is not off, on or a number: keeping the last %d prompts", ENV, value, DEFAULT_KEEP)
        return DEFAULT_KEEP


def record(engine: Engine, payload: Payload, found: SearchAnswer, used: Sequence[Hit], tokens: int,
           reason: str | None, keep_rows: int) -> None:
    """Append what the hook did with ``payload``'s prompt to ``engine``'s database: the ``used``
    hits (added, ``tokens`` in all) or the ``reason`` nothing was. Nothing when ``keep_rows`` is
    0. Never raises (a locked or read-only database loses the row; the debug log says so)."""
    if keep_rows <= 0:
        return
    from ..store.hook_log import HookLogEntry

    entry = HookLogEntry(  # the prompt as searched (cut by payload.parse, or by the service's hook op)
        at=time.time(), session_id=payload.session_id, client=payload.client, prompt=payload.prompt,
        added=bool(used), tokens=tokens, confidence=found.confidence, p_answer=found.p_answer,
        sections=tuple({"file_path": h.file_path, "heading_path": h.heading_path, "start_line": h.start_line,
                        "end_line": h.end_line, "tokens": h.tokens} for h in used),
        reason=None if used else reason)
    try:
        engine.store.add_hook_entry(entry, keep_rows)
    except Exception as exc:  # noqa: BLE001 - the log must never cost the prompt its answer
        log.debug("the hook's log entry was not written: %s", exc)
