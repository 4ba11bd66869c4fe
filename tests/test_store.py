"""Store: driver fallback, schema versioning, WAL, and keyword-only when sqlite-vec cannot load."""

from __future__ import annotations

import sqlite3

import pytest

from markdown_memory import store as store_mod
from markdown_memory.errors import SchemaError
from markdown_memory.models import SearchRequest
from markdown_memory.store import SCHEMA_VERSION, Store


@pytest.fixture(autouse=True)
def _fresh_driver():
    store_mod.reset_driver_cache()
    yield
    store_mod.reset_driver_cache()


def test_store_uses_a_driver_that_loads_sqlite_vec(tmp_path):
    s = Store(tmp_path / "index.db")
    assert s.vec_available, s.driver.vec_error
    assert s.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    assert s.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    # the driver is the stdlib when it can load extensions, else sqlean
    can_load = hasattr(sqlite3.connect(":memory:"), "enable_load_extension")
    assert s.driver.name == ("sqlite3" if can_load else "sqlean")
    s.close()


def test_newer_schema_is_refused_with_a_clear_error(tmp_path):
    db = tmp_path / "index.db"
    Store(db).close()
    raw = sqlite3.connect(db)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    with pytest.raises(SchemaError, match="newer"):
        Store(db)


def test_unloadable_vector_extension_degrades_to_keyword_only(tmp_path, monkeypatch, docs_root, caplog):
    monkeypatch.setenv("MARKDOWN_MEMORY_VEC_PATH", str(tmp_path / "missing-vec0.so"))
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    engine = Engine(Settings.load(docs_root, tmp_path / "kw.db", "minilm"))
    with caplog.at_level("WARNING"):
        report = engine.index()
    assert report.keyword_only and report.added == 5
    assert "sqlite-vec" in (report.message or "")
    answer = engine.search(SearchRequest("--no-cache"))
    assert answer.keyword_only is True
    assert answer.results[0].heading_path == "Command Line > Flags"
    assert any("vector search disabled" in r.getMessage() for r in caplog.records)
    engine.close()


def test_vectors_are_added_later_without_reparsing(tmp_path, monkeypatch, docs_root, minilm):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    db = tmp_path / "later.db"
    monkeypatch.setenv("MARKDOWN_MEMORY_VEC_PATH", str(tmp_path / "missing-vec0.so"))
    first = Engine(Settings.load(docs_root, db, "minilm"))
    first.index()
    first.close()
    monkeypatch.delenv("MARKDOWN_MEMORY_VEC_PATH")
    store_mod.reset_driver_cache()
    second = Engine(Settings.load(docs_root, db, "minilm"), embedder=minilm)
    report = second.index()
    assert (report.added, report.updated, report.unchanged) == (0, 0, 5)
    assert report.vectors_embedded > 0
    assert second.status().keyword_only is False
    second.close()


def _open_together(path, threads: int = 6) -> tuple[list[str], list[str]]:
    """Open ``threads`` Stores on ``path`` at the same moment (a barrier); returns the errors
    ("Type: message") and the journal modes of the ones that opened."""
    import threading

    barrier = threading.Barrier(threads)
    failures: list[str] = []
    modes: list[str] = []

    def open_it() -> None:
        barrier.wait()
        try:
            store = Store(path)
        except Exception as exc:  # the caller's assertion reports it
            failures.append(f"{type(exc).__name__}: {exc}")
            return
        modes.append(store.journal_mode)
        store.close()

    workers = [threading.Thread(target=open_it) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return failures, modes


def test_connections_opening_a_new_database_together_all_get_wal(tmp_path):
    """Regression (CI, /usr/bin/python3): the background index run and a status() call opened a
    brand-new database at the same moment; SQLite refuses one of two simultaneous WAL switches
    at once ("database is locked", no busy wait), and the first index run failed."""
    failures: list[str] = []
    modes: list[str] = []
    for round_no in range(40):
        failed, opened = _open_together(tmp_path / f"new-{round_no}.db")
        failures += failed
        modes += opened
    assert failures == []
    assert set(modes) == {"wal"} and len(modes) == 240


def test_connections_opening_an_old_schema_together_migrate_it_once(tmp_path):
    """Two processes upgrading a schema-v1 index at once: the second must see the first's
    migration instead of adding the ctime_ns column again ("duplicate column name")."""
    path = tmp_path / "old.db"
    Store(path).close()
    raw = sqlite3.connect(path)
    raw.execute("ALTER TABLE documents DROP COLUMN ctime_ns")
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    failures, _modes = _open_together(path)
    assert failures == []
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert "ctime_ns" in [row[1] for row in check.execute("PRAGMA table_info(documents)")]
    check.close()


def test_passages_marked_pending_while_their_vector_row_exists_are_re_embedded(tmp_path, docs_root, make_engine):
    """Regression (final tester round): a passage marked pending again while its vec0 row still
    existed made every later run fail with 'UNIQUE constraint failed on vec_passages primary
    key' (vec0 ignores INSERT OR REPLACE): CLI search exited 1 and the gap never closed."""
    db = tmp_path / "pending.db"
    engine = make_engine(docs_root, "minilm", db=db)
    engine.index()
    raw = sqlite3.connect(db)
    raw.execute("UPDATE passages SET has_vector = 0 WHERE doc_id = (SELECT min(id) FROM documents)")
    raw.commit()
    raw.close()
    assert engine.status().counts.pending_vectors > 0
    report = engine.index()
    assert report.vectors_embedded + report.vectors_reused > 0
    status = engine.status()
    assert status.counts.pending_vectors == 0 and status.counts.vectors == status.counts.passages
    assert engine.search(SearchRequest("which port must be free for the server to start")).keyword_only is False


def test_threads_opening_a_new_database_never_take_it_for_a_damaged_one(tmp_path, monkeypatch):
    """SQLite creates a new database as a 0-byte file and writes its header with the schema; a
    second thread opening it meanwhile (the MCP server's catch-up run beside the first search)
    must wait for it, not move it aside as 'truncated to 0 bytes' and start a rebuild."""
    import threading
    import time

    from markdown_memory.store import database as database_mod

    real_store = database_mod.Store

    def slow_store(path, *args, **kwargs):  # widen the window between file creation and header
        if not path.exists():
            path.touch()
            time.sleep(0.2)
        return real_store(path, *args, **kwargs)

    monkeypatch.setattr(database_mod, "Store", slow_store)
    root = tmp_path / "docs"
    root.mkdir()
    db = database_mod.Database(root, tmp_path / "index.db")
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            start.wait()
            db.connection().close()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert db.moved_aside is None
    assert not list(tmp_path.glob("index.db.corrupt*"))


def test_code_paths_are_matched_exactly_and_case_sensitively(tmp_path):
    """drift's code side: `held_path` tests a path, a folder or a tail segment by segment and
    code point by code point, like every docs path filter (`API/` is not `api/`; `app` is not
    `app-old`; glob characters in a name are plain characters)."""
    s = Store(tmp_path / "index.db")
    s.ensure_code_tables()
    with s.conn:
        for path in ("src/API/config.py", "src/app-old/run.py", "lib/we[ird]*.py"):
            s.put_code_file(path, 1, 1, "0" * 64, None)
    assert s.held_path("src/API/config.py") and s.held_path("src/API") and s.held_path("API/config.py")
    assert s.held_path("API") and s.held_path("config.py")
    assert not s.held_path("src/api") and not s.held_path("api/config.py") and not s.held_path("api")
    assert not s.held_path("src/app") and not s.held_path("app")
    assert s.held_path("we[ird]*.py") and not s.held_path("weird.py") and not s.held_path("we*")
    s.close()
