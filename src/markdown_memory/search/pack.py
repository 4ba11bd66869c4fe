"""Fit ranked hits into a token budget without cutting a section mid-way.

Every returned hit costs ``entry_cost`` (its path, breadcrumb, lines and preview); the budget
goes where the evidence is, read from the first hit's calibrated ``p_answer``
(search/calibration.py): a *sure* first hit (``p_answer >= SURE``) takes the budget, and the
hits after it come as pointers unless they answer together with it (a parent, child or sibling
of at most ``TOGETHER_TOKENS``); an *unsure* one (``p_answer < UNSURE``) spreads it: every
hit of at most ``SHORT_TOKENS`` carries its text, so the answer is in hand more often. Otherwise
(and for hits without an estimate) a hit earns its full ``content`` when it is one of the
``LEAD_HITS`` best, or a small section (<= ``SMALL_TOKENS``) scoring within
``CLOSE_SCORE_SHARE`` of the best, or a section (<= ``TOGETHER_TOKENS``) answering together
with one already carrying text (its parent, child or sibling); never when it scores below
``CONTENT_SCORE_SHARE`` of the best. Hits earning text get it in rank order while content plus
all pointers stays within ``max_tokens`` (at least one hit is always returned); every other hit
is a pointer: path, heading_path, lines, tokens and the <= 100-character preview, no content.
A hit that does not fit does not end the run: the hits after it that earn text and fit still
carry it, so the top hits carry text (never one short intro and nine pointers), and a hit
larger than the whole budget is read paged with ``read_section``. A hit's text outranks the
pointers of the hits after it: when only those keep it out, the lowest-ranked hits are left
out instead (a larger ``top_k`` never costs the best hits their text).

A section's content is its own text only (its heading down to the next heading of any level),
so a parent and its child never repeat each other's text: both carry it when the budget allows
(a parent's short introduction, "described below", must not turn its answering child into a
pointer, and the child's detail must not hide the parent's overview). A hit whose line range
overlaps one already chosen in the same file is dropped. Token counts use
``markdown_memory.tokens.count_tokens``.

Session memory (the MCP server): a hit whose :func:`section_key` is in ``sent`` (its text went
out in full earlier in the session) comes as a pointer marked ``already_sent`` and costs only
its pointer, so the budget goes to the next hits; it does not end the run of hits carrying
content (the agent asked something new).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container, Sequence
from dataclasses import replace

from .. import messages
from ..models import Hit, SearchAnswer
from ..text import count_tokens

POINTER_TOKENS = 30  # fixed JSON cost of one entry (keys, lines, score, matched_by)
#: A hit scoring below this share of the best hit's score comes as a pointer even when its
#: text would fit: a far weaker hit is rarely the answer and its text costs the reader tokens.
CONTENT_SCORE_SHARE = 0.5
#: The best hits carry their text when it fits (ranked scores are close: rank is the evidence).
LEAD_HITS = 3
#: Past the lead, a section this small (tokens) scoring within this share of the best carries text.
SMALL_TOKENS, CLOSE_SCORE_SHARE = 150, 0.9
#: Past the lead, a section this small (tokens) carries text beside a parent, child or sibling that does.
TOGETHER_TOKENS = 300
#: A first hit at least this likely to answer (its ``p_answer``) takes the budget.
SURE = 0.8
#: Below this, every hit of at most SHORT_TOKENS carries its text (more candidates in hand).
UNSURE, SHORT_TOKENS = 0.5, 350


def entry_cost(hit: Hit) -> int:
    """Estimated tokens of one result entry without its content: the fixed JSON keys plus its
    path, breadcrumb and preview."""
    return POINTER_TOKENS + count_tokens(f"{hit.file_path} {hit.heading_path} {hit.preview}")


def section_key(file_path: str, heading_path: str, content: str) -> str:
    """The identity of a section's text as sent to an agent: its file, breadcrumb and a hash of
    its text. It survives re-indexing of an unchanged file (and moved line numbers); an edit
    of the section's own text gives a new key."""
    digest = hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{file_path}\x00{heading_path}\x00{digest}"


def pack_hits(hits: Sequence[Hit], *, top_k: int, max_tokens: int,
              sent: Container[str] | None = None) -> list[Hit]:
    """Choose up to ``top_k`` of the ranked ``hits`` (each carrying its ``content``) and decide
    which keep it: the others come back as pointers (``content`` None). A hit whose lines
    overlap a better hit's in the same file is skipped. A hit whose :func:`section_key` is in
    ``sent`` comes as a pointer with ``already_sent`` True (see module docstring)."""
    chosen = distinct_hits(hits, top_k)
    # Every chosen hit costs at least a pointer; content is added in rank order while the total
    # (content of the hits so far + pointers for all the rest) stays within the budget. A hit's
    # text outranks the pointers of the hits after it: when only those keep it out, the lowest
    # ranked of them go (so a larger top_k never costs the best hits their text).
    costs = [entry_cost(h) for h in chosen]
    while len(chosen) > 1 and sum(costs) > max_tokens:
        chosen.pop()
        costs.pop()
    used = sum(costs)
    out: list[Hit] = []
    best = max((h.score for h in chosen), default=0.0)
    sure = chosen[0].p_answer if chosen else None
    i = 0
    while i < len(chosen):
        hit = chosen[i]
        i += 1
        if sent is not None and hit.content is not None and section_key(
                hit.file_path, hit.heading_path, hit.content) in sent:
            out.append(replace(hit, content=None, already_sent=True))
            continue
        drop = None
        if _earns_text(hit, i - 1, best, [h for h in out if h.content is not None], sure):
            drop = _trailing_to_drop(costs, i, used + hit.tokens - max_tokens)
        if drop is None:
            # a pointer; the hits after it may still carry their text (the top hits should,
            # and one too large for what is left is read paged with read_section)
            hit = replace(hit, content=None)
        else:
            if drop:
                used -= sum(costs[-drop:])
                del chosen[-drop:], costs[-drop:]
            used += hit.tokens
        out.append(hit)
    return out


def distinct_hits(hits: Sequence[Hit], top_k: int) -> list[Hit]:
    """The first ``top_k`` of ``hits`` whose lines overlap no better hit's in the same file:
    what an answer returns when its budget allows."""
    chosen: list[Hit] = []
    spans: dict[str, list[tuple[int, int]]] = {}
    for hit in hits:
        a, b = hit.start_line, hit.end_line
        taken = spans.setdefault(hit.file_path, [])
        if any(a <= y and x <= b for x, y in taken):
            continue
        chosen.append(hit)
        taken.append((a, b))
        if len(chosen) >= top_k:
            break
    return chosen


def _earns_text(hit: Hit, rank: int, best: float, texts: Sequence[Hit], sure: float | None = None) -> bool:
    """Whether the evidence is worth the hit's text (module docstring): the first hit; after a
    sure first hit (``sure``: its ``p_answer``) only a section answering together with one
    carrying text; after an unsure one, any short section; else one of the ``LEAD_HITS`` best, a
    small section scoring close to the best, or a section answering together with one already
    carrying text (parent, child or sibling in its file)."""
    if rank == 0:
        return True
    together = hit.tokens <= TOGETHER_TOKENS and any(_together(hit, t) for t in texts)
    if sure is not None and sure >= SURE:
        return together
    if sure is not None and sure < UNSURE and hit.tokens <= SHORT_TOKENS:
        return True
    if hit.score < CONTENT_SCORE_SHARE * best:
        return False
    if rank < LEAD_HITS:
        return True
    if hit.score >= CLOSE_SCORE_SHARE * best and hit.tokens <= SMALL_TOKENS:
        return True
    return together


def _together(a: Hit, b: Hit) -> bool:
    """Sections of one file that answer together: one contains the other, or they are siblings
    (the same parent breadcrumb)."""
    if a.file_path != b.file_path:
        return False
    pa, pb = a.heading_path.split(" > "), b.heading_path.split(" > ")
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n] or pa[:-1] == pb[:-1]


def _trailing_to_drop(costs: list[int], kept: int, over: int) -> int | None:
    """How many of the last entries (beyond the first ``kept``) must go for ``over`` tokens to
    be saved: 0 when nothing is over, None when dropping all of them is not enough."""
    drop = 0
    while over > 0 and len(costs) - drop > kept:
        drop += 1
        over -= costs[-drop]
    return drop if over <= 0 else None


def answer_tokens(answer: SearchAnswer, *, agent: bool = True) -> int:
    """Estimated tokens of the whole answer as it is sent (its ``to_dict`` JSON: hits, message
    and index status), the figure ``max_tokens`` bounds; compact JSON for an agent, as the MCP
    tool sends it."""
    separators = (",", ":") if agent else None
    return count_tokens(json.dumps(answer.to_dict(agent=agent), ensure_ascii=False, separators=separators))


def fit_answer(answer: SearchAnswer, max_tokens: int, *, found: int = 0) -> SearchAnswer:
    """The answer trimmed until its whole JSON in the agent view (compact, as the MCP tool sends
    it; the one measure for every adapter, so the CLI and the server keep the same hits) fits
    ``max_tokens``: the packer plans with estimated entry costs and knows nothing of the message
    and index status, so the last pointers go first, then the last hit carrying content becomes
    a pointer; one hit always stays (as a pointer when even its content does not fit, and then
    without its preview). ``models.MIN_MAX_TOKENS`` is chosen so that this last pointer, the
    message and the index status always fit.

    ``found``: how many hits the search had for this answer (:func:`distinct_hits`); when fewer
    are returned, the message says how many were left out for the budget (a reader must not
    take a short list for all there is)."""
    fitted = _fit(answer, max_tokens)
    for _ in range(2):  # the note itself costs tokens: it may push one more hit out
        left = found - len(fitted.results)
        if left <= 0:
            break
        noted = replace(answer, results=fitted.results,
                        message=messages.append_note(answer.message, messages.hits_left_out(left, max_tokens)))
        fitted = _fit(noted, max_tokens)
    return fitted


def _fit(answer: SearchAnswer, max_tokens: int) -> SearchAnswer:
    hits = list(answer.results)
    trimmed = answer
    while answer_tokens(trimmed) > max_tokens and hits:
        last_content = max((i for i, h in enumerate(hits) if h.content is not None), default=-1)
        if len(hits) > 1 and last_content < len(hits) - 1:
            hits.pop()  # a pointer past the last text: the cheapest loss
        elif last_content >= 0:
            hits[last_content] = replace(hits[last_content], content=None)
        elif hits[0].preview:
            hits[0] = replace(hits[0], preview="")  # the address stays: read_section fetches it
        else:
            break  # one pointer left: nothing more to give up
        trimmed = replace(answer, results=tuple(hits))
    return trimmed
