"""A note is found by any of its names: when the whole query is a document's title, its
front-matter title or one of its aliases (compared in ``text.match_form``; surrounding quotes,
``[[ ]]`` and end punctuation ignored), that document's first section forms a fused list of its
own (the ``name`` signal, ``search/signals.py``) weighted ``Tuning.weights["name"]``, enough to put it
first: the user named the note."""

from __future__ import annotations

from ..store import Store
from ..store.scope import Scope
from .query import AnalysedQuery

_WRAPPING = "\"'`“”‘’[]"
_END = "?!.:;,"


def named_sections(store: Store, query: AnalysedQuery, scope: Scope | str | None) -> list[int]:
    """First-section ids of the documents inside ``scope`` that the whole query names, by path
    ([] when the query is not a name: several lines, or longer than any title)."""
    text = query.text.strip()
    if "\n" in text or len(text) > 200:
        return []
    name = text.strip(_WRAPPING).strip().rstrip(_END).strip().strip(_WRAPPING).strip()
    if not name:
        return []
    return store.named_documents(name, scope if isinstance(scope, Scope) else Scope(path_prefix=scope or None))
