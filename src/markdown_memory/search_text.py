"""What ``markdown-memory search`` prints, for both places that run it: the CLI process itself
(``cli/search.py``) and the resident service answering a CLI client (op ``search``,
``service/client_ops.py``), so the two print the same bytes.

Outside the ``cli`` package on purpose: the service imports this module, and ``cli`` imports
the service's client (an import of ``cli`` from the service would be a cycle).
:class:`CliSearch` is the command's arguments (the request and the output options) as the wire carries them; :func:`run_search`
returns the text of stdout; :func:`error_output` renders a user's mistake as ``main`` does.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings
    from .engine import Engine
    from .models import SearchAnswer
    from .progress import Progress
    from .reader import Reader
    from .request import SearchRequest


def clip(line: str, width: int = 300) -> str:
    """One displayed line, cut at ``width`` characters (``read`` prints the section whole)."""
    return line if len(line) <= width else line[: width - 1] + "…"


def dumps_line(data: Any) -> str:
    """``data`` as the one JSON line ``--json`` prints (newline included)."""
    return json.dumps(data, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class SearchOutput:
    """How the ``search`` command prints an answer (none of it changes the answer): ``no_refresh``
    (answer from the index as it stands), ``json``, ``verbose``; ``embedder_chosen`` /
    ``db_chosen``: the embedder / index were named by a flag or the environment, so the read
    command a hit shows repeats them."""

    no_refresh: bool = False
    json: bool = False
    verbose: bool = False
    embedder_chosen: bool = False
    db_chosen: bool = False


@dataclass(frozen=True)
class CliSearch:
    """The ``search`` command after parsing: the :class:`~markdown_memory.request.SearchRequest`
    and, beside it, the CLI's own :class:`SearchOutput` options."""

    request: SearchRequest
    output: SearchOutput = SearchOutput()

    def to_wire(self) -> dict[str, object]:
        """As a JSON object (the op ``search`` fields besides ``settings``): the request's wire
        form (``SearchRequest.to_wire``) under ``request``, the output options under ``output``."""
        return {"request": self.request.to_wire(), "output": asdict(self.output)}

    @classmethod
    def from_wire(cls, data: Mapping[str, object]) -> CliSearch:
        """The inverse of :meth:`to_wire`. Raises KeyError/TypeError for a malformed object and
        what ``SearchRequest`` raises for a bad value."""
        from .request import SearchRequest

        request, output = data["request"], data.get("output") or {}
        if not isinstance(request, dict) or not isinstance(output, dict):
            raise TypeError("request and output must be JSON objects")
        names = {f.name for f in fields(SearchOutput)}
        return cls(SearchRequest.from_wire(request),
                   SearchOutput(**{k: bool(v) for k, v in output.items() if k in names}))


def read_command(settings: Settings, embedder_chosen: bool, db_chosen: bool,
                 program: str | None = None) -> Callable[[str, str], str]:
    """How ``search`` text output names the command that reads a hit: a shell-quoted
    ``markdown-memory ... read FILE HEADING --docs-dir ROOT`` that works pasted from any
    directory. It names the absolute docs root the search used, and the index (``--db``) and
    the embedder when they were chosen (flag or environment) rather than defaulted; the program
    is ``program`` (the reader's, already shell-quoted), by default this process's
    :func:`~markdown_memory.reader.program` (an absolute path when not on PATH)."""
    flags: list[str] = []
    if embedder_chosen:
        flags += ["--embedder", settings.embedder]
    if db_chosen:
        flags += ["--db", str(settings.db_path)]

    from . import reader

    head = program or reader.program()  # already shell-quoted

    def command(file_path: str, heading_path: str) -> str:
        return " ".join([head, shlex.join([*flags, "read", file_path, heading_path,
                                           "--docs-dir", str(settings.docs_root)])])

    return command


def render_search(answer: SearchAnswer, read_command: Callable[[str, str], str] | None = None, *,
                  verbose: bool = False) -> str:
    """``search`` for a person: per hit a header line, the first lines of its text (or the
    preview of a pointer hit) and, when text is left out, the command that reads the section;
    the ``embedder:`` line only when the preset changed, or with ``verbose``."""
    from .embed.choice import worth_saying

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


def run_search(engine: Engine, search: CliSearch, progress: Progress, reader: Reader | None = None) -> str:
    """Search (re-indexing changed files first unless ``no_refresh``) and return what stdout
    gets, newline included; the answer's notes are worded for ``reader`` (default: this
    process's). Raises what ``Engine.search`` raises (QueryError, ...)."""
    from .models import Freshness

    out = search.output
    answer = engine.search(search.request, progress=progress, reader=reader,
                           freshness=Freshness.FLAG if out.no_refresh else Freshness.INDEX)
    progress.finish()
    if out.json:
        return dumps_line(answer.to_dict())
    read = read_command(engine.settings, out.embedder_chosen, out.db_chosen, reader.program if reader else None)
    return render_search(answer, read, verbose=out.verbose) + "\n"


def error_output(exc: BaseException, as_json: bool) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a command that failed with ``exc``, a
    MarkdownMemoryError (exit 2: the user can fix it) or KeyboardInterrupt (128 + the signal),
    as the CLI's ``main`` prints it: with ``as_json`` the error object on stdout too."""
    from .errors import describe_error

    out = dumps_line(describe_error(exc).cli_payload()) if as_json else ""
    if isinstance(exc, KeyboardInterrupt):
        return out, "markdown-memory: interrupted\n", int(getattr(exc, "exit_status", 130))
    candidates = [c for c in (getattr(exc, "candidates", None) or []) if c not in str(exc)]
    listed = f" (candidates: {' | '.join(candidates[:10])})" if candidates else ""
    return out, f"markdown-memory: error: {exc}{listed}\n", 2
