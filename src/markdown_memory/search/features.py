"""The learned ranker's features: one row of numbers per first-stage candidate, built in this one
place for both training export (``markdown-memory eval --features``) and query-time scoring
(``search/learned.py``), so the model is trained on exactly what it is served.

The first stage is the hand-set pipeline (``rank.rank`` with ``--ranker rrf``): signals fused by
RRF, repeated texts dropped, parents joined, the best page's sections re-chosen. Its first
``DEPTH`` candidates, in that order, are described by ``FEATURES`` (names, in column order):

* per signal of ``signals.SIGNALS`` (``keyword``, ``vector``, ...): ``on_<signal>`` (1 when the
  candidate is on that signal's list) and ``rr_<signal>`` (``10 / (10 + place)``, 0 off the list):
  its place in that list, transformed so the top places differ most;
* raw signal values normalised per query: ``bm25`` (BM25 / the query's best BM25, 0-1, 0 without
  a keyword match), ``cosine`` (best-passage cosine, 0 when not a vector candidate) and
  ``cosine_gap`` (cosine minus the query's best cosine, -1 when absent), ``coverage`` (IDF share of
  the question's words held) and ``coverage_gap`` (minus the query's best), ``covered_share``
  (distinct query words held / query words), ``definition`` (definition strength, 0-3),
  ``exact``, ``defines``, ``named_page`` (lead section of a page the query names), ``page_mass``
  (IDF share of the query naming its page), ``on_named_doc`` (in a document the query names);
* the hand-set result: ``rrf_rr`` (``10 / (10 + first-stage rank)``), ``rrf_share`` (fused score /
  best fused score);
* the section: ``log_tokens`` (``log1p`` of its tokens), ``bodyless``, ``lead`` (first section of
  its page), ``log_ordinal`` (``log1p`` position in its page), ``level`` (heading depth, 0-6, /6),
  ``release_notes``;
* its page: ``doc_share`` (candidates of its page among the first 10, /10), ``doc_best_rr``
  (``10 / (10 + rank of its page's best candidate)``), ``doc_first`` (it is its page's best
  candidate), ``top_page`` (its page holds the first candidate);
* siblings: ``joined`` (added after fusion as a parent or alternative), ``section_evidence``
  (the second stage's ``sibling_terms``, 0-1 among the best page's sections, 0 when not compared).

Every value is finite; a feature a keyword-only search lacks (vector) is 0 and the model for that
mode (``learned.RankerModel``) is trained without vectors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .candidates import Candidate
from .cues import bodyless
from .signals import SIGNALS, Pool

#: How many first-stage candidates are described, exported and re-ranked.
DEPTH = 50

_SIGNAL_NAMES = tuple(s.name for s in SIGNALS)
_RAW = ("bm25", "cosine", "cosine_gap", "coverage", "coverage_gap", "covered_share", "definition", "exact",
        "defines", "named_page", "page_mass", "on_named_doc")
_RRF = ("rrf_rr", "rrf_share")
_SECTION = ("log_tokens", "bodyless", "lead", "log_ordinal", "level", "release_notes")
_PAGE = ("doc_share", "doc_best_rr", "doc_first", "top_page")
_SIBLINGS = ("joined", "section_evidence")

#: Column names of the feature matrix, in order.
FEATURES: tuple[str, ...] = (tuple(f"on_{s}" for s in _SIGNAL_NAMES) + tuple(f"rr_{s}" for s in _SIGNAL_NAMES)
                             + _RAW + _RRF + _SECTION + _PAGE + _SIBLINGS)


def _rr(place: int | None) -> float:
    return 0.0 if place is None else 10.0 / (10.0 + place)


@dataclass(frozen=True)
class _QueryFacts:
    """Per-query maxima and page facts the row of every candidate is normalised by."""

    best_bm25: float
    best_cosine: float
    best_coverage: float
    query_words: int
    best_score: float
    named: dict[int, float]
    named_docs: set[int]
    doc_count: dict[int, int]
    doc_best: dict[int, int]
    top_doc: int


def _facts(pool: Pool, ordered: list[Candidate]) -> _QueryFacts:
    head = ordered[:DEPTH]
    keyword = [c.bm25 for c in head if c.keyword_rank is not None]
    vector = [c.cosine for c in head if c.vector_rank is not None]
    named = {p.section_id: p.mass for p in pool.pages}
    named_docs = {pool.cands[sid].row["doc_id"] for sid in list(named) + pool.named
                  if sid in pool.cands and pool.cands[sid].row}
    doc_count: dict[int, int] = {}
    for c in head[:10]:
        doc_count[c.row["doc_id"]] = doc_count.get(c.row["doc_id"], 0) + 1
    doc_best: dict[int, int] = {}
    for i, c in enumerate(head):
        doc_best.setdefault(c.row["doc_id"], i)
    return _QueryFacts(
        best_bm25=min(keyword) if keyword else 0.0, best_cosine=max(vector) if vector else 0.0,
        best_coverage=max((c.coverage for c in head), default=0.0),
        query_words=max(1, max((c.covered for c in head), default=0), len(pool.query.terms)),
        best_score=max((c.score for c in head), default=0.0) or 1.0, named=named, named_docs=named_docs,
        doc_count=doc_count, doc_best=doc_best, top_doc=head[0].row["doc_id"] if head else -1)


def _row(c: Candidate, rank_no: int, pool: Pool, f: _QueryFacts) -> list[float]:
    row = c.row
    doc = row["doc_id"]
    places = [c.places.get(s) for s in _SIGNAL_NAMES]
    has_kw = c.keyword_rank is not None
    has_vec = c.vector_rank is not None
    raw = [
        c.bm25 / f.best_bm25 if has_kw and f.best_bm25 < 0 else 0.0,
        c.cosine if has_vec else 0.0,
        c.cosine - f.best_cosine if has_vec else -1.0,
        c.coverage,
        c.coverage - f.best_coverage,
        min(1.0, c.covered / f.query_words),
        float(pool.defined.get(c.section_id, 0)),
        float(c.exact),
        float(c.defines),
        float(c.section_id in f.named),
        f.named.get(c.section_id, 0.0),
        float(doc in f.named_docs),
    ]
    section = [
        math.log1p(max(0, row["tokens"])),
        float(bodyless(row.get("text", ""), pool.tuning.bodyless_chars)),
        float(row["ordinal"] == 0),
        math.log1p(max(0, row["ordinal"])),
        min(6, max(0, row["level"])) / 6.0,
        float(c.late > 0),
    ]
    page = [f.doc_count.get(doc, 0) / 10.0, _rr(f.doc_best.get(doc)), float(f.doc_best.get(doc) == rank_no),
            float(doc == f.top_doc)]
    siblings = [float(not c.places), c.section_evidence or 0.0]
    return ([float(p is not None) for p in places] + [_rr(p) for p in places] + raw
            + [_rr(rank_no), max(0.0, c.score) / f.best_score] + section + page + siblings)


def features(pool: Pool, ordered: list[Candidate]) -> np.ndarray:
    """float64 ``[min(len(ordered), DEPTH), len(FEATURES)]``: one row per candidate of
    ``ordered`` (the first stage's order, best first), columns ``FEATURES``."""
    if not ordered:
        return np.zeros((0, len(FEATURES)))
    f = _facts(pool, ordered)
    return np.array([_row(c, i, pool, f) for i, c in enumerate(ordered[:DEPTH])], dtype=np.float64)
