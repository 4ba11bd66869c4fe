"""The CLI's client path to the resident service: ``search`` asks the service (op ``search``,
``cli/search_op.py``), which runs the same search (``search_text``) with its loaded model and
returns the answer's wire form and its stderr; this process renders it as it would its own
answer. When the service is off, cannot be had, or dies mid-call, the caller searches in
process.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

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
    print its answer here, rendered as this process would (``search_text.answer_output``);
    returns the exit status, or None when the caller must search in process (no service, a
    refused request, the service died mid-call)."""
    from ..reader import program
    from ..search_text import answer_output, failure_output
    from ..service import client
    from .search_op import SearchCall, SearchReply

    global _unavailable
    if client.mode() == "off" or _unavailable:
        return None
    call = SearchCall(settings, params, program=program(), cwd=os.getcwd())
    try:
        reply = client.call("search", call, SearchReply, timeout=SEARCH_TIMEOUT_SECONDS)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        log.debug("searching in process: %s", exc)
        _unavailable = True
        return None
    if reply.failure is not None:
        out, err = failure_output(reply.failure.payload, reply.failure.sentence, params.output.json)
        status = reply.failure.exit
    elif reply.answer is not None:
        out = answer_output(reply.answer, params.output, settings, embedder_news=reply.embedder_news)
        err, status = "", 0
    else:
        return None
    sys.stderr.write(reply.stderr + err)
    sys.stdout.write(out)
    return status
