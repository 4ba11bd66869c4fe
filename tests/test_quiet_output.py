"""Quiet CLI output (issue 27 point 5): a hit whose ``matched_by`` is empty prints no empty
item in its parentheses (it printed ``(score 0.03872, 99 tokens, )``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import indexed_engine
from markdown_memory.cli.search import render_search
from markdown_memory.models import SearchRequest


def test_a_hit_with_no_matched_by_prints_no_empty_item(docs_root: Path) -> None:
    engine = indexed_engine(docs_root, "none")
    try:
        answer = engine.search(SearchRequest("install", top_k=2))
    finally:
        engine.close()
    assert answer.results
    bare = replace(answer, results=tuple(replace(h, matched_by=()) for h in answer.results))
    text = render_search(bare.to_dict())
    headers = [line for line in text.split("\n") if line[:1].isdigit()]
    assert headers and all(h.endswith(" tokens)") for h in headers), headers
    assert ", )" not in text and "()" not in text
    full = render_search(answer.to_dict()).split("\n")[0]
    assert full.endswith(f"tokens, {'+'.join(answer.results[0].matched_by)})")
