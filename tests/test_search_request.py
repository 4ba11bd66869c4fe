"""A search request checks its own bounds, and every adapter reads the same ones
(``models.SearchRequest`` and the limits beside it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markdown_memory.cli import build_parser
from markdown_memory.errors import InvalidRequestError, QueryError, UsageError, describe_error
from markdown_memory.models import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TOP_K,
    MAX_MAX_TOKENS,
    MAX_TOP_K,
    MIN_MAX_TOKENS,
    SearchRequest,
)


@given(st.integers(min_value=-1000, max_value=1000))
def test_top_k_is_accepted_exactly_within_its_bounds(top_k):
    if 1 <= top_k <= MAX_TOP_K:
        assert SearchRequest("cache", top_k=top_k).top_k == top_k
    else:
        with pytest.raises(InvalidRequestError, match=rf"top_k must be a whole number from 1 to {MAX_TOP_K}"):
            SearchRequest("cache", top_k=top_k)


@pytest.mark.parametrize("bad", [True, 2.5, "3", None])
def test_a_top_k_that_is_not_a_whole_number_is_refused_naming_the_field(bad):
    with pytest.raises(InvalidRequestError) as raised:
        SearchRequest("cache", top_k=bad)
    report = describe_error(raised.value)
    assert report.kind == "invalid_request" and "top_k" in report.message and repr(bad) in report.message


def test_a_whole_float_counts_as_its_integer_as_json_schema_does():
    assert SearchRequest("cache", top_k=3.0, max_tokens=500.0) == SearchRequest("cache", top_k=3, max_tokens=500)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_blank_query_is_the_engine_s_empty_query_error(query):
    with pytest.raises(QueryError, match="query is empty"):
        SearchRequest(query)


def test_defaults_and_tags_are_frozen_values():
    request = SearchRequest("cache", tags=["a", "b"])
    assert (request.top_k, request.max_tokens, request.tags, request.resend) == (DEFAULT_TOP_K, DEFAULT_MAX_TOKENS,
                                                                                  ("a", "b"), False)
    assert SearchRequest("cache", tags="a,b").tags == ("a,b",)  # split by the filter, as the CLI's --tag
    with pytest.raises(AttributeError):
        request.top_k = 3  # type: ignore[misc]
    assert hash(request) == hash(SearchRequest("cache", tags=("a", "b")))


def test_the_cli_and_the_mcp_tool_read_the_request_s_bounds(tmp_path):
    parser = build_parser()
    assert parser.parse_args(["search", "q", "--top-k", str(MAX_TOP_K)]).top_k == MAX_TOP_K
    with pytest.raises(UsageError, match=f"between 1 and {MAX_TOP_K}"):
        parser.parse_args(["search", "q", "--top-k", str(MAX_TOP_K + 1)])
    with pytest.raises(UsageError, match=f"between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}"):
        parser.parse_args(["search", "q", "--max-tokens", str(MIN_MAX_TOKENS - 1)])

    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.mcp.tools import tool_set

    _app, tools = tool_set(Runtime(Settings(docs_root=tmp_path, db_path=tmp_path / "index.db")))
    props = tools["search_docs"].parameters["properties"]
    assert (props["top_k"]["maximum"], props["top_k"]["default"]) == (MAX_TOP_K, DEFAULT_TOP_K)
    assert (props["max_tokens"]["minimum"], props["max_tokens"]["maximum"]) == (MIN_MAX_TOKENS, MAX_MAX_TOKENS)


def test_the_library_s_budget_is_wider_than_the_adapters():
    """Regression (this branch): the schema's CLI/MCP budget bound (MAX_MAX_TOKENS) was applied to
    the library too, and the prompt hook, which searches with a budget past it, added nothing."""
    assert SearchRequest("cache", max_tokens=4 * MAX_MAX_TOKENS).max_tokens == 4 * MAX_MAX_TOKENS
    assert SearchRequest("cache", max_tokens=1).max_tokens == 1
