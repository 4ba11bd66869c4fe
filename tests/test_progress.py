"""Progress of long work where a user or an agent can see it (issue 17): plain lines on a piped
stderr, the bar on a terminal, MCP progress notifications for index_directory; and the hints
that name the command as the user can run it."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from markdown_memory import progress as progress_mod
from markdown_memory.progress import Progress


def _docs(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"page-{i:03d}.md").write_text(f"# Page {i}\n\n## Setup\n\nSet `PAGE_{i}_LIMIT` to tune page {i}.\n",
                                               encoding="utf-8")
    return root


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_piped_stderr_gets_a_line_every_few_seconds_with_rate_and_time_left():
    out, clock = io.StringIO(), _Clock()
    p = Progress(stream=out, clock=clock)
    assert not p.tty
    for done in range(0, 101, 25):  # 100 files in 20 s: one line after 5 s, then every 5 s
        clock.now += 5.0
        p("parse", done, 100)
    lines = out.getvalue().splitlines()
    assert lines[0] == "markdown-memory: parsed 0 of 100 files (0.0 files/s)"
    assert lines[1] == "markdown-memory: parsed 25 of 100 files (2.5 files/s, about 30 s left)"
    assert lines[-1] == "markdown-memory: parsed 100 of 100 files (4.0 files/s, about 0 s left)"
    clock.now += 2.0  # the embed phase is timed from the last report, not from its own first one
    p("embed", 300, 3000)
    clock.now += 4.0
    p("embed", 900, 3000)
    assert out.getvalue().splitlines()[-1] == \
        "markdown-memory: embedded 900 of 3,000 passages (150.0 passages/s, about 14 s left)"
    p.finish()
    assert "\r" not in out.getvalue()


def test_a_quick_run_prints_no_progress_line():
    out, clock = io.StringIO(), _Clock()
    p = Progress(stream=out, clock=clock)
    for done in (0, 10, 20):
        clock.now += 0.5
        p("parse", done, 20)
    assert out.getvalue() == ""


def test_terminal_gets_the_bar():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    p = Progress(stream=out)
    p("parse", 5, 10)
    p.finish()
    assert out.getvalue() == "\rparsing  [###############...............] 5/10\n"


def test_cli_index_with_piped_stderr_reports_progress(cli_main, tmp_path, monkeypatch):
    monkeypatch.setattr(progress_mod, "INTERVAL_SECONDS", 0.0)
    root = _docs(tmp_path / "docs", 30)
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "index", str(root))
    assert res.returncode == 0, res.stderr
    assert re.search(r"^markdown-memory: parsed 30 of 30 files \([\d.,]+ files/s", res.stderr, re.M), res.stderr
    assert "\r" not in res.stderr
    assert "indexed" in res.stdout and "markdown-memory:" not in res.stdout


def test_cli_index_progress_counts_embedded_passages(cli_main, tmp_path, monkeypatch, minilm):
    monkeypatch.setattr(progress_mod, "INTERVAL_SECONDS", 0.0)
    root = _docs(tmp_path / "docs", 3)
    res = cli_main("--embedder", "minilm", "--db", str(tmp_path / "i.db"), "index", str(root), "--json")
    assert res.returncode == 0, res.stderr
    passages = json.loads(res.stdout)["passages"]
    assert f"embedded {passages} of {passages} passages" in res.stderr, res.stderr


def test_cli_index_progress_and_summary_count_the_same_passages(cli_main, tmp_path, monkeypatch, minilm):
    """Trial finding: the last progress line said "embedded 4,024 of 4,024 passages" (it counted
    model inputs: packed list items share one, identical texts are embedded once) while the
    summary said "4053 vectors embedded (2808 reused)". Both count passages now, and the summary
    names the reused ones as passages given a stored vector."""
    monkeypatch.setattr(progress_mod, "INTERVAL_SECONDS", 0.0)
    root = _docs(tmp_path / "docs", 3)
    items = "".join(f"- step {n}: run `tool-{n}`\n" for n in range(6))  # adjacent small items: one packed text
    (root / "steps.md").write_text(f"# Steps\n\n## Order\n\n{items}", encoding="utf-8")
    (root / "steps-copy.md").write_text(f"# Steps\n\n## Order\n\n{items}", encoding="utf-8")  # same texts
    res = cli_main("--embedder", "minilm", "--db", str(tmp_path / "i.db"), "index", str(root))
    assert res.returncode == 0, res.stderr
    last = re.findall(r"^markdown-memory: embedded ([\d,]+) of ([\d,]+) passages", res.stderr, re.M)[-1]
    summary = re.search(r"(\d+) passages; (\d+) passages embedded, (\d+) given a stored vector", res.stdout)
    assert summary, res.stdout
    passages, embedded, reused = (int(g) for g in summary.groups())
    assert last == (f"{embedded:,}", f"{embedded:,}")
    assert embedded + reused == passages == 3 + 2 * 6  # a paragraph per page, 6 items per copy
    assert (embedded, reused) == (3 + 6, 6)  # the copy's items got the first file's vector (4 model inputs in all)


# -- MCP progress notifications -----------------------------------------------------------------

def _index_directory_messages(tmp_path: Path, meta: dict | None) -> tuple[list[dict], dict]:
    from test_server_stdio import RawServer

    root = _docs(tmp_path / "docs", 400)
    server = RawServer([], {"MARKDOWN_MEMORY_DOCS_DIR": str(root), "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db"),
                            "MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_AUTO_INDEX": "0"})
    try:
        server.initialize()
        params: dict = {"name": "index_directory", "arguments": {}}
        if meta is not None:
            params["_meta"] = meta
        ident = server.send("tools/call", params)
        seen: list[dict] = []
        deadline = time.monotonic() + 120
        while True:
            raw = server.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert raw, "server closed stdout"
            msg = json.loads(raw)
            if msg.get("id") == ident:
                return seen, msg
            seen.append(msg)
    finally:
        server.close_stdin_and_wait()


def test_index_directory_sends_progress_notifications_for_a_progress_token(tmp_path):
    seen, reply = _index_directory_messages(tmp_path, {"progressToken": "tok-17"})
    assert not reply["result"].get("isError"), reply
    notes = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert notes, seen
    assert all(n["progressToken"] == "tok-17" for n in notes)
    values = [n["progress"] for n in notes]
    assert values == sorted(set(values)), values  # strictly increasing, as the protocol requires
    assert notes[-1]["progress"] == notes[-1]["total"] == 400
    assert notes[-1]["message"] == "parsed 400 of 400 files"


def test_index_directory_without_a_progress_token_sends_none(tmp_path):
    seen, reply = _index_directory_messages(tmp_path, None)
    assert not reply["result"].get("isError"), reply
    assert not [m for m in seen if m.get("method") == "notifications/progress"]


# -- hints name the command as the user can run it ----------------------------------------------

def _fake_program(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "markdown-memory"
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def test_hints_name_the_absolute_executable_when_it_is_not_on_path(cli_main, tmp_path, monkeypatch):
    exe = _fake_program(tmp_path / "venv dir" / "bin")  # a space: the path is shell-quoted
    monkeypatch.setattr(sys, "argv", [str(exe)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\n" + "\n".join(f"line {i} about widgets" for i in range(30)) + "\n",
                               encoding="utf-8")
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "search", "widgets", "--docs-dir", str(root))
    assert res.returncode == 0, res.stderr
    assert f"more lines: '{exe}' --embedder none --db " in res.stdout, res.stdout
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "j.db"), "status", "--docs-dir", str(root))
    assert f"`'{exe}' --embedder none index {root}`" in res.stdout, res.stdout


def test_hints_name_the_bare_command_when_path_finds_the_running_one(cli_main, tmp_path, monkeypatch):
    exe = _fake_program(tmp_path / "bin")
    monkeypatch.setattr(sys, "argv", [str(exe)])
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}/usr/bin:/bin")
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nwidgets\n", encoding="utf-8")
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "j.db"), "status", "--docs-dir", str(root))
    assert f"`markdown-memory --embedder none index {root}`" in res.stdout, res.stdout
    other = _fake_program(tmp_path / "elsewhere")  # another markdown-memory first on PATH
    monkeypatch.setenv("PATH", f"{other.parent}{os.pathsep}{exe.parent}")
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "j.db"), "status", "--docs-dir", str(root))
    assert f"`{exe} --embedder none index {root}`" in res.stdout, res.stdout


# -- options after a query given behind `--` ----------------------------------------------------

def test_options_after_a_dashed_query_are_accepted(cli_main, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "flags.md").write_text("# Flags\n\n## Fast list\n\nPass `--fast-list` to list quickly.\n", encoding="utf-8")
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "search", "--", "--fast-list",
                   "--docs-dir", str(root), "--json")
    assert res.returncode == 0, res.stderr
    answer = json.loads(res.stdout)
    assert answer["results"][0]["heading_path"] == "Flags > Fast list"


def test_several_words_after_dashes_say_to_quote_the_query(cli_main, tmp_path):
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "search", "--", "--fast-list", "flag",
                   "--docs-dir", str(tmp_path))
    assert res.returncode == 2
    assert "everything after `--` is the query" in res.stderr and "search -- '--fast-list flag'" in res.stderr


@pytest.mark.parametrize("command", [["read", "--", "-n.md"], ["read", "--", "-n.md", "Dash"], ["outline", "--", "-n.md"]])
def test_options_after_a_dashed_path_are_accepted_by_every_command(cli_main, tmp_path, command):
    """Trial finding 9: `read -- -n.md --docs-dir D` said "unrecognized arguments"; the options
    after positionals behind `--` work for every command that takes a path, as for `search`."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "-n.md").write_text("# Dash\n\nA file whose name starts with a dash.\n", encoding="utf-8")
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), *command, "--docs-dir", str(root))
    assert res.returncode == 0, res.stderr
    assert "Dash" in res.stdout


@pytest.mark.parametrize("argv", [["search", "--", "--x"], ["--db", "search", "index", "--", "a", "b"]])
def test_other_uses_of_dashes_are_unchanged(argv):
    from markdown_memory.cli import _options_after_query

    assert _options_after_query(argv) == argv


# -- the test suite's own isolation -------------------------------------------------------------

def test_this_run_uses_a_private_temp_root(tmp_path_factory, tmp_path):
    """Issue 17: two pytest runs on one machine must not share pytest's temp root (which each
    run prunes and resets) nor TMPDIR: both are inside this run's own folder."""
    import tempfile

    import conftest

    run_root = conftest.RUN_ROOT
    assert run_root is not None and run_root.name.startswith("mm-tests-")
    base = tmp_path_factory.getbasetemp()
    assert run_root in base.parents or base.parent == run_root, base
    assert run_root in tmp_path.parents
    assert Path(tempfile.gettempdir()).parent == run_root
    assert "pytest-of-" not in str(tmp_path)


def test_a_flag_like_query_read_as_an_option_says_to_put_it_after_dashes(cli_main, tmp_path) -> None:
    """``search --no-cache --docs-dir D`` (the query taken for an option): the error tells how to
    pass it (new-user trial: it said only that the query argument is required)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe --no-cache flag.\n", encoding="utf-8")
    out = cli_main("search", "--docs-dir", str(docs))
    assert out.returncode == 2
    assert "goes after --" in out.stderr and "search --docs-dir DIR -- --no-cache" in out.stderr


def test_index_hints_name_the_docs_root_when_it_is_not_the_working_directory(cli_main, tmp_path) -> None:
    """A hint pasted in another folder must index this root (new-user trial: the bare
    ``markdown-memory index`` indexed the folder it was pasted in)."""
    docs = tmp_path / "my docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "status", "--docs-dir", str(docs), cwd=elsewhere)
    assert f"index '{docs}'" in out.stdout + out.stderr
    out = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "status", "--docs-dir", str(docs), cwd=docs)
    assert "none index`" in out.stdout + out.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_is_redrawn_at_most_every_bar_seconds_and_always_at_the_end() -> None:
    from markdown_memory.progress import BAR_SECONDS, Progress

    now = [0.0]
    out = _Terminal()
    p = Progress(out, clock=lambda: now[0])
    for done in range(1, 1001):  # 1,000 files in 0.5 s
        now[0] += 0.0005
        p("parse", done, 1000)
    draws = out.getvalue().count("\r")
    assert 2 <= draws <= 0.5 / BAR_SECONDS + 2, draws
    assert out.getvalue().endswith("] 1000/1000")


def test_nothing_is_drawn_after_finish() -> None:
    from markdown_memory.progress import Progress

    out = _Terminal()
    p = Progress(out)
    p("parse", 1, 10)
    p.finish()  # Ctrl-C: the bar's line is ended, "interrupted" follows on its own line
    p("parse", 2, 10)
    p("embed", 1, 10)
    assert out.getvalue() == f"\rparsing  [###{'.' * 27}] 1/10\n"
