"""``markdown-memory search QUERY``: search the docs root (``Engine.search``); per hit a header
line and the first lines of its text, or one JSON object with ``--json``."""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K, MAX_MAX_TOKENS, MAX_TOP_K, MIN_MAX_TOKENS
from .options import add_docs_dir, add_json, bounded, clip, emit, open_engine

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..models import SearchAnswer


def register(sub: Any) -> None:
    """Add ``search`` to the subcommand parsers ``sub`` (bounds from ``models``: the request's)."""
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
    """How ``search`` text output names the command that reads a hit: a shell-quoted
    ``markdown-memory ... read FILE HEADING --docs-dir ROOT`` that works pasted from any
    directory. It names the absolute docs root the search used, and the index (``--db``) and
    the embedder when they were chosen (flag or environment) rather than defaulted; the program
    is :func:`~markdown_memory.messages.program` (an absolute path when not on PATH)."""
    flags: list[str] = []
    if args.embedder or os.environ.get("MARKDOWN_MEMORY_EMBEDDER", "").strip():
        flags += ["--embedder", settings.embedder]
    if args.db or os.environ.get("MARKDOWN_MEMORY_DB", "").strip():
        flags += ["--db", str(settings.db_path)]

    from ..messages import program

    head = program()  # already shell-quoted

    def command(file_path: str, heading_path: str) -> str:
        return " ".join([head, shlex.join([*flags, "read", file_path, heading_path,
                                           "--docs-dir", str(settings.docs_root)])])

    return command


def render_search(answer: SearchAnswer, read_command: Callable[[str, str], str] | None = None, *,
                  verbose: bool = False) -> str:
    """``search`` for a person: per hit a header line, the first lines of its text (or the
    preview of a pointer hit) and, when text is left out, the command that reads the section;
    the ``embedder:`` line only when the preset changed, or with ``verbose``."""
    from ..embed.choice import worth_saying

    read = read_command or (lambda f, h: shlex.join(["markdown-memory", "read", f, h]))
    out = []
    for i, hit in enumerate(answer.results, start=1):
        notes = [f"score {hit.score}", f"{hit.tokens} tokens", "+".join(hit.matched_by),
                 f"stale: file {hit.stale} since indexed" if hit.stale else ""]
        out.append(f"{i}. {hit.file_path}:{hit.start_line}-{hit.end_line}  {hit.heading_path}  "
                   f"({', '.join(n for n in notes if n)})")
        if hit.content is None:
            out.append(f"   {hit.preview}")
            out.append(f"   … (not shown, {hit.tokens} tokens: {read(hit.file_path, hit.heading_path)})")
        else:
            text_lines = hit.content.split("\n")
            shown = text_lines[:12]
            out.extend("   " + clip(line) for line in shown)
            if len(text_lines) > len(shown):
                out.append(f"   … ({len(text_lines) - len(shown)} more lines: "
                           f"{read(hit.file_path, hit.heading_path)})")
        out.append("")
    if not answer.results:
        out.append("no results")
    if answer.message:
        out.append(f"note: {answer.message}")
    emb = answer.index_status.embedder if answer.index_status is not None else None
    if emb is not None and worth_saying(emb.name, emb.chosen, verbose=verbose):  # nobody named it: which and why
        out.append(f"embedder: {emb.name} ({emb.chosen})")
    return "\n".join(out).rstrip()


def run(args: argparse.Namespace) -> int:
    """Search (re-indexing changed files first unless ``--no-refresh``) and print the hits."""
    from ..models import Freshness, SearchRequest
    from ..progress import Progress

    with open_engine(args) as engine:
        progress = Progress()
        request = SearchRequest(args.query, top_k=args.top_k, max_tokens=args.max_tokens,
                                path_prefix=args.path_prefix, tags=args.tags, tags_mode=args.tags_mode,
                                kind=args.kind, lang=args.lang)
        answer = engine.search(request, progress=progress,
                               freshness=Freshness.FLAG if args.no_refresh else Freshness.INDEX)
        progress.finish()
        emit(answer.to_dict()) if args.json else print(render_search(answer, read_command(engine.settings, args),
                                                                   verbose=args.verbose))
    return 0
