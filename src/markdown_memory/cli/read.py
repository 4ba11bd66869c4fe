"""``markdown-memory read FILE [HEADING_PATH]``: print one section verbatim (``Engine.read``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import add_docs_dir, add_json, document_argument, emit, open_engine


def register(sub: Any) -> None:
    """Add ``read`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("read", help="print one section verbatim")
    p.add_argument("file", help="document path, or a link target such as 'note#Heading' or '[[note#Heading]]'")
    p.add_argument("heading_path", nargs="?", default="")
    add_docs_dir(p)
    p.add_argument("--include-subsections", action="store_true")
    add_json(p, help=None)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the section (its content, or the whole answer with ``--json``)."""
    from ..models import Freshness

    with open_engine(args) as engine:
        section = engine.read(document_argument(args.file, engine.root), args.heading_path, include_subsections=args.include_subsections,
                              page_tokens=10**9,  # a link target is resolved against the whole, current index
                              freshness=Freshness.FLAG if args.heading_path else Freshness.INDEX).to_dict()
        if args.json:
            emit(section)
        else:
            if section.get("message"):
                print(f"note: {section['message']}", file=sys.stderr)
            print(section["content"])
    return 0
