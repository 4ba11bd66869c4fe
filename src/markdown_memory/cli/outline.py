"""``markdown-memory outline FILE``: the heading tree of one document (``Engine.outline``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .options import add_docs_dir, add_json, bounded, document_argument, emit, open_engine, printable

if TYPE_CHECKING:  # pragma: no cover
    from ..models import Outline


def register(sub: Any) -> None:
    """Add ``outline`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("outline", help="heading tree of one document")
    p.add_argument("file")
    add_docs_dir(p)
    p.add_argument("--max-depth", type=bounded(1, 6), help="deepest heading level to list (1-6; default all)")
    add_json(p, help=None)
    p.set_defaults(handler=run)


def render_outline(outline: Outline) -> str:
    """The outline as lines for a person: title, aliases, tags, then one line per heading."""
    out = [f"{printable(outline.file_path)} — {outline.title}"]
    if outline.aliases:
        out.append("aliases: " + ", ".join(outline.aliases))
    if outline.tags:
        out.append("tags: " + " ".join("#" + t for t in outline.tags))
    if outline.preamble is not None:
        p = outline.preamble
        out.append(f"[{p.start_line}-{p.end_line}] {p.heading_path}")
    for node in outline.headings:
        indent = "  " * (node.level - 1)
        out.append(f"{indent}[{node.start_line}-{node.end_line}] {node.heading_path} "
                   f"({node.tokens} tokens)")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Print the outline of ``args.file``."""
    with open_engine(args) as engine:
        outline = engine.outline(document_argument(args.file, engine.root), args.max_depth)
        emit(outline.to_dict()) if args.json else print(render_outline(outline))
    return 0
