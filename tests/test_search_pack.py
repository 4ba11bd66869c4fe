"""The answer budget: content never exceeds ``max_tokens``, sections are never cut, no two hits
repeat the same lines (a parent and its child hold disjoint text and may both answer), pointer
previews stay short."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import indexed_engine
from markdown_memory.models import Hit, SearchRequest
from markdown_memory.search.pack import entry_cost, pack_hits
from markdown_memory.text import count_tokens

FIXTURES = Path(__file__).parent / "fixtures" / "search"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("pack-docs") / "docs"
    shutil.copytree(FIXTURES, root)
    eng = indexed_engine(root, "none")
    yield eng
    eng.close()


QUERIES = ["garbage collection pack group blocks", "storage engine block pack index", "widget", "sync remote files"]


def answer_cost(results):
    return sum(entry_cost(r) + (r.tokens if r.content is not None else 0) for r in results)


@pytest.mark.parametrize("max_tokens", [50, 200, 600, 2000])
@pytest.mark.parametrize("query", QUERIES)
def test_answer_never_exceeds_the_budget(engine, query, max_tokens):
    results = engine.search(SearchRequest(query, top_k=8, max_tokens=max_tokens)).results
    assert results
    carried = [r for r in results if r.content is not None]
    assert sum(count_tokens(r.content) for r in carried) <= max_tokens
    assert answer_cost(results) <= max_tokens or not carried


@pytest.mark.parametrize("query", QUERIES)
def test_content_is_the_whole_section_verbatim(engine, query):
    for hit in engine.search(SearchRequest(query, top_k=8, max_tokens=4000)).results:
        if hit.content is None:
            continue
        lines = (engine.root / hit.file_path).read_text(encoding="utf-8").split("\n")
        assert hit.content == "\n".join(lines[hit.start_line - 1 : hit.end_line])
        assert hit.tokens == count_tokens(hit.content)


def test_pointer_entries_carry_a_short_preview_and_no_content(engine):
    results = engine.search(SearchRequest("garbage collection pack group", top_k=8, max_tokens=300)).results
    pointers = [r for r in results if r.content is None]
    assert pointers, "a 300-token budget cannot hold the long GC sections in full"
    for r in results:
        assert 0 < len(r.preview) <= 100
        assert r.start_line <= r.end_line


def test_no_two_hits_share_lines(engine):
    results = engine.search(SearchRequest("block pack storage engine index format hash", top_k=10, max_tokens=8000)).results
    paths = [(r.file_path, r.heading_path) for r in results]
    assert len(paths) == len(set(paths))
    for a in results:
        for b in results:
            if a is not b and a.file_path == b.file_path:
                assert a.end_line < b.start_line or b.end_line < a.start_line, (a.heading_path, b.heading_path)


def _hit(doc, ordinal, parent, tokens, *, start=None, end=None, score=1.0):
    """A ranked hit of document ``doc`` (``parent``: its parent section's ordinal, for reading)."""
    return Hit(f"d{doc}.md", f"h{ordinal}", start or ordinal, end or ordinal, tokens, score, "x" * tokens * 4, "x",
               (ordinal, ordinal), ("keyword",))


def _texts(out):
    return [r.content is not None for r in out]


def test_a_hit_that_does_not_fit_does_not_end_the_run_of_text():
    hits = [_hit(1, 1, None, 500), _hit(1, 5, None, 900), _hit(2, 1, None, 100)]
    out = pack_hits(hits, top_k=5, max_tokens=1000)
    # the second hit does not fit: it is a pointer, the third still carries its text
    assert _texts(out) == [True, False, True]


def test_a_short_intro_first_does_not_leave_the_top_hits_as_bare_pointers():
    """Issue 25: "dependency pre-bundling" gave 10 hits where only a 50-token intro carried text
    and nine were pointers (the second hit was too large, and that closed the budget). The top
    hits that fit carry their text; far weaker or large later ones are pointers."""
    hits = [_hit(1, 1, None, 50), _hit(2, 1, None, 1900, score=0.97), _hit(3, 1, None, 400, score=0.95)]
    hits += [_hit(d, 1, None, 600, score=0.9) for d in range(4, 11)]
    out = pack_hits(hits, top_k=10, max_tokens=2000)
    assert _texts(out)[:3] == [True, False, True]
    assert not any(_texts(out)[3:])  # large later hits are pointers: the budget goes to the evidence


def test_later_hits_carry_text_when_close_and_small_or_beside_a_text():
    best = [_hit(1, 1, None, 100), _hit(2, 1, None, 100), _hit(3, 1, None, 100)]
    close_small = _hit(4, 1, None, 120, score=0.95)
    close_large = _hit(5, 1, None, 700, score=0.95)
    weak_small = _hit(6, 1, None, 120, score=0.6)
    sibling = Hit("d1.md", "h1 > b", 40, 45, 250, 0.6, "x" * 1000, "x", (40, 40), ("keyword",))
    best[0] = Hit("d1.md", "h1 > a", 1, 10, 100, 1.0, "x" * 400, "x", (1, 1), ("keyword",))
    out = pack_hits([*best, close_small, close_large, weak_small, sibling], top_k=10, max_tokens=5000)
    assert _texts(out) == [True, True, True, True, False, False, True]


def test_a_hit_larger_than_the_whole_budget_does_not_leave_the_rest_without_text():
    """Trial finding: a 225k-token top hit made every later hit (5-34 tokens) a pointer, even
    with max_tokens 20000. A hit that could never fit is a pointer; the ones after it still
    carry their text, in rank order; a hit's text outranks the pointers after it (the last one
    goes so that the third hit's text fits)."""
    from markdown_memory.search.pack import entry_cost

    hits = [_hit(1, 1, None, 225_000), _hit(2, 1, None, 30), _hit(3, 1, None, 0), _hit(4, 1, None, 20)]
    pointers = sum(entry_cost(h) for h in hits)
    hits[2] = _hit(3, 1, None, 1000 - pointers - 10)  # fits once the last pointer goes
    out = pack_hits(hits, top_k=5, max_tokens=1000)
    assert _texts(out) == [False, True, True]
    out = pack_hits(hits, top_k=5, max_tokens=20_000)
    assert _texts(out) == [False, True, True, True]


def test_pack_gives_parent_and_child_both_their_text_and_drops_overlapping_lines():
    """Issue 14: a parent's short intro ("described below") ranked first turned its answering
    child into a pointer. Their texts are disjoint, so both carry content when they fit."""
    parent, child = _hit(1, 1, None, 50, end=9), _hit(1, 3, 1, 50, start=10, end=20)
    overlapping = _hit(1, 4, None, 50, start=15, end=30)
    out = pack_hits([parent, child, overlapping, _hit(2, 1, None, 50)], top_k=5, max_tokens=1000)
    # A hit repeating lines already returned is dropped; the rest all carry their text.
    assert [(r.file_path, r.start_line) for r in out] == [("d1.md", 1), ("d1.md", 10), ("d2.md", 1)]
    assert _texts(out) == [True, True, True]


def test_a_grandchild_keeps_its_content_beside_the_document_intro():
    """A document's H1 intro (an ancestor of every section) never turns the answering
    subsection into a pointer."""
    grand, child = _hit(1, 0, None, 50), _hit(1, 5, 2, 50)
    out = pack_hits([grand, child], top_k=5, max_tokens=1000)
    assert _texts(out) == [True, True]


def test_far_weaker_hits_come_as_pointers():
    # the third scores a fifth of the best
    hits = [_hit(1, 1, None, 50), _hit(2, 1, None, 50, score=0.9), _hit(3, 1, None, 50, score=0.2)]
    out = pack_hits(hits, top_k=5, max_tokens=1000)
    assert _texts(out) == [True, True, False]


def test_a_larger_top_k_never_takes_text_from_the_best_hits():
    """Trial finding: `search DOCKER_HIDE_LEGACY_COMMANDS --top-k 20` returned 20 pointers and no
    text, while --top-k 5 gave the 985-token first hit its text: the pointers of 19 weaker hits
    had reserved the budget. The lowest-ranked pointers now go first."""
    hits = [_hit(1, 1, None, 985)] + [_hit(d, 1, None, 300) for d in range(2, 21)]
    few = pack_hits(hits, top_k=5, max_tokens=2000)
    many = pack_hits(hits, top_k=20, max_tokens=2000)
    assert few[0].content is not None and many[0].content is not None
    assert 5 < len(many) < 20  # some pointers stay, the ones that cost the text went


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=25),
       st.integers(min_value=200, max_value=6000), st.integers(min_value=1, max_value=5))
def test_property_text_given_at_a_small_top_k_stays_at_a_larger_one(sizes, budget, small):
    hits = [_hit(d, 1, None, n) for d, n in enumerate(sizes, start=1)]
    texts = lambda out: {r.file_path for r in out if r.content is not None}  # noqa: E731
    few, many = pack_hits(hits, top_k=small, max_tokens=budget), pack_hits(hits, top_k=20, max_tokens=budget)
    assert texts(few) <= texts(many)
    from markdown_memory.search.pack import entry_cost
    spent = sum(r.tokens for r in many if r.content is not None) + sum(entry_cost(r) for r in many)
    assert spent <= budget or len(many) == 1


@pytest.mark.parametrize("query", QUERIES)
def test_hits_left_out_for_the_budget_are_counted_in_the_message(engine, query):
    """A short list is not taken for all there is: when the budget leaves found hits out (not
    even a pointer fits), the message says how many; with room for all, it says nothing of it."""
    import re

    roomy = engine.search(SearchRequest(query, top_k=10, max_tokens=20000))
    assert "left out to fit" not in (roomy.message or "")
    tight = engine.search(SearchRequest(query, top_k=10, max_tokens=500))
    left = len(roomy.results) - len(tight.results)
    match = re.search(r"(\d+) more hits? w(?:as|ere) left out to fit 500 tokens", tight.message or "")
    if left:
        assert match is not None and int(match.group(1)) == left, tight.message
    else:
        assert match is None
