"""Search: analyse the query, rank sections (BM25 + vectors, RRF), build hits, pack to budget."""

from __future__ import annotations

from .pack import answer_tokens, distinct_hits, fit_answer, pack_hits, section_key
from .query import AnalysedQuery, analyse
from .searcher import SearchOutcome, search_sections

__all__ = ["AnalysedQuery", "SearchOutcome", "analyse", "answer_tokens", "distinct_hits", "fit_answer", "pack_hits", "search_sections",
           "section_key"]
