"""``markdown-memory links FILE``: a document's outgoing links and backlinks, each with the
section it sits in (``Engine.links``; the MCP tool ``get_links`` answers the same JSON).

Printed for a person: one line per link, ``LINE  SECTION  ->  TARGET`` (the target's path and
breadcrumb, or its status when it leads nowhere, with the candidate paths of an ambiguous name), then the backlinks as ``PATH:LINE  SECTION``;
``--json`` prints the answer object.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .options import add_docs_dir, add_json, bounded, document_argument, emit, open_engine, printable

if TYPE_CHECKING:  # pragma: no cover
    from ..models import Links


def register(sub: Any) -> None:
    """Add ``links`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("links", help="outgoing links and backlinks of one document")
    p.add_argument("file", help="document path relative to the docs root (or a unique suffix, or a note name)")
    add_docs_dir(p)
    p.add_argument("--offset", type=bounded(0), default=0, help="skip this many links of each list (default 0)")
    p.add_argument("--limit", type=bounded(1, 1000), default=200, help="links per list, 1-1000 (default 200)")
    add_json(p)
    p.set_defaults(handler=run)


def render(answer: Links) -> str:
    """The answer of ``Engine.links(...)`` as lines for a person (``--json`` prints ``to_dict()``)."""
    a = answer
    out = [f"{printable(a.file_path)}: {a.outgoing_total} outgoing link(s), {a.unresolved} not resolved; "
           f"{a.backlinks_total} backlink(s)"]
    for link in a.outgoing:
        if link.target_path:
            where = printable(link.target_path) + (f" > {link.target_heading_path}" if link.target_heading_path else "")
            if link.status != "resolved":
                where += f" ({link.status}: {link.target})"
        elif link.candidates:
            where = f"({link.status}: {link.target}: {' | '.join(link.candidates)})"
        else:
            where = f"({link.status}: {link.target})"
        out.append(f"  {link.line:>5}  {link.heading_path}  ->  {where}")
    if a.backlinks:
        out.append("backlinks:")
    for link in a.backlinks:
        to = f"  ->  {link.target_heading_path}" if link.target_heading_path else ""
        out.append(f"  {printable(link.file_path)}:{link.line}  {link.heading_path}{to}")
    if a.next_offset is not None:
        out.append(f"more: --offset {a.next_offset}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Print the links of ``args.file``."""
    from ..models import Freshness

    with open_engine(args) as engine:
        # backlinks come from every document: the index is brought up to date first (as search does)
        answer = engine.links(document_argument(args.file, engine.root), offset=max(0, args.offset), limit=max(1, min(args.limit, 1000)),
                              freshness=Freshness.INDEX)
    emit(answer.to_dict()) if args.json else print(render(answer))
    return 0
