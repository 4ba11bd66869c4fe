"""The resident service's ``hook`` op (registered by ``cli/serve.py``; :mod:`.remote` is its
client): the prompt hook's answer from the service's pooled engine of the settings (the MCP
sessions' engine: background mode, its model loaded once, so the hook searches with vectors).

Request :class:`HookCall`, reply :class:`HookReply`: what the hook prints, as ``inject`` in
process makes it. Light at import: the engine is imported by the handler.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings
from ..service.ops import Op, ServiceContext

#: the hook's budget when the request names none (the CLI's default)
DEFAULT_MAX_TOKENS = 800


@dataclass(frozen=True)
class HookCall:
    """One hook call: the client's ``settings``, its ``stdin`` (the agent's payload), token
    budget and ``hook_log`` (the client's ``MARKDOWN_MEMORY_HOOK_LOG``, ``hook.record``)."""

    settings: Settings
    stdin: str = ""
    max_tokens: int = DEFAULT_MAX_TOKENS
    hook_log: str | None = None


@dataclass(frozen=True)
class HookReply:
    """The hook's stdout line and stderr line, each None when it prints none."""

    stdout: str | None = None
    stderr: str | None = None


def answer(service: ServiceContext, call: HookCall) -> HookReply:
    """``inject`` on the pooled engine. Never raises for a prompt: a failure is the stderr line
    the hook would print."""
    from .. import messages
    from . import PayloadError, gate, inject, parse, record

    try:
        payload = parse(call.stdin)
    except PayloadError as exc:
        return HookReply(None, str(exc))
    if not gate.asks_docs(payload.prompt):
        return HookReply()
    try:
        engine = service.engine(call.settings)
        try:
            out, err = inject(engine, payload, call.max_tokens or DEFAULT_MAX_TOKENS,
                              log_keep=record.keep(call.hook_log))  # the client's setting
        finally:
            engine.close()  # this thread's connection (the engine stays in the pool)
    except Exception as exc:  # a locked, damaged or foreign database: as the hook says it in process
        out, err = None, messages.hook_failed(str(exc) or type(exc).__name__)
    return HookReply(out, err)


OP = Op("hook", HookCall, answer)
