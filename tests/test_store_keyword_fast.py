"""The keyword queries' fast path (ranked on the FTS5 table alone, only the best rows joined:
``store/fts.py``, ``store/pages.py``) gives the same rows, in the same order, with the same
scores as the plain query that joins every matching row, on a corpus with many exact ties
(copies of the same pages) and queries made of its words; and a search's hits do not change."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from markdown_memory.search.query import analyse
from markdown_memory.search.tuning import TUNING
from markdown_memory.store import fts, pages
from markdown_memory.store.scope import Scope

PAGE = """# {title}

Intro to the {title} page: how the cache and the retry settings work together.

## Retry settings

The retry setting waits between attempts; a cache entry expires after the timeout.

## Cache layout

The cache holds one file per key. Clearing the cache removes every entry.

## Troubleshooting timeouts

A timeout during retry means the server is slow; raise the timeout or clear the cache.
"""
TITLES = ["Caching", "Retries", "Timeouts", "Server settings", "Cache keys"]
WORDS = ["cache", "retry", "timeout", "settings", "server", "entry", "key", "page", "clearing", "expires",
         "layout", "slow", "attempts", "missing", "retries", "caching"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    from conftest import indexed_engine

    root = tmp_path_factory.mktemp("tied") / "docs"
    for copy in range(6):  # identical pages in several folders: equal BM25 scores, ties at every limit
        folder = root / f"copy{copy}"
        folder.mkdir(parents=True)
        for i, title in enumerate(TITLES):
            (folder / f"page{i}.md").write_text(PAGE.format(title=title))
    (root / "odd.md").write_text("# Odd\n\nA page about nothing in particular, no cache here.\n")
    engine = indexed_engine(root, "none")
    yield engine.store
    engine.close()


def _expression(words: list[str]) -> str:
    expr = analyse(" ".join(words)).match_expression()
    assert expr is not None
    return expr


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), limit=st.integers(1, 40))
def test_sections_fast_path_is_the_joined_query(store, words: list[str], limit: int) -> None:
    expr = _expression(words)
    fast = fts.keyword_matches(store, expr, None, limit, TUNING.heading_weight)
    plain = fts._joined_matches(store, expr, None, limit, TUNING.heading_weight)
    assert fast == plain
    assert len(fast) == min(limit, store.match_count(expr))


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), limit=st.integers(1, 20))
def test_pages_fast_path_is_the_joined_query(store, words: list[str], limit: int) -> None:
    expr = _expression(words)
    bm25 = "bm25(pages_fts, {}, {}, {}, 0.0)".format(*TUNING.page_columns)
    fast = pages.page_matches(store, expr, None, limit, TUNING.page_columns)
    assert fast == pages._joined_pages(store, expr, None, limit, bm25)


def test_a_filter_still_restricts(store) -> None:
    expr = _expression(["cache", "retry"])
    scoped = fts.keyword_matches(store, expr, Scope(path_prefix="copy3"), 100, TUNING.heading_weight)
    assert scoped and len(scoped) < len(fts.keyword_matches(store, expr, None, 1000, TUNING.heading_weight))
    rows = store.section_rows([m.section_id for m in scoped])
    assert {row["file_path"].split("/")[0] for row in rows.values()} == {"copy3"}


def test_term_frequencies_follow_a_change(tmp_path: Path) -> None:
    from conftest import indexed_engine

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nThe cache holds entries.\n")
    engine = indexed_engine(root, "none")
    try:
        assert engine.store.term_frequencies(["cache", "zebra"]) == {"cache": 1, "zebra": 0}
        assert engine.store.section_count() == 1
        (root / "b.md").write_text("# B\n\nA zebra and a cache.\n")
        engine.index()
        assert engine.store.term_frequencies(["cache", "zebra"]) == {"cache": 2, "zebra": 1}  # not the cached counts
        assert engine.store.section_count() == 2
    finally:
        engine.close()
