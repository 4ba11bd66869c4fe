"""Search: analyse the query, rank sections (BM25 + vectors, RRF), build hits, pack to budget."""

from __future__ import annotations

from .pack import pack_hits
from .query import AnalysedQuery, analyse
from .searcher import SearchOutcome, search_sections

__all__ = ["AnalysedQuery", "SearchOutcome", "analyse", "pack_hits", "search_sections"]
