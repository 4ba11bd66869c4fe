"""Turn ranked candidates into hits: verbatim section content, the passage that matched."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..models import Hit
from ..store import PassageSpan, Store, VectorCache
from ..store.scope import Scope
from ..text import HTML_TAG, WORD, fts_text
from .query import AnalysedQuery
from .rank import rank
from .tuning import model_traits

PREVIEW_CHARS = 100


@dataclass
class SearchOutcome:
    """``hits``: ranked ``models.Hit``s, each carrying its verbatim section text (``content``;
    the packer decides which keep it), a preview of <= 100 characters of the best passage and
    that passage's lines; ``confidence``: "high" | "low" | "none"."""

    hits: list[Hit] = field(default_factory=list)
    confidence: str = "none"
    absent: list[str] = field(default_factory=list)  # query identifiers no document contains
    p_answer: float = 0.0  # P(a hit carrying its text answers), search/calibration.py


def _best_passage(passages: list[PassageSpan], query: AnalysedQuery, vector_pid: int | None) -> tuple[str, int, int] | None:
    if not passages:
        return None
    if vector_pid is not None:
        for pid, text, a, b in passages:
            if pid == vector_pid:
                return text, a, b
    best = None
    best_score = -1.0
    for _pid, text, a, b in passages:
        words = set(WORD.findall(fts_text(text)))
        score = sum(len(t.tokens) for t in query.terms if t.matches(words))
        if score > best_score:
            best, best_score = (text, a, b), score
    return best


def _first_text_line(text: str) -> str:
    """The first line of a section that has words once HTML tags are removed."""
    for line in text.split("\n"):
        plain = HTML_TAG.sub(" ", line).strip()
        if plain:
            return plain
    return ""


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1].rstrip() + "…"


def search_sections(
    store: Store,
    query: AnalysedQuery,
    qvec: np.ndarray | None,
    *,
    embedder_name: str | None,
    top_k: int = 5,
    path_prefix: Scope | str | None = None,
    vector_cache: VectorCache | None = None,
) -> SearchOutcome:
    """Ranked hits for an analysed query (``qvec`` None = keyword-only). Returns at most
    ``top_k * 3`` hits so the packer can drop nested duplicates and still fill ``top_k``.
    ``vector_cache``: the process's ``store.VectorCache`` for this database (None: KNN through
    vec0). ``path_prefix``: the filters (a ``store.scope.Scope``, or a path prefix); with a block
    filter the preview is a passage of that kind. Raises QueryNotParsedError when the keyword
    index rejects the query."""
    ranking = rank(store, query, qvec, model=model_traits(embedder_name), top_k=top_k, path_prefix=path_prefix,
                   vector_cache=vector_cache)
    cands, confidence = ranking.candidates, ranking.confidence
    if not cands:
        return SearchOutcome([], "none", ranking.absent)
    scope = path_prefix if isinstance(path_prefix, Scope) and path_prefix.blocks else None
    by_section = store.passages_of_sections([c.section_id for c in cands], scope)
    hits: list[Hit] = []
    p_hits = ranking.estimate.p_hits
    for at, c in enumerate(cands):
        row = c.row
        best = _best_passage(by_section.get(c.section_id, []), query, c.best_passage)
        preview_src = best[0] if best else _first_text_line(row["text"])
        hits.append(Hit(
            file_path=row["file_path"], heading_path=row["heading_path"], start_line=row["start_line"],
            end_line=row["end_line"], tokens=row["tokens"], score=round(c.score, 5), content=row["text"],
            preview=_preview(preview_src),
            passage_lines=(best[1], best[2]) if best else (row["start_line"], row["start_line"]),
            matched_by=tuple(c.matched_by), p_answer=p_hits[at] if at < len(p_hits) else 0.0))
    return SearchOutcome(hits, confidence, ranking.absent, ranking.estimate.p_some)
