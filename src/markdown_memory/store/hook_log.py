"""The ``hook_log`` table: what the prompt hook did with each prompt it searched (schema v9),
shown by the local page (``ui/``, docs/ui.md). Kept only in the root's database, bounded to the
newest ``keep`` rows by :func:`add_hook_entry`, emptied by :func:`clear_hook_log`.

Columns: ``at`` (epoch seconds), ``session_id`` and ``client`` ("claude-code" | "codex") of the
agent session, ``prompt`` (as the hook read it), ``added`` (0/1: whether text was added),
``tokens`` (of the added text), ``confidence`` (the search's label), ``p_answer`` (0-1, NULL
when the search gives none), ``sections`` (JSON list of ``{file_path, heading_path, start_line,
end_line, tokens}``: the sections added), ``reason`` (why nothing was added, NULL when text was).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

#: milliseconds a hook's log write waits for another writer (an index run): the prompt never waits
#: longer; a write that cannot get the lock in time is dropped
WRITE_WAIT_MS = 250

_TABLE = """
CREATE TABLE IF NOT EXISTS hook_log(
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    session_id TEXT NOT NULL,
    client TEXT NOT NULL,
    prompt TEXT NOT NULL,
    added INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    confidence TEXT NOT NULL,
    p_answer REAL,
    sections TEXT NOT NULL DEFAULT '[]',
    reason TEXT
)"""


@dataclass(frozen=True)
class HookLogEntry:
    """One prompt the hook searched (see the module docstring for the fields; ``sections`` is a
    tuple of dicts)."""

    at: float
    session_id: str
    client: str
    prompt: str
    added: bool
    tokens: int
    confidence: str
    p_answer: float | None
    sections: tuple[dict[str, Any], ...]
    reason: str | None
    id: int = 0


@dataclass(frozen=True)
class HookSession:
    """One agent session in the log: its prompts, how many got text, first and last time."""

    session_id: str
    client: str
    prompts: int
    added: int
    first_at: float
    last_at: float


def create_hook_log(store: Store) -> None:
    """Create the table and its index (schema v9). Call inside a transaction."""
    store.conn.execute(_TABLE)
    store.conn.execute("CREATE INDEX IF NOT EXISTS hook_log_session ON hook_log(session_id, id)")


def add_hook_entry(store: Store, entry: HookLogEntry, keep: int) -> None:
    """Append ``entry`` and drop all but the newest ``keep`` rows (>= 1), in one transaction
    that waits at most :data:`WRITE_WAIT_MS` for the write lock. Raises the driver's
    OperationalError when the lock is not free in time or the database is read-only."""
    conn = store.conn
    before = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {WRITE_WAIT_MS}")
    try:
        with store.transaction():
            cur = conn.execute(
                "INSERT INTO hook_log(at, session_id, client, prompt, added, tokens, confidence, p_answer, sections,"
                " reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.at, entry.session_id, entry.client, entry.prompt, int(entry.added), entry.tokens,
                 entry.confidence, entry.p_answer, json.dumps(list(entry.sections)), entry.reason))
            conn.execute("DELETE FROM hook_log WHERE id <= ?", (int(cur.lastrowid or 0) - max(1, keep),))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {before}")


def _entry(row: Any) -> HookLogEntry:
    try:
        sections = tuple(s for s in json.loads(row[9] or "[]") if isinstance(s, dict))
    except ValueError:
        sections = ()
    return HookLogEntry(row[1], row[2], row[3], row[4], bool(row[5]), int(row[6]), row[7], row[8], sections,
                        row[10], id=int(row[0]))


def hook_entries(store: Store, session_id: str | None = None, limit: int = 500) -> list[HookLogEntry]:
    """The newest ``limit`` entries, newest first (of one session when ``session_id`` is given)."""
    columns = "id, at, session_id, client, prompt, added, tokens, confidence, p_answer, sections, reason"
    if session_id is None:
        rows = store.conn.execute(f"SELECT {columns} FROM hook_log ORDER BY id DESC LIMIT ?", (limit,))
    else:
        rows = store.conn.execute(f"SELECT {columns} FROM hook_log WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                                  (session_id, limit))
    return [_entry(r) for r in rows]


def hook_sessions(store: Store) -> list[HookSession]:
    """Every session in the log, the most recently active first."""
    rows = store.conn.execute(
        "SELECT session_id, max(client), count(*), sum(added), min(at), max(at) FROM hook_log "
        "GROUP BY session_id ORDER BY max(id) DESC")
    return [HookSession(r[0], r[1], int(r[2]), int(r[3] or 0), float(r[4]), float(r[5])) for r in rows]


def clear_hook_log(store: Store) -> int:
    """Delete every entry; how many there were."""
    with store.transaction():
        return int(store.conn.execute("DELETE FROM hook_log").rowcount)
