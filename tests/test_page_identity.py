"""Property: a query made of a page's title words finds that page. Over every corpus at hand
(the hand-written fixtures, the shared eval corpus, eval/corpus2 and eval/corpus3), keyword-only
(the title rule and the page signal are keyword-side; vectors would only add to it): for at
least 95% of the pages, searching the words of the page's title, lower-cased and without their
punctuation ("Rc<T>, the Reference Counted Smart Pointer" -> "rc t the reference counted smart
pointer": not the exact name the ``name`` signal looks up), returns the page among the first 3
hits.

Pages whose title is no query (no word to search, or a title several pages share: "Overview",
"index") are counted separately and left out of the share; the figure per corpus is printed.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import EVAL_CORPUS, require_eval_corpus
from markdown_memory.models import Freshness, SearchRequest
from markdown_memory.text import WORD, fts_text

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
TOP = 3
BAR = 0.95
_WORDS = re.compile(r"\w+")


def title_words(title: str) -> str:
    """The query a page's title makes: its words, lower-cased, punctuation dropped."""
    return " ".join(_WORDS.findall(title.lower()))


def title_hit_share(engine) -> tuple[float, int, list[tuple[str, str]]]:
    """(share of pages found in the first ``TOP`` hits by their title, pages asked, misses as
    (path, title)) over every indexed document of ``engine`` with sections."""
    docs = []
    offset: int | None = 0
    while offset is not None:
        page = engine.list_documents(offset=offset, limit=200, freshness=Freshness.FLAG)
        docs += [d for d in page.documents if d.sections]
        offset = page.next_offset
    shared = Counter(fts_text(d.title).strip() for d in docs)
    asked, misses = 0, []
    for d in docs:
        if not WORD.search(fts_text(d.title)) or shared[fts_text(d.title).strip()] > 1 or not title_words(d.title):
            continue  # a title many pages share names none of them
        asked += 1
        hits = engine.search(SearchRequest(title_words(d.title), top_k=TOP, max_tokens=200), freshness=Freshness.FLAG).results
        if d.path not in [h.file_path for h in hits[:TOP]]:
            misses.append((d.path, d.title))
    return (1 - len(misses) / asked if asked else 1.0), asked, misses


def check_corpus(name: str, root: Path, make_engine) -> None:
    engine = make_engine(root, embedder="none")
    engine.index()
    share, asked, misses = title_hit_share(engine)
    print(f"\n[{name}] {share:.1%} of {asked} pages found in the top {TOP} by their title; misses: {misses[:10]}")
    assert asked > 0
    assert share >= BAR, f"{name}: {share:.1%} of {asked} pages; first misses: {misses[:10]}"


@pytest.mark.parametrize("folder", ["guide", "vault", "links", "search", "multilingual"])
def test_fixture_pages_are_found_by_their_titles(folder, make_engine):
    root = FIXTURES / folder
    if not root.is_dir():
        pytest.skip(f"no fixture folder {folder}")
    check_corpus(folder, root, make_engine)


@pytest.mark.slow
def test_shared_corpus_pages_are_found_by_their_titles(make_engine):
    require_eval_corpus()
    check_corpus("shared", EVAL_CORPUS, make_engine)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["corpus2", "corpus3"])
def test_dev_corpus_pages_are_found_by_their_titles(corpus, make_engine):
    check_corpus(corpus, REPO / "eval" / corpus, make_engine)
