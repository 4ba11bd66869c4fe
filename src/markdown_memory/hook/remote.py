"""The hook's client path: ask a RUNNING resident service (op ``hook``, :mod:`.service_op`) for
the answer.

A prompt never waits for a service to start: when none is running (and the switch is
``auto``), one is spawned detached for the next prompt and the caller answers in process,
keyword-only. Imports only the service's light client (no engine, numpy or model).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .payload import answer

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from .payload import Payload

log = logging.getLogger("markdown_memory.hook")

#: seconds the hook waits for the service's answer (the first prompt after a start may wait for
#: the model to load there); past it the prompt is answered in process
SERVICE_TIMEOUT_SECONDS = 15.0


def via_service(settings: Settings, payload: Payload, max_tokens: int) -> tuple[str | None, str | None] | None:
    """(stdout line or None, stderr line or None) from the running service for ``payload``'s
    prompt (read and let through the gate by the caller); None when there is no service (or it
    failed mid-call: the caller answers in process). The service answers data
    (:class:`.service_op.HookReply`); the lines are made here, as in process. Never raises."""
    from ..service import client
    from .service_op import HookCall, HookReply

    if client.mode() == "off":
        return None
    from .record import setting

    call = HookCall(settings, payload.prompt, payload.session_id, payload.client, max_tokens, setting())
    try:
        reply = client.call("hook", call, HookReply, start=False, timeout=SERVICE_TIMEOUT_SECONDS)
    except client.ServiceUnavailable as exc:
        log.debug("hook answers in process: %s", exc)
        if client.mode() == "auto":  # a live service's lock makes a second one exit at once
            spawn_detached()
        return None
    except client.ServiceError as exc:
        log.debug("the service refused the hook call (%s): answering in process", exc)
        return None
    if reply.failure is not None:
        from ..messages import hook_failed

        return None, hook_failed(reply.failure)
    return (answer(reply.context) if reply.context else None), None


def spawn_detached() -> None:
    """Start the resident service for the next prompt without waiting for it. Never raises."""
    from ..service import client

    try:
        client.spawn()
    except Exception as exc:  # noqa: BLE001 - the prompt goes on in process either way
        log.debug("could not start the service: %s", exc)
