"""Command line: ``markdown-memory [global flags] COMMAND ...``; no command runs the MCP server.

A thin adapter: parse arguments, call the engine, render for a person or as one JSON object
(``--json``). Errors a user can fix (usage mistakes included) exit 2 with one line on stderr,
never a traceback; with ``--json`` they are also one ``{"error": {...}}`` object on stdout.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .config import EMBEDDER_CHOICES, Settings
from .errors import ConfigError, MarkdownMemoryError, UsageError, describe_error

log = logging.getLogger("markdown_memory")

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Terminated(KeyboardInterrupt):
    """SIGTERM during a command: it unwinds like Ctrl-C (an index run stops, keeping every
    document written so far; ``--json`` prints the ``interrupted`` error object), exit 143."""

    exit_status = 128 + signal.SIGTERM


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While a command runs, SIGTERM raises :class:`Terminated` (Python's default is to die at
    once, printing nothing). The previous handler is restored afterwards; the MCP server has its
    own (``mcp.server._stop_on_signals``). Only the main thread can install a handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: it raises UsageError (rendered by ``main``
    like every other user mistake, exit 2) instead of printing the usage block and exiting."""

    def error(self, message: str) -> NoReturn:
        if "required: query" in message:  # `search --no-cache`: the flag-like query was read as an option
            from .messages import dashed_query_hint

            message = f"{message}; {dashed_query_hint()}"
        raise UsageError(f"{message} (`{self.prog} --help` shows the usage)")


def _bounded(low: int, high: int | None = None) -> Callable[[str], int]:
    """argparse type: an integer in [low, high] (no upper bound when ``high`` is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from exc
        if high is None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    return parse


def _add_docs_dir(p: argparse.ArgumentParser) -> None:
    """``--docs-dir`` of a command, with ``--max-file-mb`` and ``--embedder`` (any command that
    reads a docs root may index it; after the command, each flag overrides the global one)."""
    p.add_argument("--docs-dir", metavar="DIR", help="docs root (default: $MARKDOWN_MEMORY_DOCS_DIR, "
                   "$CLAUDE_PROJECT_DIR, then the working directory)")
    _add_run_options(p)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """The global flags an index run depends on, accepted after the command too."""
    p.add_argument("--max-file-mb", type=float, metavar="MB", default=argparse.SUPPRESS,
                   help="files larger than this are not indexed (as the global --max-file-mb)")
    p.add_argument("--embedder", choices=EMBEDDER_CHOICES, default=argparse.SUPPRESS,
                   help="embedding preset (as the global --embedder)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="markdown-memory",
        description="Heading-addressed hybrid search over Markdown docs. Without a command, "
        "runs the MCP server on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"markdown-memory {__version__}")
    parser.add_argument("--embedder", choices=EMBEDDER_CHOICES, help="embedding preset (default: "
                        "$MARKDOWN_MEMORY_EMBEDDER, else the one of the index's vectors when it can load, else "
                        "embeddinggemma; none = keyword-only)")
    parser.add_argument("--db", metavar="PATH", help="index database path; a relative path resolves against the "
                        "docs root, not the current folder (default: per docs root, under the user data dir; "
                        "$MARKDOWN_MEMORY_DB). One database serves one docs root")
    parser.add_argument("--download-model", action="store_true",
                        help="download (or verify) the embedding model, print where it is, and exit")
    parser.add_argument("--no-auto-index", action="store_true",
                        help="server: do not keep the index up to date in the background")
    parser.add_argument("--max-file-mb", type=float, metavar="MB",
                        help="files larger than this are not indexed (default: $MARKDOWN_MEMORY_MAX_FILE_MB or 10)")
    parser.add_argument("--log-level", help="stderr log level: DEBUG, INFO, WARNING, ERROR or CRITICAL "
                        "(default: $MARKDOWN_MEMORY_LOG_LEVEL or WARNING)")
    parser.add_argument("--docs-dir", dest="server_docs_dir", metavar="DIR", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command")

    p = sub.add_parser("index", help="index (incrementally) a docs root")
    p.add_argument("docs_root", nargs="?", help="docs root (default as for --docs-dir)")
    p.add_argument("--docs-dir", dest="docs_dir_flag", metavar="DIR", help="same as DOCS_ROOT")
    _add_run_options(p)
    p.add_argument("--force", action="store_true", help="re-parse and re-embed every file")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("search", help="search the docs root")
    p.add_argument("query")
    _add_docs_dir(p)
    p.add_argument("--top-k", type=_bounded(1, 50), default=5, help="number of results (1-50, default 5)")
    p.add_argument("--path-prefix", help="only documents under this folder or path")
    p.add_argument("--tag", dest="tags", action="append", metavar="TAG",
                   help="only documents carrying this tag or one nested in it (repeatable)")
    p.add_argument("--tags-mode", choices=["any", "all"], default="any",
                   help="with several --tag: documents with any of them (default) or all")
    p.add_argument("--kind", choices=["code", "table", "list", "prose"], help="only sections holding a block of this kind")
    p.add_argument("--lang", help="only sections holding a code block in this language (bash also matches sh, console)")
    p.add_argument("--max-tokens", type=_bounded(200, 20000), default=2000,
                   help="budget for result text, 200-20000 (default 2000)")
    p.add_argument("--no-refresh", action="store_true", help="do not re-index changed files first")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("outline", help="heading tree of one document")
    p.add_argument("file")
    _add_docs_dir(p)
    p.add_argument("--max-depth", type=_bounded(1, 6), help="deepest heading level to list (1-6; default all)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("read", help="print one section verbatim")
    p.add_argument("file", help="document path, or a link target such as 'note#Heading' or '[[note#Heading]]'")
    p.add_argument("heading_path", nargs="?", default="")
    _add_docs_dir(p)
    p.add_argument("--include-subsections", action="store_true")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("status", help="index health for a docs root")
    _add_docs_dir(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("list", help="list indexed documents")
    p.add_argument("directory", nargs="?")
    _add_docs_dir(p)
    p.add_argument("--offset", type=_bounded(0), default=0,
                   help="skip this many documents (next_offset of the previous page; default 0)")
    p.add_argument("--limit", type=_bounded(1, 200), default=200, help="documents per page, 1-200 (default 200)")
    p.add_argument("--tag", dest="tags", action="append", metavar="TAG",
                   help="only documents carrying this tag or one nested in it (repeatable: any of them)")
    p.add_argument("--json", action="store_true")

    from .cli_eval import add_parser as add_eval_parser

    add_eval_parser(sub, _add_docs_dir)
    from .cli_setup import add_parsers as add_agent_parsers

    add_agent_parsers(sub, _add_docs_dir, _bounded)

    from .cli_hook import add_parser as add_hook_parser

    add_hook_parser(sub, _add_docs_dir)

    from .cli_links import add_parser as add_links_parser

    add_links_parser(sub, _add_docs_dir, _bounded)
    from .cli_drift import add_parser as add_drift_parser

    add_drift_parser(sub, _add_docs_dir)
    return parser


def _emit(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def _render_report(report: dict[str, Any]) -> str:
    lines = [
        f"indexed {report['root']}: {report['scanned']} files scanned, {report['added']} added, "
        f"{report['updated']} updated, {report['unchanged']} unchanged, {report['removed']} removed",
        f"  {report['sections']} sections, {report['passages']} passages; {report['vectors_embedded']} passages "
        f"embedded, {report['vectors_reused']} given a stored vector, in {report['seconds']:.2f} s",
    ]
    for w in report["warnings"]:
        lines.append(f"  warning: {w['path']}: {w['message']}")
    for f in report["failed"]:
        lines.append(f"  not indexed: {f['path']}: {f['reason']}")
    problems = len(report["failed"]) + len(report["warnings"])
    if report.get("message"):
        lines.append(f"  note: {report['message']}")
    lines.append("completed" + (f" with {problems} problem(s) listed above" if problems else ""))
    return "\n".join(lines)


def _clip(line: str, width: int = 300) -> str:
    """One displayed line, cut at ``width`` characters (``read`` prints the section whole)."""
    return line if len(line) <= width else line[: width - 1] + "…"


def _printable(path: str) -> str:
    """A path as one line: control characters (a newline in a file name) are escaped."""
    return path if path.isprintable() else json.dumps(path, ensure_ascii=False)[1:-1]


def _read_command(settings: Settings, args: argparse.Namespace) -> Callable[[str, str], str]:
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

    from .messages import program

    head = program()  # already shell-quoted

    def command(file_path: str, heading_path: str) -> str:
        return " ".join([head, shlex.join([*flags, "read", file_path, heading_path,
                                           "--docs-dir", str(settings.docs_root)])])

    return command


def _render_search(answer: dict[str, Any], read_command: Callable[[str, str], str] | None = None) -> str:
    """``search`` for a person: per hit a header line, the first lines of its text (or the
    preview of a pointer hit) and, when text is left out, the command that reads the section."""
    read = read_command or (lambda f, h: shlex.join(["markdown-memory", "read", f, h]))
    out = []
    for i, hit in enumerate(answer["results"], start=1):
        stale = f", stale: file {hit['stale']} since indexed" if hit.get("stale") else ""
        out.append(f"{i}. {hit['file_path']}:{hit['start_line']}-{hit['end_line']}  {hit['heading_path']}  "
                   f"(score {hit['score']}, {hit['tokens']} tokens, {'+'.join(hit['matched_by'])}{stale})")
        body = hit.get("content")
        if body is None:
            out.append(f"   {hit['preview']}")
            out.append(f"   … (not shown, {hit['tokens']} tokens: {read(hit['file_path'], hit['heading_path'])})")
        else:
            text_lines = body.split("\n")
            shown = text_lines[:12]
            out.extend("   " + _clip(line) for line in shown)
            if len(text_lines) > len(shown):
                out.append(f"   … ({len(text_lines) - len(shown)} more lines: "
                           f"{read(hit['file_path'], hit['heading_path'])})")
        out.append("")
    if not answer["results"]:
        out.append("no results")
    if answer.get("message"):
        out.append(f"note: {answer['message']}")
    emb = (answer.get("index_status") or {}).get("embedder") or {}
    if emb.get("chosen"):  # a preset nobody named and not simply the default: say which and why
        out.append(f"embedder: {emb['name']} ({emb['chosen']})")
    return "\n".join(out).rstrip()


def _render_list(docs: dict[str, Any], directory: str | None, offset: int) -> str:
    """``list`` for a person: one line per document, then a ``note:`` line when the page does not
    hold every document (which ones it shows, and the ``--offset`` of the next page)."""
    out = [f"{_printable(d['path'])}  ({d['sections']} sections, {d['tokens']} tokens)  {_printable(d['title'])}"
           + ("  " + " ".join("#" + _printable(t) for t in d["tags"]) if d.get("tags") else "")
           for d in docs["documents"]]
    where = f" under {directory!r}" if directory else ""
    shown, total = len(docs["documents"]), docs["total"]
    if not shown and not (total and docs.get("message")):  # past the end: the message says it
        out.append(f"no indexed documents{where}" + (f" at offset {offset} ({total} in all)" if total else ""))
    elif shown and shown < total:
        note = f"note: showing documents {offset + 1}-{offset + shown} of {total}{where}"
        if docs["next_offset"] is not None:
            note += f"; pass --offset {docs['next_offset']} for the next page"
        out.append(note)
    if docs.get("message"):
        out.append(f"note: {docs['message']}")
    return "\n".join(out)


def _render_outline(outline: dict[str, Any]) -> str:
    out = [f"{outline['file_path']} — {outline['title']}"]
    if outline.get("aliases"):
        out.append("aliases: " + ", ".join(outline["aliases"]))
    if outline.get("tags"):
        out.append("tags: " + " ".join("#" + t for t in outline["tags"]))
    if outline.get("preamble"):
        p = outline["preamble"]
        out.append(f"[{p['start_line']}-{p['end_line']}] {p['heading_path']}")
    for node in outline["headings"]:
        indent = "  " * (node["level"] - 1)
        out.append(f"{indent}[{node['start_line']}-{node['end_line']}] {node['heading_path']} "
                   f"({node['tokens']} tokens)")
    return "\n".join(out)


def _render_status(status: dict[str, Any]) -> str:
    """``status`` for a person: the counts, model, freshness and problems on a few lines."""
    emb = status["embedder"]
    mode = "keyword-only" if status["keyword_only"] else "hybrid (keyword + vectors)"
    last = status.get("last_run")
    lines = [
        f"docs root  {status['root']}",
        f"database   {status['database']}",
        f"indexed    {status['documents']} documents, {status['sections']} sections, "
        f"{status['passages']} passages, {status['vectors']} with vectors",
        f"search     {mode}; embedder {emb['name']}"
        + (f" ({emb['chosen']})" if emb.get("chosen") else "")
        + (f" ({emb['error']})" if emb.get("error") else ""),
        f"coverage   {status['coverage']}" + ("; indexing now" if status["indexing"] else "")
        + (f"; last run {last.get('when', last['at'])} took {last['seconds']:.2f} s" if last else "; never indexed"),
    ]
    for change in status["changed_files"]:
        lines.append(f"changed    {change['path']} ({change['change']})")
    for failure in status["failures"]:
        lines.append(f"{failure['kind']:<10} {failure['path']}: {failure['reason']}")
    if status.get("message"):
        lines.append(f"note       {status['message']}")
    return "\n".join(lines)


def _log_level(flag: str | None) -> tuple[str, str | None]:
    """The stderr log level: ``--log-level``, else $MARKDOWN_MEMORY_LOG_LEVEL, else WARNING (any
    case). Returns (level name, None), or ("WARNING", one-sentence problem) for a value that is
    not a level."""
    if flag is not None:
        source, value = f"--log-level {flag!r}", flag
    else:
        value = os.environ.get("MARKDOWN_MEMORY_LOG_LEVEL", "")
        if not value.strip():
            return "WARNING", None
        source = f"MARKDOWN_MEMORY_LOG_LEVEL={value!r}"
    if value.strip().upper() in LOG_LEVELS:
        return value.strip().upper(), None
    return "WARNING", f"{source} is not a log level; use one of {', '.join(LOG_LEVELS)}"


def _configure_logging(level: str) -> None:
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level), format="markdown-memory: %(message)s")


def _wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for ``--json`` (or an abbreviation argparse accepts), before
    any ``--``: how an error answers when argparse itself rejects the line."""
    head = argv[: argv.index("--")] if "--" in argv else argv
    return any(len(a) >= 3 and "--json".startswith(a) for a in head)


_VALUED_GLOBALS = ("--embedder", "--db", "--log-level", "--docs-dir")


def _options_after_query(argv: list[str]) -> list[str]:
    """``search -- QUERY --docs-dir D``: the options after a query given behind ``--`` (a query
    that starts with ``-``) are moved before ``--``, so they work as if typed there. Raises
    UsageError when more than one word follows ``--`` before the options (an unquoted query)."""
    if "--" not in argv:
        return argv
    cut = argv.index("--")
    head, tail = argv[:cut], argv[cut + 1:]
    commands = [a for i, a in enumerate(head) if not a.startswith("-") and (i == 0 or head[i - 1] not in _VALUED_GLOBALS)]
    if not commands or commands[0] != "search" or len(tail) < 2:
        return argv
    words = [tail[0]]
    for word in tail[1:]:
        if word.startswith("-"):
            break
        words.append(word)
    if len(words) > 1:
        from .messages import query_after_dashes

        raise UsageError(query_after_dashes(words))
    return head + tail[1:] + ["--", tail[0]]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``markdown-memory`` console script. Returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = _wants_json(argv)
    try:
        argv = _options_after_query(argv)
        as_json = _wants_json(argv)
        parser = build_parser()
        if "hook" in argv:  # the prompt hook never exits 2 (that blocks the prompt): cli_hook.parse
            from .cli_hook import parse as parse_hook

            hook_args = parse_hook(parser, argv)
            if hook_args is None:
                return 0
            if hook_args.command == "hook":
                args = hook_args
            else:  # "hook" was another command's argument (a query, a file name)
                args = build_parser().parse_args(argv)
        else:
            args = parser.parse_args(argv)
        as_json = bool(getattr(args, "json", False))
        level, problem = _log_level(args.log_level)
        _configure_logging(level)
        if args.command == "hook":  # exits 0 whatever happens: 2 would block the user's prompt
            from .cli_hook import run as run_hook
            return run_hook(args)
        if problem and (args.command or args.download_model):
            raise ConfigError(problem)
        if problem:  # the server still starts: a client only shows "connection closed" otherwise
            log.error("%s; logging at WARNING", problem)
        if args.download_model:
            from .embed.download import download_model

            name = args.embedder or os.environ.get("MARKDOWN_MEMORY_EMBEDDER") or "embeddinggemma"
            print(download_model(name))
            return 0
        if args.command is None:
            from .mcp import run_server

            try:
                settings = Settings.load(args.server_docs_dir, args.db, args.embedder,
                                         auto_index=False if args.no_auto_index else None,
                                         max_file=args.max_file_mb)
                startup_error = None
            except ConfigError as exc:
                # Answer the handshake anyway: the agent then sees the reason as a tool error
                # (a server that exits before `initialize` only shows "connection closed").
                log.error("%s", exc)
                settings = Settings(docs_root=Path.cwd(), db_path=Path(os.devnull), auto_index=False)
                startup_error = exc
            run_server(settings, startup_error=startup_error)
            return 0
        with _sigterm_interrupts():
            return _run_command(args)
    except MarkdownMemoryError as exc:
        if as_json:
            _emit(describe_error(exc).cli_payload())
        candidates = [c for c in (exc.candidates or []) if c not in str(exc)]
        listed = f" (candidates: {' | '.join(candidates[:10])})" if candidates else ""
        sys.stderr.write(f"markdown-memory: error: {exc}{listed}\n")
        return 2
    except KeyboardInterrupt as exc:
        if as_json:
            _emit(describe_error(exc).cli_payload())
        sys.stderr.write("markdown-memory: interrupted\n")
        return getattr(exc, "exit_status", 130)  # 128 + the signal: SIGINT 130, SIGTERM 143
    except BrokenPipeError:
        # The reader went away (`| head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        # A bug, not a user mistake: the traceback (stderr, exit 1) is what a report needs, and
        # --json still answers with one object.
        if as_json:
            _emit(describe_error(exc).cli_payload())
        raise


def _index_root(positional: str | None, flag: str | None) -> str | None:
    """The docs root ``index`` was given, as DOCS_ROOT or ``--docs-dir`` (None: the default).
    Raises UsageError when both are given and name different folders."""
    if positional and flag:
        def real(p: str) -> str:
            return os.path.realpath(os.path.expanduser(p))

        if real(positional) != real(flag):
            raise UsageError(f"index got two different docs roots, {positional!r} and --docs-dir {flag!r}; "
                             "pass only one")
    return positional or flag


def _run_command(args: argparse.Namespace) -> int:
    """One engine call per command, rendered for a person or as one JSON object."""
    from .engine import Engine
    from .models import Freshness
    from .progress import Progress

    if args.command == "setup":  # edits agent config files; no docs root, no index
        from .cli_setup import run_setup

        return run_setup(args)
    root = _index_root(args.docs_root, args.docs_dir_flag) if args.command == "index" else args.docs_dir
    settings = Settings.load(root, args.db, args.embedder, max_file=args.max_file_mb)
    engine = Engine(settings)
    try:
        if args.command == "index":
            progress = Progress()
            report = engine.index(force=args.force, progress=progress)
            progress.finish()
            data = report.to_dict()
            _emit(data) if args.json else print(_render_report(data))
        elif args.command == "search":
            progress = Progress()
            answer = engine.search(args.query, top_k=args.top_k, path_prefix=args.path_prefix,
                                   max_tokens=args.max_tokens, progress=progress, tags=args.tags,
                                   tags_mode=args.tags_mode, kind=args.kind, lang=args.lang,
                                   freshness=Freshness.FLAG if args.no_refresh else Freshness.INDEX).to_dict()
            progress.finish()
            _emit(answer) if args.json else print(_render_search(answer, _read_command(settings, args)))
        elif args.command == "outline":
            outline = engine.outline(args.file, args.max_depth).to_dict()
            _emit(outline) if args.json else print(_render_outline(outline))
        elif args.command == "read":
            section = engine.read(args.file, args.heading_path, include_subsections=args.include_subsections,
                                  page_tokens=10**9,  # a link target is resolved against the whole, current index
                                  freshness=Freshness.FLAG if args.heading_path else Freshness.INDEX).to_dict()
            _emit(section) if args.json else print(section["content"])
        elif args.command == "status":
            status = engine.status().to_dict()
            _emit(status) if args.json else print(_render_status(status))
        elif args.command == "list":
            docs = engine.list_documents(args.directory, offset=args.offset, limit=args.limit, tags=args.tags).to_dict()
            _emit(docs) if args.json else print(_render_list(docs, args.directory, args.offset))
        elif args.command == "eval":
            from .cli_eval import run as run_eval

            return run_eval(engine, args, Progress())
        elif args.command == "map":
            from .cli_setup import run_map

            return run_map(engine, args)

        elif args.command == "links":
            from .cli_links import run as run_links

            return run_links(engine, args)
        elif args.command == "drift":
            from .cli_drift import run as run_drift

            return run_drift(engine, args)
        else:
            return 2
    finally:
        engine.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
