"""The hook's wire format: the JSON an agent writes on the hook's stdin, and the one answer.

Claude Code runs a ``UserPromptSubmit`` command hook with one JSON object on stdin:
``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``
(``"UserPromptSubmit"``) and ``prompt``. Codex CLI (0.117 and later) runs its
``UserPromptSubmit`` hooks with the same fields plus ``turn_id`` and ``model``, and reads the
same answer. The answer that adds context is one JSON object on stdout,
``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": TEXT}}``;
an empty stdout (exit status 0) adds nothing in both. Exit status 2 would block the prompt, so
the hook never uses it.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from ..text import decode_outside

EVENT = "UserPromptSubmit"
#: a prompt is cut to this many characters before it is searched (a pasted log can be huge)
MAX_PROMPT_CHARS = 4_000


class Payload(NamedTuple):  # not a dataclass: ``dataclasses`` costs the quiet hook a few ms
    """One prompt: ``prompt`` (cut to MAX_PROMPT_CHARS), ``session_id`` ("" when absent),
    ``cwd`` (None when absent), ``client`` ``"codex"`` (the payload carries Codex's
    ``turn_id``) or ``"claude-code"``."""

    prompt: str
    session_id: str
    cwd: str | None
    client: str


class PayloadError(ValueError):
    """The hook input is not a UserPromptSubmit payload; the message is one sentence."""


def _bad(reason: str) -> PayloadError:
    """The error for a payload that cannot be read because of ``reason``."""
    from .. import messages  # only to word the error: the hook's client path stays light

    return PayloadError(messages.hook_bad_payload(reason))


def parse(text: str) -> Payload:
    """The payload in ``text`` (the hook's whole stdin). Raises PayloadError for text that is
    not a JSON object (nested too deeply for the parser included), another hook event, or a
    prompt that is not a string. The prompt passes ``text.decode_outside`` (a JSON-escaped lone
    surrogate would fail inside the search)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _bad("it is not JSON") from exc
    except RecursionError as exc:  # '[' * 100000: the parser's recursion limit, not a traceback
        raise _bad("it is JSON nested too deeply to read") from exc
    if not isinstance(data, dict):
        raise _bad("it is not a JSON object")
    event = data.get("hook_event_name", EVENT)
    if event != EVENT:
        raise _bad(f"it is a {str(event)[:40]!r} event, not {EVENT}")
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise _bad('it has no "prompt" string')
    session = data.get("session_id")
    cwd = data.get("cwd")
    return Payload(
        prompt=decode_outside(prompt[:MAX_PROMPT_CHARS]),
        session_id=session if isinstance(session, str) else "",
        cwd=cwd if isinstance(cwd, str) and cwd.strip() else None,
        client="codex" if "turn_id" in data else "claude-code",
    )


def answer(context: str) -> str:
    """The stdout line that adds ``context`` to the prompt (the same form for both clients)."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}},
                      ensure_ascii=False)
