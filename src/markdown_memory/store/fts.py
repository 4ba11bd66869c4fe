"""The keyword index: ``sections_fts`` (FTS5, rowid = section id; ``heading`` = document title
+ breadcrumb + front-matter title and aliases, ``body`` = section text + front-matter description, both
through ``fts_text``) and its ``sections_vocab`` (section frequency per term).

The queries search runs: BM25-ranked matches (``keyword_matches``), match counts and
existence (``match_count``, ``has_match``) and term frequencies (``term_frequencies``). An
FTS5 expression SQLite rejects raises ``QueryNotParsedError`` (a QueryError: the user
rephrases); lock and damage errors propagate unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from ..markdown.titles import front_matter_addresses, front_matter_titles
from ..markdown.vault import aliases
from ..text import fts_text, match_form
from .common import bound_chunks, marks
from .errors import QueryNotParsedError, disk_full_error, is_disk_full, is_query_rejection
from .scope import Scope, as_scope, section_clause

if TYPE_CHECKING:  # pragma: no cover
    from ..markdown.frontmatter import Metadata
    from .connection import Store


class KeywordMatch(NamedTuple):
    """A section matching a keyword query; ``bm25`` as FTS5 reports it (lower is better)."""

    section_id: int
    bm25: float


def front_matter_keywords(title: str, metadata: Metadata) -> tuple[str, str]:
    """Front-matter text the keyword index adds to a document's first section: its titles
    (``titles.TITLE_KEYS``: title, sidebar label, link title) when they differ from the document
    title (``markdown/titles.py``), its ``aliases`` (``vault.aliases``) and the addresses its
    site gives it (``titles.ADDRESS_KEYS``: Docusaurus ``id``/``slug``, ``permalink``, ``url``)
    as heading words, its ``description``/``summary`` as body words, as
    ``(" " + heading words, " " + body words)``; empty strings when there is none: a page is
    found by any of its names and addresses."""
    names = [*front_matter_titles(metadata), *aliases(metadata), *front_matter_addresses(metadata)]
    known = {match_form(title.strip())}
    heading = ""
    for name in names:
        if match_form(name) not in known:
            known.add(match_form(name))
            heading += " " + name
    body = " ".join(str(metadata[k]).strip() for k in ("description", "summary")
                    if isinstance(metadata.get(k), str) and metadata[k].strip())
    return heading, (" " + body if body else "")


def index_sections(store: Store, doc_title: str, metadata: Metadata,
                   sections: Iterable[tuple[int, str, str]]) -> None:
    """Write the keyword rows of one document's sections, given as ``(section id, base_path,
    text)`` in file order: ``heading`` = document title + breadcrumb, ``body`` = section text,
    the first section also carrying the front-matter keywords; both through ``fts_text``.
    Call inside a transaction."""
    lead_heading, lead_body = front_matter_keywords(doc_title, metadata)
    for section_id, base_path, text in sections:
        store.conn.execute(
            "INSERT INTO sections_fts(rowid, heading, body) VALUES (?, ?, ?)",
            (section_id, fts_text(f"{doc_title} {base_path}{lead_heading}"), fts_text(f"{text}{lead_body}")),
        )
        lead_heading = lead_body = ""  # only the document's first section carries them


def rebuild(store: Store) -> int:
    """Rewrite the whole keyword index from the stored documents and sections (after a change
    of ``fts_text``'s rule: see ``schema.migrate``). Returns the number of sections indexed.
    Call inside a transaction."""
    store.conn.execute("DELETE FROM sections_fts")
    count = 0
    docs = store.conn.execute("SELECT id, title, metadata FROM documents ORDER BY id").fetchall()
    for doc_id, title, metadata_json in docs:
        try:
            metadata = json.loads(metadata_json or "{}")
        except ValueError:
            metadata = {}
        rows = store.conn.execute(
            "SELECT id, base_path, text FROM sections WHERE doc_id = ? ORDER BY ordinal", (doc_id,)
        ).fetchall()
        index_sections(store, str(title), metadata if isinstance(metadata, dict) else {},
                       [(int(r[0]), str(r[1]), str(r[2])) for r in rows])
        count += len(rows)
    return count


@contextmanager
def _match(store: Store, expression: str) -> Iterator[None]:
    """Run a MATCH query; SQLite's refusal of ``expression`` becomes QueryNotParsedError."""
    try:
        yield
    except store.driver.module.OperationalError as exc:
        if is_disk_full(exc, store.path):
            raise disk_full_error(store.path) from exc
        if is_query_rejection(exc):
            raise QueryNotParsedError(exc) from exc
        raise


def keyword_matches(store: Store, expression: str, scope: Scope | str | None, limit: int,
                    heading_weight: float) -> list[KeywordMatch]:
    """The ``limit`` best sections for the FTS5 ``expression``, best first, by BM25 with the
    heading column weighted ``heading_weight`` times the body (ties: lower section id first, as
    SQLite's sorter keeps them); only sections inside ``scope`` (a ``scope.Scope``, or a path
    prefix: the file or the folder). Raises QueryNotParsedError.

    Without a filter the query runs on ``sections_fts`` alone (``_unjoined_matches``): joining
    ``sections`` and ``documents`` for every matching row cost about half the query's time at
    16x the eval corpus (an OR of a question's words matches a third of all sections there)."""
    if not as_scope(scope).restricts:
        found = _unjoined_matches(store, expression, limit, heading_weight)
        if found is not None:
            return found
    return _joined_matches(store, expression, scope, limit, heading_weight)


def _joined_matches(store: Store, expression: str, scope: Scope | str | None, limit: int,
                    heading_weight: float) -> list[KeywordMatch]:
    """``keyword_matches`` as one query joining every matching row to its section and document
    (the filters need them)."""
    clause, params = section_clause(scope)
    sql = (
        f"SELECT f.rowid, bm25(sections_fts, {heading_weight}, 1.0) AS r FROM sections_fts f "
        "JOIN sections s ON s.id = f.rowid JOIN documents d ON d.id = s.doc_id "
        f"WHERE sections_fts MATCH ?{clause} ORDER BY r LIMIT ?"
    )
    with _match(store, expression):
        return [KeywordMatch(int(r[0]), float(r[1])) for r in store.conn.execute(sql, [expression, *params, limit])]


def _unjoined_matches(store: Store, expression: str, limit: int, heading_weight: float) -> list[KeywordMatch] | None:
    """``keyword_matches`` without a filter, ranked on ``sections_fts`` alone, then the ``limit``
    rows found checked against ``sections`` and ``documents``: the same rows in the same order as
    the joined query, or None when a keyword row has lost its section or document (the store
    keeps them together, ``store.testing``'s checks; the caller then runs the joined query)."""
    sql = f"SELECT rowid, bm25(sections_fts, {heading_weight}, 1.0) AS r FROM sections_fts WHERE sections_fts MATCH ? ORDER BY r LIMIT ?"
    with _match(store, expression):
        rows = [KeywordMatch(int(r[0]), float(r[1])) for r in store.conn.execute(sql, (expression, limit))]
    if not rows:
        return rows
    ids = sorted({m.section_id for m in rows})
    held = 0
    for chunk in bound_chunks(ids):
        held += store.conn.execute(
            f"SELECT count(*) FROM sections s JOIN documents d ON d.id = s.doc_id WHERE s.id IN ({marks(len(chunk))})",
            list(chunk),
        ).fetchone()[0]
    return rows if held == len(ids) else None


def heading_matches(store: Store, expression: str, scope: Scope | str | None,
                    limit: int) -> list[tuple[int, str, bool]]:
    """``[(section_id, title, nested)]`` of up to ``limit`` sections whose heading column
    (document title and breadcrumb) matches the FTS5 ``expression``; only inside ``scope``
    (as ``keyword_matches``); ``nested`` is False for a top-level section. The caller judges the section's own
    ``title``. Raises QueryNotParsedError."""
    clause, params = section_clause(scope)
    sql = (
        "SELECT s.id, s.title, s.parent_ordinal IS NOT NULL FROM sections_fts f JOIN sections s ON s.id = f.rowid "
        f"JOIN documents d ON d.id = s.doc_id WHERE sections_fts MATCH ?{clause} LIMIT ?"
    )
    column = f"heading : ({expression})"
    with _match(store, column):
        return [(int(r[0]), str(r[1]), bool(r[2])) for r in store.conn.execute(sql, [column, *params, limit])]


def match_count(store: Store, expression: str) -> int:
    """How many sections match the FTS5 ``expression``. Raises QueryNotParsedError."""
    with _match(store, expression):
        row = store.conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH ?", (expression,)).fetchone()
    return int(row[0])


def has_match(store: Store, expression: str) -> bool:
    """True when some section matches the FTS5 ``expression``. Raises QueryNotParsedError."""
    with _match(store, expression):
        row = store.conn.execute("SELECT 1 FROM sections_fts WHERE sections_fts MATCH ? LIMIT 1", (expression,)).fetchone()
    return row is not None


#: Most terms ``term_frequencies`` keeps between changes of the database (a long-lived server's
#: vocabulary of questions; each entry is a term and an int).
TERM_CACHE_MAX = 50_000


def term_frequencies(store: Store, terms: Iterable[str]) -> dict[str, int]:
    """``{term: number of sections holding it}`` for single index tokens (0 when none does).
    Reused until the database changes (``Store.versioned``): the fts5vocab row of a term walks
    its whole doclist (milliseconds for a common word at 16x the eval corpus) and one search
    asks for the same words three times."""
    cache: dict[str, int] = store.versioned("term_frequencies", dict)
    if len(cache) > TERM_CACHE_MAX:
        cache.clear()
    out: dict[str, int] = {}
    for term in terms:
        if term not in cache:
            row = store.conn.execute("SELECT doc FROM sections_vocab WHERE term = ?", (term,)).fetchone()
            cache[term] = int(row[0]) if row else 0
        out[term] = cache[term]
    return out
