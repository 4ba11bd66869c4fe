"""File discovery and reading (issue 13): Markdown extension variants (case 032), file names
with special characters (031, the discovery and indexing part; percent-decoded lookups are
tested with the path resolution), names that are not valid UTF-8 (041), files swapped for a
link or a FIFO while a run reads them (attack findings, with a real race from another thread),
and index_directory on a symlinked folder. Case 033 (nested .gitignore) is in
tests/test_walk_gitignore.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest

CASES = Path(__file__).parent / "fixtures" / "cases"


def mcp(root: Path, db: Path) -> Runtime:
    return Runtime(Settings.load(root, db, "none", auto_index=False))


def call(runtime: Runtime, tool: str, fn) -> tuple[bool, dict]:
    """(is_error, body) of one MCP tool call as the server answers it."""
    result = anyio.run(runtime.call, tool, fn)
    return bool(result.is_error), json.loads(result.content[0].text)


def cli_json(cli_main, *args: str) -> tuple[int, dict]:
    out = cli_main("--embedder", "none", *args, "--json")
    return out.returncode, json.loads(out.stdout)


# -- 032 extension variants ------------------------------------------------------------------------
# Sources: flatnotes#50, owncloud/files_texteditor#45, jekyll#2048 (case.md)
@pytest.fixture
def tree_032(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    shutil.copytree(CASES / "032-markdown-extension-variants", root,
                    ignore=shutil.ignore_patterns("case.md", "gen_backups.py"))
    subprocess.run([sys.executable, str(CASES / "032-markdown-extension-variants" / "gen_backups.py"), str(root)],
                   check=True)
    (root / "analysis.Rmd").write_text("# Analysis\n\nrmdtoken\n")
    return root


VARIANTS = {"uppermdtoken": "README.MD", "mixedcasetoken": "Guide.Markdown", "uppermdxtoken": "Widget.MDX",
            "mkdtoken": "legacy.mkd", "mdowntoken": "old-notes.mdown", "mdwntoken": "wiki-page.mdwn",
            "mkdntoken": "journal.mkdn", "mkdowntoken": "essay.mkdown"}


def test_case_032_every_markdown_extension_is_indexed_and_backups_are_not(tree_032, tmp_path, cli_main):
    db = str(tmp_path / "i.db")
    code, report = cli_json(cli_main, "--db", db, "index", str(tree_032))
    assert code == 0 and report["added"] == 8 and not report["failed"]
    # a Markdown dialect that is not indexed is named, never dropped silently
    assert report["warnings"] == [{"path": "analysis.Rmd", "message": report["warnings"][0]["message"]}]
    assert ".rmd files are not indexed" in report["warnings"][0]["message"]
    for token, path in VARIANTS.items():
        code, answer = cli_json(cli_main, "--db", db, "search", token, "--docs-dir", str(tree_032))
        assert [h["file_path"] for h in answer["results"]] == [path], token
    for token in ("baktoken", "tildetoken", "origtoken", "txttoken", "rmdtoken"):
        assert cli_json(cli_main, "--db", db, "search", token, "--docs-dir", str(tree_032))[1]["results"] == []
    text = cli_main("--embedder", "none", "--db", db, "index", str(tree_032)).stdout
    assert "warning: analysis.Rmd: .rmd files are not indexed" in text
    time.sleep(0.01)
    (tree_032 / "later.mdown").write_text("# Later\n\nlatertoken\n")  # a search re-checks the folder first
    answer = cli_json(cli_main, "--db", db, "search", "latertoken", "--docs-dir", str(tree_032))[1]
    assert [h["file_path"] for h in answer["results"]] == ["later.mdown"]


def test_case_032_mcp_finds_variants(tree_032, tmp_path):
    runtime = mcp(tree_032, tmp_path / "i.db")
    is_error, report = call(runtime, "index_directory", lambda: runtime.index_directory(None, False))
    assert not is_error and report["added"] == 8
    is_error, body = call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("mdwntoken")))
    assert not is_error and [h["file_path"] for h in body["results"]] == ["wiki-page.mdwn"]
    (tree_032 / "later.mkdn").write_text("# Later\n\nlatertoken\n")
    call(runtime, "index_directory", lambda: runtime.index_directory(None, False))
    is_error, body = call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("latertoken")))
    assert not is_error and [h["file_path"] for h in body["results"]] == ["later.mkdn"]
    listed = call(runtime, "list_documents", lambda: runtime.answer("list_documents", {"directory": None, "offset": 0}))[1]
    assert sorted(d["path"] for d in listed["documents"]) == sorted([*VARIANTS.values(), "later.mkdn"])


# -- 041 names that are not UTF-8 ----------------------------------------------------------------
# Sources: maestral#230, onedrive-d-old#73, tarindexer#9, ratarmount#32 (case.md)
@pytest.fixture
def tree_041(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    subprocess.run([sys.executable, str(CASES / "041-non-utf8-file-names" / "gen_names.py"), str(root)], check=True)
    return root


SKIPPED_041 = {"caf\\xe9-latin1.md": "file name is not valid UTF-8",
               "notes-\\x93quoted\\x94.md": "file name is not valid UTF-8",
               "r\\xe9sum\\xe9s/inner.md": "folder name is not valid UTF-8"}


def test_case_041_undecodable_names_are_skipped_with_a_warning_and_never_poison_the_root(tree_041, tmp_path,
                                                                                          cli_main):
    db = str(tmp_path / "i.db")
    code, report = cli_json(cli_main, "--db", db, "index", str(tree_041))
    assert code == 0, report
    assert report["added"] == 1 and not report["failed"]
    assert {w["path"]: w["message"].split(";")[0] for w in report["warnings"]} == SKIPPED_041
    for _ in range(2):  # the second search re-checks the folder after a new file changed its mtime
        code, answer = cli_json(cli_main, "--db", db, "search", "goodnametoken", "--docs-dir", str(tree_041))
        assert code == 0 and [h["file_path"] for h in answer["results"]] == ["good.md"]
        (tree_041 / os.fsdecode(b"new-\xff.md")).write_text("# New\n\nnewtoken\n")
    for command in ("list", "status"):
        out = cli_main("--embedder", "none", "--db", db, command, "--docs-dir", str(tree_041), "--json")
        assert out.returncode == 0 and "internal" not in out.stdout, out.stdout
    listed = json.loads(cli_main("--embedder", "none", "--db", db, "list", "--docs-dir", str(tree_041),
                                 "--json").stdout)
    assert [d["path"] for d in listed["documents"]] == ["good.md"]
    text = cli_main("--embedder", "none", "--db", db, "index", str(tree_041))
    assert text.returncode == 0
    assert "warning: caf\\xe9-latin1.md: file name is not valid UTF-8; skipped (rename the file" in text.stdout
    assert "warning: new-\\xff.md:" in text.stdout


def test_case_041_mcp_answers_on_a_root_with_undecodable_names(tree_041, tmp_path):
    runtime = mcp(tree_041, tmp_path / "i.db")
    is_error, report = call(runtime, "index_directory", lambda: runtime.index_directory(None, False))
    assert not is_error and report["added"] == 1
    assert "caf\\xe9-latin1.md" in {f["path"] for f in report["index_status"]["failures"]}
    for tool, fn in (("search_docs", lambda: runtime.search_docs(SearchRequest("goodnametoken"))),
                     ("list_documents", lambda: runtime.answer("list_documents", {"directory": None, "offset": 0})),
                     ("get_document_outline", lambda: runtime.answer("get_document_outline", {"file_path": "good.md", "max_depth": None}))):
        is_error, body = call(runtime, tool, fn)
        assert not is_error, body
    assert call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("latinnametoken")))[1]["results"] == []


# -- 031 special characters in names (discovery and indexing) -------------------------------------
# Sources: livedown#66, markdownify-mcp#1, md2cf#75, mdBook#2812 (case.md)
def test_case_031_names_with_spaces_hash_percent_brackets_are_indexed_as_spelled(tmp_path, cli_main):
    root = tmp_path / "docs"
    shutil.copytree(CASES / "031-special-characters-in-file-names", root, ignore=shutil.ignore_patterns("case.md"))
    db = str(tmp_path / "i.db")
    code, report = cli_json(cli_main, "--db", db, "index", str(root))
    assert code == 0 and not report["failed"] and not report["warnings"]
    listed = cli_json(cli_main, "--db", db, "list", "--docs-dir", str(root))[1]
    assert [d["path"] for d in listed["documents"]] == [
        "guides/100% uptime.md", "guides/Deploy Guide (v2).md", "guides/Q&A #3 [draft].md", "guides/it's + more.md",
        "index.md", "notes/a%20b.md"]
    for token, path in (("spacetoken", "guides/Deploy Guide (v2).md"), ("hashtoken", "guides/Q&A #3 [draft].md"),
                        ("percenttoken", "guides/100% uptime.md"), ("quoteplustoken", "guides/it's + more.md"),
                        ("literalpercenttoken", "notes/a%20b.md")):
        answer = cli_json(cli_main, "--db", db, "search", token, "--docs-dir", str(root))[1]
        assert answer["results"][0]["file_path"] == path, token


NAME_CHARS = list(" #%&'()+,;=@[]{}!$~^`-_") + ["é", "ü", "日", "本", "Ω", "🙂", "\u00a0", "ا"]
NAME = st.builds(lambda head, body: head + body,
                 st.sampled_from(["-", "--", "a", "Z", "%20", "#", "(", "1", "é"]),
                 st.text(NAME_CHARS, max_size=12)).filter(lambda n: n == n.strip())
# (a name that starts or ends with a space is indexed too, but a requested path is stripped of
# surrounding spaces when it is resolved, so it is not generated here)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(names=st.lists(NAME, min_size=1, max_size=5, unique=True), nested=st.booleans())
def test_case_031_any_printable_name_is_indexed_found_and_read_back(tmp_path_factory, names, nested):
    """Generated names (leading dashes, spaces, #, %, brackets, quotes, any Unicode; each file
    with a unique token) are all indexed under their exact name, found by their token, and
    their outline opens by that name."""
    base = tmp_path_factory.mktemp("names")
    root = base / "docs"
    paths = []
    for i, name in enumerate(names):
        rel = f"{name}/doc.md" if nested else f"{name}.md"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# Title {i}\n\nuniquetok{i}x here\n")
        paths.append(rel)
    engine = Engine(Settings.load(root, base / "i.db", "none"))
    try:
        report = engine.index()
        assert not report.failed and not report.warnings and report.added == len(names)
        assert sorted(d.path for d in engine.list_documents().documents) == sorted(paths)
        for i, rel in enumerate(paths):
            assert [h.file_path for h in engine.search(SearchRequest(f"uniquetok{i}x")).results] == [rel]
            assert engine.outline(rel).to_dict()["file_path"] == rel
    finally:
        engine.close()


# -- files swapped while a run reads them (attack findings) -------------------------------------
def make_tree(tmp_path: Path, count: int = 40) -> tuple[Path, Path]:
    root, outside = tmp_path / "docs", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\noutsidesecrettoken lives outside the root\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "page.md").write_text("# Secret\n\noutsidesecrettoken in a folder\n")
    (root / "sub").mkdir()
    (root / "sub" / "page.md").write_text("# Page\n\ninsidepagetoken\n")
    for i in range(count):
        (root / f"doc{i:03}.md").write_text(f"# Doc {i}\n\ninsidetoken{i} text\n")
    return root, outside


def assert_nothing_from_outside(engine) -> None:
    assert engine.search(SearchRequest("outsidesecrettoken")).results == ()
    docs = engine.list_documents().documents
    for d in docs:
        for section in engine.outline(d.path).to_dict()["headings"]:
            assert "Secret" not in section["title"]


@pytest.mark.parametrize("swap", ["link", "fifo", "folder", "link-target"])
def test_file_swapped_between_walk_and_read_is_judged_as_opened(tmp_path, monkeypatch, swap):
    """Another thread replaces one walked file (by a link to an outside file, by a FIFO) or a
    walked folder (by a link to an outside folder) after the walk and before the read: the run
    finishes at once, indexes nothing from outside, names the file, indexes the rest."""
    import markdown_memory.index.indexer as indexer

    root, outside = make_tree(tmp_path)
    victim = {"folder": "sub/page.md", "link-target": "alias.md"}.get(swap, "doc007.md")
    (root / ".hidden").mkdir()  # a symlinked file is indexed under its own name when its target is not walked
    (root / ".hidden" / "page.md").write_text("# Alias\n\naliastoken\n")
    (root / "alias.md").symlink_to(root / ".hidden" / "page.md")
    go, swapped = threading.Event(), threading.Event()

    def swapper() -> None:
        go.wait(10)
        if swap == "link":
            os.symlink(outside / "secret.md", root / ".swap")
            os.replace(root / ".swap", root / victim)
        elif swap == "fifo":
            os.mkfifo(root / ".swap")
            os.replace(root / ".swap", root / victim)
        elif swap == "link-target":
            os.symlink(outside / "secret.md", root / ".swap")
            os.replace(root / ".swap", root / ".hidden" / "page.md")
        else:
            os.rename(root / "sub", root / ".sub-old")
            os.symlink(outside / "sub", root / "sub")
        swapped.set()

    real_walk = indexer.walk_markdown

    def walk_then_swap(*args, **kwargs):  # the run has checked every file; now the swap lands
        walk = real_walk(*args, **kwargs)
        go.set()
        assert swapped.wait(10)
        return walk

    monkeypatch.setattr(indexer, "walk_markdown", walk_then_swap)
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    engine = Engine(Settings.load(root, tmp_path / "i.db", "none"))
    result: list = []
    runner = threading.Thread(target=lambda: result.append(engine.index()), daemon=True)
    runner.start()
    runner.join(15)
    try:
        assert not runner.is_alive(), "the index run blocked"
        report = result[0]
        reasons = {f["path"]: f["reason"] for f in report.failed}
        expected = {"link": "symbolic link", "fifo": "FIFO", "folder": "folder on its path",
                    "link-target": "symbolic link"}[swap]
        assert expected in reasons[victim]
        assert report.added == 40 + 1 + 1 - 1
        assert_nothing_from_outside(engine)
        assert [h.file_path for h in engine.search(SearchRequest("insidetoken3")).results] == ["doc003.md"]
    finally:
        if runner.is_alive() and swap == "fifo":  # unblock a reader stuck in open()
            os.close(os.open(root / victim, os.O_WRONLY | os.O_NONBLOCK))
        engine.close()


def test_link_replaced_between_lstat_and_readlink_is_named_and_the_run_goes_on(tmp_path, monkeypatch):
    """A symbolic link is replaced by a plain file in the instant between realpath()'s lstat()
    and its readlink() (CI caught it once in the swap loop below): readlink() then fails with
    EINVAL, which Python before 3.13 lets out of a non-strict realpath(). The run indexes every
    other file and names the changed one (or, on a Python that absorbs it, reads it); it never
    fails as a whole."""
    root, _outside = make_tree(tmp_path, count=5)
    (root / "target.md").write_text("# Target\n\ntargettoken\n")
    (root / "alias.md").symlink_to(root / "target.md")
    real_readlink = os.readlink
    swapped: list[str] = []

    def swap_then_readlink(path, *args, **kwargs):
        if str(path).endswith("alias.md") and not swapped:
            swapped.append(str(path))
            (root / ".swap").write_text("# Alias\n\naliastoken\n")
            os.replace(root / ".swap", root / "alias.md")
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", swap_then_readlink)
    engine = Engine(Settings.load(root, tmp_path / "i.db", "none"))
    try:
        report = engine.index()
        assert swapped, "the walk never resolved the link"
        indexed = {d.path for d in engine.list_documents().documents}
        assert {f"doc{i:03}.md" for i in range(5)} | {"target.md", "sub/page.md"} <= indexed
        reasons = {f["path"]: f["reason"] for f in report.failed}
        assert "alias.md" in indexed or "changed while being read" in reasons["alias.md"]
    finally:
        engine.close()


def test_files_swapped_in_a_loop_during_runs_never_index_outside_text_nor_block(tmp_path):
    """A thread keeps swapping files between the real file, a link to an outside file and a
    FIFO while full re-index runs read them: every run ends in bounded time and no outside
    text is ever indexed."""
    root, outside = make_tree(tmp_path, count=60)
    stop = threading.Event()

    def swapper() -> None:
        n = 0
        while not stop.is_set():
            victim = root / f"doc{n % 5:03}.md"
            tmp = root / ".swap"
            kind = n % 3
            try:
                if kind == 0:
                    os.symlink(outside / "secret.md", tmp)
                elif kind == 1:
                    os.mkfifo(tmp)
                else:
                    tmp.write_text(f"# Doc {n % 5}\n\ninsidetoken{n % 5} text\n")
                os.replace(tmp, victim)
            except OSError:
                pass
            n += 1

    thread = threading.Thread(target=swapper, daemon=True)
    engine = Engine(Settings.load(root, tmp_path / "i.db", "none"))
    thread.start()
    try:
        for _ in range(6):
            result: list = []
            runner = threading.Thread(target=lambda out=result: out.append(engine.index(force=True)), daemon=True)
            runner.start()
            runner.join(20)
            assert not runner.is_alive(), "an index run blocked on a swapped file"
            assert result[0].added + result[0].updated + result[0].unchanged > 0
            assert engine.search(SearchRequest("outsidesecrettoken")).results == ()
        stop.set()
        thread.join(5)
        engine.index()
        assert_nothing_from_outside(engine)
    finally:
        stop.set()
        thread.join(5)
        engine.close()


# -- index_directory on a symlinked folder ----------------------------------------------------------
def test_index_directory_on_a_symlinked_folder_is_one_sentence_without_the_target(tmp_path, cli_main):
    root, outside = make_tree(tmp_path, count=1)
    os.symlink(outside, root / "linked")
    os.symlink(root / "sub", root / "alias")  # a link inside the root is not followed either
    runtime = mcp(root, tmp_path / "i.db")
    for directory in ("linked", "linked/sub", "alias", "./linked/"):
        is_error, body = call(runtime, "index_directory", lambda d=directory: runtime.index_directory(d, False))
        assert is_error, body
        message = body["error"]
        assert "symbolic link" in message and "internal" not in message and "\n" not in message
        assert str(outside) not in message and "outside" not in message.replace("inside", "")
    is_error, body = call(runtime, "index_directory", lambda: runtime.index_directory("sub", False))
    assert not is_error and body["added"] == 1
    assert_nothing_from_outside(runtime.engine)


def test_ignore_file_that_is_a_fifo_or_a_link_neither_blocks_nor_leaks(tmp_path, cli_main):
    """A ``.gitignore`` that is a named pipe is not read (the run does not wait for a writer);
    a symlinked one is not followed, as git does not follow it."""
    root, outside = make_tree(tmp_path, count=2)
    os.mkfifo(root / ".gitignore")
    (outside / "ignore").write_text("doc000.md\n")
    (root / "sub" / ".gitignore").symlink_to(outside / "ignore")
    (root / "sub" / "doc000.md").write_text("# Kept\n\nkepttoken\n")
    result: list = []
    runner = threading.Thread(target=lambda: result.append(cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"),
                                                                    "index", str(root), "--json")), daemon=True)
    runner.start()
    runner.join(15)
    try:
        assert not runner.is_alive(), "the walk blocked on a FIFO named .gitignore"
        report = json.loads(result[0].stdout)
        assert result[0].returncode == 0 and report["added"] == 4
    finally:
        if runner.is_alive():
            os.close(os.open(root / ".gitignore", os.O_WRONLY | os.O_NONBLOCK))


def test_read_of_a_symlink_to_a_note_without_a_top_heading_gives_its_first_section(tmp_path, cli_main):
    """``read link.md`` (a link inside the root to a note whose text starts below front matter
    with a ``##`` heading) reads that note's first section, as ``read front.md`` does."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "front.md").write_text("---\ntitle: Front Matter Doc\n---\n\n## Deploying the widget\n\nSteps here.\n")
    (root / "link.md").symlink_to("front.md")
    db = tmp_path / "index.db"
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_DB": str(db), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    assert cli_main("index", str(root), env=env).returncode == 0
    for name in ("link.md", "front.md"):
        run = cli_main("read", name, "--docs-dir", str(root), "--json", env=env)
        assert run.returncode == 0, run.stderr
        answer = json.loads(run.stdout)
        assert (answer["file_path"], answer["heading_path"]) == ("front.md", "Deploying the widget")
    runtime = mcp(root, db)
    try:
        assert runtime.answer("read_section", {"file_path": "link.md", "heading_path": "", "include_subsections": False, "cursor": None})["content"].startswith("## Deploying the widget")
    finally:
        runtime.shutdown()


def test_a_read_of_a_link_replaced_while_it_is_resolved_says_so(tmp_path, monkeypatch):
    """The walk's race above, met by a read: the link ``alias.md`` is replaced by a plain file
    between realpath()'s lstat() and readlink(). The read answers a not-found error naming the
    file and saying it changed, never a bare OSError."""
    from markdown_memory.errors import DocumentNotFoundError

    root, _outside = make_tree(tmp_path, count=2)
    (root / "target.md").write_text("# Target\n\ntargettoken\n")
    (root / "alias.md").symlink_to(root / "target.md")
    engine = Engine(Settings.load(root, tmp_path / "i.db", "none"))
    try:
        engine.index()
        real_readlink = os.readlink

        def swap_then_readlink(path, *args, **kwargs):
            if str(path).endswith("alias.md") and os.path.islink(path):
                (root / ".swap").write_text("# Alias\n\naliastoken\n")
                os.replace(root / ".swap", root / "alias.md")
            return real_readlink(path, *args, **kwargs)

        monkeypatch.setattr(os, "readlink", swap_then_readlink)
        try:
            engine.outline("alias.md")  # Python 3.13+ absorbs the race and reads the new file
        except DocumentNotFoundError as exc:
            assert "alias.md" in str(exc) and "changed while it was being read" in str(exc)
    finally:
        engine.close()
