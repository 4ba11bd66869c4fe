"""Small SQL helpers the table modules share: ``IN (...)`` batching, ``LIKE`` patterns for
"under this folder", and deleting rows by rowid."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

#: values bound per ``IN (...)`` query: far below SQLite's bound-parameter limit (999 before 3.32)
IN_CHUNK = 500


def bound_chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    """``items`` in slices of at most ``IN_CHUNK``, one ``IN (...)`` query each."""
    for i in range(0, len(items), IN_CHUNK):
        yield items[i : i + IN_CHUNK]


def marks(count: int) -> str:
    """``"?,?,?"``: ``count`` placeholders for an ``IN (...)`` list."""
    return ",".join("?" * count)


def like_under(prefix: str) -> str:
    """A ``LIKE ... ESCAPE '\\'`` pattern for every path below the folder ``prefix``
    (``prefix/%``, with ``\\``, ``%`` and ``_`` of ``prefix`` taken literally)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"


def path_clause(path_prefix: str | None, alias: str = "d") -> tuple[str, list[Any]]:
    """``(" AND (d.path = ? OR d.path LIKE ? ESCAPE '\\')", [prefix, pattern])`` restricting a
    query joined with ``documents`` (as ``alias``) to the file or folder ``path_prefix``
    (slashes at either end ignored); ``("", [])`` when there is no prefix."""
    if not path_prefix:
        return "", []
    prefix = path_prefix.strip("/")
    return f" AND ({alias}.path = ? OR {alias}.path LIKE ? ESCAPE '\\')", [prefix, like_under(prefix)]


def delete_rowids(store: Store, table: str, ids: Sequence[int]) -> None:
    """Delete the rows of ``table`` whose rowid is in ``ids`` (any length; batched)."""
    for chunk in bound_chunks(ids):
        store.conn.execute(f"DELETE FROM {table} WHERE rowid IN ({marks(len(chunk))})", list(chunk))
