"""The ``passages`` table: the pieces of a section that get embedded (paragraphs, list items,
code blocks, table rows), with ``embed_key`` (identity of the text embedded for it, see
``index.embedding.passage_keys``) and ``has_vector`` (0 = pending). Their vectors are in ``vectors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .common import marks
from .scope import Scope, passage_clause

if TYPE_CHECKING:  # pragma: no cover
    from ..markdown.parse import Passage
    from .connection import Store


class PassageSpan(NamedTuple):
    """A passage as a search hit shows it: its text and 1-based file lines (inclusive)."""

    id: int
    text: str
    start_line: int
    end_line: int


class PendingPassage(NamedTuple):
    """A passage still without a vector, with what its embedding text is built from: its
    section's ``base_path`` and ``level`` and its document's title."""

    id: int
    section_id: int
    kind: str
    text: str
    start_line: int
    end_line: int
    embed_key: str
    base_path: str
    level: int
    doc_title: str


def insert_passages(store: Store, doc_id: int, section_ids: Sequence[int], keyed: Iterable[tuple[Passage, str]]) -> None:
    """Insert ``(Passage, embed_key)`` pairs of document ``doc_id``, pending (no vector);
    ``section_ids[p.section]`` is each passage's section. Call inside a transaction."""
    rows = []
    for p, key in keyed:
        rows.append((section_ids[p.section], doc_id, p.ordinal, p.kind, p.text, p.start_line, p.end_line, key, p.lang))
    store.conn.executemany(
        "INSERT INTO passages(section_id, doc_id, ordinal, kind, text, start_line, end_line, embed_key, lang) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def passage_embed_keys(store: Store, doc_id: int) -> list[tuple[int, str]]:
    """``[(passage id, embed_key)]`` of document ``doc_id``'s passages."""
    return [(r[0], r[1]) for r in store.conn.execute("SELECT id, embed_key FROM passages WHERE doc_id = ?", (doc_id,))]


def embedded_passage_ids(store: Store, doc_id: int) -> list[int]:
    """The ids of document ``doc_id``'s passages that have a vector."""
    return [r[0] for r in store.conn.execute("SELECT id FROM passages WHERE doc_id = ? AND has_vector = 1", (doc_id,))]


def passages_of_sections(store: Store, section_ids: list[int],
                         scope: Scope | None = None) -> dict[int, list[PassageSpan]]:
    """``{section id: [PassageSpan]}`` in passage order, for the given sections (one query;
    a section without passages is left out); with a block filter in ``scope``, only the
    passages of that kind and language."""
    by_section: dict[int, list[PassageSpan]] = {}
    if not section_ids:
        return by_section
    clause, params = passage_clause(Scope(kind=scope.kind, lang=scope.lang) if scope is not None else None)
    for pid, sid, text, a, b in store.conn.execute(
        f"SELECT p.id, p.section_id, p.text, p.start_line, p.end_line FROM passages p "
        f"WHERE p.section_id IN ({marks(len(section_ids))}){clause} ORDER BY p.ordinal",
        [*section_ids, *params],
    ):
        by_section.setdefault(sid, []).append(PassageSpan(pid, text, a, b))
    return by_section


def passage_sections(store: Store, passage_ids: list[int], scope: Scope | str | None = None) -> dict[int, int]:
    """``{passage id: section id}`` for those of ``passage_ids`` inside ``scope`` (a
    ``scope.Scope`` or a path prefix; every one without); one query."""
    clause, params = passage_clause(scope)
    rows = store.conn.execute(
        f"SELECT p.id, p.section_id FROM passages p JOIN documents d ON d.id = p.doc_id "
        f"WHERE p.id IN ({marks(len(passage_ids))}){clause}",
        [*passage_ids, *params],
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def pending_passages(store: Store) -> list[PendingPassage]:
    """Every passage without a vector, ordered by section id, then passage order."""
    rows = store.conn.execute(
        "SELECT p.id, p.section_id, p.kind, p.text, p.start_line, p.end_line, p.embed_key, s.base_path, s.level, d.title "
        "FROM passages p JOIN sections s ON s.id = p.section_id JOIN documents d ON d.id = p.doc_id "
        "WHERE p.has_vector = 0 ORDER BY p.section_id, p.ordinal"
    ).fetchall()
    return [PendingPassage(*r) for r in rows]


def set_embed_keys(store: Store, pairs: Sequence[tuple[str, int]]) -> None:
    """Set ``embed_key`` per ``(key, passage id)`` pair. Call inside a transaction."""
    store.conn.executemany("UPDATE passages SET embed_key = ? WHERE id = ?", pairs)
