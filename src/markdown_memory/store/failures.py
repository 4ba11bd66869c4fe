"""The ``failures`` table: files the last index run or refresh could not index (``kind``
"failed": unreadable, binary, too large, a parser error) or indexed with a caveat ("warning":
a symbolic link skipped), with the reason shown to the user."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store


class FailureRecord(NamedTuple):
    """One recorded problem: ``kind`` is "failed" or "warning"."""

    path: str
    kind: str
    reason: str


def record_failure(store: Store, path: str, kind: str, reason: str, at: float) -> None:
    """Record (or replace) the problem of ``path``; ``at`` in epoch seconds. Call inside a transaction."""
    store.conn.execute(
        "INSERT OR REPLACE INTO failures(path, kind, reason, at) VALUES (?, ?, ?, ?)", (path, kind, reason, at)
    )


def clear_failures(store: Store, paths: Iterable[str] | None = None) -> None:
    """Forget the problems of ``paths`` (of every file when None). Call inside a transaction."""
    if paths is None:
        store.conn.execute("DELETE FROM failures")
    else:
        store.conn.executemany("DELETE FROM failures WHERE path = ?", [(p,) for p in paths])


def all_failures(store: Store) -> list[FailureRecord]:
    """Every recorded problem (in no particular order)."""
    return [FailureRecord(*r) for r in store.conn.execute("SELECT path, kind, reason FROM failures")]


def failures(store: Store, limit: int = 20) -> list[dict[str, str]]:
    """The first ``limit`` problems by path: ``[{"path", "kind", "reason"}]``: the recorded ones,
    and each indexed document's warnings (invalid front matter ignored, text decoded as
    Windows-1252, ...; ``kind`` "warning", its warnings joined by "; "), so a file indexed with
    a caveat stays visible after the run that said so."""
    rows = store.conn.execute(
        "SELECT path, kind, reason, 0 FROM failures"
        " UNION ALL SELECT path, 'warning', warnings, 1 FROM documents WHERE warnings != '[]'"
        " ORDER BY 1, 4 LIMIT ?", (limit,))
    return [{"path": path, "kind": kind, "reason": "; ".join(json.loads(reason)) if stored else reason}
            for path, kind, reason, stored in rows]


def failed_file_count(store: Store) -> int:
    """How many files failed to index (``kind`` "failed"; warnings are not counted)."""
    return int(store.conn.execute("SELECT count(*) FROM failures WHERE kind = 'failed'").fetchone()[0])


def failure_reason(store: Store, path: str) -> str | None:
    """Why ``path`` could not be indexed (or its warning), or None when nothing is recorded."""
    row = store.conn.execute("SELECT reason FROM failures WHERE path = ?", (path,)).fetchone()
    return row[0] if row else None
