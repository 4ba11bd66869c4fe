"""Text analysis shared by indexing and querying for the FTS5 keyword index.

FTS5's ``unicode61`` tokenizer treats a run of CJK characters as one token, so Chinese or
Japanese words inside a sentence can never match. Before text enters the index (and before a
query is built) every run of CJK ideographs, kana or hangul is replaced by its overlapping
character bigrams separated by spaces (``数据库迁移`` -> ``数据 据库 库迁 迁移``), and a run of a
single character stays as that character. This is the bigram scheme of Lucene's CJKAnalyzer;
it matches 2-character queries, which a trigram index cannot. Latin text is left unchanged,
so identifiers keep working; the displayed text is never rewritten (only the FTS copy is).
"""

from __future__ import annotations

import re

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def is_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK ideograph, kana or hangul syllable."""
    return _CJK_RUN.search(text) is not None


def cjk_bigrams(run: str) -> list[str]:
    """``"数据库"`` -> ``["数据", "据库"]``; a single character -> ``[it]``."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def fts_text(text: str) -> str:
    """The copy of ``text`` stored in the FTS index (CJK runs -> spaced bigrams)."""
    return _CJK_RUN.sub(lambda m: " " + " ".join(cjk_bigrams(m.group(0))) + " ", text)
