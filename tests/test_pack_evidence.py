"""The budget goes where the evidence is (search/pack.py): a sure first hit (high calibrated
``p_answer``) takes it; an unsure one gives short text to more candidates."""

from __future__ import annotations

from dataclasses import replace

from markdown_memory.models import Hit
from markdown_memory.search.pack import SHORT_TOKENS, SURE, UNSURE, pack_hits


def _hit(doc: int, tokens: int, score: float, p: float | None, heading: str = "h") -> Hit:
    return Hit(f"d{doc}.md", heading, 1, 10, tokens, score, "x" * tokens * 4, "x", (1, 1), ("keyword",), p_answer=p)


def _texts(out: list[Hit]) -> list[bool]:
    return [h.content is not None for h in out]


def _ranked(p_first: float | None) -> list[Hit]:
    """A first hit of 400 tokens, then four close candidates of 300 tokens in other files."""
    rest = None if p_first is None else min(p_first, 0.2)
    return [_hit(1, 400, 1.0, p_first)] + [_hit(d, 300, 0.95, rest) for d in range(2, 6)]


def test_a_sure_first_hit_takes_most_of_the_budget():
    out = pack_hits(_ranked(max(SURE, 0.95)), top_k=5, max_tokens=2000)
    assert _texts(out) == [True, False, False, False, False]
    text = sum(h.tokens for h in out if h.content is not None)
    assert out[0].tokens / text == 1.0
    # a short sibling answering together with the sure hit still comes with it
    sibling = replace(_hit(1, 120, 0.9, 0.3, heading="h > b"), start_line=20, end_line=25)
    first = replace(_ranked(0.95)[0], heading_path="h > a")
    out = pack_hits([first, sibling, *_ranked(0.95)[1:]], top_k=5, max_tokens=2000)
    assert _texts(out)[:2] == [True, True] and not any(_texts(out)[2:])


def test_an_unsure_answer_gives_short_text_to_more_candidates():
    unsure = pack_hits(_ranked(UNSURE / 2), top_k=5, max_tokens=2000)
    neutral = pack_hits(_ranked(None), top_k=5, max_tokens=2000)
    assert sum(_texts(unsure)) == 5 > sum(_texts(neutral)) == 3
    # a long candidate is still a pointer: only short text is spread
    long_one = [*_ranked(0.2)[:4], _hit(9, SHORT_TOKENS + 200, 0.95, 0.1)]
    assert _texts(pack_hits(long_one, top_k=5, max_tokens=5000)) == [True, True, True, True, False]


def test_spread_text_still_fits_the_budget():
    out = pack_hits(_ranked(0.1), top_k=5, max_tokens=1000)
    assert sum(h.tokens for h in out if h.content is not None) <= 1000
    assert out[0].content is not None
