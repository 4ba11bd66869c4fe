"""Option helpers shared by the command modules of :mod:`markdown_memory.cli`, and the one-line
output helpers they print with.

Each option that several commands take is defined here once (``--docs-dir``, the run options
``--max-file-mb`` / ``--embedder``, ``--json``, bounded integers such as budgets and pages).
Nothing heavy is imported: the MCP server's start-up and the prompt hook build this parser too.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from ..config import EMBEDDER_CHOICES, Settings
from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Engine
    from ..request import SearchRequest

#: ``--docs-dir`` help of the commands that read a docs root
DOCS_DIR_HELP = "docs root (default: $MARKDOWN_MEMORY_DOCS_DIR, $CLAUDE_PROJECT_DIR, then the working directory)"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: it raises UsageError (rendered by ``main``
    like every other user mistake, exit 2) instead of printing the usage block and exiting."""

    def error(self, message: str) -> NoReturn:
        if "required: query" in message:  # `search --no-cache`: the flag-like query was read as an option
            from ..messages import dashed_query_hint

            message = f"{message}; {dashed_query_hint()}"
        guess = did_you_mean(message)
        if guess:
            message = f"{message}; did you mean {guess!r}?"
        raise UsageError(f"{message} (`{self.prog} --help` shows the usage)")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As argparse's, but a stray option is reported by the command it follows: argparse
        leaves the leftovers to the top parser, whose help does not list the command's options."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._command_parser(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _command_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The parser of the command ``parsed`` names (``dest`` of the subparsers), else this one."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest or "", None) or "")
                if isinstance(chosen, argparse.ArgumentParser):
                    return chosen
        return self


_INVALID_CHOICE = re.compile(r"invalid choice: (?P<word>'[^']*'|\S+) \(choose from (?P<choices>.*)\)\s*$")


def did_you_mean(message: str) -> str | None:
    """The closest allowed value to the mistyped one in argparse's "invalid choice" ``message``
    (a command, an agent, an embedder preset: ``serch`` -> ``search``), or None. argparse's own
    ``suggest_on_error`` exists only from Python 3.14."""
    m = _INVALID_CHOICE.search(message)
    if m is None:
        return None
    word = m.group("word").strip("'")
    choices = [c.strip().strip("'") for c in m.group("choices").split(",")]
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6) or difflib.get_close_matches(
        word.lower(), choices, n=1, cutoff=0.6)
    return close[0] if close else None


def bounded(low: int, high: int | None = None) -> Callable[[str], int]:
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


def add_docs_dir_option(p: argparse.ArgumentParser, help: str = DOCS_DIR_HELP, dest: str = "docs_dir") -> None:
    """The one definition of ``--docs-dir DIR`` (``help`` and ``dest`` vary by command)."""
    p.add_argument("--docs-dir", dest=dest, metavar="DIR", help=help)


def add_docs_dir(p: argparse.ArgumentParser) -> None:
    """``--docs-dir`` of a command, with ``--max-file-mb`` and ``--embedder`` (any command that
    reads a docs root may index it; after the command, each flag overrides the global one)."""
    add_docs_dir_option(p)
    add_run_options(p)


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The global flags an index run depends on, accepted after the command too."""
    p.add_argument("--max-file-mb", type=float, metavar="MB", default=argparse.SUPPRESS,
                   help="files larger than this are not indexed (as the global --max-file-mb)")
    p.add_argument("--embedder", choices=EMBEDDER_CHOICES, default=argparse.SUPPRESS,
                   help="embedding preset (as the global --embedder)")
    p.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                   help="as the global --verbose")


def add_json(p: argparse.ArgumentParser, help: str | None = "print one JSON object") -> None:
    """``--json``: the command prints one JSON object (``help`` None: listed without a text)."""
    p.add_argument("--json", action="store_true", help=help)


def emit(data: Any) -> None:
    """``data`` as one JSON line on stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def printable(path: str) -> str:
    """A path as one line (``text.shown_path``: ``new\nline.md`` -> ``new%0Aline.md``)."""
    from ..text import shown_path

    return shown_path(path)


def settings_of(args: argparse.Namespace, docs_root: str | None = None) -> Settings:
    """The command's settings (``docs_root``, else ``args.docs_dir``; the global ``--db``,
    ``--embedder``, ``--max-file-mb``). Raises ConfigError."""
    # ``index`` has no ``docs_dir`` (its root is DOCS_ROOT or its own flag): None is the default root
    root = docs_root if docs_root is not None else getattr(args, "docs_dir", None)
    return Settings.load(root, args.db, args.embedder, max_file=args.max_file_mb)


@contextmanager
def open_engine(args: argparse.Namespace, docs_root: str | None = None) -> Iterator[Engine]:
    """The engine of the command's settings (``docs_root``, else ``args.docs_dir``; the global
    ``--db``, ``--embedder``, ``--max-file-mb``), closed afterwards. Raises ConfigError."""
    from ..engine import Engine

    engine = Engine(settings_of(args, docs_root))
    try:
        yield engine
    finally:
        engine.close()


def document_argument(raw: str, root: os.PathLike[str] | str) -> str:
    """A FILE argument as the engine should resolve it (``reading.resolve``: relative to the docs
    root): unchanged, unless it is a relative path naming nothing under the root but, from the
    working folder, a file inside the root (what a shell completes: ``read docs/guide.md
    --docs-dir docs``); then that file's absolute path, which the engine takes as well."""
    if not raw or os.path.isabs(raw) or os.path.lexists(os.path.join(root, raw)):
        return raw
    here = os.path.abspath(raw)
    inside = os.path.realpath(here).startswith(os.path.realpath(root).rstrip(os.sep) + os.sep)
    return here if inside and os.path.isfile(here) else raw


def real_path(p: str) -> str:
    """``p`` with ``~`` expanded and links resolved (to compare two folders given by a user)."""
    return os.path.realpath(os.path.expanduser(p))


def add_request_options(p: argparse.ArgumentParser) -> None:
    """The options of a search request, generated from its schema (``request.py``): one
    per field with a CLI ``help`` (the positional query included); integers checked against
    the field's bounds, choices offered, a list field repeatable."""
    from ..request import specs

    for f in specs():
        spec = f.spec
        if spec.help is None:
            continue
        if spec.flag is None:
            p.add_argument(f.name)
            continue
        kw: dict[str, Any] = {"dest": f.name, "help": spec.help}
        if spec.metavar:
            kw["metavar"] = spec.metavar
        if f.type is int:
            kw.update(type=bounded(spec.low if spec.low is not None else 0, spec.high), default=f.default)
        elif f.type is tuple:
            kw.update(action="append", default=None)
        elif f.type is bool:
            kw.update(action="store_true")
        else:
            kw["default"] = f.default
        if spec.choices:
            kw["choices"] = list(spec.choices)
        p.add_argument(spec.flag, **kw)


def request_of(args: argparse.Namespace) -> SearchRequest:
    """The search request of the parsed options of :func:`add_request_options`."""
    from ..request import SearchRequest, specs

    values = {f.name: getattr(args, f.name) for f in specs() if f.spec.help is not None}
    return SearchRequest(values.pop("query"), **values)
