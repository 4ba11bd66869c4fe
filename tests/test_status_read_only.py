"""Reading a docs root that was never indexed creates nothing: ``status`` (text and ``--json``)
and ``list`` with auto-index off say it was never indexed and leave no database, lock file or
folder behind, at a mistyped ``--db`` path or at the default location (so ``roots`` lists no
"empty" index for it). The first index run or read of a file then creates the database, and an
engine that answered from nothing before sees it."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_memory.config import default_db_path, projects_dir

NO_AUTO = {"MARKDOWN_MEMORY_AUTO_INDEX": "0"}


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nHow to install.\n")
    return docs


def _left_behind(db: Path) -> list[str]:
    """What exists of the database, its lock and -wal/-shm/run files, and its folder."""
    names = [db, *(Path(f"{db}{suffix}") for suffix in (".lock", "-wal", "-shm", ".run")), db.parent]
    return [str(p) for p in names if p.exists()]


def _never_indexed(status: dict) -> None:
    assert status["documents"] == 0 and status["last_run"] is None and status["coverage"] == "unknown"
    assert "has not been indexed yet" in status["message"] and " index " in status["message"]


def test_status_and_list_of_a_mistyped_db_path_create_nothing(tmp_path: Path, cli_main) -> None:
    docs = _docs(tmp_path)
    db = tmp_path / "typo" / "nested" / "index.db"
    base = ("--embedder", "none", "--db", str(db))
    text = cli_main(*base, "status", "--docs-dir", str(docs), env=NO_AUTO)
    assert text.returncode == 0, text.stderr
    assert "never indexed" in text.stdout and "has not been indexed yet" in text.stdout
    assert f"database   {db}" in text.stdout
    assert _left_behind(db) == []
    data = cli_main(*base, "status", "--docs-dir", str(docs), "--json", env=NO_AUTO)
    assert data.returncode == 0, data.stderr
    status = json.loads(data.stdout)
    _never_indexed(status)
    assert status["database"] == str(db)
    listed = cli_main(*base, "list", "--docs-dir", str(docs), env=NO_AUTO)
    assert listed.returncode == 0 and "no indexed documents" in listed.stdout
    assert _left_behind(db) == []
    assert not (tmp_path / "typo").exists()
    # the index run creates it, and status then reports it as before
    assert cli_main(*base, "index", str(docs)).returncode == 0
    indexed = json.loads(cli_main(*base, "status", "--docs-dir", str(docs), "--json").stdout)
    assert indexed["documents"] == 1 and indexed["last_run"] is not None and indexed["coverage"] == "verified"


def test_status_at_the_default_location_leaves_no_index_for_roots_to_list(tmp_path: Path, cli_main) -> None:
    docs = _docs(tmp_path)
    data = cli_main("--embedder", "none", "status", "--docs-dir", str(docs), "--json", env=NO_AUTO)
    assert data.returncode == 0, data.stderr
    _never_indexed(json.loads(data.stdout))
    assert _left_behind(default_db_path(docs.resolve())) == []
    assert not projects_dir().exists() or not any(projects_dir().iterdir())
    roots = cli_main("roots", "--json")
    assert roots.returncode == 0 and json.loads(roots.stdout)["indexes"] == []


def test_an_engine_that_read_nothing_sees_the_database_once_created(tmp_path: Path) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    docs, db = _docs(tmp_path), tmp_path / "db" / "index.db"
    engine = Engine(Settings.load(docs, db, "none"))
    try:
        assert engine.status().counts.documents == 0 and engine.list_documents().total == 0
        assert _left_behind(db) == []
        # reading a file indexes it first (the database is created then), in the same engine
        outline = engine.outline("guide.md")
        assert outline.title == "Guide" and db.is_file()
        assert engine.status().counts.documents == 1
        assert [d.path for d in engine.list_documents().documents] == ["guide.md"]
    finally:
        engine.close()
