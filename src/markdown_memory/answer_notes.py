"""The notes a search answer carries besides its hits (``models.notes``), collected by a table of
annotators as the ranking's signals are (``search/signals.py``): each :class:`Annotator` reads
the facts of one finished search (:class:`SearchFacts`) and returns its note or None. The
table's order is the order of the answer's ``message``; the notes of the ranking itself (no
confident match, why search is keyword-only) follow. A new note: its dataclass in
``models/notes.py``, its sentence in ``messages.NOTE_SENTENCES``, one ``Annotator`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .models import IndexStatus
from .models.notes import BusyElsewhere, Note, PartlyKeywordOnly, QueryCut, Said, StaleHits


@dataclass(frozen=True)
class SearchFacts:
    """What the annotators read of one search: the query's length and the limit searched
    (characters), how many hits were flagged stale, whether the ranking was keyword-only, the
    index status the answer carries, whether this call could index first (``indexed_here``),
    whether the engine runs in the background (a server, whose ``index_status`` says what a
    foreground answer says in its message), and the database's disk-full sentence."""

    query_length: int
    query_limit: int
    flagged: int
    keyword_only: bool
    status: IndexStatus
    indexed_here: bool
    background: bool
    disk_full: str | None


@dataclass(frozen=True)
class Annotator:
    """One note's rule: ``name`` (for tests and logs) and ``note(facts)`` -> the note or None."""

    name: str
    note: Callable[[SearchFacts], Note | None]


def _disk_full(f: SearchFacts) -> Note | None:
    return Said(f.disk_full) if f.disk_full and not f.background else None


def _busy_elsewhere(f: SearchFacts) -> Note | None:
    # a foreground process says in the answer that another one is indexing
    if f.background or (f.indexed_here and not f.status.indexing):
        return None
    return BusyElsewhere(f.status.counts.documents, f.status.counts.vectors)


def _partly_keyword_only(f: SearchFacts) -> Note | None:
    pending = f.status.counts.pending_vectors
    return PartlyKeywordOnly(pending, f.status.counts.passages) if pending and not f.keyword_only else None


def _stale_hits(f: SearchFacts) -> Note | None:
    return StaleHits(f.flagged) if f.flagged else None


def _query_cut(f: SearchFacts) -> Note | None:
    return QueryCut(f.query_length, f.query_limit) if f.query_length > f.query_limit else None


#: the annotators, in the order their notes open the answer's message
ANNOTATORS: tuple[Annotator, ...] = (
    Annotator("disk_full", _disk_full),
    Annotator("busy_elsewhere", _busy_elsewhere),
    Annotator("partly_keyword_only", _partly_keyword_only),
    Annotator("stale_hits", _stale_hits),
    Annotator("query_cut", _query_cut),
)


def annotate(facts: SearchFacts, ranked: tuple[Note, ...] = ()) -> tuple[Note, ...]:
    """The answer's notes: each annotator's (table order), then ``ranked`` (the ranking's own)."""
    return tuple(n for a in ANNOTATORS if (n := a.note(facts)) is not None) + ranked
