"""Fit ranked hits into a token budget without cutting a section mid-way.

Every returned hit costs ``entry_cost`` (its path, breadcrumb, lines and preview); hits carry their
full ``content`` in rank order while content plus all pointers stays within ``max_tokens``
(at least one hit is always returned); a hit that does not fit (and every later one) becomes a
pointer: path,
heading_path, lines, tokens and the <= 100-character preview, no content. A section whose
ancestor (or descendant) is already in the answer is dropped, so a parent and its own child are
never both returned in full. Token counts use ``markdown_memory.tokens.count_tokens``.
"""

from __future__ import annotations

from typing import Any

from ..tokens import count_tokens

POINTER_TOKENS = 30  # fixed JSON cost of one entry (keys, lines, score, matched_by)


def entry_cost(hit: dict[str, Any]) -> int:
    """Estimated tokens of one result entry without its content: the fixed JSON keys plus its
    path, breadcrumb and preview."""
    return POINTER_TOKENS + count_tokens(f"{hit['file_path']} {hit['heading_path']} {hit.get('preview', '')}")


def _ancestors(hit: dict[str, Any], parents: dict[tuple[int, int], int | None]) -> set[tuple[int, int]]:
    out = set()
    doc = hit["_doc_id"]
    parent = hit["_parent"]
    guard = 0
    while parent is not None and guard < 64:
        out.add((doc, parent))
        parent = parents.get((doc, parent))
        guard += 1
    return out


def pack_hits(hits: list[dict[str, Any]], *, top_k: int, max_tokens: int, parents: dict[tuple[int, int], int | None] | None = None) -> list[dict[str, Any]]:
    """Choose up to ``top_k`` hits and decide which carry content. Private ``_`` keys are
    removed from the returned dicts. ``parents`` maps (doc_id, ordinal) -> parent ordinal for
    ancestor checks beyond one level (defaults to direct parents only)."""
    parents = parents or {}
    chosen: list[dict[str, Any]] = []
    keys: set[tuple[int, int]] = set()
    ancestry: list[set[tuple[int, int]]] = []
    for hit in hits:
        key = (hit["_doc_id"], hit["_ordinal"])
        anc = _ancestors(hit, parents)
        if anc & keys or any(key in a for a in ancestry):
            continue  # parent/child of a better hit: the better one already answers
        chosen.append(hit)
        keys.add(key)
        ancestry.append(anc)
        if len(chosen) >= top_k:
            break
    # Every chosen hit costs at least a pointer; content is added in rank order while the total
    # (content of the hits so far + pointers for all the rest) stays within the budget.
    costs = [entry_cost(h) for h in chosen]
    while len(chosen) > 1 and sum(costs) > max_tokens:
        chosen.pop()
        costs.pop()
    used = sum(costs)
    full = True
    out = []
    for hit in chosen:
        item = {k: v for k, v in hit.items() if not k.startswith("_")}
        extra = int(item["tokens"])
        if full and used + extra <= max_tokens:
            used += extra
        else:
            full = False
            item.pop("content", None)
        out.append(item)
    return out
