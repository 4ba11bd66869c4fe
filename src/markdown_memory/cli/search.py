"""``markdown-memory search QUERY``: search the docs root (``Engine.search``); per hit a header
line and the first lines of its text, or one JSON object with ``--json``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import search_text
from ..search_text import render_search as render_search  # re-exported: the CLI's rendering
from .options import add_docs_dir, add_json, add_request_options, open_engine, request_of, settings_of

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings


def register(sub: Any) -> None:
    """Add ``search`` to the subcommand parsers ``sub``: the request's options come from its
    schema (``request.py``), the output options are the command's own."""
    p = sub.add_parser("search", help="search the docs root")
    add_docs_dir(p)
    add_request_options(p)
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


def params(args: argparse.Namespace) -> search_text.CliSearch:
    """The parsed command line as the search and its output options (what the service is sent)."""
    embedder_chosen, db_chosen = _chosen(args)
    return search_text.CliSearch(request_of(args), search_text.SearchOutput(
        no_refresh=args.no_refresh, json=args.json, verbose=bool(args.verbose),
        embedder_chosen=embedder_chosen, db_chosen=db_chosen))


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
