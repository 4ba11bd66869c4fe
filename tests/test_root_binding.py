"""One index database per docs root: a database built for one root is refused for another.

Regression (tester): `--db` / `MARKDOWN_MEMORY_DB` pointed at one file for two docs roots let
the run for the second root replace the whole index (the first root's documents were removed
as deleted), and `search --no-refresh` on the wrong root answered the other project's sections.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import anyio
import pytest

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.errors import DatabaseReadOnlyError, DocsRootMissingError, RootMismatchError
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest
from markdown_memory.store import Store
from markdown_memory.store.testing import peek_paths


def _project(path: Path, word: str) -> Path:
    path.mkdir(parents=True)
    (path / "x.md").write_text(f"# X\n\n{word}\n")
    (path / "notes.md").write_text(f"# Notes\n\nabout {word}\n")
    return path


@pytest.fixture
def cli(cli_main):
    """``cli(*args, cwd, db)``: the CLI (``--embedder none``, in this process: conftest's
    ``cli_main``) in ``cwd``, its default docs root, with ``MARKDOWN_MEMORY_DB=db``."""

    def call(*args: str, cwd: Path, db: Path):
        return cli_main("--embedder", "none", *args, cwd=cwd,
                        env={"MARKDOWN_MEMORY_DB": str(db), "MARKDOWN_MEMORY_DOCS_DIR": None})

    return call


def _engine(root: Path, db: Path) -> Engine:
    return Engine(Settings(docs_root=root, db_path=db, embedder="none"))


def _documents(db: Path) -> list[str]:
    return peek_paths(db)


def test_cli_refuses_a_database_built_for_another_root_and_keeps_its_index(tmp_path: Path, cli) -> None:
    first = _project(tmp_path / "first", "wombat")
    other = _project(tmp_path / "other", "koala")
    db = tmp_path / "shared.db"
    assert cli("index", str(first), cwd=tmp_path, db=db).returncode == 0

    read = cli("read", "x.md", "X", cwd=other, db=db)  # the docs root is the working directory
    assert read.returncode == 2 and "Traceback" not in read.stderr
    message = read.stderr
    assert message.startswith("markdown-memory: error: ") and message.count("\n") == 1
    assert str(first) in message and str(other) in message
    assert "--db" in message and "MARKDOWN_MEMORY_DB" in message and "default per-project location" in message
    assert f"delete '{db}'" in message
    assert "no longer indexed" not in message

    search = cli("search", "--no-refresh", "wombat", "--json", cwd=other, db=db)
    assert search.returncode == 2 and "wombat" not in search.stdout.replace(str(first), "")
    assert json.loads(search.stdout)["error"]["type"] == "root_mismatch"
    assert cli("index", str(other), cwd=tmp_path, db=db).returncode == 2

    status = json.loads(cli("status", "--json", cwd=first, db=db).stdout)
    assert status["documents"] == 2
    found = json.loads(cli("search", "--no-refresh", "wombat", "--json", cwd=first, db=db).stdout)
    assert found["results"][0]["file_path"] == "x.md"


def test_engine_refuses_before_reading_or_writing(tmp_path: Path) -> None:
    first = _project(tmp_path / "first", "wombat")
    other = _project(tmp_path / "other", "koala")
    db = tmp_path / "shared.db"
    _engine(first, db).index()
    before = db.read_bytes()
    wrong = _engine(other, db)
    for call in (wrong.index, wrong.status, lambda: wrong.search(SearchRequest("wombat")), lambda: wrong.read("x.md", "X"),
                 lambda: wrong.outline("x.md"), wrong.list_documents, wrong.refresh):
        with pytest.raises(RootMismatchError):
            call()
    wrong.close()
    assert db.read_bytes() == before
    assert _documents(db) == ["notes.md", "x.md"]


def test_a_symlinked_path_to_the_same_root_is_the_same_root(tmp_path: Path) -> None:
    real = _project(tmp_path / "real", "wombat")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    db = tmp_path / "i.db"
    _engine(link, db).index()  # recorded by its real path
    assert _engine(real, db).search(SearchRequest("wombat")).results[0].file_path == "x.md"
    assert _engine(link, db).search(SearchRequest("wombat")).results[0].file_path == "x.md"


def test_the_default_database_location_is_per_root_and_never_refused(tmp_path: Path) -> None:
    first = _project(tmp_path / "first", "wombat")
    other = _project(tmp_path / "other", "koala")
    link = tmp_path / "link"
    link.symlink_to(first, target_is_directory=True)
    a, b, c = (Settings.load(r, None, "none") for r in (first, other, link))
    assert a.db_path != b.db_path and a.db_path == c.db_path
    for settings in (a, b, c):
        assert Engine(settings).index().failed == ()


def _forget_root(db: Path) -> None:
    """Make ``db`` look like one written before the docs root was recorded."""
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM meta WHERE key = 'docs_root'")
    conn.commit()
    conn.close()


def test_an_older_database_is_adopted_by_its_own_root_and_refused_by_another(tmp_path: Path) -> None:
    first = _project(tmp_path / "first", "wombat")
    other = tmp_path / "other"
    other.mkdir()
    (other / "y.md").write_text("# Y\n\nkoala\n")
    db = tmp_path / "old.db"
    _engine(first, db).index()
    _forget_root(db)
    with pytest.raises(RootMismatchError, match="did not record its docs root") as refused:
        _engine(other, db).index()
    assert str(other) in str(refused.value) and "delete" in str(refused.value)
    assert _documents(db) == ["notes.md", "x.md"]
    engine = _engine(first, db)
    assert engine.index().removed == 0
    assert engine.store.get_meta("docs_root") == os.path.realpath(first)


def test_an_empty_older_database_is_adopted(tmp_path: Path) -> None:
    first = _project(tmp_path / "first", "wombat")
    db = tmp_path / "empty.db"
    Store(db, root=tmp_path / "first").close()  # an empty index (a read alone creates no file)
    _forget_root(db)
    other = _project(tmp_path / "other", "koala")
    assert _engine(other, db).index().added == 2
    with pytest.raises(RootMismatchError):
        _engine(first, db).status()


def test_a_moved_project_keeps_its_index_and_a_new_folder_at_the_old_path_is_refused(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", "wombat")
    db = tmp_path / "i.db"
    _engine(old, db).index()
    moved = tmp_path / "moved"
    old.rename(moved)
    engine = _engine(moved, db)
    assert engine.search(SearchRequest("wombat")).results[0].file_path == "x.md"
    assert engine.index().removed == 0
    _project(tmp_path / "old", "koala")
    with pytest.raises(RootMismatchError, match="belongs to the docs root"):
        _engine(tmp_path / "old", db).status()


def test_a_moved_root_whose_documents_are_not_here_says_how_to_rebuild(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", "wombat")
    db = tmp_path / "i.db"
    _engine(old, db).index()
    for f in old.iterdir():
        f.unlink()
    old.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "y.md").write_text("# Y\n\nkoala\n")
    with pytest.raises(RootMismatchError) as refused:
        _engine(elsewhere, db).index()
    message = str(refused.value)
    assert "no longer exists" in message and str(old) in message and str(elsewhere) in message
    assert f"delete '{db}'" in message and "to rebuild it for" in message
    db.unlink()
    assert _engine(elsewhere, db).index().added == 1


def _tool_calls(runtime: Runtime) -> dict:
    """Every MCP tool body of ``runtime``, by tool name, as a call without arguments."""
    return {
        "search_docs": lambda: runtime.search_docs(SearchRequest("wombat")),
        "read_section": lambda: runtime.answer("read_section", {"file_path": "x.md", "heading_path": "X", "include_subsections": False, "cursor": None}),
        "get_document_outline": lambda: runtime.answer("get_document_outline", {"file_path": "x.md", "max_depth": None}),
        "list_documents": lambda: runtime.answer("list_documents", {"directory": None, "offset": 0}),
        "index_directory": lambda: runtime.index_directory(None, False),
    }


def test_mcp_tools_answer_the_refusal_as_a_tool_error(tmp_path: Path) -> None:
    first = _project(tmp_path / "first", "wombat")
    other = _project(tmp_path / "other", "koala")
    db = tmp_path / "shared.db"
    _engine(first, db).index()
    for auto_index in (False, True):
        runtime = Runtime(Settings.load(other, db, "none", auto_index=auto_index))
        for tool, fn in _tool_calls(runtime).items():
            result = anyio.run(runtime.call, tool, fn)
            body = json.loads(result.content[0].text)
            assert result.is_error, (tool, body)
            assert str(first) in body["error"] and str(other) in body["error"] and "internal" not in body["error"]
        assert runtime.shutdown(timeout=5)
    assert _documents(db) == ["notes.md", "x.md"]


# -- the docs root disappears while a process serves it -----------------------------------------
def _entry_points(engine: Engine) -> dict:
    return {
        "index": engine.index, "refresh": lambda: engine.refresh(ttl=0), "status": engine.status,
        "search": lambda: engine.search(SearchRequest("wombat")), "read": lambda: engine.read("x.md", "X"),
        "outline": lambda: engine.outline("x.md"), "list": engine.list_documents,
    }


@pytest.mark.parametrize("db_inside_root", [True, False])
def test_a_docs_root_renamed_while_served_is_refused_and_nothing_is_created_or_removed(
        tmp_path: Path, db_inside_root: bool) -> None:
    """Regression (tester): after `mv proj proj-renamed` a server with a relative database
    recreated `proj/.mm/index.db` at the old path (a stray folder, "scanned 0"), and with the
    default location the next run removed every document ("found no Markdown file")."""
    root = _project(tmp_path / "proj", "wombat")
    db = root / ".mm" / "index.db" if db_inside_root else tmp_path / "data" / "index.db"
    engine = _engine(root, db)
    engine.index()
    root.rename(tmp_path / "proj-renamed")
    kept = (tmp_path / "proj-renamed" / ".mm" / "index.db") if db_inside_root else db
    for name, call in _entry_points(engine).items():
        with pytest.raises(DocsRootMissingError, match="no longer exists") as refused:
            call()
        assert str(root) in str(refused.value), name
        assert not root.exists(), f"{name} recreated the old docs root"
    engine.close()
    fresh = _engine(root, db)  # a new process (or thread) opening it
    for call in _entry_points(fresh).values():
        with pytest.raises(DocsRootMissingError):
            call()
    assert not root.exists()
    assert _documents(kept) == ["notes.md", "x.md"]
    (tmp_path / "proj-renamed").rename(root)  # the root comes back: the index is all there
    assert _engine(root, db).search(SearchRequest("wombat")).results[0].file_path == "x.md"


def test_mcp_tools_answer_a_missing_docs_root_as_a_tool_error(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", "wombat")
    db = root / ".mm" / "index.db"
    runtime = Runtime(Settings.load(root, db, "none", auto_index=True))
    runtime.engine.index()
    root.rename(tmp_path / "moved")
    for tool, fn in {"search_docs": lambda: runtime.search_docs(SearchRequest("wombat")),
                     "index_directory": lambda: runtime.index_directory(None, False),
                     "list_documents": lambda: runtime.answer("list_documents", {"directory": None, "offset": 0})}.items():
        result = anyio.run(runtime.call, tool, fn)
        body = json.loads(result.content[0].text)
        assert result.is_error and "no longer exists" in body["error"] and "internal" not in body["error"], tool
    assert runtime.shutdown(timeout=5)
    assert not root.exists()
    assert _documents(tmp_path / "moved" / ".mm" / "index.db") == ["notes.md", "x.md"]


# -- read-only databases --------------------------------------------------------------------------
def _read_only(request: pytest.FixtureRequest, *paths: Path) -> None:
    """Make ``paths`` unwritable for this process: chmod for a normal user; as root (who ignores
    modes) the immutable attribute. Undone after the test."""
    if os.geteuid() != 0:
        for p in paths:
            p.chmod(0o555 if p.is_dir() else 0o444)
        request.addfinalizer(lambda: [p.chmod(0o755 if p.is_dir() else 0o644) for p in paths])
        return
    if subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True).returncode != 0:
        pytest.skip("running as root and chattr +i is unavailable: cannot make a file read-only")
    request.addfinalizer(lambda: subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True))


def _assert_read_only_error(run, db: Path) -> None:
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1
    assert run.stderr.startswith("markdown-memory: error: the index database")
    assert str(db) in run.stderr and "cannot be written" in run.stderr
    assert "writable" in run.stderr and "MARKDOWN_MEMORY_DB" in run.stderr


def test_a_database_in_a_read_only_folder_is_a_user_error(tmp_path: Path, request: pytest.FixtureRequest, cli) -> None:
    """Regression (tester): SQLite cannot create -wal/-shm in a read-only folder; search,
    status, list and outline printed an internal error with a traceback."""
    root = _project(tmp_path / "proj", "wombat")
    db = tmp_path / "ro" / "index.db"
    assert cli("index", str(root), cwd=tmp_path, db=db).returncode == 0
    _read_only(request, db.parent)
    for args in (["search", "wombat"], ["search", "--no-refresh", "wombat"], ["status"], ["list"],
                 ["outline", "x.md"], ["index"]):
        _assert_read_only_error(cli(*args, cwd=root, db=db), db)
    as_json = json.loads(cli("status", "--json", cwd=root, db=db).stdout)
    assert as_json["error"]["type"] == "database_read_only"


def test_a_read_only_database_file_refuses_writes_and_still_answers_without_them(
        tmp_path: Path, request: pytest.FixtureRequest, cli) -> None:
    """Regression (tester): a read-only index.db (and its .lock, owned by another user): plain
    `search` failed with an internal PermissionError on index.db.lock; and an index run after
    an interrupted one took the read-only database for a damaged one and moved it aside."""
    root = _project(tmp_path / "proj", "wombat")
    db = tmp_path / "data" / "index.db"
    assert cli("index", str(root), cwd=tmp_path, db=db).returncode == 0
    (root / "x.md").write_text("# X\n\nwombat changed\n")
    _read_only(request, db, Path(str(db) + ".lock"))
    _assert_read_only_error(cli("search", "wombat", cwd=root, db=db), db)
    _assert_read_only_error(cli("index", cwd=root, db=db), db)
    found = cli("search", "--no-refresh", "wombat", cwd=root, db=db)
    assert found.returncode == 0 and "x.md" in found.stdout and "stale" in found.stdout
    assert cli("status", cwd=root, db=db).returncode == 0
    assert [p.name for p in db.parent.iterdir() if "corrupt" in p.name] == []


def test_an_interrupted_run_on_a_read_only_database_is_not_taken_for_damage(
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    root = _project(tmp_path / "proj", "wombat")
    db = tmp_path / "data" / "index.db"
    engine = _engine(root, db)
    engine.index()
    engine.close()
    engine._database.run_marker().write_text("1")  # a run was killed
    (root / "x.md").write_text("# X\n\nwombat changed\n")
    _read_only(request, db)
    with pytest.raises(DatabaseReadOnlyError, match="cannot be written"):
        _engine(root, db).index()
    assert [p.name for p in db.parent.iterdir() if "corrupt" in p.name] == []
    assert _documents(db) == ["notes.md", "x.md"]


# -- legitimate setups the binding refused ---------------------------------------------------------
def test_a_copied_project_with_its_database_inside_belongs_to_the_copy(tmp_path: Path) -> None:
    """Regression (tester): `cp -a A A2` with a relative database (`.mm/index.db`): A2's own
    copy of the database was refused as belonging to A."""
    import shutil

    first = _project(tmp_path / "A", "wombat")
    _engine(first, first / ".mm" / "index.db").index()
    copy = tmp_path / "A2"
    shutil.copytree(first, copy, symlinks=True)
    (copy / "x.md").write_text("# X\n\nkoala\n")
    engine = _engine(copy, copy / ".mm" / "index.db")
    assert engine.search(SearchRequest("wombat")).results  # not refused as A's database
    assert engine.index().updated == 1
    assert engine.search(SearchRequest("koala")).results[0].file_path == "x.md"
    assert engine.store.get_meta("docs_root") == os.path.realpath(copy)
    assert _engine(first, first / ".mm" / "index.db").search(SearchRequest("wombat")).results[0].file_path == "x.md"


def test_a_reclone_at_the_old_path_leaves_the_old_folder_its_own_database(tmp_path: Path) -> None:
    work = _project(tmp_path / "W", "wombat")
    _engine(work, work / ".mm" / "index.db").index()
    work.rename(tmp_path / "W-old")
    _project(tmp_path / "W", "koala")  # `git clone ... W`
    old = tmp_path / "W-old"
    assert _engine(old, old / ".mm" / "index.db").search(SearchRequest("wombat")).results[0].file_path == "x.md"


def test_a_database_inside_its_own_subproject_is_still_refused_for_the_parent(tmp_path: Path) -> None:
    parent = tmp_path / "p"
    sub = _project(parent / "sub", "wombat")
    db = sub / ".mm" / "index.db"
    _engine(sub, db).index()
    with pytest.raises(RootMismatchError, match="belongs to the docs root"):
        _engine(parent, db).status()


def test_a_switched_symlink_root_keeps_its_database(tmp_path: Path) -> None:
    """Regression (tester): `current -> rel1`, later `current -> rel2`, with an explicit --db:
    refused because the recorded real path rel1 still exists."""
    rel1 = _project(tmp_path / "rel1", "wombat")
    rel2 = _project(tmp_path / "rel2", "koala")
    current = tmp_path / "current"
    current.symlink_to(rel1, target_is_directory=True)
    db = tmp_path / "i.db"
    _engine(current, db).index()
    current.unlink()
    current.symlink_to(rel2, target_is_directory=True)
    engine = _engine(current, db)
    engine.index()
    assert engine.search(SearchRequest("koala")).results[0].file_path == "x.md"
    with pytest.raises(RootMismatchError):  # another spelling still compares by real path
        _engine(rel1, db).status()


def test_a_different_project_with_common_file_names_does_not_adopt_a_moved_root_database(tmp_path: Path) -> None:
    """Regression (tester): with P renamed away, `search --docs-dir Q` adopted P's database
    because Q has files of the same names, and answered P's text as Q's."""
    db = tmp_path / "shared.db"
    p = tmp_path / "P"
    q = tmp_path / "Q"
    for root, text in ((p, "the wombat project, with a long introduction " * 5), (q, "koala")):
        (root / "docs").mkdir(parents=True)
        (root / "README.md").write_text(f"# Readme\n\n{text}\n")
        (root / "docs" / "guide.md").write_text(f"# Guide\n\n{text} guide\n")
    _engine(p, db).index()
    p.rename(tmp_path / "P-unmounted")
    with pytest.raises(RootMismatchError, match="no longer exists"):
        _engine(q, db).search(SearchRequest("wombat"))
    moved = _engine(tmp_path / "P-unmounted", db)  # P itself, moved: still adopted
    assert moved.search(SearchRequest("wombat")).results[0].file_path in ("README.md", "docs/guide.md")


def test_a_command_run_from_a_parent_folder_does_not_take_the_index_over(tmp_path: Path) -> None:
    """Regression (new-user trial): with the database in a parent folder of the docs root
    (`project/idx.db` for `project/docs`), a command run in `project/` re-homed the index to
    `project/` (the database lives inside it), and the real root was refused from then on."""
    parent = tmp_path / "project"
    docs = _project(parent / "docs", "wombat")
    db = parent / "idx.db"
    _engine(docs, db).index()
    with pytest.raises(RootMismatchError, match="belongs to the docs root"):
        _engine(parent, db).status()
    assert _engine(docs, db).search(SearchRequest("wombat")).results[0].file_path == "x.md"  # still the docs root's index
