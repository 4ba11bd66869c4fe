"""Page identity: the pages whose *name* the query holds ("the page about strict mode", "cargo
home", "Strict Mode"), for the ``page`` signal (``search/signals.py``), which ranks their lead
sections.

A page is named by the query when, for one of its names (title, H1, front-matter title, alias:
``store/pages.py``), the query holds at least ``Tuning.page_title_share`` of the name's words
(a query word matches a title word written the same or in another form of it: ``reporting`` /
``report``, ``timings`` / ``timing``), and those words carry at least ``Tuning.page_query_share``
of the query's IDF mass (words no section holds left out), so "how do I configure a model's
fields" does not name the page "Models". Named pages are ordered by the IDF share their matched words carry (the more specific
name first), then by BM25 over title, path words and description.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store import PageMatch, Store
from ..store.scope import Scope
from ..text import WORD, is_cjk
from .candidates import coverage_weights
from .query import STOPWORDS, AnalysedQuery, stem_prefix
from .tuning import Tuning


@dataclass(frozen=True)
class NamedPage:
    """A page the query names: its lead ``section_id``, how many words of its best name the
    query holds (``matched``), that name's share held (``share``), the share of the query's IDF
    mass those words carry (``mass``), its page ``bm25``."""

    section_id: int
    matched: int
    share: float
    mass: float
    bm25: float


def _content_words(text: str) -> list[str]:
    return list(dict.fromkeys(w for w in WORD.findall(text) if w not in STOPWORDS))


def _same_word(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` (match form) are one word in two forms: equal, or one starts with
    the other's stem prefix (``query.stem_prefix``)."""
    if a == b:
        return True
    sa, sb = stem_prefix(a), stem_prefix(b)
    return (sa is not None and b.startswith(sa)) or (sb is not None and a.startswith(sb))


def _best_name(names: str, query_words: list[str], weights: dict[str, float]) -> tuple[int, float, float]:
    """(words held, share held, IDF mass held) of the page name (``" ; "``-separated in
    ``names``) whose words the query holds the largest share of."""
    best = (0, 0.0, 0.0)
    for name in names.split(" ; "):
        words = _content_words(name)
        if not words:
            continue
        held = [w for w in words if any(_same_word(w, q) for q in query_words)]
        mass = sum(weights.get(q, 0.0) for q in query_words if any(_same_word(w, q) for w in held))
        candidate = (len(held), len(held) / len(words), mass)
        if (candidate[1], candidate[0]) > (best[1], best[0]):
            best = candidate
    return best


def named_pages(store: Store, query: AnalysedQuery, scope: Scope | str | None, tuning: Tuning) -> list[NamedPage]:
    """The pages ``query`` names (module doc), best first, among the ``Tuning.page_candidates``
    best pages by BM25. Raises QueryNotParsedError when FTS5 rejects the query."""
    expr = query.match_expression()
    if expr is None:
        return []
    matches: list[PageMatch] = store.page_matches(expr, scope, tuning.page_candidates, tuning.page_columns)
    if not matches:
        return []
    weights = coverage_weights(store, query)
    held = store.term_frequencies(weights)
    # a word no section holds ("the *page* about X" in docs that never say "page") names nothing
    weights = {w: v for w, v in weights.items() if held.get(w)}
    total = sum(weights.values()) or 1.0
    # a flag names an option, not a page: "--pull" does not name "docker pull"
    flags = {tok for t in query.terms if t.raw.startswith("-") for tok in t.tokens}
    plain = {tok for t in query.terms if not t.raw.startswith("-") for tok in t.tokens}
    query_words = [w for w in weights if w not in STOPWORDS and (w in plain or w not in flags)]
    out: list[NamedPage] = []
    for m in matches:
        matched, share, mass = _best_name(m.title, query_words, weights)
        # a CJK title is read as bigrams, half of which straddle two words: a looser bar
        bar = tuning.page_title_share / 2 if is_cjk(m.title) else tuning.page_title_share
        if matched and share >= bar and mass / total >= tuning.page_query_share:
            out.append(NamedPage(m.section_id, matched, share, mass / total, m.bm25))
    out.sort(key=lambda p: (-p.mass, p.bm25))
    return out
