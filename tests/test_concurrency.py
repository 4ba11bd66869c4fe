"""Several processes on one docs root (issue 5, case 025): one writer at a time, readers never
blocked, no "database is locked" reaching a user; a broad implicit docs root is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import filelock
import pytest

from markdown_memory.config import Settings
from markdown_memory.errors import ConfigError, IndexBusyError
from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import check_file

CASE_025 = Path(__file__).parent / "fixtures" / "cases" / "025-concurrent-access-and-locking"


def cli(db: Path) -> str:
    return f"{sys.executable} -m markdown_memory.cli --embedder none --db {db}"


@pytest.mark.slow  # CI only (README's fast suite deselects it): a race of CLI processes, ~18 s
def test_case_025_race_of_cli_indexers_and_searchers(tmp_path):
    root = tmp_path / "docs"
    db = tmp_path / "race.db"
    subprocess.run([sys.executable, str(CASE_025 / "gen_docs.py"), str(root), "300"], check=True,
                   capture_output=True, timeout=60)
    race = subprocess.run(
        [sys.executable, str(CASE_025 / "race.py"), "--index", f"{cli(db)} index {{root}}",
         "--search", f"{cli(db)} search {{query}} --docs-dir {root} --json", "--root", str(root),
         "--writers", "2", "--readers", "6", "--rounds", "2", "--timeout", "60"],
        capture_output=True, text=True, timeout=300,
    )
    assert race.returncode == 0, race.stdout + race.stderr
    out = subprocess.run([*cli(db).split(), "search", "COMPONENT_42_LIMIT", "--docs-dir", str(root), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    import json

    first = json.loads(out.stdout)["results"][0]
    assert (first["file_path"], first["heading_path"]) == ("component-0042.md", "Component 42 > Settings")
    checked = check_file(db)
    assert (checked.integrity, checked.documents) == ("ok", 300)
    wal = Path(str(db) + "-wal")
    assert not wal.exists() or wal.stat().st_size <= db.stat().st_size, "WAL checkpointed once all exited"
    assert not list(tmp_path.glob("race.db.corrupt-*")), "contention is never mistaken for damage"


@pytest.mark.slow  # CI only (README's fast suite deselects it): two processes, ~13 s
def test_two_processes_indexing_and_searching_at_once(tmp_path):
    """Two `index --force` writers and two searchers started together, twice: all succeed,
    nothing on stderr mentions a lock, and the writers took turns (one waited)."""
    root = tmp_path / "docs"
    db = tmp_path / "two.db"
    subprocess.run([sys.executable, str(CASE_025 / "gen_docs.py"), str(root), "200"], check=True,
                   capture_output=True, timeout=60)
    for _ in range(2):
        procs = [subprocess.Popen([*cli(db).split(), "index", str(root), "--force", "--json"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        procs += [subprocess.Popen([*cli(db).split(), "search", f"COMPONENT_{i}_LIMIT", "--docs-dir", str(root),
                                    "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for i in (7, 99)]
        outs = [p.communicate(timeout=120) for p in procs]
        for p, (_out, err) in zip(procs, outs):
            assert p.returncode == 0, err
            assert "locked" not in err.lower() and "busy" not in err.lower(), err
    checked = check_file(db)
    assert (checked.integrity, checked.documents, checked.sections) == ("ok", 200, 600)


def test_second_writer_answers_that_a_run_is_in_progress(docs_root, make_engine, tmp_path, caplog):
    engine = make_engine(docs_root, "none", db=tmp_path / "w.db")
    engine.index()
    other = filelock.FileLock(str(engine.settings.db_path) + ".lock")
    with other.acquire(timeout=5):  # another process's index run
        with pytest.raises(IndexBusyError, match="in progress"):
            engine.index(wait_seconds=0.2)
        assert "waiting up to 0.2 s" in caplog.text  # not "up to 0 s"
        status = engine.status()
        assert status.indexing is True and "in progress" in status.message
        assert engine.search(SearchRequest("install")).results, "readers go on while another process writes"
    assert engine.status().indexing is False
    assert engine.index().unchanged == status.counts.documents


def test_home_directory_or_filesystem_root_is_refused_unless_explicit(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    with pytest.raises(ConfigError, match="MARKDOWN_MEMORY_ALLOW_HOME"):
        Settings.load()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(home))
    with pytest.raises(ConfigError, match="home directory"):
        Settings.load()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/")
    with pytest.raises(ConfigError, match="filesystem root"):
        Settings.load()
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert Settings.load(str(home)).docs_root == home.resolve()  # asked for explicitly: allowed
    monkeypatch.setenv("MARKDOWN_MEMORY_ALLOW_HOME", "1")
    assert Settings.load().docs_root == home.resolve()
    monkeypatch.delenv("MARKDOWN_MEMORY_ALLOW_HOME")
    project = home / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert Settings.load().docs_root == project.resolve()
    cli_run = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "index"], cwd=home, capture_output=True,
                             text=True, timeout=60, env=dict(os.environ))
    assert cli_run.returncode == 2 and "refusing to index" in cli_run.stderr


def test_a_database_being_created_is_not_taken_for_a_truncated_one(tmp_path):
    """SQLite creates the file empty at connect and writes its header with the first change: an
    index run opening the writer in that moment (the MCP server's catch-up run beside the first
    call's connection) must use the new database, not move it aside as damaged."""
    from markdown_memory.store.database import Database, file_damage

    root = tmp_path / "docs"
    root.mkdir()
    db_path = tmp_path / "new.db"
    db_path.touch()  # what another connection's connect leaves before its first write
    assert file_damage(db_path) is None
    database = Database(root, db_path)
    writer = database.writer()
    try:
        assert database.moved_aside is None and not list(tmp_path.glob("new.db.corrupt-*"))
        assert writer.get_meta("moved_aside") is None
    finally:
        writer.close()
        database.close()


def test_a_database_truncated_under_open_connections_is_damage(tmp_path):
    """A file truncated to 0 bytes while connections hold it (its -wal is still there) or with
    its header overwritten is damage; a sound file is not."""
    from markdown_memory.store.database import Database, file_damage

    root = tmp_path / "docs"
    root.mkdir()
    db_path = tmp_path / "used.db"
    database = Database(root, db_path)
    database.writer().close()  # an index run created the file (a read alone never does)
    store = database.connection()
    try:
        assert file_damage(db_path) is None
        assert Path(f"{db_path}-wal").exists()
        with open(db_path, "r+b") as f:
            f.truncate(0)
        assert file_damage(db_path) == "the file was truncated to 0 bytes"
        with open(db_path, "r+b") as f:
            f.write(b"garbage, no header at all")
        assert file_damage(db_path) == "the file no longer starts with a SQLite header"
    finally:
        store.close()


def test_a_thread_opening_while_another_moves_the_file_aside_reopens_the_new_one(tmp_path, monkeypatch):
    """A thread whose connection was being opened while another thread moved the damaged file
    aside must not keep reading the moved-aside file: its next call opens the new database."""
    import threading

    from markdown_memory.store import database as database_module

    root = tmp_path / "docs"
    root.mkdir()
    db_path = tmp_path / "shared.db"
    database = database_module.Database(root, db_path)
    database.writer().close()  # an index run created the file (a read alone never does)
    real_store = database_module.Store
    opened: list[object] = []
    others: list[threading.Thread] = []
    held_back: list[bool] = []

    def store_then_recovery_elsewhere(*args, **kwargs):
        store = real_store(*args, **kwargs)
        if not opened:  # the first open: another thread tries to recover while this one is opening
            opened.append(store)
            other = threading.Thread(target=database.recover_damaged,
                                     args=(RuntimeError("database disk image is malformed"),))
            other.start()
            other.join(timeout=0.5)
            held_back.append(other.is_alive())  # the open lock keeps the move out of a half-open
            others.append(other)
        return store

    monkeypatch.setattr(database_module, "Store", store_then_recovery_elsewhere)
    database.connection()
    monkeypatch.undo()
    others[0].join(timeout=30)
    assert held_back == [True] and not others[0].is_alive()
    moved = database.moved_aside
    assert moved and Path(moved).exists()
    current = database.connection()
    assert current.get_meta("moved_aside") == moved, "the thread reads the new database, not the moved file"
    database.close()
