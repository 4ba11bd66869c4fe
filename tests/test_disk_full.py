"""A full disk under the index database (issue 13's attack finding), on a real small filesystem:
a tmpfs mounted by the test (skipped, with the reason, where mounting is not allowed).

What a user relies on: ``index`` stops with one sentence, "disk full: free space at <folder>",
never an internal error, and lists no file as failed because of it; what was committed stays
searchable (CLI and MCP), also at 0 bytes free, where SQLite cannot even create the -shm file a
WAL reader needs; the next run after space returns completes with nothing lost or damaged.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from markdown_memory.store.testing import check_file
from test_server_stdio import RawServer

CLI_NONE = ("--embedder", "none")


def _mount_tmpfs(where: Path, size: str) -> str | None:
    """Mount a tmpfs of ``size`` at ``where``; None on success, else why it cannot be done."""
    if not sys.platform.startswith("linux"):
        return "tmpfs mounts need Linux"
    if os.geteuid() != 0:
        return "mounting a small filesystem needs root (run as root, or in a container with CAP_SYS_ADMIN)"
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}"
    return None


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``mount(size) -> Path``: a fresh tmpfs of that size (unmounted after the test)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"fs{len(mounted)}"
        reason = _mount_tmpfs(where, size)
        if reason:
            pytest.skip(reason)
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _resize(where: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True, capture_output=True)


def _fill(folder: Path) -> Path:
    """Write zeros into ``folder/fill`` until the filesystem is full (0 bytes free)."""
    path = folder / "fill"
    with open(path, "wb", buffering=0) as fh:
        for chunk in (1 << 20, 1 << 16, 1 << 12, 512):
            try:
                while True:
                    fh.write(b"\0" * chunk)
            except OSError:
                continue
    assert os.statvfs(folder).f_bavail == 0
    return path


def _docs(root: Path, files: int, seed: int = 1) -> Path:
    """``files`` Markdown files of 8 sections (~20 KB each) with a word every file shares."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(4, 9))) for _ in range(3000)]
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        parts = [f"# Topic {i} part {h}\n\ncommonword " + " ".join(rng.choice(words) for _ in range(300)) + "\n"
                 for h in range(8)]
        (root / f"doc{i:03}.md").write_text("\n".join(parts), encoding="utf-8")
    return root


def _sentence(folder: Path) -> str:
    return f"disk full: free space at {folder}"


def _integrity(db: Path) -> tuple[str, int, int]:
    checked = check_file(db)
    return checked.integrity, checked.documents, checked.failures


def test_index_stops_with_one_sentence_when_the_disk_fills_and_resumes_when_space_returns(
        tmp_path: Path, small_fs, cli_main) -> None:
    fs = small_fs("2m")  # the index of 60 files needs ~3 MB: it fills up part-way
    db = fs / "index.db"
    docs = _docs(tmp_path / "docs", 60)
    flags = (*CLI_NONE, "--db", str(db))

    run = cli_main(*flags, "index", str(docs))
    assert run.returncode == 2, run
    both = run.stdout + run.stderr
    assert both.count(_sentence(fs)) == 1, both
    assert "internal error" not in both and "Traceback" not in both and "not indexed" not in both

    status = cli_main(*flags, "status", "--docs-dir", str(docs), "--json")
    facts = json.loads(status.stdout)
    kept = facts["documents"] if "documents" in facts else facts["counts"]["documents"]
    assert 0 < kept < 60
    assert facts["failures"] == []  # no file is blamed for the full disk
    assert not db.with_name("index.db.run").exists()  # stopped cleanly: nothing to check next time

    found = cli_main(*flags, "search", "commonword", "--docs-dir", str(docs), "--json")
    assert found.returncode == 0, found
    answer = json.loads(found.stdout)
    assert answer["results"], answer
    assert answer["message"].count(_sentence(fs)) == 1  # said once, in the answer's note

    _resize(fs, "40m")  # space returns
    again = cli_main(*flags, "index", str(docs))
    assert again.returncode == 0, again
    assert "disk full" not in again.stdout + again.stderr
    assert _integrity(db) == ("ok", 60, 0)
    found = json.loads(cli_main(*flags, "search", "commonword", "--docs-dir", str(docs), "--json").stdout)
    assert found["results"] and "disk full" not in (found["message"] or "")


def _mcp(root: Path, db: Path, tmpdir: Path) -> RawServer:
    # SQLite's and Python's temporary files on the full filesystem too, as on a single full disk
    return RawServer([], {"MARKDOWN_MEMORY_DOCS_DIR": str(root), "MARKDOWN_MEMORY_DB": str(db),
                          "MARKDOWN_MEMORY_EMBEDDER": "none", "SQLITE_TMPDIR": str(tmpdir),
                          "TMPDIR": str(tmpdir)})


def test_search_keeps_answering_at_zero_bytes_free_over_cli_and_mcp(tmp_path: Path, small_fs, cli_main) -> None:
    fs = small_fs("8m")
    db = fs / "index.db"
    docs = _docs(tmp_path / "docs", 10)
    flags = (*CLI_NONE, "--db", str(db))
    assert cli_main(*flags, "index", str(docs)).returncode == 0
    with_space = json.loads(cli_main(*flags, "search", "commonword", "--docs-dir", str(docs), "--json").stdout)
    best = [(r["file_path"], r["heading_path"]) for r in with_space["results"]]
    (docs / "late.md").write_text("# Late\n\nlatecomer text written while the disk was full\n", encoding="utf-8")
    fill = _fill(fs)

    def same_best(results: list[dict], *, session: bool = False) -> bool:
        """The hits of the search with space, first ones first (the disk-full sentence in the
        message may leave room for fewer pointers; in an MCP session, texts already sent are
        pointers and the budget reaches later hits, so only the best one must agree)."""
        got = [(r["file_path"], r["heading_path"]) for r in results]
        return len(got) >= 2 and (got[0] == best[0] if session else got == best[: len(got)])

    full_env = {"SQLITE_TMPDIR": str(fs), "TMPDIR": str(fs)}

    # CLI: a search (which indexes first) answers from the index, saying why it is not current
    found = cli_main(*flags, "search", "commonword", "--docs-dir", str(docs), "--json", env=full_env)
    assert found.returncode == 0, found
    answer = json.loads(found.stdout)
    assert same_best(answer["results"]), answer["results"]
    assert answer["message"].startswith(_sentence(fs))
    assert "disk I/O error" not in found.stderr and "Traceback" not in found.stderr
    human = cli_main(*flags, "search", "commonword", "--docs-dir", str(docs), env=full_env)
    assert human.returncode == 0 and (human.stdout + human.stderr).count(_sentence(fs)) == 1, human
    run = cli_main(*flags, "index", str(docs), env=full_env)
    assert run.returncode == 2 and (run.stdout + run.stderr).count(_sentence(fs)) == 1, run

    # MCP: search, list and outline answer; index_directory is one sentence; no traceback
    server = _mcp(docs, db, fs)
    try:
        server.initialize()
        for _ in range(3):
            is_error, body = server.tool("search_docs", {"query": "commonword"}, timeout=30)
            assert not is_error and same_best(body["results"], session=True), body
            assert body["index_status"]["message"].startswith(_sentence(fs))
        is_error, body = server.tool("list_documents", {}, timeout=30)
        assert not is_error and body["total"] == 10
        is_error, body = server.tool("get_document_outline", {"file_path": "doc001.md"}, timeout=30)
        assert not is_error and len(body["headings"]) == 8
        is_error, body = server.tool("index_directory", {}, timeout=30)
        assert is_error and body["error"].startswith(_sentence(fs)), body
        assert "could not be parsed" not in json.dumps(body)

        fill.unlink()  # space returns: the same server catches up
        is_error, body = server.tool("index_directory", {}, timeout=60)
        assert not is_error and body["added"] == 1 and body["failed"] == [], body
        is_error, body = server.tool("search_docs", {"query": "latecomer"}, timeout=30)
        assert not is_error and body["results"][0]["file_path"] == "late.md"
        assert "disk full" not in (body["index_status"]["message"] or "")
        assert server.close_stdin_and_wait() == 0
    finally:
        server.kill()
    server.assert_stdout_is_jsonrpc()
    log = server.stderr_text
    assert "Traceback" not in log and "disk I/O error" not in log
    assert log.count("disk full") <= 1, log  # said once, not once per call
    assert _integrity(db) == ("ok", 11, 0)
    shutil.rmtree(docs)


@pytest.mark.parametrize(("message", "rejected"), [
    ('fts5: syntax error near "disk"', True),  # a query word that only looks like a disk problem
    ('fts5: syntax error near "i/o"', True),
    ("no such column: full", True),
    ("disk I/O error", False),  # the database's trouble: never "rephrase the query"
    ("database or disk is full", False),
    ("database is locked", False),
])
def test_a_disk_error_in_a_keyword_query_is_never_blamed_on_the_query(message: str, rejected: bool) -> None:
    from markdown_memory.store.errors import is_query_rejection

    assert is_query_rejection(sqlite3.OperationalError(message)) is rejected


def test_a_full_disk_is_classified_by_errno_code_or_free_space(tmp_path: Path) -> None:
    import errno

    from markdown_memory.store.errors import is_disk_full

    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(sqlite3.OperationalError("database or disk is full"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    # a disk I/O error is a full disk only where the filesystem has (almost) no space left
    assert not is_disk_full(sqlite3.OperationalError("disk I/O error"), tmp_path / "index.db")
    try:
        raise RuntimeError("wrapped") from OSError(errno.ENOSPC, "No space left on device")
    except RuntimeError as exc:
        assert is_disk_full(exc)
