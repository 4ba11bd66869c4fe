"""After fusion: drop repeated texts, and let a parent and its other subsections join when two
of its subsections rank (``rank`` applies both to the fused order)."""

from __future__ import annotations

from ..store import Store
from .candidates import Candidate, hydrate
from .cues import bodyless
from .tuning import TUNING, Tuning


def unique_text(ordered: list[Candidate]) -> list[Candidate]:
    """Drop a candidate whose section text is identical to a better one's: generated reference
    pages repeat whole option blocks ("Copy Options" in every copy-like command), and seven
    copies of one text would fill the answer with a single section."""
    seen: set[str] = set()
    out = []
    for c in ordered:
        key = c.row["text"].strip()
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out


def with_shared_parents(store: Store, ordered: list[Candidate], tuning: Tuning = TUNING) -> list[Candidate]:
    """When two or more subsections of one section rank in the top ``tuning.sibling_window``,
    the question is probably about what they have in common, which their parent's own text (its
    introduction) states: the parent joins the ranking just below the second of them, unless it
    is already there or has no text of its own. When the parent ranks too, its other
    subsections (a short list of alternatives) follow. Returns the new order, best first."""
    top = ordered[:tuning.sibling_window]
    groups: dict[tuple[int, int], list[Candidate]] = {}
    for c in top:
        parent_ordinal = c.row.get("parent_ordinal")
        if parent_ordinal is not None:
            groups.setdefault((c.row["doc_id"], parent_ordinal), []).append(c)
    added = _parents(store, ordered, groups, tuning) + _alternatives(store, ordered, top, groups, tuning)
    return sorted({id(c): c for c in ordered + added}.values(), key=lambda c: -c.score)


def _parents(store: Store, ordered: list[Candidate], groups: dict[tuple[int, int], list[Candidate]],
             tuning: Tuning) -> list[Candidate]:
    """The parents of ``groups`` with two or more ranking subsections, scored just below the
    second of them (an already ranked parent is raised there)."""
    present = {(c.row["doc_id"], c.row["ordinal"]): c for c in ordered}
    added: list[Candidate] = []
    for (doc_id, ordinal), kids in groups.items():
        if len(kids) < 2:
            continue
        known = present.get((doc_id, ordinal))
        if known is not None:
            if not bodyless(known.row["text"], tuning.bodyless_chars):
                known.score = max(known.score, kids[1].score * 0.999)
                added.append(known)
            continue
        parent_id = store.section_id_at(doc_id, ordinal)
        if parent_id is None:
            continue
        parent_row = hydrate(store, [parent_id]).get(parent_id)
        if parent_row is None or bodyless(parent_row["text"], tuning.bodyless_chars):
            continue
        parent = Candidate(parent_id, row=parent_row)
        parent.score = kids[1].score * 0.999
        parent.coverage = max(k.coverage for k in kids)
        added.append(parent)
    return added


def _alternatives(store: Store, ordered: list[Candidate], top: list[Candidate],
                  groups: dict[tuple[int, int], list[Candidate]], tuning: Tuning) -> list[Candidate]:
    """A short list of alternatives ("using an SSH tunnel", "using rclone authorize", "copying
    the config file") whose parent and two of them rank: the rest answer the same question in
    another way, so they follow the second of them, in file order (up to
    ``tuning.sibling_max`` children under the parent)."""
    window = {(c.row["doc_id"], c.row["ordinal"]) for c in top}
    ranked = {c.section_id: c for c in ordered}
    added: list[Candidate] = []
    for (doc_id, ordinal), kids in groups.items():
        if len(kids) < 2 or (doc_id, ordinal) not in window:
            continue  # the question is about the parent's topic only when the parent ranks too
        listed = store.children([(doc_id, ordinal)]).get((doc_id, ordinal), [])
        if len(listed) > tuning.sibling_max:
            continue
        first_two = {k.section_id for k in kids[:2]}
        others = [sid for sid, _t in listed if sid not in first_two]
        rows = hydrate(store, [sid for sid in others if sid not in ranked])
        for i, sid in enumerate(others):
            floor = kids[1].score * (0.998 - 0.001 * i)
            if sid in ranked:
                ranked[sid].score = max(ranked[sid].score, floor)
                continue
            row = rows.get(sid)
            if row is None or bodyless(row["text"], tuning.bodyless_chars):
                continue
            sibling = Candidate(sid, row=row)
            sibling.score = floor
            sibling.coverage = min(k.coverage for k in kids)
            added.append(sibling)
    return added
