"""``markdown-memory roots [--prune [--yes]] [--json]``: the index databases under the user data
dir, one per docs root (with its id: the index folder's name, the ``<id>`` of an MCP-over-HTTP
URL), and removing those whose root is gone or empty (the logic is in
:mod:`markdown_memory.roots`), and the HTTP registrations of roots that are gone. ``--prune`` prints the plan and removes only with ``--yes``, like
``setup``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..text import human_size as _size
from .options import add_json, emit

if TYPE_CHECKING:  # pragma: no cover
    from ..roots import IndexEntry


def register(sub: Any) -> None:
    """Add ``roots`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("roots", help="list the index of every docs root (size, last used, whether the root "
                       "still exists); --prune removes those whose root is gone or empty")
    p.add_argument("--prune", action="store_true", help="plan removing the indexes whose docs root is gone or "
                   "empty (and their files); removes them with --yes")
    p.add_argument("--yes", action="store_true", help="with --prune: remove them (without it only the plan is "
                   "printed)")
    add_json(p)
    p.set_defaults(handler=run)


def _line(e: IndexEntry) -> str:
    when = e.last_used.strftime("%Y-%m-%d %H:%M") if e.last_used else "?"
    return f"  {e.state:<10} {_size(e.size_bytes):>9}  {when}  {e.root or e.folder}  [id {e.folder.name}]  ({e.reason})"


def run(args: argparse.Namespace) -> int:
    """List, or with ``--prune`` plan (and with ``--yes`` remove). Exit 0; 1 when ``--yes``
    could not remove one of the planned folders (each says why)."""
    from ..config import projects_dir
    from ..errors import UsageError
    from ..mcp import http_access
    from ..roots import PRUNE_HINT, list_indexes, prune_plan, remove

    if args.yes and not args.prune:
        raise UsageError("--yes applies to --prune: run 'markdown-memory roots --prune --yes'")
    base = projects_dir()
    entries = list_indexes(base)
    if not args.prune:
        if args.json:
            emit({"data_dir": str(base), "indexes": [e.to_dict() for e in entries],
                  "total_bytes": sum(e.size_bytes for e in entries)})
            return 0
        if not entries:
            print(f"no index under {base}")
            return 0
        total = sum(e.size_bytes for e in entries)
        print(f"{len(entries)} indexes under {base}, {_size(total)}:")
        for e in entries:
            print(_line(e))
        if prune_plan(entries):
            print(PRUNE_HINT)
        return 0
    plan = prune_plan(entries)
    failed = {e.folder: why for e in plan if (why := remove(e))} if args.yes else {}
    done = [e for e in plan if args.yes and e.folder not in failed]
    http_gone = http_access.registered_gone()  # MCP-over-HTTP registrations of roots that are gone
    if args.yes:
        http_access.unregister(sorted(http_gone))
    if args.json:
        emit({"data_dir": str(base), "applied": bool(args.yes),
              "plan": [{**e.to_dict(), "removed": e in done, "error": failed.get(e.folder)} for e in plan],
              "freed_bytes": sum(e.size_bytes for e in done),
              "http_roots": [{"id": ident, "root": root, "unregistered": bool(args.yes)}
                             for ident, root in sorted(http_gone.items())]})
        return 1 if failed else 0
    if http_gone:
        print(f"{'unregistered' if args.yes else 'would unregister'} {len(http_gone)} MCP-over-HTTP root(s) whose "
              f"folder is gone: {', '.join(sorted(http_gone))}")
    if not plan:
        print(f"nothing to prune: every index under {base} has a docs root with documents")
        return 0
    head = "removed" if args.yes else "would remove"
    print(f"{head} {len(done) if args.yes else len(plan)} of {len(entries)} indexes under {base}:")
    for e in plan:
        print(_line(e) + (f": not removed, {failed[e.folder]}" if e.folder in failed else ""))
    if args.yes:
        print(f"freed {_size(sum(e.size_bytes for e in done))}")
    else:
        print("run 'markdown-memory roots --prune --yes' to remove them")
    return 1 if failed else 0
