"""Ranking with the real MiniLM model on tests/fixtures/search: identifiers, paraphrases, CJK,
and the "nothing confident" signal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import indexed_engine, top
from markdown_memory.models import SearchRequest

FIXTURES = Path(__file__).parent / "fixtures" / "search"


@pytest.fixture(scope="module")
def engine(tmp_path_factory, minilm):
    root = tmp_path_factory.mktemp("search-docs") / "docs"
    shutil.copytree(FIXTURES, root)
    eng = indexed_engine(root, "minilm", minilm)
    assert eng.status().counts.vectors > 0
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def keyword_engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("search-docs-kw") / "docs"
    shutil.copytree(FIXTURES, root)
    eng = indexed_engine(root, "none")
    yield eng
    eng.close()


IDENTIFIERS = [
    ("--no-cache", ("cli.md", "Widget Command Line > Flags")),
    ("what does --dry-run do", ("cli.md", "Widget Command Line > Flags")),
    ("WIDGET_TIMEOUT_SECONDS", ("config.md", "Environment variables")),
    ("max_retry_count", ("config.md", "Timeouts and retries")),
    ("widget.client.connect", ("config.md", "Python API")),
    ("is HTTPS_PROXY respected?", ("config.md", "Proxy settings")),
]


@pytest.mark.parametrize("query, expected", IDENTIFIERS)
def test_identifier_query_puts_the_section_naming_it_first(engine, query, expected):
    answer = engine.search(SearchRequest(query))
    assert top(answer) == expected
    assert "exact" in answer.results[0].matched_by
    # issue 34: the label is read from the calibrated p_answer (high needs >= 85% left-out precision)
    assert answer.confidence != "none" and answer.results[0].p_answer >= 0.5


@pytest.mark.parametrize("query, expected", IDENTIFIERS)
def test_identifier_queries_work_keyword_only(keyword_engine, query, expected):
    answer = keyword_engine.search(SearchRequest(query))
    assert answer.keyword_only is True
    assert top(answer) == expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("how can I make big file transfers go faster", ("faq.md", "Frequently Asked Questions > Why are my uploads slow?")),
        ("is my data protected before it leaves my computer", ("faq.md", "Frequently Asked Questions > Does widget encrypt my data?")),
        ("how long is a request allowed to hang before it errors out", ("config.md", "Environment variables")),
        ("origin of the product's name", ("faq.md", "Frequently Asked Questions > Where did the name come from?")),
    ],
)
def test_paraphrase_query_finds_the_answering_section(engine, query, expected):
    assert top(engine.search(SearchRequest(query))) == expected


@pytest.mark.parametrize(
    "query, heading",
    [
        ("数据库迁移", "部署指南 > 数据库迁移"),
        ("升级前怎么备份数据库", "部署指南 > 数据库迁移"),
        ("日志级别", "部署指南 > 日志配置"),
        ("管理界面用哪个端口", "部署指南 > 端口说明"),
    ],
)
def test_chinese_queries_find_chinese_sections_keyword_only(keyword_engine, query, heading):
    answer = keyword_engine.search(SearchRequest(query))
    assert answer.results, "CJK text must be keyword-searchable"
    assert top(answer) == ("zh/deploy.md", heading)


def test_a_section_inside_a_table_row_is_found_by_its_cell(engine):
    answer = engine.search(SearchRequest("which exit code means the remote refused the credentials"))
    assert top(answer) == ("cli.md", "Widget Command Line > Exit codes")


@pytest.mark.parametrize(
    "query",
    ["Will it rain in Lisbon this weekend?", "best recipe for sourdough bread with rye flour"],
)
def test_unrelated_question_is_flagged_not_confident(engine, query):
    answer = engine.search(SearchRequest(query))
    assert answer.confidence == "none"
    assert "no confident match" in (answer.message or "")


def test_identifier_no_document_contains_is_reported_absent(engine):
    answer = engine.search(SearchRequest("how do I set WIDGET_TURBO_MODE"))
    assert answer.confidence == "none"
    # the look-alike environment-variable section may be listed, but never as a confident answer,
    # and the message names the identifier no document mentions (only it: not the query's words)
    message = answer.message or ""
    assert message.startswith("no confident match")
    assert message.endswith("; no document mentions 'WIDGET_TURBO_MODE'"), message


def test_answering_queries_are_not_flagged_none(engine):
    for query in ("--no-cache", "why are uploads slow", "how do I undo a sync"):
        assert engine.search(SearchRequest(query)).confidence != "none", query


def test_parent_intro_joins_when_several_of_its_subsections_match(tmp_path, make_engine):
    """Two subsections of one section match: their parent's own introduction (what they have in
    common) is ranked beside them, even though its words match the query less."""
    root = tmp_path / "sib"
    root.mkdir()
    (root / "env.md").write_text(
        "# Environment\n\nEvery variable below can be switched off at once: pass trust_env=False "
        "to the client.\n\n"
        "## CERT_FILE\n\nPath of the certificate bundle read from the shell environment.\n\n"
        "## CERT_DIR\n\nDirectory of certificates read from the shell environment.\n"
    )
    for i in range(12):  # unrelated sections that also mention the words, to crowd the ranking
        (root / f"other{i}.md").write_text(f"# Topic {i}\n\n## Shell {i}\n\nThe shell environment of topic {i}.\n")
    eng = make_engine(root, embedder="none")
    eng.index()
    answer = eng.search(SearchRequest("certificate settings from the shell environment", top_k=5))
    got = [h.heading_path for h in answer.results]
    assert "Environment" in got
    assert got.index("Environment") <= 2


@pytest.mark.parametrize("query, expected", [
    ("caching", ("cli.md", "Widget Command Line > Caching")),
    ("exit codes", ("cli.md", "Widget Command Line > Exit codes")),
    ("widget command line flags", ("cli.md", "Widget Command Line > Flags")),
])
def test_a_short_query_naming_a_heading_is_not_reported_as_unanswered(engine, query, expected):
    """Trial finding: "rollback" found the `## Rollback` section first but the answer said
    nothing in the docs clearly answers it (confidence none): with vectors at hand, keyword
    evidence alone counted as nothing. A top hit whose breadcrumb holds every query word is
    evidence an unanswerable question does not get."""
    answer = engine.search(SearchRequest(query))
    assert top(answer) == expected
    assert answer.confidence != "none"  # "low" or, calibrated (issue 34), "high"
    assert "nothing in the docs" not in (answer.message or "").lower()


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_property_a_query_its_top_hit_breadcrumb_names_in_full_is_never_unanswered(engine, data):
    """The kind behind the trial finding: a query made of a section's own heading or of its
    whole breadcrumb, any case, finds that section first and is never reported as unanswered
    (12 of the fixture's 38 such queries were, with the right section first)."""
    sections = [(d.path, h.heading_path) for d in engine.list_documents().documents
                for h in engine.outline(d.path).headings]
    file_path, heading_path = data.draw(st.sampled_from(sections))
    whole = data.draw(st.booleans())
    query = (heading_path.replace(" > ", " ") if whole else heading_path.split(" > ")[-1]).lower()
    answer = engine.search(SearchRequest(query))
    if top(answer) == (file_path, heading_path):
        assert answer.confidence != "none", (query, answer.message)
