"""What ``markdown-memory search`` prints, for both places that answer it: the CLI process itself
(``cli/search.py``) and the resident service answering a CLI client (op ``search``,
``cli/search_op.py``), so the two print the same bytes: both render the answer's wire form
(``SearchAnswer.to_dict()``, what ``--json`` prints) in the CLI's own process.

:class:`SearchParams` is the command's arguments as the wire carries them; :func:`search_answer`
runs the search; :func:`answer_output` renders its wire form as stdout (:func:`run_search`: both);
:func:`error_facts` / :func:`error_output` a user's mistake as ``main`` does.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings
    from .engine import Engine
    from .models import SearchAnswer
    from .progress import Progress


def clip(line: str, width: int = 300) -> str:
    """One displayed line, cut at ``width`` characters (``read`` prints the section whole)."""
    return line if len(line) <= width else line[: width - 1] + "…"


def dumps_line(data: Any) -> str:
    """``data`` as the one JSON line ``--json`` prints (newline included)."""
    return json.dumps(data, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class SearchParams:
    """The ``search`` command's arguments after parsing (bounds already checked by argparse).
    ``embedder_chosen`` / ``db_chosen``: the embedder / index were named by a flag or the
    environment, so the read command a hit shows repeats them."""

    query: str
    top_k: int
    max_tokens: int
    path_prefix: str | None = None
    tags: list[str] | None = None
    tags_mode: str = "any"
    kind: str | None = None
    lang: str | None = None
    no_refresh: bool = False
    json: bool = False
    verbose: bool = False
    embedder_chosen: bool = False
    db_chosen: bool = False

    def to_wire(self) -> dict[str, Any]:
        """These parameters as a JSON object (the op ``search`` fields besides ``settings``)."""
        return asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> SearchParams:
        """The inverse of :meth:`to_wire`. Raises KeyError/TypeError for a malformed object."""
        tags = data.get("tags")
        return cls(query=str(data["query"]), top_k=int(data["top_k"]), max_tokens=int(data["max_tokens"]),
                   path_prefix=data.get("path_prefix"), tags=None if tags is None else [str(t) for t in tags],
                   tags_mode=str(data.get("tags_mode", "any")), kind=data.get("kind"), lang=data.get("lang"),
                   no_refresh=bool(data.get("no_refresh")), json=bool(data.get("json")),
                   verbose=bool(data.get("verbose")), embedder_chosen=bool(data.get("embedder_chosen")),
                   db_chosen=bool(data.get("db_chosen")))


def read_command(settings: Settings, embedder_chosen: bool, db_chosen: bool) -> Callable[[str, str], str]:
    """How ``search`` text output names the command that reads a hit: a shell-quoted
    ``markdown-memory ... read FILE HEADING --docs-dir ROOT`` that works pasted from any
    directory. It names the absolute docs root the search used, and the index (``--db``) and
    the embedder when they were chosen (flag or environment) rather than defaulted; the program
    is :func:`~markdown_memory.reader.program` (an absolute path when not on PATH)."""
    flags: list[str] = []
    if embedder_chosen:
        flags += ["--embedder", settings.embedder]
    if db_chosen:
        flags += ["--db", str(settings.db_path)]

    from .reader import program

    head = program()  # already shell-quoted

    def command(file_path: str, heading_path: str) -> str:
        return " ".join([head, shlex.join([*flags, "read", file_path, heading_path,
                                           "--docs-dir", str(settings.docs_root)])])

    return command


def render_search(answer: SearchAnswer | Mapping[str, Any], read_command: Callable[[str, str], str] | None = None,
                  *, verbose: bool = False, embedder_news: bool | None = None) -> str:
    """``search`` for a person: per hit a header line, the first lines of its text (or the
    preview of a pointer hit) and, when text is left out, the command that reads the section;
    the ``embedder:`` line only when the preset changed, or with ``verbose``. ``answer``: the
    answer or its wire form (``to_dict()``, as the service's reply carries it): what is printed
    is read from the wire form either way, so both print the same. ``embedder_news``: whether the
    embedder's ``chosen`` reason says the preset changed (:func:`embedder_news`), when the
    caller has it (a service client, which does not import the sentences); else judged here."""
    data = answer if isinstance(answer, Mapping) else answer.to_dict()
    read = read_command or (lambda f, h: shlex.join(["markdown-memory", "read", f, h]))
    out = []
    for i, hit in enumerate(data["results"], start=1):
        where, tokens = (hit["file_path"], hit["heading_path"]), hit["tokens"]
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


def search_answer(engine: Engine, params: SearchParams, progress: Progress) -> SearchAnswer:
    """Search (re-indexing changed files first unless ``no_refresh``; ``progress`` says so) and
    return the answer. Raises what ``Engine.search`` raises (QueryError, ...)."""
    from .models import Freshness, SearchRequest

    request = SearchRequest(params.query, top_k=params.top_k, max_tokens=params.max_tokens,
                            path_prefix=params.path_prefix, tags=params.tags, tags_mode=params.tags_mode,
                            kind=params.kind, lang=params.lang)
    answer = engine.search(request, progress=progress,
                           freshness=Freshness.FLAG if params.no_refresh else Freshness.INDEX)
    progress.finish()
    return answer


def embedder_news_of(answer: Mapping[str, Any]) -> bool:
    """True when the answer's (wire form) embedder ``chosen`` reason says the preset changed,
    not simply that the index's own preset was kept (``embed.choice.worth_saying``)."""
    from .embed.choice import worth_saying

    emb = (answer.get("index_status") or {}).get("embedder") or {}
    return bool(emb.get("chosen")) and worth_saying(str(emb.get("name")), str(emb["chosen"]))


def answer_output(answer: Mapping[str, Any], params: SearchParams, settings: Settings, *,
                  embedder_news: bool | None = None) -> str:
    """What stdout gets for ``answer`` (its wire form), newline included: the JSON line with
    ``--json``, else the text of :func:`render_search` naming ``settings``' read command."""
    if params.json:
        return dumps_line(answer)
    reader = read_command(settings, params.embedder_chosen, params.db_chosen)
    return render_search(answer, reader, verbose=params.verbose, embedder_news=embedder_news) + "\n"


def run_search(engine: Engine, params: SearchParams, progress: Progress) -> str:
    """:func:`search_answer`, then :func:`answer_output`: what stdout gets. Raises as
    :func:`search_answer`."""
    return answer_output(search_answer(engine, params, progress).to_dict(), params, engine.settings)


def error_facts(exc: BaseException) -> tuple[dict[str, object], str, int]:
    """(the ``--json`` error object, the stderr sentence without its prefix, exit status) of a
    command that failed with ``exc``: a MarkdownMemoryError (exit 2: the user can fix it) or
    KeyboardInterrupt (128 + the signal)."""
    from .errors import describe_error

    payload = dict(describe_error(exc).cli_payload())
    if isinstance(exc, KeyboardInterrupt):
        return payload, "interrupted", int(getattr(exc, "exit_status", 130))
    candidates = [c for c in (getattr(exc, "candidates", None) or []) if c not in str(exc)]
    listed = f" (candidates: {' | '.join(candidates[:10])})" if candidates else ""
    return payload, f"error: {exc}{listed}", 2


def failure_output(payload: Mapping[str, object], sentence: str, as_json: bool) -> tuple[str, str]:
    """(stdout, stderr) of a failure's facts (:func:`error_facts`), as the CLI's ``main`` prints
    them: with ``as_json`` the error object on stdout too."""
    return (dumps_line(payload) if as_json else ""), f"markdown-memory: {sentence}\n"


def error_output(exc: BaseException, as_json: bool) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a command that failed with ``exc`` (:func:`error_facts`)."""
    payload, sentence, status = error_facts(exc)
    return (*failure_output(payload, sentence, as_json), status)
