"""Real-world filesystem cases (issue 6): stale index after delete/rename/edit, symlink loops
and aliases, unreadable and special files, and one index run over every case input.

Trees with symlinks, FIFOs and chmod 000 are built at test time by the cases' own setup
scripts (copied into tests/fixtures/cases/<id>/). Tests run as root, which ignores file
permissions, so permission cases run the CLI as ``nobody`` through ``setpriv`` (skipped when
that is impossible) and are also covered by a unit test that makes ``open`` fail.

Not covered here (owned elsewhere): case 019 part A (answers of a running MCP server with no
re-index between change and query: lifecycle work), case 025 (concurrent processes:
lifecycle work), cases 026/027 (MCP stdout and startup: MCP work).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import stored_passages

CASES = Path(__file__).parent / "fixtures" / "cases"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def cli(*args: str, prefix: list[str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*(prefix or []), sys.executable, "-m", "markdown_memory.cli", *args],
                          capture_output=True, text=True, timeout=timeout)


def paths_of(answer) -> list[str]:
    """File paths of a ``SearchAnswer``'s hits, in rank order."""
    return [h.file_path for h in answer.results]


def json_paths(answer: dict) -> list[str]:
    """File paths of a ``search --json`` answer's hits, in rank order."""
    return [h["file_path"] for h in answer["results"]]


def keyword_paths(answer) -> list[str]:
    return [h.file_path for h in answer.results if set(h.matched_by) & {"keyword", "exact"}]


# -- 019 stale index (B: explicit incremental index; C: editor temp files) ----------------------
# Source: https://github.com/tobi/qmd/issues/961 (and qmd#300, basic-memory#30, vscode#60760)
def scenario(root: Path, step: str) -> None:
    subprocess.run(["bash", str(CASES / "019-stale-index-delete-rename-edit" / "scenario.sh"), str(root), step],
                   check=True, capture_output=True)


@pytest.fixture
def notes_019(tmp_path):
    root = tmp_path / "notes"
    shutil.copytree(CASES / "019-stale-index-delete-rename-edit" / "notes", root)
    (root / "delta.md").write_text("# Delta Notes\n\n## Untouched\n\nThis file never changes: deltatoken55.\n")
    return root


def test_case_019_incremental_index_reports_delete_rename_edit(notes_019, make_engine):
    engine = make_engine(notes_019, embedder="minilm")
    first = engine.index()
    assert first.added == 4
    for query, path in (("ghosttoken777", "alpha.md"), ("renametoken42", "beta.md"), ("oldphrase-kiwi", "gamma.md")):
        assert keyword_paths(engine.search(SearchRequest(query))) == [path]
    ids_before = sorted(p.id for p in stored_passages(engine.store, "delta.md"))
    time.sleep(0.01)  # distinct mtimes on coarse clocks
    for step in ("delete", "rename", "edit"):
        scenario(notes_019, step)
    report = engine.index()
    assert (report.added, report.removed, report.updated, report.unchanged) == (1, 2, 1, 1)
    assert not report.failed and not report.warnings
    ids_after = sorted(p.id for p in stored_passages(engine.store, "delta.md"))
    assert ids_after == ids_before  # unchanged file: same passages, not re-embedded
    changed = len(stored_passages(engine.store, ["archive/beta-renamed.md", "gamma.md"]))
    assert report.vectors_embedded + report.vectors_reused == changed
    assert "alpha.md" not in paths_of(engine.search(SearchRequest("ghosttoken777")))
    assert keyword_paths(engine.search(SearchRequest("renametoken42"))) == ["archive/beta-renamed.md"]
    assert "beta.md" not in paths_of(engine.search(SearchRequest("renametoken42")))
    assert keyword_paths(engine.search(SearchRequest("newphrase-mango"))) == ["gamma.md"]
    assert "gamma.md" not in keyword_paths(engine.search(SearchRequest("oldphrase-kiwi")))
    from markdown_memory.errors import DocumentNotFoundError

    with pytest.raises(DocumentNotFoundError):
        engine.read("alpha.md", "Alpha Notes > Ghost Check")


@pytest.mark.parametrize("embedder", ["none", "minilm"])
def test_case_019_editor_temp_files_are_not_indexed(notes_019, make_engine, embedder):
    engine = make_engine(notes_019, embedder=embedder)
    engine.index()
    scenario(notes_019, "tempfiles")
    report = engine.index()
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert not report.failed and not report.warnings
    for token in ("tmptoken999", "swptoken888"):
        answer = engine.search(SearchRequest(token))
        assert not any(p.endswith((".tmp", ".swp")) for p in paths_of(answer))
        assert keyword_paths(answer) == []
        if embedder == "none":
            assert answer.results == ()
        else:  # vector neighbours may be listed, but never as a confident answer
            assert answer.confidence == "none"


# -- 020 symlink loops and aliases ---------------------------------------------------------------
# Source: https://github.com/artempyanykh/marksman/issues/317 (and opengrok#233, fuzzy-finder#329,
# obsidian-card-board#138, zotero-markdb-connect#139)
@pytest.fixture
def tree_020(tmp_path):
    subprocess.run(["bash", str(CASES / "020-symlink-loops-and-aliases" / "setup.sh"), str(tmp_path / "t")],
                   check=True, capture_output=True)
    return tmp_path / "t" / "root"


def test_case_020_symlink_loops_aliases_dangling_and_outside_links(tree_020, make_engine):
    engine = make_engine(tree_020, embedder="none")
    started = time.monotonic()
    report = engine.index()
    assert time.monotonic() - started < 10
    assert not report.failed
    docs = [d.path for d in engine.list_documents().documents]
    assert docs == ["guide/intro.md", "guide/setup.md", "zzz/after.md"]
    assert paths_of(engine.search(SearchRequest("looptoken123"))) == ["guide/intro.md"]
    assert paths_of(engine.search(SearchRequest("aftertoken456"))) == ["zzz/after.md"]
    # Documented policy (walk.py): folder links are never followed, so outside text is not indexed.
    assert engine.search(SearchRequest("outsidetoken789")).results == ()
    warned = {w["path"]: w["message"] for w in report.warnings}
    assert "dangling" in warned["broken.md"]
    assert "outside" in warned["outside-link"] and "not followed" in warned["outside-link"]
    from markdown_memory.errors import MarkdownMemoryError

    for path in ("outside-link/outside.md", "../outside/outside.md", "mirror/intro.md"):
        with pytest.raises(MarkdownMemoryError):
            engine.read(path, "Outside")
    again = engine.index()
    assert (again.added, again.removed, again.updated) == (0, 0, 0)


def test_case_020_cli_lists_links_and_finishes(tree_020, tmp_path, cli_main):
    out = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "index", str(tree_020))
    assert out.returncode == 0, out.stderr
    for name in ("broken.md", "outside-link", "mirror", "guide/self", "guide/up"):
        assert f"warning: {name}:" in out.stdout, name


def test_case_020_reading_a_refused_link_names_why_it_is_not_indexed(tmp_path, make_engine):
    """Trial finding: reading a self-looping link said only "no indexed document 'loop.md'";
    the index run had named ELOOP. A read of a link the walk refuses now gives the walk's reason."""
    from markdown_memory.errors import DocumentNotFoundError

    root = tmp_path / "docs"
    root.mkdir()
    (root / "real.md").write_text("# Real\n\nbody\n", encoding="utf-8")
    os.symlink("loop.md", root / "loop.md")
    os.symlink("missing.md", root / "gone.md")
    engine = make_engine(root, embedder="none")
    engine.index()
    with pytest.raises(DocumentNotFoundError, match=r"'loop.md' is not indexed: .*\(ELOOP\)"):
        engine.read("loop.md", "Real")
    with pytest.raises(DocumentNotFoundError, match=r"'gone.md' is not indexed: dangling symbolic link"):
        engine.outline("gone.md")
    assert [d.path for d in engine.list_documents().documents] == ["real.md"]


# -- 022 unreadable and special files ----------------------------------------------------------------
# Source: https://github.com/Helweg/open-codebase-index/issues/296 (and qmd#253, lumen#79, codebase-memory-mcp#2001,
# deja-vu#901, memry#844)
def _can_drop_privileges() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    # nobody must also be able to run this interpreter and import the project: a checkout in a
    # private folder (e.g. `git clone . "$(mktemp -d)"`, mode 0700) is out of its reach
    probe = subprocess.run([*NOBODY, sys.executable, "-c", "import markdown_memory.cli"], capture_output=True)
    return probe.returncode == 0


needs_setpriv = pytest.mark.skipif(
    not _can_drop_privileges(),
    reason="needs root, setpriv, and a checkout and interpreter the unprivileged user can read")


@pytest.fixture
def tree_022():
    """The case-022 tree and a database folder that ``nobody`` can reach, in a temp folder of
    this test's own: not under pytest's base temp root, which is private to root (0700) and which
    any other pytest run started on the machine resets to 0700 (opening it up made this test fail
    whenever another run started meanwhile)."""
    base = Path(tempfile.mkdtemp(prefix="mm-test-022-"))
    try:
        base.chmod(0o755)
        blocked = [str(p) for p in base.parents if not p.stat().st_mode & 0o001]
        if blocked:
            pytest.skip(f"the unprivileged user cannot reach the temp folder {base} (no search permission on "
                        f"{blocked[0]}); set TMPDIR to a world-searchable folder")
        subprocess.run(["bash", str(CASES / "022-unreadable-and-special-files" / "setup.sh"), str(base / "t")],
                       check=True, capture_output=True)
        (base / "t").chmod(0o755)
        db_dir = base / "db"
        db_dir.mkdir()
        db_dir.chmod(0o777)
        yield base / "t" / "docs", db_dir / "index.db"
    finally:
        shutil.rmtree(base, ignore_errors=True)  # root removes the chmod-000 entries too


#: ``markdown_memory.cli.main`` once per argument list read as JSON from stdin, in one process;
#: prints a JSON list of ``[exit status, stdout, stderr]``
_CLI_RUNS = """
import contextlib, io, json, logging, sys
from markdown_memory.cli import main
done = []
for argv in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    for handler in list(logging.getLogger().handlers):  # main configures logging per run, as a new process
        logging.getLogger().removeHandler(handler)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    done.append([code, out.getvalue(), err.getvalue()])
sys.__stdout__.write(json.dumps(done))
"""


def _search_as_nobody(docs: Path, db: Path, *queries: str) -> list[dict]:
    """The ``search --json`` answers to ``queries``, searched by the unprivileged user in one
    process (a process per query cost a Python start and the imports each)."""
    runs = [["--embedder", "none", "--db", str(db), "search", q, "--docs-dir", str(docs), "--no-refresh", "--json"]
            for q in queries]
    done = subprocess.run([*NOBODY, sys.executable, "-c", _CLI_RUNS], input=json.dumps(runs), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = []
    for code, out, err in json.loads(done.stdout):
        assert code == 0, err
        answers.append(json.loads(out))
    return answers


@needs_setpriv
def test_case_022_unreadable_folder_file_and_fifo_are_reported(tree_022):
    docs, db = tree_022
    started = time.monotonic()
    out = cli("--embedder", "none", "--db", str(db), "index", str(docs), "--json", prefix=NOBODY, timeout=30)
    assert time.monotonic() - started < 10
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    problems = {f["path"]: f["reason"] for f in report["failed"]}
    assert set(problems) == {"locked.md", "a-locked-dir", "pipe.md"}
    assert "permission denied" in problems["locked.md"]
    assert "permission denied" in problems["a-locked-dir"]
    assert "not a regular file" in problems["pipe.md"]
    assert report["added"] == 3
    found = _search_as_nobody(docs, db, "readabletoken", "nestedtoken", "lasttoken", "lockedtoken", "innertoken")
    assert [json_paths(a) for a in found] == [["readable.md"], ["notes.md/nested.md"], ["z-last/last.md"], [], []]
    text = cli("--embedder", "none", "--db", str(db), "index", str(docs), prefix=NOBODY, timeout=30).stdout
    assert "completed with 3 problem(s)" in text


@needs_setpriv
def test_case_022_file_that_becomes_unreadable_is_not_served(tree_022):
    docs, db = tree_022
    (docs / "locked.md").chmod(0o644)
    first = json.loads(cli("--embedder", "none", "--db", str(db), "index", str(docs), "--json", prefix=NOBODY).stdout)
    assert first["added"] == 4
    assert [json_paths(a) for a in _search_as_nobody(docs, db, "lockedtoken")] == [["locked.md"]]
    (docs / "locked.md").chmod(0o000)  # size and mtime do not change
    second = json.loads(cli("--embedder", "none", "--db", str(db), "index", str(docs), "--json", prefix=NOBODY).stdout)
    assert any(f["path"] == "locked.md" and "permission denied" in f["reason"] for f in second["failed"])
    assert second["removed"] == 1
    assert [json_paths(a) for a in _search_as_nobody(docs, db, "lockedtoken", "readabletoken")] == [[], ["readable.md"]]


@pytest.mark.parametrize("code, words", [(errno.EAGAIN, "temporarily unavailable"), (errno.EACCES, "permission denied"),
                                         (errno.EPERM, "not permitted")])
def test_case_022_open_errors_are_reported_per_file(tmp_path, make_engine, monkeypatch, code, words):
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("a.md", "dataless.md", "z.md"):
        (root / name).write_text(f"# {name}\n\ntoken{name[0]} text\n")
    real_open = os.open

    def fake_open(file, *args, **kwargs):  # the indexer opens each file once, with os.open
        if str(file).endswith("dataless.md"):
            raise OSError(code, os.strerror(code), str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    engine = make_engine(root, embedder="none")
    report = engine.index()
    assert report.added == 2
    assert [(f["path"], words in f["reason"]) for f in report.failed] == [("dataless.md", True)]
    assert errno.errorcode[code] in report.failed[0]["reason"]
    assert paths_of(engine.search(SearchRequest("tokenz"))) == ["z.md"]
    assert engine.status().failures[0]["path"] == "dataless.md"


# -- every case input in one tree ------------------------------------------------------------------
def test_all_case_inputs_index_in_one_run(tmp_path, cli_main):
    """`markdown-memory index` over a tree holding every case input (plus the built symlink,
    FIFO and unreadable trees) finishes, indexes each readable Markdown file and lists every
    refused one with its reason."""
    root = tmp_path / "all"
    shutil.copytree(CASES, root, ignore=shutil.ignore_patterns("case.md"))
    subprocess.run(["bash", str(CASES / "020-symlink-loops-and-aliases" / "setup.sh"), str(root / "built-020")],
                   check=True, capture_output=True)
    subprocess.run(["bash", str(CASES / "022-unreadable-and-special-files" / "setup.sh"), str(root / "built-022")],
                   check=True, capture_output=True)
    from markdown_memory.files.walk import is_markdown_name

    (root / "binary.md").write_bytes(b"\x00\x01\x02 not text")
    (root / "latin1.md").write_bytes("# Caf\xe9 notes\n\nna\xefve r\xe9sum\xe9\n".encode("latin-1"))
    expected = sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*")
        if is_markdown_name(p.name) and p.is_file() and not p.is_symlink()
        and p.name != "binary.md" and not any((q / "pyvenv.cfg").exists() for q in p.parents)  # 045's virtualenv
    )
    db = tmp_path / "i.db"
    started = time.monotonic()
    out = cli_main("--embedder", "none", "--db", str(db), "index", str(root), "--json")
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 30
    report = json.loads(out.stdout)
    listed = cli_main("--embedder", "none", "--db", str(db), "list", "--docs-dir", str(root), "--json")
    indexed = sorted(d["path"] for d in json.loads(listed.stdout)["documents"])
    # as root the chmod-000 files are readable, so they are indexed too
    assert indexed == expected
    refused = {f["path"]: f["reason"] for f in report["failed"]}
    assert "binary" in refused["binary.md"]
    assert "not a regular file" in refused["built-022/docs/pipe.md"]
    assert "dangling" in {w["path"]: w["message"] for w in report["warnings"]}["built-020/root/broken.md"]
    assert any(w["path"] == "latin1.md" and "UTF-8" in w["message"] for w in report["warnings"])
    text = cli_main("--embedder", "none", "--db", str(db), "index", str(root))
    assert "not indexed: binary.md:" in text.stdout and "not indexed: built-022/docs/pipe.md:" in text.stdout
