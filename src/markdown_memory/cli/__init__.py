"""Command line: ``markdown-memory [global flags] COMMAND ...``; no command runs the MCP server.

A thin adapter: parse arguments, call the engine, render for a person or as one JSON object
(``--json``). One module per command (``register(sub)`` adds its parser and handler; listed in
:data:`COMMANDS`); the options several commands share are defined once in :mod:`.options`. Errors a user can fix (usage mistakes included) exit 2 with one line on stderr,
never a traceback; with ``--json`` they are also one ``{"error": {...}}`` object on stdout.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import __version__
from ..config import DEFAULT_RANKER, EMBEDDER_CHOICES, RANKER_CHOICES, Settings
from ..errors import ConfigError, DocumentNotFoundError, MarkdownMemoryError, UsageError, describe_error
from .options import Parser, add_docs_dir_option, emit

#: the subcommands' modules, in the order ``--help`` lists them; each module's ``register(sub)``
#: adds its parser and sets ``handler`` (``handler(args) -> exit status``). A new command: a
#: module here. Imported when a parser is built (:data:`COMMANDS`), not with this package: the
#: ``search`` client path builds the parser of its one command.
COMMAND_MODULES = ("index", "search", "outline", "read", "status", "listing", "eval", "setup", "map", "hook", "links",
                   "drift", "roots", "serve", "ui")


def _commands(names: Sequence[str] = COMMAND_MODULES) -> tuple[ModuleType, ...]:
    return tuple(import_module(f".{name}", __name__) for name in names)


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":  # the command modules, imported on first use
        return _commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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


def build_parser(commands: Sequence[ModuleType] | None = None) -> argparse.ArgumentParser:
    """The parser of the global flags and every command of :data:`COMMANDS` (or of ``commands``)."""
    parser = Parser(
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
    parser.add_argument("--verbose", action="store_true",
                        help="also say which embedding preset is used and why when it did not change")
    parser.add_argument("--ranker", choices=RANKER_CHOICES,
                        help="how search orders its candidates: rrf (hand-set fusion) or learned (the shipped "
                        "model, docs/ranking.md) (default: $MARKDOWN_MEMORY_RANKER, else " + DEFAULT_RANKER + ")")
    parser.add_argument("--log-level", help="stderr log level: DEBUG, INFO, WARNING, ERROR or CRITICAL "
                        "(default: $MARKDOWN_MEMORY_LOG_LEVEL or WARNING)")
    add_docs_dir_option(parser, help=argparse.SUPPRESS, dest="server_docs_dir")  # the server's docs root
    sub = parser.add_subparsers(dest="command")
    for command in _commands() if commands is None else commands:
        command.register(sub)
    return parser


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


#: commands whose positionals (a query, a document path, a folder) may be given behind ``--``, and
#: how many positionals each takes: the options that follow them are moved before ``--``
_POSITIONALS_AFTER_DASHES = {"search": 1, "read": 2, "outline": 1, "links": 1, "list": 1, "index": 1, "eval": 1}


def _options_after_query(argv: list[str]) -> list[str]:
    """``search -- QUERY --docs-dir D``, ``read -- -n.md [HEADING] --docs-dir D``: the options after
    positionals given behind ``--`` (a query or a path that starts with ``-``) are moved before
    ``--``, so they work as if typed there. The first word after ``--`` is always a positional;
    the next ones are, up to the command's count, until a word starts with ``-``. Raises
    UsageError when more than one word follows ``--`` before the options of ``search`` (an
    unquoted query)."""
    if "--" not in argv:
        return argv
    cut = argv.index("--")
    head, tail = argv[:cut], argv[cut + 1:]
    commands = [a for i, a in enumerate(head) if not a.startswith("-") and (i == 0 or head[i - 1] not in _VALUED_GLOBALS)]
    if not commands or commands[0] not in _POSITIONALS_AFTER_DASHES or len(tail) < 2:
        return argv
    words = [tail[0]]
    for word in tail[1:]:
        if word.startswith("-"):
            break
        words.append(word)
    if len(words) > _POSITIONALS_AFTER_DASHES[commands[0]]:
        if commands[0] == "search":
            from ..messages import query_after_dashes

            raise UsageError(query_after_dashes(words))
        return argv  # argparse names the extra argument
    return head + tail[len(words):] + ["--", *words]


def _parse(argv: list[str]) -> argparse.Namespace | None:
    """The command line parsed; None when the prompt hook's line could not be parsed (said on
    stderr). Raises UsageError for any other command's usage mistake."""
    from . import hook

    parser = build_parser()
    if "hook" not in argv:
        return parser.parse_args(argv)
    args = hook.parse(parser, argv)  # lenient: the prompt hook never exits 2 (that blocks the prompt)
    if args is None or args.command == "hook":
        return args
    return build_parser().parse_args(argv)  # "hook" was another command's argument (a query, a file name)


#: arguments that name a file or folder: kept as the OS gave them (``surrogateescape`` round-trips
#: a non-UTF-8 name to the same bytes); every other argument is text and is decoded
_PATH_ARGUMENTS = frozenset({"docs_dir", "server_docs_dir", "db", "docs_root", "questions", "project"})
#: arguments naming a document or folder inside the docs root: one whose name is not UTF-8 is
#: never indexed (``files.walk``), so it is refused with the index run's own reason
_DOCUMENT_ARGUMENTS = frozenset({"file", "directory"})


def _decode_arguments(args: argparse.Namespace) -> None:
    """Every text argument (a query, a document path inside the index, a tag, a prefix) passes
    ``text.decode_outside``: bytes that are not UTF-8 become U+FFFD instead of lone surrogates
    that fail deep inside (SQLite, the tokenizer). File-system paths are left as they are. Raises
    DocumentNotFoundError for a document or folder argument whose name is not UTF-8 (never indexed)."""
    from ..files import walk
    from ..text import decode_outside

    undecodable = {"file": walk.UNDECODABLE_NAME, "directory": walk.UNDECODABLE_FOLDER}
    for name, value in vars(args).items():
        if name in _PATH_ARGUMENTS:
            continue
        if name in _DOCUMENT_ARGUMENTS and isinstance(value, str) and not walk.name_is_text(value):
            raise DocumentNotFoundError(f"{walk.printable_path(value)}: {undecodable[name]}")
        if isinstance(value, str):
            setattr(args, name, decode_outside(value))
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            setattr(args, name, [decode_outside(v) for v in value])


def _serve(args: argparse.Namespace, argv: list[str]) -> int:
    """No command: run the MCP server on stdio until the client goes away: a relay to the
    resident service when it can be had (``mcp/relay.py``; ``argv`` is what its fallback child
    runs), else the server in this process."""
    from ..mcp import run_server

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
    if startup_error is None:
        from ..service.client import ServiceError, ServiceUnavailable, mode

        if mode() != "off":
            from ..mcp.relay import run_relay

            try:
                return run_relay(settings.to_wire(), argv)
            except (ServiceUnavailable, ServiceError) as exc:
                log.info("the resident service is not available (%s); serving in this process", exc)
    run_server(settings, startup_error=startup_error)
    return 0


def search_client(argv: list[str]) -> int | None:
    """``search`` answered by the resident service (``cli/remote.py``) without importing the other
    commands: the line is parsed by the same global parser with only ``search`` registered.
    Returns the exit status, or None when :func:`main` must run the line (another command,
    ``--help``, a usage mistake, settings that do not resolve, no service): nothing was printed."""
    if any(a in ("-h", "--help", "--version") for a in argv[: argv.index("--") if "--" in argv else None]):
        return None
    from . import search
    from .options import settings_of
    from .remote import search_via_service

    try:
        args = build_parser([search]).parse_args(_options_after_query(argv))
        if args.command != "search" or args.download_model:
            return None
        _decode_arguments(args)
        _apply_global_docs_dir(args)
        if args.ranker:  # a setting search reads (config.ranker_choice), not a request field
            os.environ["MARKDOWN_MEMORY_RANKER"] = args.ranker
        from ..config import DEFAULT_RANKER, ranker_choice

        if ranker_choice() != DEFAULT_RANKER:  # the service ranks with its own setting: search here
            return None
        level, problem = _log_level(args.log_level)
        if problem:
            return None
        _configure_logging(level)
        settings, params = settings_of(args), search.params(args)
    except MarkdownMemoryError:
        return None
    try:
        return search_via_service(settings, params)
    except KeyboardInterrupt:
        sys.stderr.write("markdown-memory: interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (`| head`)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _apply_global_docs_dir(args: argparse.Namespace) -> None:
    """``--docs-dir DIR`` before a command (the server's flag) applies to the command too, unless
    the command names its own root: ``markdown-memory --docs-dir docs search q`` searches docs/,
    not the working folder."""
    root = getattr(args, "server_docs_dir", None)
    if root is None or args.command is None:
        return
    if getattr(args, "docs_dir", "") is None:
        args.docs_dir = root
    elif getattr(args, "docs_dir_flag", "") is None and getattr(args, "docs_root", "") is None:
        args.docs_dir_flag = root  # `index`: DOCS_ROOT or its own --docs-dir


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``markdown-memory`` console script. Returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = _wants_json(argv)
    try:
        argv = _options_after_query(argv)
        as_json = _wants_json(argv)
        args = _parse(argv)
        if args is None:  # the prompt hook's line could not be parsed: said on stderr, exit 0
            return 0
        _decode_arguments(args)
        _apply_global_docs_dir(args)
        if args.ranker:  # a setting search reads (config.ranker_choice), not a request field
            os.environ["MARKDOWN_MEMORY_RANKER"] = args.ranker
        as_json = bool(getattr(args, "json", False))
        level, problem = _log_level(args.log_level)
        _configure_logging(level)
        if getattr(args, "always_zero", False):  # the hook: 2 would block the user's prompt
            return int(args.handler(args))
        if problem and (args.command or args.download_model):
            raise ConfigError(problem)
        if problem:  # the server still starts: a client only shows "connection closed" otherwise
            log.error("%s; logging at WARNING", problem)
        if args.download_model:
            from ..embed.download import download_model

            name = args.embedder or os.environ.get("MARKDOWN_MEMORY_EMBEDDER") or "embeddinggemma"
            print(download_model(name))
            return 0
        if args.command is None:
            return _serve(args, argv)
        with _sigterm_interrupts():
            return int(args.handler(args))
    except (MarkdownMemoryError, KeyboardInterrupt) as exc:  # exit 2, or 128 + the signal (SIGINT 130)
        from ..search_text import error_output  # the one wording: the service's search op says it too

        out, err, status = error_output(exc, as_json)
        sys.stdout.write(out)
        sys.stderr.write(err)
        return status
    except BrokenPipeError:
        # The reader went away (`| head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        # A bug, not a user mistake: the traceback (stderr, exit 1) is what a report needs, and
        # --json still answers with one object.
        if as_json:
            emit(describe_error(exc).cli_payload())
        raise

