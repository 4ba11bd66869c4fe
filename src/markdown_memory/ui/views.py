"""What each page shows, gathered through the engine façade's public methods (``search``,
``read``, ``outline``, ``links``, ``status``, ``drift``, ``index``), the evaluation module's API
and the store's hook log, as plain dicts for the templates (``templates/``). No HTML here, no
SQL: the templates escape every value.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Engine
    from ..models import Hit, SearchAnswer, SearchRequest
    from ..roots import IndexEntry

#: the filters of the search form, as the CLI names them (``--path``, ``--tag``, ``--kind``, ``--lang``)
KINDS = ("code", "table", "list", "prose")
#: prompts shown per session on the hook page
HOOK_PAGE = 200


def certainty(item: object, label: str) -> dict[str, Any]:
    """``{"p_answer": float | None, "label": str}``: the ranking's calibrated probability that
    ``item`` (a hit or an answer) answers, when it has one (``p_answer``, 0-1), and the
    confidence ``label`` ("high" | "low" | "none") otherwise and beside it."""
    p = getattr(item, "p_answer", None)
    return {"p_answer": float(p) if isinstance(p, (int, float)) else None, "label": label}


def search_request(query: str, folder: str, tag: str, kind: str, lang: str) -> SearchRequest:
    """The request the page's form makes: the agent's defaults (``SearchRequest``'s top_k and
    max_tokens, as ``search_docs``) with the filters given. Raises QueryError (empty query)."""
    from ..models import SearchRequest

    return SearchRequest(query, path_prefix=folder.strip() or None, tags=tuple(t for t in tag.replace(",", " ").split() if t),
                         kind=kind.strip() or None, lang=lang.strip() or None)


def search(engine: Engine, request: SearchRequest) -> dict[str, Any]:
    """One search as ``search_docs`` answers it (the same freshness policy as the MCP runtime):
    ``{"hits": [...], "confidence", "keyword_only", "message", "ms"}``; each hit with its
    breadcrumb parts, lines, tokens, certainty, text or preview, stale and drift marks."""
    from ..models import Freshness

    freshness = Freshness.REFRESH if engine.settings.auto_index else Freshness.FLAG
    start = time.perf_counter()
    answer = engine.search(request, freshness=freshness)
    ms = (time.perf_counter() - start) * 1000
    return {"hits": [_hit(h, answer) for h in answer.results], **certainty(answer, answer.confidence),
            "keyword_only": answer.keyword_only, "message": answer.message, "ms": ms}


def _hit(hit: Hit, answer: SearchAnswer) -> dict[str, Any]:
    return {"file_path": hit.file_path, "heading_path": hit.heading_path, "crumbs": hit.heading_path.split(" > "),
            "start_line": hit.start_line, "end_line": hit.end_line, "tokens": hit.tokens,
            "content": hit.content, "preview": hit.preview, "stale": hit.stale, "drift": list(hit.drift),
            "matched_by": list(hit.matched_by), **certainty(hit, answer.confidence)}


def reader(engine: Engine, file_path: str, heading_path: str) -> dict[str, Any]:
    """The reader: the section's text (whole: every page of it), the document's outline, the
    previous and next sections, its links and backlinks. An empty ``heading_path`` opens the
    first section. Raises DocumentNotFoundError, SectionNotFoundError, PathOutsideRootError."""
    outline = engine.outline(file_path)
    headings = [h.heading_path for h in outline.headings]
    if not heading_path and headings:
        heading_path = headings[0]
    part = engine.read(outline.file_path, heading_path)
    text, lines = [part.content], (part.start_line, part.end_line)
    while part.next_cursor is not None:
        part = engine.read(outline.file_path, heading_path, cursor=part.next_cursor)
        text.append(part.content)
        lines = (lines[0], part.end_line)
    here = headings.index(part.heading_path) if part.heading_path in headings else -1
    links = engine.links(outline.file_path)
    return {
        "file_path": outline.file_path, "title": outline.title, "heading_path": part.heading_path,
        "crumbs": part.heading_path.split(" > "), "start_line": lines[0], "end_line": lines[1],
        "html": markdown_html("\n".join(text)),
        "outline": [{"heading_path": h.heading_path, "title": h.title, "depth": h.heading_path.count(" > "),
                     "tokens": h.tokens, "current": h.heading_path == part.heading_path} for h in outline.headings],
        "previous": headings[here - 1] if here > 0 else None,
        "next": headings[here + 1] if 0 <= here < len(headings) - 1 else None,
        "outgoing": [{"raw": k.raw, "status": k.status, "line": k.line, "target_path": k.target_path,
                      "target_heading_path": k.target_heading_path or ""} for k in links.outgoing],
        "backlinks": [{"file_path": k.file_path, "heading_path": k.heading_path, "line": k.line, "raw": k.raw}
                      for k in links.backlinks],
        "outgoing_total": links.outgoing_total, "backlinks_total": links.backlinks_total,
    }


def markdown_html(text: str) -> str:
    """``text`` (Markdown) as HTML with raw HTML escaped, not passed through (markdown-it's
    CommonMark preset with ``html`` off; it refuses ``javascript:`` links)."""
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark", {"html": False}).render(text))


@dataclass(frozen=True)
class RootRow:
    """One indexed docs root on the Roots page."""

    ident: str
    root: str
    database: str
    size_bytes: int
    status: dict[str, Any] | None
    error: str | None
    #: for a root that cannot be opened: the ``roots`` listing's state and what to do about it
    state: str | None = None
    advice: str | None = None


def root_status(ident: str, engine: Engine | None, error: str | None = None) -> RootRow:
    """The Roots page's row of one root: its status (model, coverage, changed files, failures),
    or the ``error`` that kept it from being read."""
    if engine is None:
        return RootRow(ident, "", "", 0, None, error)
    settings = engine.settings
    size = sum(_size(Path(f"{settings.db_path}{suffix}")) for suffix in ("", "-wal", "-shm"))
    try:
        status = engine.status().to_dict()
    except Exception as exc:  # noqa: BLE001 - one unreadable root never hides the others
        return RootRow(ident, str(settings.docs_root), str(settings.db_path), size, None, str(exc))
    return RootRow(ident, str(settings.docs_root), str(settings.db_path), size, status, None)


def unavailable_root(ident: str, entry: IndexEntry | None) -> RootRow:
    """The Roots page's row of a root whose pages cannot be opened: the state and reason of
    ``markdown-memory roots`` (``entry``, its listing's entry for ``ident``) and what to do
    (``state`` set); else (no entry, or one in state ``ok``) that its docs root is gone
    (``state`` None)."""
    from ..roots import OK, PRUNE_HINT

    if entry is None or entry.state == OK:
        return RootRow(ident, "", "", 0, None, "its docs root is gone")
    return RootRow(ident, entry.root or "", str(entry.database), entry.size_bytes, None, entry.reason, entry.state,
                   PRUNE_HINT if entry.prunable else None)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def hook_log(engine: Engine, session: str | None) -> dict[str, Any]:
    """The hook page: every session in the root's log, and the prompts of ``session`` (default:
    the most recent one), newest first, each with what was added or why nothing was."""
    store = engine.store
    sessions = store.hook_sessions()
    chosen = session if session is not None else (sessions[0].session_id if sessions else None)
    entries = store.hook_entries(chosen, HOOK_PAGE) if chosen is not None else []
    return {"sessions": sessions, "session": chosen, "entries": entries}


def evaluation(engine: Engine, questions: Path) -> dict[str, Any]:
    """Index the root, then score every question of ``questions`` (the ``eval`` command's
    JSON Lines file): the summary table's rows, miss buckets, the results, and the two charts.
    Raises QuestionsFileError for a bad file (before indexing)."""
    from ..eval_taxonomy import BUCKETS
    from ..evaluation import is_miss, load_queries, run_queries, summarise
    from . import charts

    queries = load_queries(questions)
    engine.index()
    results = run_queries(engine, queries)
    summary = summarise(results)
    groups = {k: v for k, v in summary.items() if k not in ("negative", "confidence", "all_queries")}
    overall = groups.get("overall", {})
    return {
        "questions": str(questions), "n": len(results), "groups": groups, "summary": summary,
        "buckets": [(b, overall.get("buckets", {}).get(b, 0)) for b in BUCKETS],
        "misses": [r for r in results if is_miss(r)],
        "type_chart": charts.bars([(k, float(v["mrr10"])) for k, v in groups.items()], title="MRR@10 per question type"),
        "confidence_chart": charts.confidence_vs_correct(  # p_answer once the evaluation records it
            [(_certainty(r), r.rank5 == 0) for r in results if not r.negative]),
    }


def _certainty(result: Any) -> str | float:
    """A question's ``p_answer`` when the evaluation records one, else its confidence label."""
    p = getattr(result, "p_answer", None)
    return float(p) if isinstance(p, (int, float)) else str(result.confidence)
