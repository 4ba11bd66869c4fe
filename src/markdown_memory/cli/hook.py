"""``markdown-memory hook``: the prompt hook of Claude Code and Codex (``UserPromptSubmit``).

Reads the hook's JSON from stdin and prints nothing, or the one JSON answer that adds the
sections answering the prompt (:mod:`markdown_memory.hook`). The exit status is 0 whatever happens (exit 2
would block the user's prompt): a bad payload, a missing index, a locked database or a bad
option of this command leave stdout empty and say why in at most one stderr line.

Imported when the parser is built (at start-up); the hook itself (and the engine, only when a prompt is
searched) is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from ..hook.command import MAX_TOKENS as MAX_TOKENS  # re-exported: the bounds of --max-tokens
from ..hook.command import MIN_TOKENS as MIN_TOKENS
from .options import add_docs_dir


def register(sub: Any) -> None:
    """Add ``hook`` to the subcommand parsers ``sub``. Its own usage errors exit 0 with one
    stderr line (never 2: that blocks the prompt); ``main`` runs it before it checks the log
    level and outside the SIGTERM handler (``always_zero``)."""
    p = sub.add_parser("hook", help="prompt hook for Claude Code / Codex: reads the hook JSON on stdin, "
                       "prints the sections that answer the prompt (docs/prompt-hook.md)")
    add_docs_dir(p)
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="budget of the added text in tokens, 100-20000 (default 800)")

    def quiet_error(message: str) -> NoReturn:
        from ..messages import hook_usage

        sys.stderr.write(hook_usage(message) + "\n")
        raise SystemExit(0)

    p.error = quiet_error
    p.set_defaults(handler=run, always_zero=True)


class _UsageError(Exception):
    pass


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | None:
    """``argv`` parsed leniently for the hook: arguments it does not know (a typo in the agent's
    settings, a newer option given to an older install) are named on stderr and ignored; an
    argument it cannot parse at all (an unknown ``--embedder``) gives one stderr line and None.
    Never exits 2, which would block the user's prompt. The caller re-parses strictly when the
    command is not ``hook``."""
    from ..messages import hook_ignored, hook_usage

    def raise_usage(message: str) -> NoReturn:
        raise _UsageError(message)

    parser.error = raise_usage  # type: ignore[method-assign]
    try:
        args, extra = parser.parse_known_args(argv)
    except _UsageError as exc:
        sys.stderr.write(hook_usage(str(exc)) + "\n")
        return None
    if extra and args.command == "hook":
        sys.stderr.write(hook_ignored(extra) + "\n")
    return args


def run(args: argparse.Namespace) -> int:
    """Answer one hook call: read stdin, write the answer (if any) to stdout; always 0."""
    from ..hook.command import run as run_hook

    return run_hook(docs_dir=args.docs_dir, db=args.db, max_tokens=args.max_tokens, embedder=args.embedder,
                    log_level=args.log_level)
