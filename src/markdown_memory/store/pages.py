"""Page identity: ``pages_fts`` (FTS5, rowid = document id), one row per document with what
names the page as a whole: ``title`` (its title and other names: H1, front-matter title,
aliases), ``path`` (its path as words: ``concepts/strict_mode.md`` -> ``concepts strict mode``)
and ``description`` (front matter ``description``/``summary``), all through ``fts_text``;
``lead`` (unindexed) is the ordinal of its lead section (``markdown/titles.py``).

The ``page`` ranking signal (``search/pages.py``) reads it with ``page_matches``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from ..text import fts_text, match_form
from .fts import _match
from .scope import Scope, as_scope, section_clause

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5("
    "title, path, description, lead UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
)
_PATH_SEPARATORS = re.compile(r"[/\\_\-.]+")


class PageMatch(NamedTuple):
    """A page matching a keyword query: its lead section's id, the page's ``title`` and
    ``path`` words and ``description`` as indexed (fts_text), and ``bm25`` (lower is better)."""

    section_id: int
    doc_id: int
    title: str
    path: str
    description: str
    bm25: float


def create_table(store: Store) -> None:
    """Create ``pages_fts`` when missing. Call inside a transaction."""
    store.conn.execute(DDL)


def path_words(path: str) -> str:
    """A document path as words, without its extension: ``concepts/strict_mode.md`` ->
    ``concepts strict mode``."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return _PATH_SEPARATORS.sub(" ", stem).strip()


def index_page(store: Store, doc_id: int, path: str, names: Iterable[str], description: str | None,
               lead: int) -> None:
    """Write document ``doc_id``'s page row: its ``names`` (title first; duplicates in
    ``match_form`` dropped), ``path`` words, ``description`` and ``lead`` section ordinal.
    Call inside a transaction."""
    seen: dict[str, str] = {}
    for name in names:
        if name and name.strip():
            seen.setdefault(match_form(name.strip()), name.strip())
    store.conn.execute(
        "INSERT INTO pages_fts(rowid, title, path, description, lead) VALUES (?, ?, ?, ?, ?)",
        (doc_id, fts_text(" ; ".join(seen.values())), fts_text(path_words(path)), fts_text(description or ""), lead),
    )


def delete_page(store: Store, doc_id: int) -> None:
    """Remove document ``doc_id``'s page row. Call inside a transaction."""
    store.conn.execute("DELETE FROM pages_fts WHERE rowid = ?", (doc_id,))


def page_matches(store: Store, expression: str, scope: Scope | str | None, limit: int,
                 weights: tuple[float, float, float]) -> list[PageMatch]:
    """The ``limit`` best pages for the FTS5 ``expression`` by BM25 with the columns (title,
    path, description) weighted ``weights``, best first (ties: lower document id first); only
    pages inside ``scope`` whose lead section exists. Raises QueryNotParsedError.

    Without a filter the pages are ranked on ``pages_fts`` alone and only the best ones joined
    (``_unjoined_pages``), not every matching page."""
    bm25 = f"bm25(pages_fts, {weights[0]}, {weights[1]}, {weights[2]}, 0.0)"
    if not as_scope(scope).restricts:
        found = _unjoined_pages(store, expression, limit, bm25)
        if found is not None:
            return found
    return _joined_pages(store, expression, scope, limit, bm25)


def _joined_pages(store: Store, expression: str, scope: Scope | str | None, limit: int, bm25: str) -> list[PageMatch]:
    """``page_matches`` as one query joining every matching page to its document and lead
    section (the filters need them); ``bm25`` is the ranking expression."""
    clause, params = section_clause(scope)
    sql = (
        f"SELECT s.id, d.id, p.title, p.path, p.description, {bm25} AS r FROM pages_fts p JOIN documents d ON d.id = p.rowid "
        "JOIN sections s ON s.doc_id = d.id AND s.ordinal = p.lead "
        f"WHERE pages_fts MATCH ?{clause} ORDER BY r LIMIT ?"
    )
    with _match(store, expression):
        rows = store.conn.execute(sql, [expression, *params, limit]).fetchall()
    return [PageMatch(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), float(r[5])) for r in rows]


def _unjoined_pages(store: Store, expression: str, limit: int, bm25: str) -> list[PageMatch] | None:
    """``page_matches`` without a filter: the best ``2 * limit`` pages ranked on ``pages_fts``
    alone, then those whose document and lead section exist, in that order: the joined query's
    answer when ``limit`` of them pass or the ranking held no more pages; None otherwise (the
    caller runs the joined query)."""
    window = 2 * limit
    sql = f"SELECT rowid, title, path, description, lead, {bm25} AS r FROM pages_fts WHERE pages_fts MATCH ? ORDER BY r LIMIT ?"
    with _match(store, expression):
        ranked = store.conn.execute(sql, (expression, window)).fetchall()
    out: list[PageMatch] = []
    for doc_id, title, path, description, lead, score in ranked:
        row = store.conn.execute(
            "SELECT s.id FROM documents d JOIN sections s ON s.doc_id = d.id AND s.ordinal = ? WHERE d.id = ?",
            (lead, doc_id),
        ).fetchone()
        if row is not None:
            out.append(PageMatch(int(row[0]), int(doc_id), str(title), str(path), str(description), float(score)))
            if len(out) == limit:
                return out
    return out if len(ranked) < window else None
