"""The resident service's ``hook`` op (registered by ``cli/serve.py``; :mod:`.remote` is its
client): the prompt hook's answer from the service's pooled engine of the settings (the MCP
sessions' engine: background mode, its model loaded once, so the hook searches with vectors).

Request :class:`HookCall`: the prompt the client already read and let through its gate (the
service neither parses the payload again nor judges the prompt again). Reply
:class:`HookReply`: the text to add to the prompt, or the cause of a failure; the client makes
the lines the hook prints of it (:func:`.remote.via_service`), as ``respond`` does in process.
Light at import: the engine is imported by the handler.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings
from ..service.ops import Op, ServiceContext
from . import DEFAULT_MAX_TOKENS


@dataclass(frozen=True)
class HookCall:
    """One prompt: the client's ``settings``, the payload's ``prompt`` (cut as
    ``payload.parse`` cuts it), ``session_id`` and ``client`` (``"codex"`` or
    ``"claude-code"``), the token budget and ``hook_log`` (the client's
    ``MARKDOWN_MEMORY_HOOK_LOG``, ``hook.record``)."""

    settings: Settings
    prompt: str
    session_id: str = ""
    client: str = "claude-code"
    max_tokens: int = DEFAULT_MAX_TOKENS
    hook_log: str | None = None


@dataclass(frozen=True)
class HookReply:
    """``context``: the text to add to the prompt (``inject``'s), None when nothing is added;
    ``failure``: the cause when nothing was added because of a problem (a locked or damaged
    database), which the client words as ``messages.hook_failed``; else None."""

    context: str | None = None
    failure: str | None = None


def answer(service: ServiceContext, call: HookCall) -> HookReply:
    """``inject`` on the pooled engine. Never raises for a prompt: a failure is its cause; a
    damaged database file met on the way is moved aside at once (``Engine.recover_damaged``,
    as the MCP tools do), since the hook swallows the error the service would act on."""
    from . import inject, record
    from .payload import MAX_PROMPT_CHARS, Payload

    engine = None
    try:
        engine = service.engine(call.settings)
        try:
            asked = Payload(call.prompt[:MAX_PROMPT_CHARS], call.session_id, None, call.client)  # as parse cuts it
            context = inject(engine, asked, call.max_tokens, log_keep=record.keep(call.hook_log))  # the client's setting
        finally:
            engine.close()  # this thread's connection (the engine stays in the pool)
    except Exception as exc:  # a locked, damaged or foreign database: as the hook says it in process
        if engine is not None:  # damage met: moved aside and rebuilt now (the engine's one recovery), not when idle
            engine.recover_damaged(exc)
        return HookReply(failure=str(exc) or type(exc).__name__)
    return HookReply(context=context)


OP = Op("hook", HookCall, answer)
