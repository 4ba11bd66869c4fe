"""The service watches each docs root it serves (auto-index on): an edit, a new file and a
delete reach the index with no call from any client (the database is read directly, so a
search's own catch-up cannot be what found them)."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from test_service import FIXTURES, LineClient, runtime  # noqa: F401 - the fixture

DEADLINE_SECONDS = 60.0  # generous for a loaded machine; the benchmark (scripts/bench_watch.py) measures speed


def _sections_with(db: Path, word: str) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM sections WHERE text LIKE ?", (f"%{word}%",)).fetchone()[0])


def _wait_for(db: Path, word: str, count: int) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while _sections_with(db, word) != count:
        assert time.monotonic() < deadline, f"{word!r} never reached {count} section(s) in the index"
        time.sleep(0.1)


def test_the_service_keeps_a_served_root_current_without_calls(runtime: Path, tmp_path: Path) -> None:  # noqa: F811
    from markdown_memory.config import Settings
    from markdown_memory.service import client

    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", docs)
    db = tmp_path / "i.db"
    settings = Settings.load(docs, db, "none", auto_index=True)
    sock = client.open_session("mcp", {"settings": settings.to_wire()})
    with sock, sock.makefile("rb") as wire_in, sock.makefile("wb") as wire_out:
        lines = LineClient(wire_in, wire_out)
        lines.session()  # initialize, index_directory, one search: the service now serves (and watches) the root
        page = next(docs.rglob("*.md"))
        page.write_text(page.read_text(encoding="utf-8") + "\n\nThe quokkaflux setting matters.\n", encoding="utf-8")
        _wait_for(db, "quokkaflux", 1)
        (docs / "new-page.md").write_text("# New\n\nThe zebrawind option.\n", encoding="utf-8")
        _wait_for(db, "zebrawind", 1)
        (docs / "new-page.md").unlink()
        _wait_for(db, "zebrawind", 0)
