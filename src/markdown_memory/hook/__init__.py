"""``markdown-memory hook``: add the sections that answer a prompt to it, as a prompt hook.

:func:`respond` takes the hook's stdin (see :mod:`.payload` for Claude Code's and Codex's
``UserPromptSubmit`` JSON) and returns ``(stdout, stderr)``: the one answer line or None, and
one line for stderr or None. It never raises and never indexes; the steps, cheapest first:

1. the payload is parsed and the prompt judged by :func:`.gate.asks_docs` (no database, no
   model, not even the engine imported: most prompts stop here within a few milliseconds);
2. the docs root is ``docs_dir``, else ``MARKDOWN_MEMORY_DOCS_DIR``, else ``CLAUDE_PROJECT_DIR``
   (what Claude Code gives its hooks and servers: the project, even when the session's working
   directory is a subfolder of it), else the payload's ``cwd``, and
   its database as for every command (``--db``, ``MARKDOWN_MEMORY_DB``, the per-root default);
   no database file there means nothing to say, and a detached index run of the root is
   started (:mod:`.autoindex`; one stderr line says so);
3. one search through the engine façade (``Freshness.FLAG``: the index as it stands): by the
   resident service when one is running (:mod:`.remote`; it has the model loaded, so the
   search uses vectors too), else in this process keyword-only, since loading an embedding
   model takes longer than a prompt may wait (docs/prompt-hook.md has the figures);
4. :func:`.gate.select` keeps the hits that answer the prompt, :mod:`.seen` drops those
   already injected in this session, and :func:`render` fits them into ``max_tokens``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from . import gate
from .payload import Payload, PayloadError, answer, parse

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from ..config import Settings
    from ..engine import Engine
    from ..models import Hit



def _debug(message: str, *args: object) -> None:
    """A debug log line (``logging`` is imported only once a prompt gets this far: a prompt the
    gate turns away costs no more than the interpreter and the gate)."""
    import logging

    logging.getLogger("markdown_memory.hook").debug(message, *args)

DEFAULT_MAX_TOKENS = 800
#: hits asked of the search: the gate and the session memory choose among them
TOP_K = 5

__all__ = ["DEFAULT_MAX_TOKENS", "Payload", "PayloadError", "answer", "inject", "parse", "render", "respond",
           "respond_to"]


def respond(stdin: str, *, docs_dir: str | None = None, db: str | None = None,
            max_tokens: int = DEFAULT_MAX_TOKENS, embedder: str | None = None) -> tuple[str | None, str | None]:
    """(stdout line or None, stderr line or None) for one hook call (see module docstring).
    ``embedder``: the hook's ``--embedder`` (the service's search uses it; in process the hook
    is keyword-only)."""
    try:
        payload = parse(stdin)
    except PayloadError as exc:
        return None, str(exc)
    if not gate.asks_docs(payload.prompt):
        turned_away()
        return None, None
    return respond_to(payload, docs_dir=docs_dir, db=db, max_tokens=max_tokens, embedder=embedder)


def turned_away() -> None:
    """Log (debug) that the gate turned the prompt away."""
    _debug("hook skipped the prompt: it is a command, a reply or a task, not a question the docs answer")


def respond_to(payload: Payload, *, docs_dir: str | None = None, db: str | None = None,
               max_tokens: int = DEFAULT_MAX_TOKENS, embedder: str | None = None) -> tuple[str | None, str | None]:
    """:func:`respond` for a payload already read whose prompt the gate let through (steps 2-4
    of the module docstring). Never raises."""
    try:
        return _search(payload, docs_dir, db, max_tokens, embedder)
    except Exception as exc:  # a locked, damaged or foreign database: the prompt goes on without us
        from .. import messages

        return None, messages.hook_failed(str(exc) or type(exc).__name__)


def _search(payload: Payload, docs_dir: str | None, db: str | None, max_tokens: int,
            embedder: str | None) -> tuple[str | None, str | None]:
    from dataclasses import replace

    from ..config import Settings
    from ..errors import ConfigError
    from .remote import via_service

    root = (docs_dir or os.environ.get("MARKDOWN_MEMORY_DOCS_DIR") or os.environ.get("CLAUDE_PROJECT_DIR")
            or payload.cwd)
    try:  # the service's settings: the embedder chosen as for any command
        settings = Settings.load(root, db, embedder)
    except ConfigError:  # a bad MARKDOWN_MEMORY_EMBEDDER: the keyword search here does not need it
        settings = Settings.load(root, db, "none")
    if not settings.db_path.is_file():
        from .. import messages
        from .autoindex import start_index

        started = start_index(settings, db_named=bool(db or os.environ.get("MARKDOWN_MEMORY_DB", "").strip()))
        return None, messages.hook_no_index(settings.docs_root, settings.db_path, started=started)
    remote = via_service(settings, payload, max_tokens)
    if remote is not None:
        return remote
    from ..engine import Engine

    engine = Engine(replace(settings, embedder="none", embedder_named=True, embedder_by_env=False))
    try:
        context = inject(engine, payload, max_tokens)
    finally:
        engine.close()
    return (answer(context) if context else None), None


def inject(engine: Engine, payload: Payload, max_tokens: int,
           log_keep: int | None = None) -> str | None:
    """The text to add to ``payload``'s prompt (``payload.answer`` makes the hook's line of it),
    or None: the sections of ``engine``'s docs root that answer the prompt, not yet injected in
    its session, within ``max_tokens``. What was
    decided goes to the root's hook log (:mod:`.record`; ``log_keep``: how many prompts it
    keeps, 0 = off, None = ``MARKDOWN_MEMORY_HOOK_LOG`` of this process). The caller let the
    prompt through :func:`.gate.asks_docs` and closes the engine (this thread's connection).
    Raises what ``Engine.search`` raises."""
    from ..models import Freshness, SearchRequest
    from ..text import count_tokens
    from . import record
    from .seen import SessionMemory

    settings: Settings = engine.settings
    found = engine.search(SearchRequest(payload.prompt, top_k=TOP_K, max_tokens=max(4 * max_tokens, 2000)),
                          freshness=Freshness.FLAG)
    picked = gate.select(found)
    text, why = "", None
    used: list[Hit] = []
    if not picked:
        why = gate.why_not(found)
    else:
        memory = SessionMemory(settings.db_path, payload.session_id)
        seen = memory.seen()
        text, used = render(settings.docs_root, [h for h in picked if (h.file_path, h.heading_path) not in seen],
                            max_tokens)
        if used:
            memory.add((h.file_path, h.heading_path) for h in used)
        else:
            why = f"the {len(picked)} section(s) that pass were already added in this session"
    record.record(engine, payload, found, used, count_tokens(text) if used else 0, why,
                  record.keep() if log_keep is None else log_keep)
    if not used:
        _debug("hook added nothing: %s", why)
        return None
    return text


def render(root: Path, hits: list[Hit], max_tokens: int) -> tuple[str, list[Hit]]:
    """The injected text: the lead line naming ``root``, then per hit a header (path,
    breadcrumb, lines) and its text, in order while the whole stays within ``max_tokens``
    (``text.count_tokens``); the first hit is cut by lines to fit when it alone is too long.
    Returns (text, the hits it holds); ("", []) when none fits."""
    from .. import messages
    from ..text import count_tokens

    parts = [messages.hook_lead(root)]
    used: list[Hit] = []
    for hit in hits:
        header = f"\n## {hit.file_path} · {hit.heading_path} (lines {hit.start_line}-{hit.end_line})"
        body = (hit.content or "").strip("\n")
        block = f"{header}\n{body}"
        if count_tokens("\n".join([*parts, block])) <= max_tokens:
            parts.append(block)
            used.append(hit)
        elif not used:
            lines = body.split("\n")
            while lines and count_tokens("\n".join([*parts, header, *lines, messages.HOOK_CUT])) > max_tokens:
                lines.pop()
            if lines:
                parts.append("\n".join([header, *lines, messages.HOOK_CUT]))
                used.append(hit)
    return ("\n".join(parts), used) if used else ("", [])
