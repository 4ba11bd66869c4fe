"""The vault tables: ``tags`` (one row per tag and place of a document: ``section_id`` NULL for
the front matter, else the section holding an inline ``#tag``; ``form`` = ``vault.tag_form``)
and ``doc_names`` (a document's names: its title, its front-matter title and its aliases, each
with ``form`` = ``text.match_form``, so a note is found by an exact name).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..markdown.vault import tag_form
from ..text import like_escape, match_form
from .common import bound_chunks, marks

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

DDL = (
    "CREATE TABLE IF NOT EXISTS tags(doc_id INTEGER NOT NULL, section_id INTEGER, tag TEXT NOT NULL, "
    "form TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS tags_form ON tags(form)",
    "CREATE INDEX IF NOT EXISTS tags_doc ON tags(doc_id)",
    "CREATE TABLE IF NOT EXISTS doc_names(doc_id INTEGER NOT NULL, name TEXT NOT NULL, form TEXT NOT NULL, "
    "source TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS doc_names_form ON doc_names(form)",
    "CREATE INDEX IF NOT EXISTS doc_names_doc ON doc_names(doc_id)",
)


def create_tables(store: Store) -> None:
    """Create the vault tables and their indexes when missing. Call inside a transaction."""
    for statement in DDL:
        store.conn.execute(statement)


def tag_condition(tag: str, column: str = "form") -> tuple[str, list[str]]:
    """``("(form = ? OR form LIKE ? ...)", [...])``: the tag ``tag`` or one nested in it
    (``tag/...``, or Dendron's ``tag....``)."""
    form = tag_form(tag)
    nested = like_escape(form)
    return (f"({column} = ? OR {column} LIKE ? ESCAPE '\\' OR {column} LIKE ? ESCAPE '\\')",
            [form, nested + "/%", nested + ".%"])


# -- writes (call inside a transaction) -----------------------------------------------------
def insert_vault(store: Store, doc_id: int, section_ids: Sequence[int], names: Iterable[tuple[str, str]],
                 tags: Iterable[tuple[str, int | None]]) -> None:
    """Store document ``doc_id``'s ``names`` (``(name, source)``: source ``title`` | ``alias``)
    and ``tags`` (``(tag, section index or None)``, ``section_ids[index]`` its section)."""
    seen: set[str] = set()
    name_rows = []
    for name, source in names:
        form = match_form(name.strip())
        if form and form not in seen:
            seen.add(form)
            name_rows.append((doc_id, name.strip(), form, source))
    store.conn.executemany("INSERT INTO doc_names(doc_id, name, form, source) VALUES (?, ?, ?, ?)", name_rows)
    tag_rows = []
    for tag, index in tags:
        section = section_ids[index] if index is not None and 0 <= index < len(section_ids) else None
        tag_rows.append((doc_id, section, tag, tag_form(tag)))
    store.conn.executemany("INSERT INTO tags(doc_id, section_id, tag, form) VALUES (?, ?, ?, ?)", tag_rows)


def delete_vault(store: Store, doc_id: int) -> None:
    """Remove document ``doc_id``'s names and tags."""
    store.conn.execute("DELETE FROM tags WHERE doc_id = ?", (doc_id,))
    store.conn.execute("DELETE FROM doc_names WHERE doc_id = ?", (doc_id,))


# -- reads ----------------------------------------------------------------------------------
def tags_of(store: Store, doc_ids: Sequence[int]) -> dict[int, list[str]]:
    """``{doc_id: [tag, ...]}``: each document's distinct tags (first spelling; front matter
    first, then inline tags in file order); documents without tags are left out."""
    out: dict[int, dict[str, str]] = {}
    for chunk in bound_chunks(list(doc_ids)):
        rows = store.conn.execute(
            f"SELECT doc_id, tag, form FROM tags WHERE doc_id IN ({marks(len(chunk))}) ORDER BY rowid", list(chunk)
        ).fetchall()
        for doc_id, tag, form in rows:
            out.setdefault(int(doc_id), {}).setdefault(str(form), str(tag))
    return {doc_id: list(tags.values()) for doc_id, tags in out.items()}


def aliases_of(store: Store, doc_id: int) -> list[str]:
    """Document ``doc_id``'s aliases, as written, in front-matter order."""
    rows = store.conn.execute("SELECT name FROM doc_names WHERE doc_id = ? AND source = 'alias' ORDER BY rowid",
                              (doc_id,))
    return [str(r[0]) for r in rows]


def has_tagged(store: Store, tags: Sequence[str], mode: str = "any") -> bool:
    """True when some document carries any (``mode`` "any") or every (``"all"``) of ``tags``
    (a tag matches its nested tags too)."""
    conditions = [tag_condition(t) for t in tags]
    if not conditions:
        return True
    if mode == "all":
        sql = " AND ".join(f"d.id IN (SELECT doc_id FROM tags WHERE {c})" for c, _p in conditions)
        params = [p for _c, ps in conditions for p in ps]
        return store.conn.execute(f"SELECT 1 FROM documents d WHERE {sql} LIMIT 1", params).fetchone() is not None
    sql = " OR ".join(c for c, _p in conditions)
    params = [p for _c, ps in conditions for p in ps]
    return store.conn.execute(f"SELECT 1 FROM tags WHERE {sql} LIMIT 1", params).fetchone() is not None
