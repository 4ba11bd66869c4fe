"""The ranking signals: one table (``SIGNALS``) of named functions, fused in one place (``fuse``).

Each signal reads the query and the candidates (``Pool``) and returns a ranked list of
``(candidate, place)`` best first, where ``place`` is the candidate's 0-based rank on that list
plus the places it is pushed down; ``fuse`` adds ``weight / (rrf_k + place)`` to each listed
candidate's score (reciprocal rank fusion), with the weight of that signal's name in ``Tuning``.
A signal may also *gather*: propose sections as candidates before they are described.

Signals run in table order, and a later one may order its list by the score fused so far
(definitions, exact matches and intent do). Adding a signal: one function here, one
``Signal(...)`` line in ``SIGNALS``, one weight in ``tuning._WEIGHTS``. ``Tuning.disabled``
switches signals off by name (not gathered, not fused) for ablations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..store import Store, VectorCache
from ..store.scope import Scope
from .candidates import Candidate, keyword_candidates, vector_candidates
from .cues import bodyless, cjk_share
from .definitions import definitions
from .intent import asked_roles, plays_role
from .names import named_sections
from .pages import NamedPage, named_pages
from .query import AnalysedQuery
from .tuning import Tuning

#: A signal's list: ``(candidate, place)`` best first, place >= 0 (rank plus push-down places).
Listed = list[tuple[Candidate, int]]


@dataclass
class Pool:
    """Everything the signals of one search read: the query, its filters (``scope``), the query
    vector (None: keyword-only), the candidates by section id in the order they were proposed,
    and per-query facts set before fusion: ``defined`` (section id -> definition strength,
    ``search/definitions.py``), ``named`` (first sections of the notes the query names),
    ``pages`` (the pages whose name the query holds, ``search/pages.py``)."""

    store: Store
    query: AnalysedQuery
    scope: Scope | str | None
    qvec: np.ndarray | None
    vector_cache: VectorCache | None
    tuning: Tuning
    cands: dict[int, Candidate] = field(default_factory=dict)
    defined: dict[int, int] = field(default_factory=dict)
    named: list[int] = field(default_factory=list)
    pages: list[NamedPage] = field(default_factory=list)

    def add(self, section_id: int) -> Candidate:
        """The candidate for ``section_id``, created on first proposal."""
        return self.cands.setdefault(section_id, Candidate(section_id))

    def live(self) -> list[Candidate]:
        """The candidates whose section row was found, in proposal order."""
        return [c for c in self.cands.values() if c.row]


@dataclass(frozen=True)
class Signal:
    """A named signal: ``ranked`` gives its list (see the module doc); ``gather``, when set,
    proposes candidates first."""

    name: str
    ranked: Callable[[Pool], Listed]
    gather: Callable[[Pool], None] | None = None


def _gather_keyword(pool: Pool) -> None:
    for rank_no, (sid, bm) in enumerate(keyword_candidates(pool.store, pool.query, pool.scope, tuning=pool.tuning)):
        c = pool.add(sid)
        c.keyword_rank = rank_no
        c.bm25 = bm


def keyword(pool: Pool) -> Listed:
    """BM25 order; a heading-only section sits ``empty_penalty`` places lower (short enough for
    BM25 to love it, it answers nothing itself)."""
    t = pool.tuning
    return [(c, c.keyword_rank + (t.empty_penalty if bodyless(c.row.get("text", ""), t.bodyless_chars) else 0) + c.late)
            for c in pool.live() if c.keyword_rank is not None]


def _gather_vector(pool: Pool) -> None:
    if pool.qvec is None:
        return
    found = vector_candidates(pool.store, pool.qvec, pool.scope, pool.tuning.vector_candidates, pool.vector_cache,
                              tuning=pool.tuning)
    for rank_no, (sid, pid, cos) in enumerate(found):
        c = pool.add(sid)
        c.vector_rank = rank_no
        c.cosine = cos
        c.best_passage = pid


def vector(pool: Pool) -> Listed:
    """KNN order over passage vectors (a section by its best passage)."""
    return [(c, c.vector_rank + c.late) for c in pool.live() if c.vector_rank is not None]


def coverage(pool: Pool) -> Listed:
    """Keyword candidates by the IDF share of distinct query words they hold. CJK questions are
    cut into overlapping bigrams, half of which straddle two words: their coverage measures
    little, so CJK-heavy queries have no coverage list."""
    if cjk_share(pool.query.text) >= pool.tuning.cjk_vector_share:
        return []
    held = sorted((c for c in pool.live() if c.keyword_rank is not None), key=lambda c: (-c.coverage, c.keyword_rank))
    return [(c, i + c.late) for i, c in enumerate(held)]


def _gather_definitions(pool: Pool) -> None:
    pool.defined = definitions(pool.store, pool.query, pool.scope) if pool.query.identifiers else {}
    for sid in pool.defined:
        pool.add(sid)


def definition(pool: Pool) -> Listed:
    """Sections whose heading is a query identifier (its definition): reference-list
    definitions first, then by fused score."""
    cands, defined = pool.cands, pool.defined
    order = sorted((s for s in defined if cands[s].row), key=lambda s: (-defined[s], -cands[s].score))
    return [(cands[sid], i + cands[sid].late) for i, sid in enumerate(order)]


def exact(pool: Pool) -> Listed:
    """Sections holding a rare query identifier verbatim, by fused score (release notes last)."""
    held = sorted((c for c in pool.live() if c.exact), key=lambda c: (c.late, -c.score))
    return [(c, i + c.late) for i, c in enumerate(held)]


def _gather_names(pool: Pool) -> None:
    pool.named = named_sections(pool.store, pool.query, pool.scope)  # the query is a note's title or alias
    for sid in pool.named:
        pool.add(sid)


def name(pool: Pool) -> Listed:
    """The first section of the note whose title or alias the whole query is (``search/names.py``)."""
    return [(pool.cands[sid], i) for i, sid in enumerate(s for s in pool.named if pool.cands[s].row)]


def _gather_pages(pool: Pool) -> None:
    pool.pages = named_pages(pool.store, pool.query, pool.scope, pool.tuning)
    for page in pool.pages:
        pool.add(page.section_id)


def page(pool: Pool) -> Listed:
    """The lead sections of the pages whose name the query holds (``search/pages.py``): "the page
    about X" finds the page's start, and a page named by the query outranks subsections of other
    pages that merely contain its words. A page with a section holding more of the question than
    its lead (its words outside the page's name: "does the Spring Boot starter switch off
    commands", "X is firing, what should I do?") is asked about that section: which one is left to
    the other signals."""
    best: dict[int, float] = {}
    for c in pool.live():
        best[c.row["doc_id"]] = max(best.get(c.row["doc_id"], 0.0), c.coverage)
    listed = [pool.cands[p.section_id] for p in pool.pages if pool.cands[p.section_id].row]
    listed = [c for c in listed if c.coverage >= best[c.row["doc_id"]]]
    return [(c, i + c.late) for i, c in enumerate(listed)]


def intent(pool: Pool) -> Listed:
    """A question asking for a section role (how to fix, what the impact is, how to
    investigate): within the document of the best candidate so far (``intent_docs``), the
    sections playing that role ("Mitigation", "Impact", "Diagnosis"), by fused score, one list
    per role asked. It picks the section of the page the question is about; it never lifts
    another page's section over a direct answer."""
    roles = asked_roles(pool.query.text)
    if not roles:
        return []
    best_first = sorted(pool.live(), key=lambda c: -c.score)
    pages = {c.row["doc_id"] for c in best_first[:pool.tuning.intent_docs]}
    out: Listed = []
    for role in roles:
        playing = [c for c in best_first if c.row["doc_id"] in pages and plays_role(role, c.row["base_path"])]
        out.extend((c, i + c.late) for i, c in enumerate(playing))
    return out


#: The signals in the order they gather and fuse. Order matters: the definition, exact and
#: intent lists are ordered by the score of the signals before them.
SIGNALS: tuple[Signal, ...] = (
    Signal("keyword", keyword, _gather_keyword),
    Signal("vector", vector, _gather_vector),
    Signal("coverage", coverage),
    Signal("definition", definition, _gather_definitions),
    Signal("exact", exact),
    Signal("name", name, _gather_names),
    Signal("page", page, _gather_pages),
    Signal("intent", intent),
)


def active(tuning: Tuning, signals: tuple[Signal, ...] = SIGNALS, also: tuple[str, ...] = ()) -> list[Signal]:
    """The signals ``tuning`` leaves on, in table order. Raises ValueError when ``tuning``
    switches off a name that is neither in ``signals`` nor in ``also`` (the second stage's
    evidence): a misspelt ablation would change nothing."""
    unknown = sorted(tuning.disabled - {s.name for s in signals} - set(also))
    if unknown:
        raise ValueError(f"no ranking signal named {', '.join(unknown)}; the signals are {', '.join(s.name for s in signals)}")
    return [s for s in signals if tuning.enabled(s.name)]


def gather(pool: Pool, signals: list[Signal]) -> None:
    """Let each signal propose its candidates, in table order (the proposal order breaks ties)."""
    for signal in signals:
        if signal.gather is not None:
            signal.gather(pool)


def fuse(pool: Pool, signals: list[Signal]) -> None:
    """Reciprocal rank fusion: each signal's list, in table order, adds
    ``weight / (rrf_k + place)`` to the score of the candidates on it."""
    k = pool.tuning.rrf_k
    for signal in signals:
        weight = pool.tuning.weight(signal.name)
        for c, place in signal.ranked(pool):
            c.score += weight / (k + place)
            c.places.setdefault(signal.name, place)
