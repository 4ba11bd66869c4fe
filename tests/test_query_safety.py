"""Property test (issue 6, case 017): no user query string can break keyword search.

Random strings built from FTS5 syntax (quotes, ``-``, ``:``, ``*``, ``^``, parentheses,
``NEAR``/``AND``/``OR``/``NOT``), emoji, CJK and 10,000-character inputs go through
``Engine.search`` on a keyword-only engine: the answer is a result list, or QueryError for an
empty or whitespace-only query, never an SQL error.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.errors import QueryError
from markdown_memory.models import SearchAnswer, SearchRequest

DOC = """# Build Tool

## Flags

Use `--error-on-warnings` and `--no-cache`; NEAR and NOT are plain words here.
Release v2.4.1 on 2026-03-14 for BENCH-100821; grammar::fa and $HOME/.config too.
部署指南：数据库迁移 and サンドボックス 🚀 rocket.
"""

SYNTAX = ['"', "'", "-", "--", ":", "::", "*", "^", "(", ")", "{", "}", "[", "]", "+", ".", ",", "/", "\\",
          "NEAR", "NEAR(", "near/3", "AND", "OR", "NOT", "and", "-x", "x*", '""', "col:", "^start", "🚀",
          "数据", "サ", "\x00", "\t", "\n", " ", "   ", "%", "_", "'; DROP TABLE passages; --", "flags", "v2.4.1"]
TOKENS = st.one_of(st.sampled_from(SYNTAX), st.text(max_size=8))
QUERY = st.lists(TOKENS, max_size=30).map(lambda parts: "".join(parts))


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    tmp = tmp_path_factory.mktemp("qsafe")
    root = tmp / "docs"
    root.mkdir()
    (root / "doc.md").write_text(DOC, encoding="utf-8")
    eng = Engine(Settings.load(root, tmp / "i.db", "none"))
    eng.index()
    yield eng
    eng.close()


def search_or_empty_error(engine, query: str) -> SearchAnswer | None:
    try:
        answer = engine.search(SearchRequest(query))
    except QueryError as exc:
        assert not query.strip(), f"QueryError for a non-empty query {query!r}: {exc}"
        return None
    assert isinstance(answer.results, tuple)
    assert answer.confidence in ("high", "low", "none")
    return answer


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(QUERY)
def test_any_query_returns_results_or_empty_query_error(engine, query):
    search_or_empty_error(engine, query)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=0, max_size=200))
def test_any_unicode_text_is_a_safe_query(engine, query):
    search_or_empty_error(engine, query)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(SYNTAX + ["word", "flags", "release"]), min_size=1, max_size=50))
def test_ten_thousand_character_queries(engine, parts):
    unit = " ".join(parts) + " "
    query = (unit * (10_000 // len(unit) + 1))[:10_000]
    assert len(query) == 10_000
    search_or_empty_error(engine, query)
    search_or_empty_error(engine, query + " overflow beyond the limit")


def test_syntax_words_still_find_their_text(engine):
    # Safety must not cost recall: operators typed by a user are searched as words.
    for query in ("NEAR", "NOT", "--no-cache", "grammar::fa", "v2.4.1", "数据库迁移", "🚀 rocket"):
        answer = engine.search(SearchRequest(query))
        assert answer.results and answer.results[0].heading_path == "Build Tool > Flags", query
