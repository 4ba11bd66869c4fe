"""Candidates of one search: the sections some signal proposed, with the features ranking and
confidence read (``Candidate``), and the store look-ups that propose and describe them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..store import KeywordMatch, SectionRow, Store, VectorCache, knn
from ..store.scope import Scope
from ..text import WORD, is_cjk, match_form
from .query import AnalysedQuery
from .tuning import TUNING, Tuning


@dataclass
class Candidate:
    """A section being ranked. ``keyword_rank`` / ``vector_rank``: 0-based place on the BM25 /
    KNN list (None: not on it); ``bm25`` as FTS5 reports it (lower is better); ``cosine`` of
    its ``best_passage``; ``coverage``: share (0-1) of the query's IDF mass it holds, over
    ``covered`` distinct query words; ``exact``: holds a rare query identifier verbatim;
    ``defines``: its heading defines a query identifier, or its document is the note the query
    names; ``places``/``section_evidence``: what the learned ranker reads (``search/features.py``); ``late``: places it sits lower on every list (release notes); ``score``: fused RRF
    score so far; ``row``: its section row (empty until hydrated)."""

    section_id: int
    keyword_rank: int | None = None
    vector_rank: int | None = None
    exact: bool = False
    bm25: float = 0.0
    cosine: float = 0.0
    best_passage: int | None = None
    coverage: float = 0.0
    covered: int = 0
    defines: bool = False
    late: int = 0
    score: float = 0.0
    row: SectionRow = field(default_factory=dict)  # type: ignore[assignment]
    #: Place on each signal's list it was fused from, by signal name (``signals.fuse``); a
    #: candidate a post-fusion step added (a joining parent or alternative) has none.
    places: dict[str, int] = field(default_factory=dict)
    #: Second-stage evidence (``sections.choose_sections``): 0-1 among its page's sections
    #: (None: not compared).
    section_evidence: float | None = None

    @property
    def matched_by(self) -> list[str]:
        out = []
        if self.exact:
            out.append("exact")
        if self.keyword_rank is not None:
            out.append("keyword")
        if self.vector_rank is not None:
            out.append("vector")
        return out


def keyword_candidates(store: Store, query: AnalysedQuery, path_prefix: Scope | str | None, limit: int | None = None,
                       tuning: Tuning = TUNING) -> list[KeywordMatch]:
    """``[(section_id, bm25)]`` best first (bm25 as FTS5 reports it: lower is better). Raises
    QueryNotParsedError when FTS5 rejects the query's match expression."""
    limit = limit or tuning.candidates
    expr = query.match_expression()
    if expr is None:
        return []
    return store.keyword_matches(expr, path_prefix, limit, tuning.heading_weight)


def vector_candidates(store: Store, qvec: np.ndarray, path_prefix: Scope | str | None, limit: int | None = None,
                      vector_cache: VectorCache | None = None, tuning: Tuning = TUNING) -> list[tuple[int, int, float]]:
    """``[(section_id, passage_id, cosine)]`` best first, one entry per section (KNN through
    ``vector_cache`` when given, see ``store.vectors``), among the passages inside the filters
    ``path_prefix`` (a ``store.scope.Scope`` or a path prefix) only."""
    if not (store.vec_available and store.has_vec_tables()):
        return []
    limit = limit or tuning.candidates
    k = limit * tuning.vector_fanout
    rows = knn(store, qvec, k, vector_cache, store.allowed_passages(path_prefix))
    if not rows:
        return []
    ids = [r[0] for r in rows]
    dist = {r[0]: float(r[1]) for r in rows}
    owner = store.passage_sections(ids, path_prefix)
    out: list[tuple[int, int, float]] = []
    taken: set[int] = set()
    for pid in ids:
        sid = owner.get(pid)
        if sid is None or sid in taken:
            continue
        taken.add(sid)
        out.append((sid, pid, 1.0 - dist[pid]))
        if len(out) >= limit:
            break
    return out


def hydrate(store: Store, section_ids: list[int]) -> dict[int, SectionRow]:
    """One query: section rows (with document path and title) by id."""
    return store.section_rows(section_ids)


def _idf(store: Store, terms: list[str]) -> tuple[dict[str, float], dict[str, int]]:
    """BM25-style IDF and section frequency per single token, from the fts5vocab row table."""
    total = store.section_count() or 1
    dfs = store.term_frequencies(set(terms))
    idf = {term: math.log(1 + (total - df + 0.5) / (df + 0.5)) for term, df in dfs.items()}
    return idf, dfs


def coverage_weights(store: Store, query: AnalysedQuery) -> dict[str, float]:
    """IDF weight of each distinct query token for the coverage gate. A CJK bigram that no
    section contains is dropped: it usually straddles two words of the question (``法吗``), so it
    says nothing about whether the docs cover the topic; an absent Latin word does count."""
    tokens = list(dict.fromkeys(tok for t in query.terms if not t.prefix for tok in t.tokens))
    if not tokens:
        return {}
    idf, dfs = _idf(store, tokens)
    return {tok: idf[tok] for tok in tokens if dfs[tok] > 0 or not is_cjk(tok)}


def covered(stems: dict[str, str | None], words: set[str]) -> list[str]:
    """The query tokens (``stems``: token -> ``stem_prefix(token)``, computed once per query)
    covered by a text of ``words``: the text holds the token or another form of it (a word
    starting with its stem). The stem test is one substring search over the words joined by
    NUL (no word holds one), not a loop over the words: ~40% of a search's ranking time."""
    joined: str | None = None
    out = []
    for token, stem in stems.items():
        if token in words:
            out.append(token)
        elif stem is not None:
            if joined is None:
                joined = "\x00" + "\x00".join(words)
            if "\x00" + stem in joined:
                out.append(token)
    return out


def identifier_frequencies(store: Store, query: AnalysedQuery) -> dict[str, int]:
    """Number of sections whose FTS text holds each identifier term of the query as a phrase:
    ``{raw identifier: section count}`` (0 = no document contains it)."""
    out: dict[str, int] = {}
    for term in query.terms:
        if not term.identifier or term.raw in out:
            continue
        out[term.raw] = store.match_count(term.fts())
    return out


def absent_names(store: Store, query: AnalysedQuery) -> list[str]:
    """The query's multi-word proper names (``query.names``) that no section holds as a phrase:
    a question about a product the docs never mention has no answer here."""
    out = []
    for name in query.names:
        tokens = WORD.findall(match_form(name))
        if len(tokens) < 2:
            continue
        phrase = '"' + " ".join(tokens) + '"'
        if not store.has_match(phrase):
            out.append(name)
    return out
