"""Hostile input from outside at the CLI edge (issue 26, the attack run): argv bytes that are not
UTF-8 pass the one decoding rule (``text.decode_outside``), and the prompt hook's stdin never
produces a traceback. Real subprocesses where the process itself matters (argv bytes, stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.text import decode_outside

# read at import, before conftest's per-test environment: the resident service is switched off here
ENV = {**os.environ, "MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_AUTO_INDEX": "0", "MARKDOWN_MEMORY_SERVICE": "off"}


def cli(*args: str | bytes, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable.encode(), b"-m", b"markdown_memory.cli",
                           *(a if isinstance(a, bytes) else a.encode() for a in args)],
                          input=stdin, capture_output=True, timeout=120, env=ENV, cwd=cwd)


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cafe.md").write_text("# Café\n\nThe café opens at nine.\n\n## Menu\n\nCoffee and tea.\n")
    db = tmp_path / "index.db"
    assert cli("--db", str(db), "index", str(docs)).returncode == 0
    return docs, db


def test_decode_outside_turns_undecodable_bytes_into_replacement_characters() -> None:
    assert decode_outside(os.fsdecode(b"caf\xff")) == "caf\ufffd"
    assert decode_outside(os.fsdecode("café".encode())) == "café"
    assert decode_outside("\ud800x") == "\ufffd\ufffd\ufffdx"  # a JSON-escaped lone surrogate
    text = "plain"
    assert decode_outside(text) is text


@given(st.binary(max_size=40))
def test_decode_outside_is_always_encodable(raw: bytes) -> None:
    decoded = decode_outside(os.fsdecode(raw))
    decoded.encode("utf-8")  # never raises
    if raw.decode("utf-8", "replace") == raw.decode("utf-8", "ignore"):  # valid UTF-8 stays as it was
        assert decoded == raw.decode("utf-8")


def test_search_and_read_with_non_utf8_arguments_answer_instead_of_crashing(indexed: tuple[Path, Path]) -> None:
    docs, db = indexed
    found = cli("--db", str(db), "search", "--json", "--docs-dir", str(docs), "--", b"caf\xff")
    assert found.returncode == 0, found.stderr
    assert "results" in json.loads(found.stdout)
    filtered = cli("--db", str(db), "search", "--docs-dir", str(docs), "--tag", b"\xfe", "--path-prefix", b"\xff", "x")
    assert filtered.returncode == 0, filtered.stderr
    missing = cli("--db", str(db), "read", "--docs-dir", str(docs), "--", b"caf\xff.md")
    assert missing.returncode == 2, missing.stderr
    assert b"Traceback" not in missing.stderr
    assert b"caf\\xff.md: file name is not valid UTF-8" in missing.stderr  # named as the index run names it
    heading = cli("--db", str(db), "read", "--docs-dir", str(docs), "cafe.md", b"Men\xffu")
    assert heading.returncode in (0, 2) and b"Traceback" not in heading.stderr  # a near heading may answer


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b))
def test_any_byte_string_as_a_query_exits_0_or_2(cli_main, indexed: tuple[Path, Path], query: bytes) -> None:
    # argv as the interpreter builds it from bytes (surrogateescape); main raising is exit 1
    docs, db = indexed
    result = cli_main("--db", str(db), "search", "--json", "--docs-dir", str(docs), "--", os.fsdecode(query),
                      env={"MARKDOWN_MEMORY_EMBEDDER": "none"})
    assert result.returncode in (0, 2), result.stderr


@pytest.mark.parametrize("stdin", [b"[" * 100_000 + b"]" * 100_000, b'{"prompt":' * 50_000 + b'"x"' + b"}" * 50_000],
                         ids=["nested-arrays", "nested-objects"])
def test_hook_exits_0_without_traceback_on_deeply_nested_json(stdin: bytes) -> None:
    done = cli("hook", stdin=stdin)
    assert done.returncode == 0 and done.stdout == b""
    assert b"Traceback" not in done.stderr and b"nested too deeply" in done.stderr
    assert done.stderr.count(b"\n") == 1


def test_hook_searches_a_prompt_with_a_json_escaped_lone_surrogate(indexed: tuple[Path, Path]) -> None:
    docs, db = indexed
    payload = json.dumps({"prompt": "when does the caf\ud800 open, per the docs?", "cwd": str(docs),
                          "hook_event_name": "UserPromptSubmit"})
    done = cli("--db", str(db), "hook", "--docs-dir", str(docs), stdin=payload.encode())
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert done.stderr == b"", done.stderr


# -- a new user's first hour: an empty folder, Ctrl-C mid-index ---------------------------------
def test_indexing_a_folder_without_markdown_warns_naming_the_extensions(tmp_path: Path) -> None:
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "readme.txt").write_text("plain text, not Markdown\n")
    done = cli("--db", str(tmp_path / "i.db"), "index", str(docs))
    assert done.returncode == 0
    out = done.stdout.decode()
    assert "warning" in out and "no Markdown files found" in out and ".md, .markdown" in out, out
    assert "completed with 1 problem" in out
    data = json.loads(cli("--db", str(tmp_path / "i.db"), "index", "--json", str(docs)).stdout)
    assert any("no Markdown files found" in w["message"] for w in data["warnings"])


def test_ctrl_c_mid_index_then_status_says_interrupted_n_of_m(tmp_path: Path) -> None:
    import pty
    import re
    import signal
    import threading

    docs = tmp_path / "docs"
    docs.mkdir()
    total = 3000
    for i in range(total):
        (docs / f"d{i}.md").write_text(f"# Doc {i}\n\nText about topic {i}.\n\n## Part\n\nMore {i}.\n")
    db = tmp_path / "i.db"
    main, child = pty.openpty()  # stderr on a terminal: the progress bar is drawn with \r
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli", "--db", str(db), "index", str(docs)],
                            stdout=subprocess.PIPE, stderr=child, env=ENV)
    os.close(child)
    # the terminal is read all along, by a thread, until its other end closes: a process drawing
    # its bar on a terminal nobody reads blocks in write() once the buffer is full, Ctrl-C or not
    chunks: list[bytes] = []
    moved = threading.Event()
    bar = re.compile(rb"parsing +\[[#.]+\] [1-9]\d*/")

    def drain() -> None:
        try:
            while chunk := os.read(main, 4096):
                chunks.append(chunk)
                if not moved.is_set() and bar.search(b"".join(chunks[-2:])):
                    moved.set()
        except OSError:  # the terminal's other end closed
            pass
        moved.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert moved.wait(120) and proc.poll() is None, b"".join(chunks)[-300:]  # the bar has moved
    proc.send_signal(signal.SIGINT)
    assert proc.wait(120) == 130
    proc.stdout.close()
    reader.join(60)
    assert not reader.is_alive()
    seen = b"".join(chunks)
    os.close(main)
    last = seen.replace(b"\r\n", b"\n").split(b"\n")
    interrupted = [line for line in last if b"interrupted" in line]
    assert interrupted == [b"markdown-memory: interrupted"], seen[-300:]  # on its own line
    status = cli("--db", str(db), "status", "--docs-dir", str(docs)).stdout.decode()
    assert "never indexed" not in status
    assert "interrupted" in status.split("coverage", 1)[1].split("\n", 1)[0]
    documents = int(status.split("indexed", 1)[1].split()[0])
    assert 0 < documents < total
    assert f"{documents} of {total} files indexed so far" in status
