"""What the engine returns: frozen dataclasses with one ``to_dict()`` each.

``to_dict()`` is the wire format: the MCP tools and ``--json`` print exactly it (key order
included; ``tests/test_wire_format.py`` pins it). Where an agent gets a leaner view than a
person, the same method takes a flag (``agent=True``) instead of each adapter trimming dicts.

Units: lines are 1-based lines of the file (inclusive ranges), tokens are
``text.count_tokens`` estimates, times are seconds (epoch seconds for ``at``), paths are POSIX
paths relative to the docs root.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..limits import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS  # the bounds live in limits.py
from ..limits import DEFAULT_TOP_K as DEFAULT_TOP_K
from ..limits import MAX_MAX_TOKENS as MAX_MAX_TOKENS
from ..limits import MAX_TOP_K as MAX_TOP_K
from ..limits import MIN_MAX_TOKENS as MIN_MAX_TOKENS
from ..request import SearchRequest as SearchRequest
from .notes import Note
from .status import (
    INDEXING_NOTE as INDEXING_NOTE,
)
from .status import (
    REPORT_LIST_LIMIT as REPORT_LIST_LIMIT,
)
from .status import (
    EmbedderState as EmbedderState,
)
from .status import (
    FileChange as FileChange,
)
from .status import (
    IndexCounts as IndexCounts,
)
from .status import (
    IndexOutcome as IndexOutcome,
)
from .status import (
    IndexProgress as IndexProgress,
)
from .status import (
    IndexReport as IndexReport,
)
from .status import (
    IndexStatus as IndexStatus,
)
from .status import (
    LastRun as LastRun,
)

__all__ = [
    "DocumentEntry",
    "DocumentList",
    "EmbedderState",
    "FileChange",
    "Freshness",
    "Hit",
    "IndexCounts",
    "IndexOutcome",
    "IndexProgress",
    "IndexReport",
    "IndexStatus",
    "LastRun",
    "Link",
    "Links",
    "Outline",
    "OutlineHeading",
    "Preamble",
    "SearchAnswer",
    "SearchRequest",
    "SectionText",
]



class Freshness(StrEnum):
    """How an answer treats files that changed on disk since they were indexed.

    * ``INDEX``: run an incremental index first (walk, parse, embed), as a one-shot CLI does;
      when another process holds the index, answer after a short wait and say so.
    * ``REFRESH``: re-index (keyword index only, milliseconds per file) the files a stat probe
      finds edited, deleted or new, and the files of the hits themselves, then answer; a
      long-running server with background indexing does this.
    * ``FLAG``: answer from the index as it stands.

    Under every policy a hit whose file still differs on disk is flagged ``stale`` and the
    answer's ``message`` says so, in one wording.
    """

    INDEX = "index"
    REFRESH = "refresh"
    FLAG = "flag"


# -- search ---------------------------------------------------------------------------------
#: The bounds the adapters share (MCP schema, CLI flags, ``SearchRequest``): one limit each, so the
#: same request is valid through every adapter (the answer's token budget keeps a large ``top_k`` small).
# (DEFAULT_TOP_K, MAX_TOP_K, DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, MAX_MAX_TOKENS: imported from
# limits.py above, re-exported here)
LIST_PAGE_SIZE = 200


@dataclass(frozen=True)
class Hit:
    """One ranked section. ``content`` is the verbatim section text, or None for a pointer hit
    (past the token budget: read it with ``read``); ``preview`` is <= 100 characters of the
    passage that matched; ``passage_lines`` its line range; ``matched_by`` the ranked lists
    that found it ("keyword", "vector", ...); ``stale`` "modified" | "missing" | "unreadable"
    when the file changed on disk since it was indexed; ``already_sent`` True for a pointer
    whose text this MCP session already received in full (session memory); ``drift`` the names
    the section gives as code (flags, env vars, paths, functions) that the code side no longer
    holds, once ``drift`` has read the code side (docs/drift.md), omitted when empty;
    ``p_answer`` the calibrated probability (0-1) that this section answers the query
    (``search/calibration.py``; None: not estimated)."""

    file_path: str
    heading_path: str
    start_line: int
    end_line: int
    tokens: int
    score: float
    content: str | None
    preview: str
    passage_lines: tuple[int, int]
    matched_by: tuple[str, ...]
    stale: str | None = None
    already_sent: bool = False
    drift: tuple[str, ...] = ()
    p_answer: float | None = None

    def to_dict(self, *, agent: bool = False) -> dict[str, Any]:
        """``agent``: leave out ``preview`` when ``content`` already holds it."""
        data: dict[str, Any] = {
            "file_path": self.file_path,
            "heading_path": self.heading_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "tokens": self.tokens,
            "score": self.score,
        }
        if self.p_answer is not None:
            data["p_answer"] = round(self.p_answer, 3)
        if self.content is not None:
            data["content"] = self.content
        if not (agent and self.content is not None):
            data["preview"] = self.preview
        data["passage_lines"] = list(self.passage_lines)
        data["matched_by"] = list(self.matched_by)
        if self.stale:
            data["stale"] = self.stale
        if self.already_sent:
            data["already_sent"] = True
        if self.drift:
            data["drift"] = list(self.drift)
        return data


@dataclass(frozen=True)
class SearchAnswer:
    """``results`` in rank order; ``confidence`` "high" | "low" | "none"; ``keyword_only``
    True when no query vector was used; ``message`` what to act on (or None): the ``notes``
    worded for the reader the engine was asked for;
    ``index_status`` the index health the answer was made with; ``p_answer`` the calibrated
    probability (0-1) that a hit carrying its text answers the query, which ``confidence`` is
    read from (``search/calibration.py``)."""

    results: tuple[Hit, ...]
    confidence: str
    keyword_only: bool
    message: str | None
    index_status: IndexStatus | None = None
    #: the facts ``message`` words (``models.notes``), for a caller that words them for another
    #: reader (``messages.render_notes``); not part of the wire format
    notes: tuple[Note, ...] = ()
    p_answer: float = 0.0

    def to_dict(self, *, agent: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "results": [h.to_dict(agent=agent) for h in self.results],
            "confidence": self.confidence,
            "p_answer": round(self.p_answer, 3),
            "keyword_only": self.keyword_only,
            "message": self.message,
        }
        if self.index_status is not None:
            data["index_status"] = self.index_status.to_dict(agent=agent)
        return data


# -- outline and read -----------------------------------------------------------------------
@dataclass(frozen=True)
class OutlineHeading:
    """One heading of an outline. ``end_line``/``tokens``: its own text (what ``read``
    returns); ``*_with_children``: with every subsection; ``parts``: how many ``(Part n)``
    pieces a long section was stored as (None: one)."""

    heading_path: str
    title: str
    level: int
    start_line: int
    end_line: int
    end_line_with_children: int
    tokens: int
    tokens_with_children: int
    parts: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "heading_path": self.heading_path, "title": self.title, "level": self.level,
            "start_line": self.start_line, "end_line": self.end_line,
            "end_line_with_children": self.end_line_with_children, "tokens": self.tokens,
            "tokens_with_children": self.tokens_with_children,
        }
        if self.parts:
            data["parts"] = self.parts
        return data


@dataclass(frozen=True)
class Preamble:
    """Text before a document's first heading."""

    heading_path: str
    start_line: int
    end_line: int
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"heading_path": self.heading_path, "start_line": self.start_line, "end_line": self.end_line,
                "tokens": self.tokens}


@dataclass(frozen=True)
class Outline:
    """Heading tree of one document (no bodies)."""

    file_path: str
    title: str
    front_matter_keys: tuple[str, ...]
    preamble: Preamble | None
    headings: tuple[OutlineHeading, ...]
    #: front matter and inline tags (``markdown/vault.py``); aliases, description and dates from
    #: the front matter (dates ISO 8601; None when absent)
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    description: str | None = None
    date: str | None = None
    updated: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "file_path": self.file_path,
            "title": self.title,
            "aliases": list(self.aliases),
            "tags": list(self.tags),
            "description": self.description,
            "date": self.date,
            "updated": self.updated,
            "front_matter_keys": list(self.front_matter_keys),
            "preamble": self.preamble.to_dict() if self.preamble else None,
            "headings": [h.to_dict() for h in self.headings],
        }


@dataclass(frozen=True)
class SectionText:
    """One page of a section's verbatim text: lines ``start_line``..``end_line`` of the file;
    ``section_end_line`` is where the whole section ends; ``next_cursor`` is the cursor of the
    next page (None: this is the last). ``resolved_from`` is the heading asked when it named no
    heading as written and a nearby one was read (a fuzzy match), with ``message`` saying so;
    both keys are left out of the answer otherwise."""

    file_path: str
    heading_path: str
    start_line: int
    end_line: int
    section_end_line: int
    tokens: int
    content: str
    next_cursor: int | None
    resolved_from: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file_path": self.file_path, "heading_path": self.heading_path, "start_line": self.start_line,
            "end_line": self.end_line, "section_end_line": self.section_end_line, "tokens": self.tokens,
            "content": self.content, "next_cursor": self.next_cursor,
        }
        if self.resolved_from is not None:
            out["resolved_from"] = self.resolved_from
        if self.message is not None:
            out["message"] = self.message
        return out


# -- links ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Link:
    """One link: the section it sits in (``file_path``, ``heading_path``, ``line``), what was
    written (``kind``: wikilink / embed / markdown, ``raw``, ``target``: the side read as the
    target) and where it leads (``status``: resolved / no_heading / ambiguous / unresolved;
    ``target_path`` and ``target_heading_path``, None when not found or for a whole note;
    ``candidates``: the paths an ``ambiguous`` name leads to, sorted; the key is left out of the
    answer when there are none)."""

    file_path: str
    heading_path: str
    line: int
    kind: str
    raw: str
    target: str
    status: str
    target_path: str | None
    target_heading_path: str | None
    candidates: tuple[str, ...] = ()

    def to_dict(self, *, backlink: bool = False) -> dict[str, Any]:
        if backlink:  # the target is the document asked about
            return {"file_path": self.file_path, "heading_path": self.heading_path, "line": self.line,
                    "kind": self.kind, "raw": self.raw, "target_heading_path": self.target_heading_path}
        data: dict[str, Any] = {
            "heading_path": self.heading_path, "line": self.line, "kind": self.kind, "raw": self.raw,
            "target": self.target, "status": self.status, "target_path": self.target_path,
            "target_heading_path": self.target_heading_path}
        if self.candidates:
            data["candidates"] = list(self.candidates)
        return data


@dataclass(frozen=True)
class Links:
    """A document's outgoing links (file order) and backlinks (by source path), one page of
    each from the same ``offset``; ``next_offset`` is set while either list has more;
    ``unresolved``: outgoing links whose status is not ``resolved`` (all pages)."""

    file_path: str
    title: str
    outgoing: tuple[Link, ...]
    outgoing_total: int
    unresolved: int
    backlinks: tuple[Link, ...]
    backlinks_total: int
    next_offset: int | None
    message: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "file_path": self.file_path, "title": self.title,
            "outgoing": [k.to_dict() for k in self.outgoing], "outgoing_total": self.outgoing_total,
            "unresolved": self.unresolved,
            "backlinks": [k.to_dict(backlink=True) for k in self.backlinks], "backlinks_total": self.backlinks_total,
            "next_offset": self.next_offset, "message": self.message,
        }


# -- list -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class DocumentEntry:
    """One indexed document; ``modified`` is ISO 8601 UTC of its file's mtime; ``tags`` its
    front-matter and inline tags (``markdown/vault.py``)."""

    path: str
    title: str
    sections: int
    tokens: int
    modified: str
    tags: tuple[str, ...] = ()

    @classmethod
    def from_mtime(cls, path: str, title: str, sections: int, tokens: int, mtime_ns: int,
                   tags: tuple[str, ...] = ()) -> DocumentEntry:
        return cls(path, title, sections, tokens, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime_ns / 1e9)),
                   tags)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "sections": self.sections, "tokens": self.tokens,
                "modified": self.modified, "tags": list(self.tags)}


@dataclass(frozen=True)
class DocumentList:
    """One page of ``list_documents``: ``total`` documents match, ``next_offset`` continues
    (None: last page); ``message`` says why the page is empty or incomplete."""

    documents: tuple[DocumentEntry, ...]
    total: int
    next_offset: int | None
    message: str | None
    index_status: IndexStatus | None = None

    def to_dict(self, *, agent: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"documents": [d.to_dict() for d in self.documents], "total": self.total,
                                "next_offset": self.next_offset, "message": self.message}
        if agent and self.index_status is not None:  # a person asks `status` for it
            data["index_status"] = self.index_status.to_dict(agent=agent)
        return data
