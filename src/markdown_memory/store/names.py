"""Finding documents by name: the ``doc_names`` table (written by ``tags.py``) read with a
search scope (``scope.py``), so a note is found by its exact title, front-matter title or alias.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text import match_form
from .scope import Scope, section_clause

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store


def named_documents(store: Store, name: str, scope: Scope | None = None) -> list[int]:
    """Ids of the first sections (lowest ordinal) of the documents whose title, front-matter
    title or an alias is ``name`` in ``match_form`` (only documents inside ``scope``), by path."""
    form = match_form(name.strip())
    if not form:
        return []
    clause, params = section_clause(scope)
    rows = store.conn.execute(
        "SELECT min(s.id) FROM doc_names n JOIN documents d ON d.id = n.doc_id "
        "JOIN sections s ON s.doc_id = d.id AND s.ordinal = (SELECT min(ordinal) FROM sections WHERE doc_id = d.id) "
        f"WHERE n.form = ?{clause} GROUP BY d.id ORDER BY d.path",
        [form, *params],
    ).fetchall()
    return [int(r[0]) for r in rows if r[0] is not None]
