"""``markdown-memory map``: the docs map (:mod:`markdown_memory.reading.map`), a token-budgeted
llms.txt-style outline of the docs root, indexed first as ``search`` does."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import add_docs_dir, add_json, bounded, emit, open_engine


def register(sub: Any) -> None:
    """Add ``map`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("map", help="outline of the docs root within a token budget (llms.txt form)")
    add_docs_dir(p)
    p.add_argument("--max-tokens", type=bounded(200, 20000), default=1500,
                   help="budget for the whole outline, 200-20000 (default 1500)")
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Index (as ``search`` does), then print the map (or one JSON object)."""
    from ..models import Freshness

    with open_engine(args) as engine:
        docs_map = engine.docs_map(args.max_tokens, freshness=Freshness.INDEX)
        if args.json:
            emit(docs_map.to_dict())
        else:
            sys.stdout.write(docs_map.text)
    return 0
