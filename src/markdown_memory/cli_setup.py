"""``markdown-memory setup claude-code|codex`` and ``markdown-memory map``: wiring agents in.

``setup`` prints what it would change (the MCP server at user scope, with ``--hook`` the
prompt hook, with ``--rules`` the agent rules block in the project's CLAUDE.md / AGENTS.md)
and changes it only with ``--yes``; ``--remove`` takes the server and the hook out again (and
the rules block, with ``--rules``). The logic is in :mod:`.agents`; it opens no index.

``map`` prints the docs map (:mod:`.reading.map`): a token-budgeted llms.txt-style outline of
the docs root, indexed first as ``search`` does.

This module is imported by ``cli.py`` at start-up: nothing heavy is imported until a command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config import EMBEDDER_CHOICES


def add_parsers(sub: Any, add_docs_dir: Callable[[argparse.ArgumentParser], None],
                bounded: Callable[[int, int], Callable[[str], int]]) -> None:
    """Register ``setup`` and ``map`` on the subcommand parsers ``sub``."""
    from .agents import AGENTS  # the package's constants only: the server start-up builds this parser too

    p = sub.add_parser("setup", help="register the MCP server (and optionally the prompt hook and the agent "
                       "rules) with Claude Code or Codex; prints the plan, changes with --yes")
    p.add_argument("agent", choices=AGENTS)
    p.add_argument("--hook", action="store_true", help="also install the prompt hook (UserPromptSubmit)")
    p.add_argument("--rules", action="store_true", help="also add the agent rules block to the project's "
                   "CLAUDE.md (claude-code) or AGENTS.md (codex)")
    p.add_argument("--docs-dir", metavar="DIR", help="serve this docs folder in every session (default: the "
                   "project folder each session starts in)")
    p.add_argument("--project", metavar="DIR", help="folder of the CLAUDE.md / AGENTS.md --rules edits "
                   "(default: the working directory)")
    p.add_argument("--embedder", choices=EMBEDDER_CHOICES, default=argparse.SUPPRESS,
                   help="embedding preset the server and hook use (default: the global --embedder, "
                   "$MARKDOWN_MEMORY_EMBEDDER, else the installed model)")
    p.add_argument("--remove", action="store_true", help="undo: remove the server and the hook "
                   "(and the rules block, with --rules)")
    p.add_argument("--yes", action="store_true", help="make the changes (without it only the plan is printed)")

    p = sub.add_parser("map", help="outline of the docs root within a token budget (llms.txt form)")
    add_docs_dir(p)
    p.add_argument("--max-tokens", type=bounded(200, 20000), default=1500,
                   help="budget for the whole outline, 200-20000 (default 1500)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_setup(args: argparse.Namespace) -> int:
    """Plan, print, and with ``--yes`` apply. Raises ConfigError for a config file that cannot
    be read, parsed or edited safely (before anything is written) and for a missing folder."""
    from . import messages_setup
    from .agents.files import apply
    from .agents.plan import Request, plan
    from .embed.choice import installed_embedder
    from .errors import ConfigError

    note = None
    embedder = args.embedder or os.environ.get("MARKDOWN_MEMORY_EMBEDDER", "").strip().lower() or None
    if embedder is None:
        embedder, note = installed_embedder()
    if embedder not in EMBEDDER_CHOICES:
        raise ConfigError(f"unknown embedder {embedder!r}; choose one of {', '.join(EMBEDDER_CHOICES)}")
    docs_dir = None
    if args.docs_dir:
        docs_dir = Path(os.path.expanduser(args.docs_dir)).resolve()
        if not docs_dir.is_dir():
            raise ConfigError(f"docs folder {str(docs_dir)!r} is not a directory; pass an existing folder to --docs-dir")
    project = Path(os.path.expanduser(args.project)).resolve() if args.project else Path.cwd()
    if args.rules and not project.is_dir():
        raise ConfigError(f"project folder {str(project)!r} is not a directory; pass an existing folder to --project")
    req = Request(args.agent, embedder, docs_dir, args.hook, args.rules, project, remove=args.remove)
    changes = [c for c in plan(req) if c.needed]
    if not changes:
        print(messages_setup.setup_nothing(args.agent, args.remove))
        return 0
    if args.yes:
        apply(changes)
    print(messages_setup.setup_plan(args.agent, len(changes), done=args.yes))
    for change in changes:
        print(f"  {change.path}: {change.what}")
    if note and not args.remove:
        print(f"note: {note}")
    print(messages_setup.setup_next(args.agent, args.remove, args.hook) if args.yes else messages_setup.setup_confirm())
    return 0


def run_map(engine: Any, args: argparse.Namespace) -> int:
    """Index (as ``search`` does), then print the map (or one JSON object)."""
    from .models import Freshness

    docs_map = engine.docs_map(args.max_tokens, freshness=Freshness.INDEX)
    if args.json:
        sys.stdout.write(json.dumps(docs_map.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(docs_map.text)
    return 0
