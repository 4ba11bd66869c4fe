"""Small SQL helpers the table modules share: ``IN (...)`` batching, the one "this file or
below this folder" path test, and deleting rows by rowid."""

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


def under_clause(prefix: str, column: str = "path") -> tuple[str, list[Any]]:
    """``("(column >= ? AND column < ?)", [prefix + "/", prefix + "0"])``: every path below the
    folder ``prefix`` (POSIX, no trailing slash), compared exactly, code point by code point.

    The one folder test of the store. ``LIKE`` would fold ASCII case (``api`` would match
    ``API/``, a different folder on a case-sensitive file system) and needs escaping; a range
    over the binary collation is exact, stops at the segment boundary (``api`` never matches
    ``api-old/`` or ``api.md``: ``/`` + 1 is ``0``) and can use the path index."""
    return f"({column} >= ? AND {column} < ?)", [prefix + "/", prefix + "0"]


def path_clause(path_prefix: str | None, alias: str = "d") -> tuple[str, list[Any]]:
    """``(" AND (d.path = ? OR <under_clause>)", [prefix, ...])`` restricting a query joined
    with ``documents`` (as ``alias``) to the file or folder ``path_prefix`` (slashes at either
    end ignored; exact, case-sensitive, segment by segment); ``("", [])`` when there is no
    prefix."""
    if not path_prefix:
        return "", []
    prefix = path_prefix.strip("/")
    under, params = under_clause(prefix, f"{alias}.path")
    return f" AND ({alias}.path = ? OR {under})", [prefix, *params]


def delete_rowids(store: Store, table: str, ids: Sequence[int]) -> None:
    """Delete the rows of ``table`` whose rowid is in ``ids`` (any length; batched)."""
    for chunk in bound_chunks(ids):
        store.conn.execute(f"DELETE FROM {table} WHERE rowid IN ({marks(len(chunk))})", list(chunk))
