"""Search filters as SQL: a ``Scope`` (path prefix, tags, block kind, code language) becomes
the ``AND ...`` clause that the keyword queries, the vector candidate set and ``list_documents``
add, so a filter applies before ranking and the token budget, never to a finished top list.

* ``path_prefix``: the file or the folder (``common.path_clause``).
* ``tags`` with ``tags_mode`` ``any`` (a document carrying one of them) or ``all`` (every one);
  a tag matches its nested tags (``a`` matches ``a/b``); front-matter and inline tags alike.
* ``kind``: a section holding a passage of that kind (``code``, ``table``, ``list``,
  ``prose``; see ``KINDS``), and for the vector side only such passages; ``lang`` (a code
  language, with its other spellings: ``vault.language_family``) implies ``kind`` ``code``.
* ``heading``: a section whose breadcrumb (``base_path``, without a ``(Part n)`` suffix)
  contains the text, ASCII case ignored (``LIKE``): a heading's name selects it and every
  section below it, ``A > B`` that part of the tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..markdown.vault import language_family
from ..text import like_escape
from .common import bound_chunks, marks, path_clause
from .tags import has_tagged, tag_condition

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

#: Filter names -> the passage kinds (``markdown/passages.py``) they select.
KINDS: dict[str, tuple[str, ...]] = {
    "code": ("code",),
    "table": ("table_row",),
    "list": ("list_item",),
    "prose": ("paragraph",),
}
TAG_MODES = ("any", "all")


@dataclass(frozen=True)
class Scope:
    """What a search or a listing is restricted to; every field empty = everything."""

    path_prefix: str | None = None
    tags: tuple[str, ...] = ()
    tags_mode: str = "any"
    kind: str | None = None
    lang: str | None = None
    heading: str | None = None

    def filters(self) -> dict[str, object]:
        """The filters that are set, name -> value (the path prefix and ``tags_mode`` aside), in
        the order a message names them."""
        values = {"tags": self.tags, "kind": self.kind, "lang": self.lang, "heading": self.heading}
        return {name: value for name, value in values.items() if value}

    @property
    def narrows_sections(self) -> bool:
        """True when a filter besides the path prefix is set (one that may leave no section)."""
        return bool(self.filters())

    @property
    def passage_kinds(self) -> tuple[str, ...]:
        """The passage kinds the block filters select (``()``: any)."""
        if self.kind:
            return KINDS[self.kind]
        return KINDS["code"] if self.lang else ()

    @property
    def blocks(self) -> bool:
        """True when a block kind or code language is asked for."""
        return bool(self.kind or self.lang)

    @property
    def restricts(self) -> bool:
        """True when any filter is set (the path prefix included)."""
        return bool(self.path_prefix or self.narrows_sections)


def as_scope(scope: Scope | str | None) -> Scope:
    """``scope`` itself, a Scope of the path prefix ``scope``, or the empty Scope."""
    if isinstance(scope, Scope):
        return scope
    return Scope(path_prefix=scope or None)


def document_clause(scope: Scope | str | None, doc: str = "d") -> tuple[str, list[Any]]:
    """``(" AND ...", params)`` restricting a query over ``documents`` (as ``doc``) to the path
    prefix and the tags of ``scope``; ``("", [])`` when neither is set."""
    s = as_scope(scope)
    clause, params = path_clause(s.path_prefix, doc)
    if s.tags:
        conditions = [tag_condition(t) for t in s.tags]
        if s.tags_mode == "all":
            for cond, ps in conditions:
                clause += f" AND {doc}.id IN (SELECT doc_id FROM tags WHERE {cond})"
                params += ps
        else:
            clause += f" AND {doc}.id IN (SELECT doc_id FROM tags WHERE {' OR '.join(c for c, _p in conditions)})"
            params += [p for _c, ps in conditions for p in ps]
    return clause, params


def _passage_condition(s: Scope, passage: str) -> tuple[str, list[Any]]:
    kinds = s.passage_kinds
    clause = f"{passage}.kind IN ({marks(len(kinds))})"
    params: list[Any] = list(kinds)
    if s.lang:
        langs = sorted(language_family(s.lang))
        clause += f" AND {passage}.lang IN ({marks(len(langs))})"
        params += langs
    return clause, params


def section_clause(scope: Scope | str | None, doc: str = "d", section: str = "s") -> tuple[str, list[Any]]:
    """``document_clause`` plus, with a block filter, "the section (``section``) holds a
    passage of that kind (and language)"."""
    s = as_scope(scope)
    clause, params = document_clause(s, doc)
    if s.blocks:
        cond, ps = _passage_condition(s, "q")
        clause += f" AND {section}.id IN (SELECT q.section_id FROM passages q WHERE {cond})"
        params += ps
    if s.heading:
        clause += f" AND {section}.base_path LIKE ? ESCAPE '\\'"
        params.append(f"%{like_escape(s.heading)}%")
    return clause, params


def passage_clause(scope: Scope | str | None, doc: str = "d", passage: str = "p") -> tuple[str, list[Any]]:
    """``document_clause`` plus, with a block filter, the passage's own kind and language."""
    s = as_scope(scope)
    clause, params = document_clause(s, doc)
    if s.blocks:
        cond, ps = _passage_condition(s, passage)
        clause += f" AND {cond}"
        params += ps
    if s.heading:
        clause += f" AND {passage}.section_id IN (SELECT id FROM sections WHERE base_path LIKE ? ESCAPE '\\')"
        params.append(f"%{like_escape(s.heading)}%")
    return clause, params


def allowed_passages(store: Store, scope: Scope | str | None) -> np.ndarray | None:
    """int64 ids of the embedded passages inside ``scope`` (sorted), or None when it restricts
    nothing: the vector side's candidate set (``vectors.knn``'s ``allowed``)."""
    s = as_scope(scope)
    if not s.restricts:
        return None
    clause, params = passage_clause(s)
    rows = store.conn.execute(
        f"SELECT p.id FROM passages p JOIN documents d ON d.id = p.doc_id WHERE p.has_vector = 1{clause} ORDER BY p.id",
        params,
    ).fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


def has_scoped_sections(store: Store, scope: Scope | str | None) -> bool:
    """True when some section lies inside ``scope``."""
    clause, params = section_clause(scope)
    sql = f"SELECT 1 FROM sections s JOIN documents d ON d.id = s.doc_id WHERE 1 = 1{clause} LIMIT 1"
    return store.conn.execute(sql, params).fetchone() is not None


def empty_filters(store: Store, scope: Scope | str | None) -> list[str]:
    """The filters of ``scope`` that match nothing on their own (``"tags"``, ``"kind"``,
    ``"lang"``, ``"heading"``); ``[]`` when each matches something (then only their combination is empty,
    see ``has_scoped_sections``). The path prefix is the caller's (``has_documents_under``)."""
    s = as_scope(scope)
    out = []
    if s.tags and not has_tagged(store, s.tags, s.tags_mode):
        out.append("tags")
    if s.kind and not has_scoped_sections(store, Scope(kind=s.kind)):
        out.append("kind")
    if s.lang and not has_scoped_sections(store, Scope(lang=s.lang)):
        out.append("lang")
    if s.heading and not has_scoped_sections(store, Scope(heading=s.heading)):
        out.append("heading")
    return out


def sections_in_scope(store: Store, section_ids: list[int], scope: Scope | str | None) -> set[int]:
    """Those of ``section_ids`` that lie inside ``scope`` (all of them when it restricts nothing)."""
    s = as_scope(scope)
    if not s.restricts or not section_ids:
        return set(section_ids)
    clause, params = section_clause(s)
    out: set[int] = set()
    for chunk in bound_chunks(section_ids):
        rows = store.conn.execute(
            f"SELECT s.id FROM sections s JOIN documents d ON d.id = s.doc_id WHERE s.id IN ({marks(len(chunk))}){clause}",
            [*chunk, *params],
        ).fetchall()
        out.update(int(r[0]) for r in rows)
    return out
