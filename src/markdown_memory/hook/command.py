"""The ``markdown-memory hook`` command's body, shared by the full CLI (``cli/hook.py``) and the
console script's fast path (``entry.py``): clamp the budget, read stdin, answer, print. Light:
the engine is imported only when a prompt is searched in process.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .payload import Payload

#: ``--max-tokens`` bounds (docs/prompt-hook.md); a value outside is clamped and said on stderr
MIN_TOKENS, MAX_TOKENS = 100, 20000


def run(*, docs_dir: str | None, db: str | None, max_tokens: int | None, embedder: str | None = None,
        log_level: str | None = None) -> int:
    """Answer one hook call: read stdin, write the answer (if any) to stdout; always 0 (exit 2
    would block the user's prompt). ``log_level``: the ``--log-level`` flag (None: the hook's
    logs are silenced unless $MARKDOWN_MEMORY_LOG_LEVEL asks for them)."""
    from . import DEFAULT_MAX_TOKENS

    budget = DEFAULT_MAX_TOKENS if max_tokens is None else max(MIN_TOKENS, min(int(max_tokens), MAX_TOKENS))
    if max_tokens is not None and budget != max_tokens:  # clamped, never refused: exit 2 blocks the prompt
        from ..messages import hook_budget_clamped

        sys.stderr.write(hook_budget_clamped(max_tokens, budget, MIN_TOKENS, MAX_TOKENS) + "\n")
    try:
        stdin = sys.stdin.read() if sys.stdin is not None else ""
    except (OSError, UnicodeDecodeError) as exc:
        from ..messages import hook_stdin

        sys.stderr.write(hook_stdin(exc) + "\n")
        return 0
    logs = log_level is not None or bool(os.environ.get("MARKDOWN_MEMORY_LOG_LEVEL", "").strip())
    from . import gate
    from .payload import PayloadError, parse

    try:
        payload = parse(stdin)
    except PayloadError as exc:
        sys.stderr.write(str(exc).replace("\n", " ") + "\n")
        return 0
    if not gate.asks_docs(payload.prompt):  # most prompts: nothing more is imported or done
        if logs:
            from . import turned_away

            turned_away()
        return 0
    out, err = _respond(payload, docs_dir, db, budget, embedder, log_level)
    if err:
        sys.stderr.write(err.replace("\n", " ") + "\n")
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


def _respond(payload: Payload, docs_dir: str | None, db: str | None, budget: int, embedder: str | None,
             log_level: str | None) -> tuple[str | None, str | None]:
    """``respond_to`` with the hook's logs silenced unless asked for; never raises."""
    import logging

    from . import respond_to

    logger = logging.getLogger("markdown_memory")
    level = logger.level
    if log_level is None and not os.environ.get("MARKDOWN_MEMORY_LOG_LEVEL", "").strip():
        logger.setLevel(logging.CRITICAL)  # stderr: our one line at most (restored: cli.main runs in tests)
    try:
        return respond_to(payload, docs_dir=docs_dir, db=db, max_tokens=budget, embedder=embedder)
    except Exception as exc:  # the promise of docs/prompt-hook.md: exit 0, one stderr line, never a traceback
        from ..messages import hook_failed

        return None, hook_failed(f"{type(exc).__name__}: {exc}")
    finally:
        logger.setLevel(level)
