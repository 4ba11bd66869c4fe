"""``markdown-memory index [DOCS_ROOT]``: index a docs root (incrementally; ``--force`` re-parses
and re-embeds every file) and print the run's report, or one JSON object with ``--json``."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .options import add_docs_dir_option, add_json, add_run_options, emit, open_engine, printable, real_path

if TYPE_CHECKING:  # pragma: no cover
    from ..models import IndexReport


def register(sub: Any) -> None:
    """Add ``index`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("index", help="index (incrementally) a docs root")
    p.add_argument("docs_root", nargs="?", help="docs root (default as for --docs-dir)")
    add_docs_dir_option(p, help="same as DOCS_ROOT", dest="docs_dir_flag")
    add_run_options(p)
    p.add_argument("--force", action="store_true", help="re-parse and re-embed every file")
    add_json(p)
    p.set_defaults(handler=run)


def index_root(positional: str | None, flag: str | None) -> str | None:
    """The docs root ``index`` was given, as DOCS_ROOT or ``--docs-dir`` (None: the default).
    Raises UsageError when both are given and name different folders."""
    if positional and flag and real_path(positional) != real_path(flag):
        raise UsageError(f"index got two different docs roots, {positional!r} and --docs-dir {flag!r}; "
                         "pass only one")
    return positional or flag


def render_report(report: IndexReport) -> str:
    """The report of an index run as lines for a person (``--json`` prints ``report.to_dict()``)."""
    r = report
    lines = [
        f"indexed {r.root}: {r.scanned} files scanned, {r.added} added, "
        f"{r.updated} updated, {r.unchanged} unchanged, {r.removed} removed",
        # the counts are of the files this run read, not of the index ("0 sections" on an
        # unchanged run read as an empty index)
        f"  from the {r.added + r.updated} file(s) read: {r.sections} sections, {r.passages} passages; "
        f"{r.vectors_embedded} passages "
        f"embedded, {r.vectors_reused} given a stored vector, in {r.seconds:.2f} s",
    ]
    for w in r.warnings:
        lines.append(f"  warning: {printable(w['path'])}: {w['message']}")
    for f in r.failed:
        lines.append(f"  not indexed: {printable(f['path'])}: {f['reason']}")
    problems = len(r.failed) + len(r.warnings)
    if r.message:
        lines.append(f"  note: {r.message}")
    lines.append("completed" + (f" with {problems} problem(s) listed above" if problems else ""))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Index the docs root with a progress bar on stderr; print the report."""
    from ..progress import Progress

    with open_engine(args, index_root(args.docs_root, args.docs_dir_flag)) as engine:
        progress = Progress()
        # a file's warning is logged when found; here the report lists every one: said once
        found_log = logging.getLogger("markdown_memory.indexer")
        level = found_log.level
        found_log.setLevel(logging.ERROR)
        try:
            report = engine.index(force=args.force, progress=progress)
        finally:  # Ctrl-C too: end the bar's line, so "interrupted" gets a line of its own
            progress.finish()
            found_log.setLevel(level)
        emit(report.to_dict()) if args.json else print(render_report(report))
    return 0
