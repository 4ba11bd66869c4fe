"""``markdown-memory status``: index health for a docs root (``Engine.status``)."""

from __future__ import annotations

import argparse
from typing import Any

from .options import add_docs_dir, add_json, emit, open_engine, printable


def register(sub: Any) -> None:
    """Add ``status`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("status", help="index health for a docs root")
    add_docs_dir(p)
    add_json(p, help=None)
    p.set_defaults(handler=run)


def render_status(status: dict[str, Any], *, verbose: bool = False) -> str:
    """``status`` for a person: the counts, model, freshness and problems on a few lines; why
    the preset was chosen only when it changed, or with ``verbose``."""
    from ..embed.choice import worth_saying

    emb = status["embedder"]
    mode = "keyword-only" if status["keyword_only"] else "hybrid (keyword + vectors)"
    if not status["keyword_only"] and status.get("pending_vectors"):  # e.g. a run stopped while embedding
        mode = (f"partly hybrid: {status['vectors']} of {status['passages']} passages have vectors, "
                f"{status['pending_vectors']} are found by keywords only")
    last = status.get("last_run")
    lines = [
        f"docs root  {status['root']}",
        f"database   {status['database']}",
        f"indexed    {status['documents']} documents, {status['sections']} sections, "
        f"{status['passages']} passages, {status['vectors']} with vectors",
        f"search     {mode}; embedder {emb['name']}"
        + (f" ({emb['chosen']})" if worth_saying(emb["name"], emb.get("chosen"), verbose=verbose) else "")
        + (f" ({emb['error']})" if emb.get("error") else ""),
        f"coverage   {status['coverage']}" + ("; indexing now" if status["indexing"] else "")
        + (f"; last run {last.get('when', last['at'])} took {last['seconds']:.2f} s" if last
           else "; the last index run was interrupted" if status["documents"] else "; never indexed"),
    ]
    for change in status["changed_files"]:
        lines.append(f"changed    {printable(change['path'])} ({change['change']})")
    for failure in status["failures"]:
        lines.append(f"{failure['kind']:<10} {printable(failure['path'])}: {failure['reason']}")
    if status.get("message"):
        lines.append(f"note       {status['message']}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the index status."""
    with open_engine(args) as engine:
        status = engine.status().to_dict()
        emit(status) if args.json else print(render_status(status, verbose=args.verbose))
    return 0
