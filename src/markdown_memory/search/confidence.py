"""How sure an answer is: "high" | "low" | "none", from the best ranked candidates.

"high" when the top hit defines or holds verbatim a rare query identifier, or tops both the
keyword and the vector list, and the best hits clear the keyword and vector bars; "low" for
weaker agreement; "none" when nothing backs the hits (the caller then says nothing confident
was found). ``rank`` calls ``confidence`` once per search; the bars live in ``Tuning``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..text import WORD, fts_text
from .candidates import Candidate, covered
from .tuning import ENGLISH_ONLY, TUNING, ModelTraits, Tuning

Confidence = Literal["high", "low", "none"]


def breadcrumb_names_query(base_path: str, stems: dict[str, str | None]) -> bool:
    """True when the breadcrumb ``base_path`` holds every query token of ``stems`` (token ->
    stem prefix) in some form: a short query naming a section ("caching", "what does the hook
    print" for "The prompt hook > What it reads and prints"). False for a query without tokens."""
    return bool(stems) and len(covered(stems, set(WORD.findall(fts_text(base_path))))) == len(stems)


def confidence(ordered: Sequence[Candidate], *, has_vectors: bool, has_identifiers: bool, min_covered: int = 1,
               crumb_names_it: bool = False, model: ModelTraits = ENGLISH_ONLY, tuning: Tuning = TUNING) -> Confidence:
    """Confidence of a ranking ``ordered`` best first. ``has_vectors``: the query was embedded
    and its vectors used; ``has_identifiers``: the query names rare identifiers (then
    look-alikes without them are no keyword evidence); ``min_covered``: distinct query words a
    keyword hit must hold; ``crumb_names_it``: the top hit's breadcrumb names every query word
    (``breadcrumb_names_query``); ``model``: the embedding model's traits.

    "high" when the top hit is likely the answer: it defines or holds verbatim a rare query
    identifier, or it tops both the keyword and the vector list, and the best hits clear the
    keyword and vector bars. "low" when the best hits clear both bars (or, keyword-only, the
    keyword bar) without such a top hit, or when the vectors alone clear the no-keyword bar (a
    paraphrase sharing no word with its answer), or when ``crumb_names_it``. "none" otherwise:
    with vectors at hand, keyword evidence alone, or vectors just over the usual bar, is what an
    unanswerable question on the docs' own topic also gets (its words name the product; its
    embedding lands near the product's pages)."""
    if not ordered:
        return "none"
    bar = tuning.vector_bar if model.vector_bar is None else model.vector_bar
    if not model.multilingual and not any(c.keyword_rank is not None for c in ordered):
        # vectors alone are weak evidence for an English-only model: clear the bar plainly
        bar = max(bar, tuning.no_keyword_vector_bar)
    best = ordered[:5]
    top = best[0]
    if has_identifiers and not any(c.exact or c.defines for c in ordered):
        # The query names an identifier no candidate contains: look-alikes are not answers.
        keyword_ok = False
    else:
        keyword_ok = any(c.coverage >= tuning.keyword_coverage_bar and c.covered >= min_covered for c in best)
    vector_ok = has_vectors and any(c.cosine >= bar for c in best)
    strong_top = top.exact or top.defines
    if strong_top and (keyword_ok or vector_ok):
        return "high"
    if keyword_ok and vector_ok:
        agreed = top.keyword_rank == 0 and top.vector_rank == 0
        return "high" if agreed else "low"
    if keyword_ok and not has_vectors:
        return "low"
    if vector_ok and (model.multilingual or any(c.cosine >= tuning.no_keyword_vector_bar for c in best)):
        # a question in another language than the docs has no keyword evidence by nature; a
        # paraphrase ("how long does the client wait" for "timeouts") may share no word either
        return "low"
    if strong_top or crumb_names_it:  # keyword evidence no unanswerable question on the topic gets
        return "low"
    return "none"
