"""The CLI's client path to the resident service: ``search`` asks the service (op ``search``),
which runs the same code (``search_text``) with its loaded model and prints nothing itself: its
reply carries this process's stdout, stderr and exit status. When the service is off, cannot
be had, or dies mid-call, the caller searches in process.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..search_text import CliSearch

log = logging.getLogger("markdown_memory")

#: seconds a search may take in the service (an index run of changed files first included)
#: before this process gives up on it and searches itself
SEARCH_TIMEOUT_SECONDS = 600.0

#: this process already found no service (the console script's fast path tried before ``main``):
#: the in-process search does not wait for another start
_unavailable = False


def search_via_service(settings: Settings, params: CliSearch) -> int | None:
    """Run the search in the resident service (starting it when the switch is ``auto``) and
    print its output here; returns the exit status, or None when the caller must search in
    process (no service, a refused request, the service died mid-call)."""
    from ..reader import program
    from ..service import client

    global _unavailable
    if client.mode() == "off" or _unavailable:
        return None
    fields: dict[str, Any] = {"settings": settings.to_wire(), **params.to_wire(), "program": program(),
                              "cwd": os.getcwd()}
    try:
        result = client.request("search", fields, timeout=SEARCH_TIMEOUT_SECONDS)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        log.debug("searching in process: %s", exc)
        _unavailable = True
        return None
    if not isinstance(result, dict) or not isinstance(result.get("exit"), int):
        return None
    sys.stderr.write(str(result.get("stderr") or ""))
    sys.stdout.write(str(result.get("stdout") or ""))
    return int(result["exit"])
