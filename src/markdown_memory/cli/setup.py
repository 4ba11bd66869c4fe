"""``markdown-memory setup claude-code|codex``: wiring agents in.

``setup`` prints what it would change (the MCP server at user scope, with ``--hook`` the
prompt hook, with ``--rules`` the agent rules block in the project's CLAUDE.md / AGENTS.md)
and changes it only with ``--yes``; ``--remove`` takes the server and the hook out again (and
the rules block, with ``--rules``). The logic is in :mod:`markdown_memory.agents`; it opens no index.

Imported when the parser is built (at start-up): nothing heavy is imported until the command runs.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..config import EMBEDDER_CHOICES
from ..mcp.http_access import DEFAULT_HTTP_PORT
from .options import add_docs_dir_option


def register(sub: Any) -> None:
    """Add ``setup`` to the subcommand parsers ``sub``."""
    from ..agents import AGENTS  # the package's constants only: the server start-up builds this parser too

    p = sub.add_parser("setup", help="register the MCP server (and optionally the prompt hook and the agent "
                       "rules) with Claude Code or Codex; prints the plan, changes with --yes")
    p.add_argument("agent", choices=AGENTS)
    p.add_argument("--hook", action="store_true", help="also install the prompt hook (UserPromptSubmit)")
    p.add_argument("--rules", action="store_true", help="also add the agent rules block to the project's "
                   "CLAUDE.md (claude-code) or AGENTS.md (codex)")
    add_docs_dir_option(p, help="serve this docs folder in every session (default: the "
                        "project folder each session starts in)")
    p.add_argument("--project", metavar="DIR", help="folder of the CLAUDE.md / AGENTS.md --rules edits "
                   "(default: the working directory)")
    p.add_argument("--embedder", choices=EMBEDDER_CHOICES, default=argparse.SUPPRESS,
                   help="embedding preset the server and hook use (default: the global --embedder, "
                   "$MARKDOWN_MEMORY_EMBEDDER, else the installed model)")
    p.add_argument("--remove", action="store_true", help="undo: remove the server and the hook "
                   "(and the rules block, with --rules)")
    p.add_argument("--yes", action="store_true", help="make the changes (without it only the plan is printed)")
    p.add_argument("--http", action="store_true", help="instead: register this docs root for MCP over HTTP (served by "
                   "`serve --http-port`; with --yes) and print the line registering its URL, with its bearer token")
    p.add_argument("--http-port", type=int, metavar="PORT", default=None,
                   help=f"the port in that URL (default: $MARKDOWN_MEMORY_HTTP_PORT, else {DEFAULT_HTTP_PORT})")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Plan, print, and with ``--yes`` apply. Raises ConfigError for a config file that cannot
    be read, parsed or edited safely (before anything is written) and for a missing folder."""
    from .. import messages_setup
    from ..agents.files import apply
    from ..agents.plan import Request, plan
    from ..embed.choice import installed_embedder
    from ..errors import ConfigError

    note = None
    embedder = args.embedder or os.environ.get("MARKDOWN_MEMORY_EMBEDDER", "").strip().lower() or None
    if embedder is None:
        embedder, note = installed_embedder()
    if embedder not in EMBEDDER_CHOICES:
        raise ConfigError(f"unknown embedder {embedder!r}; choose one of {', '.join(EMBEDDER_CHOICES)}")
    if args.http:
        from .setup_http import run_http

        return run_http(args, embedder)
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
