"""Every MCP tool answer fits the client's tool-output limit (case 055).

An agent's client refuses a tool result past its limit (Claude Code: 25,000 tokens) and the
agent gets an error instead of an answer: a 5,251-heading outline was 1.23 M characters. Each
answer passes :func:`fit_answer` at the adapter's edge (``Runtime.call``); one under
``limits.MAX_ANSWER_BYTES`` is returned unchanged (the usual case: one serialisation). One over
it is cut, and says so in ``truncated`` (``field``, ``kept``, ``omitted``, ``note``: how to get
the rest):

- an outline (``headings``) keeps the deepest tree depth that fits (``max_depth`` in the note),
  else its first headings;
- a paged list (``list_documents``' documents, ``get_links``' two lists) keeps its first items
  and ``next_offset`` moves back to the first one left out;
- any other answer keeps the first items of its largest list (search hits are in rank order),
  else the start of its longest text.
"""

from __future__ import annotations

import json
from typing import Any

from .. import messages
from ..limits import MAX_ANSWER_BYTES

#: the lists a paged answer pages together (each from the same offset)
_PAGED = {"documents": ("documents",), "outgoing": ("outgoing", "backlinks"), "backlinks": ("outgoing", "backlinks")}


def answer_bytes(data: Any) -> int:
    """Size of ``data`` as the tool result carries it: compact UTF-8 JSON, in bytes."""
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def fit_answer(data: dict[str, Any], limit: int = MAX_ANSWER_BYTES) -> dict[str, Any]:
    """``data`` when its JSON is at most ``limit`` bytes, else a copy cut to fit (module
    docstring). Never raises on a JSON-able dict."""
    if answer_bytes(data) <= limit:
        return data
    headings = data.get("headings")
    if isinstance(headings, list) and headings and all(isinstance(h, dict) for h in headings):
        cut = _by_depth(data, headings, limit)
        if cut is not None:
            return cut
    lists = [k for k, v in data.items() if isinstance(v, list) and v]
    if not lists:
        return _shorten_text(data, limit)
    field = max(lists, key=lambda k: answer_bytes(data[k]))
    together = _PAGED.get(field, (field,)) if "next_offset" in data else (field,)
    return _first_items(data, together, limit)


def _depth(heading: dict[str, Any]) -> int:
    return str(heading.get("heading_path", "")).count(" > ") + 1


def _by_depth(data: dict[str, Any], headings: list[dict[str, Any]], limit: int) -> dict[str, Any] | None:
    """The outline with only headings up to the deepest depth that fits, or None when even the
    top headings alone do not fit."""
    for depth in range(max(_depth(h) for h in headings) - 1, 0, -1):
        kept = [h for h in headings if _depth(h) <= depth]
        omitted = len(headings) - len(kept)
        note = messages.answer_cut("headings", len(kept), omitted, max_depth=depth)
        out = {**data, "headings": kept,
               "truncated": {"field": "headings", "kept": len(kept), "omitted": omitted, "max_depth": depth, "note": note}}
        if answer_bytes(out) <= limit:
            return out
    return None


def _first_items(data: dict[str, Any], fields: tuple[str, ...], limit: int) -> dict[str, Any]:
    """``data`` with the first ``n`` items of each of ``fields`` (the largest ``n`` that fits,
    found by bisection), ``truncated`` saying so, ``next_offset`` moved back for a paged list."""
    longest = max(len(data.get(f) or []) for f in fields)
    offset = _page_offset(data, fields)

    def cut(n: int) -> dict[str, Any]:
        out = {**data, **{f: list(data.get(f) or [])[:n] for f in fields}}
        omitted = sum(max(0, len(data.get(f) or []) - n) for f in fields)
        paged = offset is not None
        if offset is not None:
            out["next_offset"] = offset + n
        out["truncated"] = {"field": fields[0], "kept": n, "omitted": omitted,
                            "note": messages.answer_cut(" and ".join(fields), n, omitted, paged=paged)}
        return out

    low, high = 0, longest - 1  # n = longest is known to be too big
    while low < high:
        mid = (low + high + 1) // 2
        if answer_bytes(cut(mid)) <= limit:
            low = mid
        else:
            high = mid - 1
    out = cut(low)
    return out if answer_bytes(out) <= limit else _shorten_text(out, limit)


def _page_offset(data: dict[str, Any], fields: tuple[str, ...]) -> int | None:
    """The offset the page in ``data`` started at (paged answers only), from its ``next_offset``
    or, on the last page, its totals."""
    if "next_offset" not in data:
        return None
    sizes = [len(data.get(f) or []) for f in fields]
    following = data.get("next_offset")
    if isinstance(following, int):
        if fields == ("documents",):
            return following - sizes[0]
        from ..reading.links import LINKS_PAGE

        return following - LINKS_PAGE
    totals = [data.get("total") if f == "documents" else data.get(f"{f}_total") for f in fields]
    offsets = [t - s for t, s in zip(totals, sizes) if isinstance(t, int) and s]
    return max(offsets) if offsets else None


def _shorten_text(data: dict[str, Any], limit: int) -> dict[str, Any]:
    """``data`` with its longest top-level text cut so the whole fits (the last resort: answers
    whose texts are bounded by their own pages never get here)."""
    texts = [k for k, v in data.items() if isinstance(v, str)]
    if not texts:
        return data
    field = max(texts, key=lambda k: len(data[k]))
    excess = answer_bytes(data) - limit + 400  # room for the note
    text = data[field]
    keep = max(0, len(text.encode("utf-8")) - excess)
    short = text.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
    note = messages.answer_cut(field, len(short), len(text) - len(short))
    return {**data, field: short, "truncated": {"field": field, "kept": len(short), "omitted": len(text) - len(short),
                                                "note": note}}
