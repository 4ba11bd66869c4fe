"""Hybrid ranking: FTS5 BM25 over sections + vector KNN over passages, fused by RRF.

* Keyword side: BM25 over (title + breadcrumb, body) with the breadcrumb column weighted
  ``HEADING_WEIGHT`` times the body; query words also match other forms of themselves through
  stem-prefix terms (see ``query``).
* Vector side: cosine KNN over passage vectors; a section scores by its best passage.
* Fusion: reciprocal rank fusion, ``sum(weight / (RRF_K + rank))`` with ``RRF_K = 60`` (Cormack,
  Clarke and Buettcher, SIGIR 2009) over up to four lists: keyword, vector, *coverage* (keyword
  candidates ordered by the IDF share of distinct query words they hold, title and path
  included; skipped for CJK-heavy queries) and *exact* (sections holding a rare identifier of
  the query verbatim, counted twice, so an exact hit beats semantic look-alikes).
* Names: a query that is exactly a document's title or alias adds a list of that document's
  first section, weighted to rank it first (``search/names.py``).
* Filters (``store/scope.py``: tags, block kind, code language, path) restrict both candidate
  lists before fusion: the keyword query and the KNN's allowed passages.
* Intent: a question asking for a section role (a fix, the impact, how to investigate, what
  something means) adds a list of the best hit's page's sections playing it (``search/intent.py``).
* Demotions: a heading-only section sits ``EMPTY_PENALTY`` places lower on the keyword list; a
  changelog entry sits ``CHANGELOG_PENALTY`` places lower on every list unless the query asks
  about versions or changes.
* Confidence: "high" when the best hits include an exact identifier match or clear both bars,
  "low" when they clear one, "none" when neither, or when the query names an identifier or a
  multi-word product name that no document contains (the caller says nothing confident was
  found and names what is absent).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..store import KeywordMatch, SectionRow, Store, VectorCache, knn
from ..store.scope import Scope
from ..text import WORD, fts_text, is_cjk, match_form
from .definitions import definitions
from .intent import asked_roles, plays_role
from .names import NAME_WEIGHT, named_sections
from .query import AnalysedQuery, stem_prefix

RRF_K = 60
#: How many top candidates are looked at for subsections sharing a parent.
SIBLING_WINDOW = 8
#: A parent with at most this many subsections, two of which rank, is a list of alternatives:
#: its other subsections join the ranking after them.
SIBLING_MAX = 4
EXACT_WEIGHT = 2.0
#: Weight of the coverage list (keyword candidates ordered by the IDF share of distinct query
#: words they hold, in any form): BM25 favours repetition and short sections, coverage favours
#: the section that holds *all* the question's rare words.
COVERAGE_WEIGHT = 0.5
KEYWORD_WEIGHT = 1.0
#: Weight of an intent list (search/intent.py): e.g. remedy sections when the question asks for a fix.
INTENT_WEIGHT = 1.0
#: ...applied within the documents of this many best fused candidates. 3 let a weak page's
#: "Troubleshooting" section overtake a FAQ entry that answered the question word for word;
#: 1 gives the same dev-set and runbook figures (README "How search ranks").
INTENT_DOCS = 1
VECTOR_WEIGHT = 1.0
HEADING_WEIGHT = 3.0
CANDIDATES = 60
VECTOR_FANOUT = 3
VECTOR_CANDIDATES = 60
#: Cosine similarity a passage must reach for the vector side to count as confident.
#: Calibrated on the dev set with all-MiniLM-L6-v2 (see README "How search ranks").
VECTOR_BAR = {"minilm": 0.5, "embeddinggemma": 0.5}
DEFAULT_VECTOR_BAR = 0.5
#: The bar for an English-only model when no word of the query occurs in any section (no keyword
#: candidate at all): vectors alone are weak evidence then, so they must clear the bar plainly, not
#: by a rounding error (a made-up name scored 0.449-0.452 against an unrelated note). 0.55 keeps
#: the dev set's answerable queries (top cosine: p25 0.57, median 0.68), all of which also have
#: keyword candidates. Multilingual models keep VECTOR_BAR: a query in another language than the
#: docs has no keyword candidate by nature.
NO_KEYWORD_VECTOR_BAR = 0.55
#: Share of the query's IDF mass a keyword hit must cover to count as confident.
KEYWORD_COVERAGE_BAR = 0.3
#: ...and hold at least this many distinct query words (one rare word of three is a stray hit).
MIN_COVERED = 2
#: Presets whose vectors understand CJK text; for the others a query whose letters are at least
#: CJK_VECTOR_SHARE CJK is ranked by keywords alone (all-MiniLM-L6-v2 is English-only).
MULTILINGUAL = frozenset({"embeddinggemma", "multilingual-e5"})
CJK_VECTOR_SHARE = 0.3

_STRONG = re.compile(r"\w_\w|\w(?:\.|::)\w|^--?\w|[a-z][A-Z]|\w\(\)")
#: An identifier found in more than this share of sections is too common to earn an exact-match
#: boost (``git-extras`` in the git-extras docs, ``README``), but never less than RARE_MIN.
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
#: A section with fewer body characters than this below its heading line is "bodyless" (empty);
#: its keyword rank is pushed down by EMPTY_PENALTY places.
BODYLESS_CHARS = 1
EMPTY_PENALTY = 20
_CAPS = re.compile(r"^[A-Z][A-Z0-9]{4,}$")  # ECONNRESET, SIGTERM; not JNI, API
#: Release notes: a section under a version heading ("6.5.0 / 2022-10-06", "0.14.0 (August
#: 2020) > Fixed") in a file named like a changelog. They mention every option and config key in
#: passing, so unless the query asks about versions or changes they rank CHANGELOG_PENALTY
#: places lower on each list and after the documenting sections among exact matches.
_CHANGELOG_FILE = re.compile(r"(?i)(^|/)(change[-_ ]?log|changes|history|news|release[-_ ]?notes|releases)(\.[^/]*)?$")
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?![\w.])")
_CHANGE_WORDS = re.compile(r"(?i)\b(change ?log|changes?|changed|release[sd]?|version|versions|history|added|removed|deprecated|fixed|upgrade)\b")
CHANGELOG_PENALTY = 10
RARE_SHARE = 0.002
RARE_MIN = 12
#: Weight of the list of sections that define a query identifier (``search/definitions.py``),
#: like the exact list: a reference entry outranks the many pages that only mention it.
DEFINITION_WEIGHT = EXACT_WEIGHT


@dataclass
class Candidate:
    section_id: int
    keyword_rank: int | None = None
    vector_rank: int | None = None
    exact: bool = False
    bm25: float = 0.0
    cosine: float = 0.0
    best_passage: int | None = None
    coverage: float = 0.0
    covered: int = 0  # distinct query words (weighted for coverage) the section holds
    defines: bool = False  # its heading is an identifier of the query (see ``defines``)
    late: int = 0  # places this candidate is pushed down on every list (release notes)
    score: float = 0.0
    row: SectionRow = field(default_factory=dict)  # type: ignore[assignment]

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


def keyword_candidates(store: Store, query: AnalysedQuery, path_prefix: Scope | str | None, limit: int | None = None) -> list[KeywordMatch]:
    """``[(section_id, bm25)]`` best first (bm25 as FTS5 reports it: lower is better). Raises
    QueryNotParsedError when FTS5 rejects the query's match expression."""
    limit = limit or CANDIDATES
    expr = query.match_expression()
    if expr is None:
        return []
    return store.keyword_matches(expr, path_prefix, limit, HEADING_WEIGHT)


def vector_candidates(store: Store, qvec: np.ndarray, path_prefix: Scope | str | None, limit: int | None = None,
                      vector_cache: VectorCache | None = None) -> list[tuple[int, int, float]]:
    """``[(section_id, passage_id, cosine)]`` best first, one entry per section (KNN through
    ``vector_cache`` when given, see ``store.vectors``), among the passages inside the filters
    ``path_prefix`` (a ``store.scope.Scope`` or a path prefix) only."""
    if not (store.vec_available and store.has_vec_tables()):
        return []
    limit = limit or CANDIDATES
    k = limit * VECTOR_FANOUT
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


def _covered(stems: dict[str, str | None], words: set[str]) -> list[str]:
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


def strong_identifier(raw: str) -> bool:
    """An identifier that cannot be an ordinary word: it has ``_``, a dot or ``::`` between
    word characters, a leading ``--``, a camelCase hump, or digits mixed into capitals."""
    return bool(_STRONG.search(raw))


def boost_identifier(raw: str) -> bool:
    """Identifiers whose verbatim presence earns the exact-match list: strong ones (see
    ``strong_identifier``) and ALL-CAPS names (``ECONNRESET``, ``HTTP2``). Kebab-case words and
    slash-joined words (``rate-limit``, ``watch/trace``) are left to BM25: they are often prose."""
    return strong_identifier(raw) or bool(_CAPS.match(raw))


def pasted(text: str) -> bool:
    """True for a query of several non-blank lines: text pasted from a terminal or a log."""
    return sum(1 for line in text.splitlines() if line.strip()) > 1


def cjk_share(text: str) -> float:
    """Share of CJK characters among the letters and digits of ``text`` (0.0 - 1.0)."""
    chars = [ch for ch in text if ch.isalnum()]
    return sum(1 for ch in chars if is_cjk(ch)) / len(chars) if chars else 0.0


def _bodyless(text: str) -> bool:
    """True for a section that is (almost) only its heading: it cannot answer anything itself,
    though its short length makes BM25 love it when the breadcrumb matches."""
    body = [ln for ln in text.split("\n")[1:] if ln.strip() and not _SETEXT.match(ln)]
    return sum(len(ln.strip()) for ln in body) < BODYLESS_CHARS


def release_notes(row: Mapping[str, Any]) -> bool:
    """True for a changelog entry: a changelog-named file and a version number in the breadcrumb."""
    return bool(_CHANGELOG_FILE.search(row["file_path"]) and _VERSION.search(row["heading_path"]))


def asks_about_changes(text: str) -> bool:
    """True when the query names a version number or asks what changed / was released."""
    return bool(_VERSION.search(text) or _CHANGE_WORDS.search(text))


def hydrate(store: Store, section_ids: list[int]) -> dict[int, SectionRow]:
    """One query: section rows (with document path and title) by id."""
    return store.section_rows(section_ids)


@dataclass
class Ranking:
    """``candidates`` best first; ``confidence`` "high" | "low" | "none"; ``absent``: the
    query's identifiers that no indexed section contains."""

    candidates: list[Candidate]
    confidence: str
    absent: list[str] = field(default_factory=list)


def rank(
    store: Store,
    query: AnalysedQuery,
    qvec: np.ndarray | None,
    *,
    embedder_name: str | None,
    top_k: int,
    path_prefix: Scope | str | None = None,
    vector_cache: VectorCache | None = None,
) -> Ranking:
    """Fuse the two rankings; at most ``3 * top_k`` candidates are returned. ``vector_cache``:
    see ``store.VectorCache`` (None: KNN through vec0). Raises QueryNotParsedError when FTS5
    rejects the query."""
    cands: dict[int, Candidate] = {}
    for rank_no, (sid, bm) in enumerate(keyword_candidates(store, query, path_prefix)):
        cands.setdefault(sid, Candidate(sid)).keyword_rank = rank_no
        cands[sid].bm25 = bm
    if qvec is not None and embedder_name not in MULTILINGUAL and cjk_share(query.text) >= CJK_VECTOR_SHARE:
        qvec = None  # an English-only model embeds CJK text as noise: rank by keywords alone
    if qvec is not None:
        for rank_no, (sid, pid, cos) in enumerate(vector_candidates(store, qvec, path_prefix, VECTOR_CANDIDATES, vector_cache)):
            c = cands.setdefault(sid, Candidate(sid))
            c.vector_rank = rank_no
            c.cosine = cos
            c.best_passage = pid
    defined = definitions(store, query, path_prefix) if query.identifiers else {}
    for sid in defined:
        cands.setdefault(sid, Candidate(sid))
    named = named_sections(store, query, path_prefix)  # the query is a note's title or alias
    for sid in named:
        cands.setdefault(sid, Candidate(sid))
    rows = hydrate(store, list(cands))
    weights = coverage_weights(store, query)
    idf_mass = sum(weights.values()) or 1.0
    freq = identifier_frequencies(store, query) if query.identifiers else {}
    total = store.section_count() or 1
    rare_df = max(RARE_MIN, int(total * RARE_SHARE))
    # A pasted log or stack trace (several lines) is full of incidental names (source locations,
    # timestamps, the user's own files): the ones no document holds are context, not the subject.
    absent = [] if pasted(query.text) else (
        [raw for raw, df in freq.items() if df == 0 and strong_identifier(raw)] + absent_names(store, query))
    quoted = set(query.quoted)
    idents = [match_form(raw) for raw, df in freq.items()
              if 0 < df <= rare_df and len(raw) >= 3 and (raw in quoted or boost_identifier(raw))]
    exact_list: list[int] = []
    stems = {tok: stem_prefix(tok) for tok in weights}
    for sid, c in cands.items():
        row = rows.get(sid)
        if row is None:
            continue
        c.row = row
        haystack = match_form(f"{row['doc_title']}\n{row['base_path']}\n{row['text']}")
        if idents and any(i in haystack for i in idents):
            c.exact = True
            exact_list.append(sid)
        if c.keyword_rank is not None:
            # The file path counts too: questions name the project or page ("git-extras", "httpx").
            words = set(WORD.findall(fts_text(f"{row['file_path']}\n{haystack}")))
            hit = [weights[tok] for tok in _covered(stems, words)]
            c.coverage = sum(hit) / idf_mass
            c.covered = len(hit)

    demote_notes = not asks_about_changes(query.text)
    for c in cands.values():
        if not c.row:
            continue
        score = 0.0
        late = CHANGELOG_PENALTY if demote_notes and release_notes(c.row) else 0
        c.late = late
        if c.keyword_rank is not None:
            penalty = EMPTY_PENALTY if _bodyless(c.row.get("text", "")) else 0
            score += KEYWORD_WEIGHT / (RRF_K + c.keyword_rank + penalty + late)
        if c.vector_rank is not None:
            score += VECTOR_WEIGHT / (RRF_K + c.vector_rank + late)
        c.score = score
    # CJK questions are cut into overlapping bigrams, half of which straddle two words: their
    # coverage measures little, so CJK-heavy queries skip this list.
    covered = [] if cjk_share(query.text) >= CJK_VECTOR_SHARE else sorted(
        (c for c in cands.values() if c.keyword_rank is not None and c.row), key=lambda c: (-c.coverage, c.keyword_rank))
    for i, c in enumerate(covered):
        c.score += COVERAGE_WEIGHT / (RRF_K + i + c.late)
    # Sections whose heading is a query identifier (its definition) form a list of their own,
    # reference-list definitions first, then by fused score.
    for i, sid in enumerate(sorted((s for s in defined if cands[s].row), key=lambda s: (-defined[s], -cands[s].score))):
        cands[sid].score += DEFINITION_WEIGHT / (RRF_K + i + cands[sid].late)
        cands[sid].defines = True
    # Sections holding a rare identifier verbatim form a third list, ordered by their fused
    # score, that counts twice: an exact hit beats semantic look-alikes.
    exact_list.sort(key=lambda sid: (cands[sid].late, -cands[sid].score))
    for i, sid in enumerate(exact_list):
        cands[sid].score += EXACT_WEIGHT / (RRF_K + i + cands[sid].late)
    for i, sid in enumerate(s for s in named if cands[s].row):  # search/names.py
        cands[sid].score += NAME_WEIGHT / (RRF_K + i)
        cands[sid].defines = True  # the query names this note: as strong as a definition
    # A question asking for a section role (how to fix, what the impact is, how to investigate):
    # within the document of the best candidate (all lists fused; INTENT_DOCS), the sections
    # playing that role ("Mitigation", "Impact", "Diagnosis") form a list of their own, ordered
    # by fused score. The intent picks the section of the page the question is about; it never
    # lifts another page's section over a direct answer.
    roles = asked_roles(query.text)
    if roles:
        best_first = sorted((c for c in cands.values() if c.row), key=lambda c: -c.score)
        pages = {c.row["doc_id"] for c in best_first[:INTENT_DOCS]}
        for role in roles:
            playing = [c for c in best_first if c.row["doc_id"] in pages and plays_role(role, c.row["base_path"])]
            for i, c in enumerate(playing):
                c.score += INTENT_WEIGHT / (RRF_K + i + c.late)
    ordered = _unique_text(sorted((c for c in cands.values() if c.row), key=lambda c: -c.score))
    ordered = _with_shared_parents(store, ordered)
    if isinstance(path_prefix, Scope) and path_prefix.blocks:  # a joining parent may lack the block asked for
        inside = store.sections_in_scope([c.section_id for c in ordered], path_prefix)
        ordered = [c for c in ordered if c.section_id in inside]
    # a short query that the top hit's headings name in full ("caching", "what does the hook
    # print" for "The prompt hook > What it reads and prints")
    crumb_names_it = bool(ordered and weights) and len(
        _covered(stems, set(WORD.findall(fts_text(ordered[0].row["base_path"]))))) == len(weights)
    confidence = "none" if absent else _confidence(ordered, embedder_name, qvec is not None, bool(idents),
                                                          min(MIN_COVERED, len(weights)), crumb_names_it)
    return Ranking(ordered[: max(top_k, 1) * 3], confidence, absent)


def _with_shared_parents(store: Store, ordered: list[Candidate]) -> list[Candidate]:
    """When two or more subsections of one section rank in the top ``SIBLING_WINDOW``, the
    question is probably about what they have in common, which their parent's own text (its
    introduction) states: the parent joins the ranking just below the second of them, unless it
    is already there or has no text of its own."""
    top = ordered[:SIBLING_WINDOW]
    present = {(c.row["doc_id"], c.row["ordinal"]): c for c in ordered}
    groups: dict[tuple[int, int], list[Candidate]] = {}
    for c in top:
        parent_ordinal = c.row.get("parent_ordinal")
        if parent_ordinal is not None:
            groups.setdefault((c.row["doc_id"], parent_ordinal), []).append(c)
    added: list[Candidate] = []
    for (doc_id, ordinal), kids in groups.items():
        if len(kids) < 2:
            continue
        known = present.get((doc_id, ordinal))
        if known is not None:
            if not _bodyless(known.row["text"]):
                known.score = max(known.score, kids[1].score * 0.999)
                added.append(known)
            continue
        parent_id = store.section_id_at(doc_id, ordinal)
        if parent_id is None:
            continue
        parent_row = hydrate(store, [parent_id]).get(parent_id)
        if parent_row is None or _bodyless(parent_row["text"]):
            continue
        parent = Candidate(parent_id, row=parent_row)
        parent.score = kids[1].score * 0.999
        parent.coverage = max(k.coverage for k in kids)
        added.append(parent)
    # A short list of alternatives ("using an SSH tunnel", "using rclone authorize", "copying the
    # config file") whose parent and two of them rank: the rest answer the same question in
    # another way, so they follow the second of them, in file order (up to SIBLING_MAX children
    # under the parent).
    window = {(c.row["doc_id"], c.row["ordinal"]) for c in top}
    ranked = {c.section_id: c for c in ordered}
    for (doc_id, ordinal), kids in groups.items():
        if len(kids) < 2 or (doc_id, ordinal) not in window:
            continue  # the question is about the parent's topic only when the parent ranks too
        listed = store.children([(doc_id, ordinal)]).get((doc_id, ordinal), [])
        if len(listed) > SIBLING_MAX:
            continue
        first_two = {k.section_id for k in kids[:2]}
        others = [sid for sid, _t in listed if sid not in first_two]
        rows = hydrate(store, [sid for sid in others if sid not in ranked])
        for i, sid in enumerate(others):
            floor = kids[1].score * (0.998 - 0.001 * i)
            if sid in ranked:
                ranked[sid].score = max(ranked[sid].score, floor)
                continue
            row = rows.get(sid)
            if row is None or _bodyless(row["text"]):
                continue
            sibling = Candidate(sid, row=row)
            sibling.score = floor
            sibling.coverage = min(k.coverage for k in kids)
            added.append(sibling)
    return sorted({id(c): c for c in ordered + added}.values(), key=lambda c: -c.score)


def _unique_text(ordered: list[Candidate]) -> list[Candidate]:
    """Drop a candidate whose section text is identical to a better one's: generated reference
    pages repeat whole option blocks ("Copy Options" in every copy-like command), and seven
    copies of one text would fill the answer with a single section."""
    seen: set[str] = set()
    out = []
    for c in ordered:
        key = c.row["text"].strip()
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out


def _confidence(ordered: list[Candidate], embedder_name: str | None, has_vectors: bool, has_idents: bool,
                min_covered: int = 1, crumb_names_it: bool = False) -> str:
    """"high" when the top hit is likely the answer: it defines or holds verbatim a rare query
    identifier, or it tops both the keyword and the vector list, and the best hits clear the
    keyword and vector bars. "low" when the best hits clear both bars (or, keyword-only, the
    keyword bar) without such a top hit, or when the vectors alone clear NO_KEYWORD_VECTOR_BAR
    (a paraphrase sharing no word with its answer), or when ``crumb_names_it``: the top hit's breadcrumb
    holds every query word (a short query naming a section). "none" otherwise: with vectors at hand,
    keyword evidence alone, or vectors just over the usual bar, is what an unanswerable question
    on the docs' own topic also gets (its words name the product; its embedding lands near the
    product's pages)."""
    if not ordered:
        return "none"
    bar = VECTOR_BAR.get(embedder_name or "", DEFAULT_VECTOR_BAR)
    if embedder_name not in MULTILINGUAL and not any(c.keyword_rank is not None for c in ordered):
        bar = max(bar, NO_KEYWORD_VECTOR_BAR)
    best = ordered[:5]
    top = best[0]
    if has_idents and not any(c.exact or c.defines for c in ordered):
        # The query names an identifier no candidate contains: look-alikes are not answers.
        keyword_ok = False
    else:
        keyword_ok = any(c.coverage >= KEYWORD_COVERAGE_BAR and c.covered >= min_covered for c in best)
    vector_ok = has_vectors and any(c.cosine >= bar for c in best)
    strong_top = top.exact or top.defines
    if strong_top and (keyword_ok or vector_ok):
        return "high"
    if keyword_ok and vector_ok:
        agreed = top.keyword_rank == 0 and top.vector_rank == 0
        return "high" if agreed else "low"
    if keyword_ok and not has_vectors:
        return "low"
    if vector_ok and (embedder_name in MULTILINGUAL or any(c.cosine >= NO_KEYWORD_VECTOR_BAR for c in best)):
        # a question in another language than the docs has no keyword evidence by nature; a
        # paraphrase ("how long does the client wait" for "timeouts") may share no word either
        return "low"
    if strong_top or crumb_names_it:  # keyword evidence no unanswerable question on the topic gets
        return "low"
    return "none"
