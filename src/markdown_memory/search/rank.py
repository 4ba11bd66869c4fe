"""Hybrid ranking: the signals of ``search/signals.py`` fused by RRF, then confidence.

* Signals (``SIGNALS``, in order): *keyword* (FTS5 BM25 over title + breadcrumb and body, the
  breadcrumb weighted ``Tuning.heading_weight`` times; query words also match other forms of
  themselves through stem-prefix terms, see ``query``), *vector* (cosine KNN over passage
  vectors, a section by its best passage), *coverage* (keyword candidates by the IDF share of
  distinct query words they hold, title and path included), *definition* (sections whose
  heading is a query identifier, ``search/definitions.py``), *exact* (sections holding a rare
  query identifier verbatim), *name* (the note whose title or alias the query is,
  ``search/names.py``) and *intent* (the best hit's page's sections playing the role a question
  asks for, ``search/intent.py``). Each adds ``weight / (rrf_k + place)`` (Cormack, Clarke and
  Buettcher, SIGIR 2009); the weights and every other number are in ``Tuning``.
* Filters (``store/scope.py``: tags, block kind, code language, path) restrict the candidates
  before fusion: the keyword query and the KNN's allowed passages.
* Demotions: a heading-only section sits ``empty_penalty`` places lower on the keyword list; a
  changelog entry sits ``changelog_penalty`` places lower on every list unless the query asks
  about versions or changes.
* After fusion: repeated texts are dropped and a parent joins two ranking subsections
  (``search/siblings.py``); then the second stage (``search/sections.py``) re-decides which
  of the best page's sections come first, by where the query's rare words are among the page's
  sections (and, switched off by default, token-level similarity from the embedder's token states);
  ``confidence`` (``search/confidence.py``) grades the result, "none"
  when the query names an identifier or a multi-word product name that no document contains.
* With the ranker setting ``learned`` (``config.ranker_choice``), the first 50 candidates of
  that order are re-ordered by the shipped pairwise model over their features
  (``search/features.py``, ``search/learned.py``) before confidence grades the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import ranker_choice
from ..store import Store, VectorCache
from ..store.scope import Scope
from ..text import WORD, fts_text, match_form
from .calibration import Estimate, Query, estimate
from .candidates import (
    Candidate,
    absent_names,
    coverage_weights,
    covered,
    hydrate,
    identifier_frequencies,
    keyword_candidates,
    vector_candidates,
)
from .confidence import Confidence, breadcrumb_names_query, confidence
from .cues import asks_about_changes, boost_identifier, cjk_share, pasted, release_notes, strong_identifier
from .learned import chosen_model, rerank
from .query import AnalysedQuery, stem_prefix
from .sections import EVIDENCE, TokenStates, choose_sections
from .siblings import unique_text, with_shared_parents
from .signals import SIGNALS, Pool, Signal, active, fuse, gather
from .tuning import ENGLISH_ONLY, TUNING, ModelTraits, Tuning

__all__ = ["Candidate", "Ranking", "absent_names", "asks_about_changes", "boost_identifier", "cjk_share",
           "coverage_weights", "hydrate", "identifier_frequencies", "keyword_candidates", "pasted", "rank",
           "release_notes", "strong_identifier", "vector_candidates"]


@dataclass
class Ranking:
    """``candidates`` best first; ``confidence`` "high" | "low" | "none"; ``absent``: the
    query's identifiers that no indexed section contains."""

    candidates: list[Candidate]
    confidence: Confidence
    absent: list[str] = field(default_factory=list)
    #: the calibrated probabilities (``search/calibration.py``), ``p_hits`` aligned with ``candidates``
    estimate: Estimate = field(default_factory=lambda: Estimate(0.0, 0.0, (), "none"))


@dataclass
class _Facts:
    """What ``_describe`` learned about the query: IDF ``weights`` and ``stems`` of its distinct
    tokens, its rare ``identifiers`` (match form), and the names no document holds (``absent``)."""

    weights: dict[str, float]
    stems: dict[str, str | None]
    identifiers: list[str]
    absent: list[str]


def rank(
    store: Store,
    query: AnalysedQuery,
    qvec: np.ndarray | None,
    *,
    top_k: int,
    path_prefix: Scope | str | None = None,
    vector_cache: VectorCache | None = None,
    model: ModelTraits = ENGLISH_ONLY,
    tuning: Tuning = TUNING,
    signals: tuple[Signal, ...] = SIGNALS,
    tokens: TokenStates | None = None,
    ranker: str | None = None,
) -> Ranking:
    """Gather, describe and fuse the candidates of ``query``; at most ``3 * top_k`` are
    returned. ``qvec``: the query vector (None: keyword-only); ``model``: the embedding model's
    traits (``tuning.model_traits``); ``vector_cache``: see ``store.VectorCache`` (None: KNN
    through vec0); ``tuning``: weights, bars and the signals switched off; ``signals``: the
    signal table (``signals.SIGNALS``; every name needs a weight in ``tuning``); ``tokens``: the
    embedder's token states for the second stage's ``token_match`` (None: left out); ``ranker``:
    ``rrf`` | ``learned`` (None: the setting, ``config.ranker_choice()``; ``learned`` re-orders the
    first ``features.DEPTH`` candidates, ``search/learned.py``). Raises QueryNotParsedError when
    FTS5 rejects the query, ConfigError for an unknown ranker setting."""
    if qvec is not None and not model.multilingual and cjk_share(query.text) >= tuning.cjk_vector_share:
        qvec = None  # an English-only model embeds CJK text as noise: rank by keywords alone
    pool = Pool(store, query, path_prefix, qvec, vector_cache, tuning)
    on = active(tuning, signals, also=tuple(e.name for e in EVIDENCE))
    gather(pool, on)
    facts = _describe(pool)
    fuse(pool, on)
    ordered = unique_text(sorted(pool.live(), key=lambda c: -c.score))
    ordered = with_shared_parents(store, ordered, tuning)
    if isinstance(path_prefix, Scope) and path_prefix.blocks:  # a joining parent may lack the block asked for
        inside = store.sections_in_scope([c.section_id for c in ordered], path_prefix)
        ordered = [c for c in ordered if c.section_id in inside]
    ordered = choose_sections(store, query.text, facts.weights, facts.stems, ordered, tuning,
                              tokens if qvec is not None else None)
    ranker = ranker or ranker_choice()
    ordered = rerank(pool, ordered, chosen_model(ranker))
    crumb = bool(ordered) and breadcrumb_names_query(ordered[0].row["base_path"], facts.stems)
    if facts.absent:
        rule: Confidence = "none"
    else:
        rule = confidence(ordered, has_vectors=qvec is not None, has_identifiers=bool(facts.identifiers),
                          min_covered=min(tuning.min_covered, len(facts.weights)), crumb_names_it=crumb,
                          model=model, tuning=tuning)
    # the hand-set rule is one input of the calibrated probability, which gives the label
    kept = ordered[: max(top_k, 1) * 3]
    est = estimate(kept, Query(qvec is not None, rule, bool(facts.absent), bool(facts.identifiers), crumb,
                               len(facts.weights)), ranker)
    return Ranking(kept, est.confidence, facts.absent, est)


def _describe(pool: Pool) -> _Facts:
    """Hydrate the candidates' rows and set their features: ``exact`` (holds a rare query
    identifier verbatim), ``coverage``/``covered`` (keyword candidates), ``late`` (release
    notes when the query is not about changes), ``defines``. Candidates whose row is gone stay
    without one (``Pool.live`` leaves them out)."""
    store, query, tuning = pool.store, pool.query, pool.tuning
    rows = hydrate(store, list(pool.cands))
    weights = coverage_weights(store, query)
    idf_mass = sum(weights.values()) or 1.0
    freq = identifier_frequencies(store, query) if query.identifiers else {}
    total = store.section_count() or 1
    rare_df = max(tuning.rare_min, int(total * tuning.rare_share))
    # A pasted log or stack trace (several lines) is full of incidental names (source locations,
    # timestamps, the user's own files): the ones no document holds are context, not the subject.
    absent = [] if pasted(query.text) else (
        [raw for raw, df in freq.items() if df == 0 and strong_identifier(raw)] + absent_names(store, query))
    quoted = set(query.quoted)
    idents = [match_form(raw) for raw, df in freq.items()
              if 0 < df <= rare_df and len(raw) >= 3 and (raw in quoted or boost_identifier(raw))]
    stems = {tok: stem_prefix(tok) for tok in weights}
    demote_notes = not asks_about_changes(query.text)
    for sid, c in pool.cands.items():
        row = rows.get(sid)
        if row is None:
            continue
        c.row = row
        haystack = match_form(f"{row['doc_title']}\n{row['base_path']}\n{row['text']}")
        if idents and any(i in haystack for i in idents):
            c.exact = True
        if c.keyword_rank is not None:
            # The file path counts too: questions name the project or page ("git-extras", "httpx").
            words = set(WORD.findall(fts_text(f"{row['file_path']}\n{haystack}")))
            hit = [weights[tok] for tok in covered(stems, words)]
            c.coverage = sum(hit) / idf_mass
            c.covered = len(hit)
        c.late = tuning.changelog_penalty if demote_notes and release_notes(row) else 0
        c.defines = sid in pool.defined or sid in pool.named
    return _Facts(weights, stems, idents, absent)
