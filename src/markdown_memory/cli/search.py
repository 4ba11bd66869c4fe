"""``markdown-memory search QUERY``: search the docs root (``Engine.search``); per hit a header
line and the first lines of its text, or one JSON object with ``--json``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import search_text
from ..limits import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K, MAX_MAX_TOKENS, MAX_TOP_K, MIN_MAX_TOKENS
from ..search_text import render_search as render_search  # re-exported: the CLI's rendering
from .options import add_docs_dir, add_json, bounded, open_engine, settings_of

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings


def register(sub: Any) -> None:
    """Add ``search`` to the subcommand parsers ``sub`` (bounds from ``limits``: the request's)."""
    p = sub.add_parser("search", help="search the docs root")
    p.add_argument("query")
    add_docs_dir(p)
    p.add_argument("--top-k", type=bounded(1, MAX_TOP_K), default=DEFAULT_TOP_K,
                   help=f"number of results (1-{MAX_TOP_K}, default {DEFAULT_TOP_K})")
    p.add_argument("--path-prefix", help="only documents under this folder or path")
    p.add_argument("--tag", dest="tags", action="append", metavar="TAG",
                   help="only documents carrying this tag or one nested in it (repeatable)")
    p.add_argument("--tags-mode", choices=["any", "all"], default="any",
                   help="with several --tag: documents with any of them (default) or all")
    p.add_argument("--kind", choices=["code", "table", "list", "prose"], help="only sections holding a block of this kind")
    p.add_argument("--lang", help="only sections holding a code block in this language (bash also matches sh, console)")
    p.add_argument("--max-tokens", type=bounded(MIN_MAX_TOKENS, MAX_MAX_TOKENS), default=DEFAULT_MAX_TOKENS,
                   help=f"budget for result text, {MIN_MAX_TOKENS}-{MAX_MAX_TOKENS} (default {DEFAULT_MAX_TOKENS})")
    p.add_argument("--no-refresh", action="store_true", help="do not re-index changed files first")
    add_json(p)
    p.set_defaults(handler=run)


def read_command(settings: Settings, args: argparse.Namespace) -> Callable[[str, str], str]:
    """How ``search`` text output names the command that reads a hit (``search_text.read_command``):
    the index and the embedder are repeated when a flag or the environment chose them."""
    return search_text.read_command(settings, *_chosen(args))


def _chosen(args: argparse.Namespace) -> tuple[bool, bool]:
    """(embedder chosen, index chosen): by a flag or the environment, not defaulted."""
    return (bool(args.embedder or os.environ.get("MARKDOWN_MEMORY_EMBEDDER", "").strip()),
            bool(args.db or os.environ.get("MARKDOWN_MEMORY_DB", "").strip()))


def params(args: argparse.Namespace) -> search_text.SearchParams:
    """The parsed command line as the search's parameters (what the service is sent)."""
    embedder_chosen, db_chosen = _chosen(args)
    return search_text.SearchParams(args.query, top_k=args.top_k, max_tokens=args.max_tokens,
                                    path_prefix=args.path_prefix, tags=args.tags, tags_mode=args.tags_mode,
                                    kind=args.kind, lang=args.lang, no_refresh=args.no_refresh, json=args.json,
                                    verbose=bool(args.verbose), embedder_chosen=embedder_chosen, db_chosen=db_chosen)


def run(args: argparse.Namespace) -> int:
    """Search (re-indexing changed files first unless ``--no-refresh``) and print the hits: through
    the resident service when there is one (``cli/remote.py``: the same output), else here."""
    from ..progress import Progress
    from .remote import search_via_service

    settings = settings_of(args)
    status = search_via_service(settings, params(args))
    if status is not None:
        return status
    with open_engine(args) as engine:
        sys.stdout.write(search_text.run_search(engine, params(args), Progress()))
    return 0
