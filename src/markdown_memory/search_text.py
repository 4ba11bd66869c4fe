"""What ``markdown-memory search`` prints, for both places that answer it: the CLI process itself
(``cli/search.py``) and the resident service answering a CLI client (op ``search``,
``cli/search_op.py``), so the two print the same bytes: both render the answer's wire form
(``SearchAnswer.to_dict()``, what ``--json`` prints) in the CLI's own process.

Outside the ``cli`` package on purpose: the service's ``search`` op runs :func:`search_answer`
in the service process. :class:`CliSearch` is the command's arguments (the request and the
output options) as the wire carries them; :func:`search_answer` runs the search;
:func:`answer_output` renders its wire form as stdout (:func:`run_search`: both);
:func:`error_facts` / :func:`error_output` a user's mistake as ``main`` does.
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


def render_search(data: Mapping[str, Any], read_command: Callable[[str, str], str] | None = None,
                  *, verbose: bool = False, embedder_news: bool | None = None) -> str:
    """``search`` for a person: per hit a header line, the first lines of its text (or the
    preview of a pointer hit) and, when text is left out, the command that reads the section;
    the ``embedder:`` line only when the preset changed, or with ``verbose``. ``data``: the
    answer's wire form (``SearchAnswer.to_dict()``, as the service's reply carries it and the
    in-process CLI makes it), so both print the same. ``embedder_news``: whether the
    embedder's ``chosen`` reason says the preset changed (:func:`embedder_news`), when the
    caller has it (a service client, which does not import the sentences); else judged here."""
    from .text import shown_path

    read = read_command or (lambda f, h: shlex.join(["markdown-memory", "read", f, h]))
    out = []
    for i, hit in enumerate(data["results"], start=1):
        # the path as one line; `read` accepts its %-escaped spelling back (a link destination)
        where, tokens = (shown_path(hit["file_path"]), hit["heading_path"]), hit["tokens"]
        notes = [f"score {hit['score']}", f"{tokens} tokens", "+".join(hit["matched_by"]),
                 f"stale: file {hit['stale']} since indexed" if hit.get("stale") else ""]
        out.append(f"{i}. {where[0]}:{hit['start_line']}-{hit['end_line']}  {where[1]}  "
                   f"({', '.join(n for n in notes if n)})")
        if hit.get("content") is None:
            out.append(f"   {hit['preview']}")
            out.append(f"   … (not shown, {tokens} tokens: {read(*where)})")
        else:
            text_lines = hit["content"].split("\n")
            shown = text_lines[:12]
            out.extend("   " + clip(line) for line in shown)
            if len(text_lines) > len(shown):
                out.append(f"   … ({len(text_lines) - len(shown)} more lines: {read(*where)})")
        out.append("")
    if not data["results"]:
        out.append("no results")
    if data.get("message"):
        out.append(f"note: {data['message']}")
    emb = (data.get("index_status") or {}).get("embedder") or {}
    if emb.get("chosen"):  # nobody named it: which and why
        news = embedder_news_of(data) if embedder_news is None else embedder_news
        if verbose or news:
            out.append(f"embedder: {emb['name']} ({emb['chosen']})")
    return "\n".join(out).rstrip()


def search_answer(engine: Engine, search: CliSearch, progress: Progress, reader: Reader | None = None) -> SearchAnswer:
    """Search (re-indexing changed files first unless ``no_refresh``; ``progress`` says so) and
    return the answer, its notes worded for ``reader`` (default: this process's; the service
    passes its client's). Raises what ``Engine.search`` raises (QueryError, ...)."""
    from .models import Freshness

    answer = engine.search(search.request, progress=progress, reader=reader,
                           freshness=Freshness.FLAG if search.output.no_refresh else Freshness.INDEX)
    progress.finish()
    return answer


def embedder_news_of(answer: Mapping[str, Any]) -> bool:
    """True when the answer's (wire form) embedder ``chosen`` reason says the preset changed,
    not simply that the index's own preset was kept (``embed.choice.worth_saying``)."""
    from .embed.choice import worth_saying

    emb = (answer.get("index_status") or {}).get("embedder") or {}
    return bool(emb.get("chosen")) and worth_saying(str(emb.get("name")), str(emb["chosen"]))


def answer_output(answer: Mapping[str, Any], output: SearchOutput, settings: Settings, *,
                  embedder_news: bool | None = None, program: str | None = None) -> str:
    """What stdout gets for ``answer`` (its wire form), newline included: the JSON line with
    ``--json``, else the text of :func:`render_search` naming ``settings``' read command (run
    as ``program``: by default this process's)."""
    if output.json:
        return dumps_line(answer)
    read = read_command(settings, output.embedder_chosen, output.db_chosen, program)
    return render_search(answer, read, verbose=output.verbose, embedder_news=embedder_news) + "\n"


def run_search(engine: Engine, search: CliSearch, progress: Progress, reader: Reader | None = None) -> str:
    """:func:`search_answer`, then :func:`answer_output`: what stdout gets, worded for ``reader``
    (default: this process's). Raises as :func:`search_answer`."""
    answer = search_answer(engine, search, progress, reader).to_dict()
    return answer_output(answer, search.output, engine.settings, program=reader.program if reader else None)


def error_facts(exc: BaseException, program: str | None = None) -> tuple[dict[str, object], str, int]:
    """(the ``--json`` error object, the stderr sentence without its prefix, exit status) of a
    command that failed with ``exc``: a MarkdownMemoryError (exit 2: the user can fix it) or
    KeyboardInterrupt (128 + the signal). ``program``: the command the reader types, when it is
    not this process's (the service answering a client: ``errors.describe_error``)."""
    from .errors import describe_error

    report = describe_error(exc, program)
    payload = dict(report.cli_payload())
    if isinstance(exc, KeyboardInterrupt):
        return payload, "interrupted", int(getattr(exc, "exit_status", 130))
    candidates = [c for c in (getattr(exc, "candidates", None) or []) if c not in report.message]
    listed = f" (candidates: {' | '.join(candidates[:10])})" if candidates else ""
    return payload, f"error: {report.message}{listed}", 2


def failure_output(payload: Mapping[str, object], sentence: str, as_json: bool) -> tuple[str, str]:
    """(stdout, stderr) of a failure's facts (:func:`error_facts`), as the CLI's ``main`` prints
    them: with ``as_json`` the error object on stdout too."""
    return (dumps_line(payload) if as_json else ""), f"markdown-memory: {sentence}\n"


def error_output(exc: BaseException, as_json: bool) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a command that failed with ``exc`` (:func:`error_facts`)."""
    payload, sentence, status = error_facts(exc)
    return (*failure_output(payload, sentence, as_json), status)
