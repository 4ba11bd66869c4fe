"""SQLite's locks on the index file are POSIX locks, owned by the process: closing *any*
descriptor of the file drops all of them (sqlite.org/howtocorrupt.html, 2.2). A header check
that opened and closed the file under this process's open connections let another process
believe it was the last one and delete the -wal and -shm files on close, after which every
query here failed with "disk I/O error" (seen in the resident service: one root's pages
vanished from `markdown-memory ui` and its page check failed until a restart)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from markdown_memory.store.database import Database, file_damage, not_ours
from markdown_memory.store.peek import stored_named_embedder, stored_weights_id

#: another process: open the index, read it, close it (SQLite checkpoints and deletes the
#: -wal file on close only when it finds no other connection, by taking an exclusive lock)
_OTHER_PROCESS = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1])\n"
    "conn.execute('SELECT count(*) FROM sqlite_master').fetchall()\n"
    "conn.close()\n"
)


def _other_process_opens_and_closes(db_path: Path) -> None:
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(db_path)], check=True, timeout=60)


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    """A created index (an index run made the file: a read alone never does) with this thread's
    connection open and read once, so it holds its locks and its -wal file."""
    root = tmp_path / "docs"
    root.mkdir()
    opened = Database(root, tmp_path / "index.db")
    opened.writer().close()
    try:
        opened.connection().conn.execute("SELECT count(*) FROM documents").fetchall()
        yield opened
    finally:
        opened.close()


def test_header_checks_keep_this_process_connections_working(database: Database) -> None:
    db_path = database.path
    store = database.connection()
    wal = Path(f"{db_path}-wal")
    assert wal.exists()
    # every check a request may run on the open file
    assert file_damage(db_path) is None
    assert not_ours(db_path) is None
    assert database.connection() is store
    _other_process_opens_and_closes(db_path)
    assert wal.exists(), "another process took this one's connection for gone and deleted the -wal file"
    rows = database.connection().conn.execute("SELECT count(*) FROM documents").fetchall()
    assert rows == [(0,)]


def test_a_peek_at_the_meta_keeps_this_process_connections_working(database: Database) -> None:
    """The embedder choice peeks at an index the engine may hold open (the service serving the
    root again): that read-only look must use this process's one SQLite library, whose close
    leaves the other connections' locks alone."""
    db_path = database.path
    assert stored_weights_id(db_path) is None and stored_named_embedder(db_path) is None
    _other_process_opens_and_closes(db_path)
    assert Path(f"{db_path}-wal").exists(), "another process deleted the -wal file of an open index"
    assert database.connection().conn.execute("SELECT count(*) FROM documents").fetchall() == [(0,)]
