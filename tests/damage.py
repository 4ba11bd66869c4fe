"""Damage a test's index file on disk the way a bad disk or a stray writer would."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def overwrite_keyword_index_root(db: Path) -> None:
    """Overwrite the root page of the FTS5 keyword index (``sections_fts_data``) of the SQLite
    file ``db`` with random bytes, after folding its WAL in: the file still opens and every other
    table reads, but the first keyword search meets the damage."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sections_fts_data'").fetchone()[0]
    finally:
        conn.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(os.urandom(page_size))
