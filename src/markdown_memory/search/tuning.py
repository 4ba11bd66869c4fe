"""Every number the ranker is tuned by, in one frozen value, and what it needs to know about the
embedding model (``ModelTraits``).

``Tuning()`` holds the measured defaults (README "How search ranks", docs/ranking.md#measured);
``rank`` and ``confidence`` take a ``Tuning`` (default ``TUNING``), so an experiment or an
ablation is ``dataclasses.replace(TUNING, ...)`` or ``TUNING.without("coverage")``, never an
edit of module constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from ..embed.presets import PRESETS

#: Weight of each signal's list in the RRF fusion, by signal name (``search/signals.py``).
#: ``exact`` counts twice: an exact hit beats semantic look-alikes; ``definition`` likewise: a
#: reference entry outranks the many pages that only mention its identifier; ``coverage`` is
#: half: BM25 favours repetition and short sections, coverage the section holding *all* the
#: question's rare words; ``name`` is above the sum of every other list's first place, so the
#: note the query names ranks first.
_WEIGHTS = {"keyword": 1.0, "vector": 1.0, "coverage": 0.5, "definition": 2.0, "exact": 2.0, "name": 8.0,
            "page": 1.0, "intent": 1.0}

#: Weight of each piece of second-stage evidence (``search/sections.py``), in fused-score units:
#: a piece adds at most this much to a section's first-stage score when it is the best of its
#: page's candidates. One list place near the top is ~0.0003-0.0005 of score, so these move a
#: section past siblings it nearly tied with, never across a clear first-stage lead. 0: not
#: computed. ``token_match`` (MaxSim over MiniLM token states, 0.0005 when on) measured no gain
#: beyond ``sibling_terms`` on the dev sets at 3-10x the query latency (docs/ranking.md,
#: "Section choice inside a page"), so it is off.
_SECTION_WEIGHTS = {"sibling_terms": 0.001, "rare_window": 0.0, "token_match": 0.0}


@dataclass(frozen=True)
class Tuning:
    """Ranking weights and thresholds. Units: ``rrf_k``, penalties and windows are list places;
    bars are cosine similarity (0-1) or shares (0-1); ``candidates`` are sections per list.
    ``disabled``: signal names left out entirely (not gathered, not fused), for ablations."""

    #: RRF constant: ``sum(weight / (rrf_k + place))`` (Cormack, Clarke and Buettcher, SIGIR 2009).
    rrf_k: int = 60
    weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType(dict(_WEIGHTS)))
    disabled: frozenset[str] = frozenset()
    #: Second stage (``search/sections.py``): the first ``section_window`` fused candidates are
    #: looked at; the best page's sections among them are reordered by ``section_weights``.
    section_window: int = 10
    section_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType(dict(_SECTION_WEIGHTS)))
    #: Word pieces of the query and of each section compared by ``token_match`` (MaxSim); 128
    #: keeps it at ~20 ms per section on a loaded 2-core machine.
    token_match_tokens: int = 128
    #: Words within which ``rare_window`` looks for the query's rare words together.
    window_words: int = 12
    #: BM25 weight of the breadcrumb column (title + breadcrumb) relative to the body.
    heading_weight: float = 3.0
    #: Keyword candidates per query; vector candidates per query, from ``vector_fanout`` times as
    #: many passages (several passages of one section collapse into one candidate).
    candidates: int = 60
    vector_candidates: int = 60
    vector_fanout: int = 3
    #: Page identity (``search/pages.py``): pages read per query, BM25 weights of the page columns
    #: (title and names, path words, description), the share of a page name's words the query
    #: must hold, and the share of the query's IDF mass those words must carry.
    page_candidates: int = 20
    page_columns: tuple[float, float, float] = (4.0, 2.0, 1.0)
    page_title_share: float = 0.75
    page_query_share: float = 0.3
    #: The intent list applies within the documents of this many best fused candidates. 3 let a
    #: weak page's "Troubleshooting" section overtake a FAQ entry that answered the question word
    #: for word; 1 gives the same dev-set and runbook figures.
    intent_docs: int = 1
    #: How many top candidates are looked at for subsections sharing a parent; a parent with at
    #: most ``sibling_max`` subsections, two of which rank, is a list of alternatives: its other
    #: subsections join the ranking after them.
    sibling_window: int = 8
    sibling_max: int = 4
    #: A section with fewer body characters than ``bodyless_chars`` below its heading line is
    #: "bodyless"; its keyword place is pushed down by ``empty_penalty``.
    bodyless_chars: int = 1
    empty_penalty: int = 20
    #: Places a release-notes entry sits lower on every list unless the query asks about changes.
    changelog_penalty: int = 10
    #: An identifier found in more than this share of sections (never less than ``rare_min``
    #: sections) is too common to earn the exact list.
    rare_share: float = 0.002
    rare_min: int = 12
    #: An English-only model's vectors are skipped for a query whose letters are at least this
    #: share CJK (it embeds CJK text as noise); CJK-heavy queries also skip the coverage list.
    cjk_vector_share: float = 0.3
    #: Cosine similarity a passage must reach for the vector side to count as confident, unless
    #: the model says otherwise (``ModelTraits.vector_bar``). Calibrated on the dev set with
    #: all-MiniLM-L6-v2.
    vector_bar: float = 0.5
    #: The bar for an English-only model when no word of the query occurs in any section: a
    #: made-up name scored 0.449-0.452 against an unrelated note; the dev set's answerable
    #: queries (top cosine p25 0.57, median 0.68) all have keyword candidates too.
    no_keyword_vector_bar: float = 0.55
    #: Share of the query's IDF mass a keyword hit must cover to count as confident, holding at
    #: least ``min_covered`` distinct query words (one rare word of three is a stray hit).
    keyword_coverage_bar: float = 0.3
    min_covered: int = 2

    def __post_init__(self) -> None:
        # a frozen value: a weights dict passed in (``replace(TUNING, weights={...})``) is copied read-only
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "section_weights", MappingProxyType(dict(self.section_weights)))

    def weight(self, signal: str) -> float:
        """The fusion weight of ``signal``; KeyError for a name without a weight."""
        return self.weights[signal]

    def enabled(self, signal: str) -> bool:
        return signal not in self.disabled

    def without(self, *signals: str) -> Tuning:
        """This tuning with ``signals`` switched off (for ablations)."""
        return replace(self, disabled=self.disabled | frozenset(signals))


TUNING = Tuning()


@dataclass(frozen=True)
class ModelTraits:
    """What ranking needs to know about the embedding model: ``multilingual`` (its vectors
    understand CJK and cross-language queries) and its own confidence bar (None: the tuning's)."""

    multilingual: bool = False
    vector_bar: float | None = None


#: The traits assumed when none are given: an English-only model with the tuning's bar.
ENGLISH_ONLY = ModelTraits()


def model_traits(embedder_name: str | None) -> ModelTraits:
    """``ModelTraits`` of the preset named ``embedder_name``, read from the preset registry
    (None, ``none`` or unknown: English-only, the tuning's bar)."""
    preset = PRESETS.get(embedder_name or "")
    if preset is None:
        return ENGLISH_ONLY
    return ModelTraits(multilingual=preset.multilingual, vector_bar=preset.vector_bar)
