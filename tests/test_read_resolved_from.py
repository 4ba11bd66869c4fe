"""A read whose heading is not in the document as written says which heading it read instead
(trial finding 5): ``resolved_from`` + ``message`` in the answer (CLI --json, MCP read_section)
and a ``note:`` line in the CLI's text output; an exact or case-insensitive request says nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from case_cli import mcp_call
from markdown_memory.config import Settings
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.reading.resolve import resolve_heading, resolved_as_asked

AVAILABLE = ["Timeouts", "Timeouts > Setting and disabling timeouts", "Timeouts > Setting a default timeout on a client",
             "Timeouts > Fine tuning the configuration", "Guide > Install {#x}", "Same", "Same [2]"]


@pytest.mark.parametrize("asked, as_asked", [
    ("Timeouts > Setting and disabling timeouts", True),  # exact
    ("timeouts>SETTING AND DISABLING TIMEOUTS", True),  # spacing and case
    ("Setting and disabling timeouts", True),  # a bare title: the trailing parts
    ("Setting timeouts", False),  # fuzzy: word prefixes of another heading
    ("configuration", False),
    ("Fine tunning the configuration", False),  # close spelling
    ("Same [1]", False),  # read as "Same", the first duplicate
])
def test_a_request_is_as_asked_only_when_it_names_the_resolved_heading(asked, as_asked):
    assert resolved_as_asked(asked, resolve_heading(asked, AVAILABLE)) is as_asked


DOC = ("# Timeouts\n\nIntro.\n\n## Setting and disabling timeouts\n\nUse timeout=None.\n\n"
       "## Setting a default timeout on a client\n\nClient(timeout=5).\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "timeouts.md").write_text(DOC, encoding="utf-8")
    return docs


def test_cli_read_says_when_it_read_another_heading(root, tmp_path, cli_main):
    env = {"MARKDOWN_MEMORY_DB": str(tmp_path / "cli.db"), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    assert cli_main("index", str(root), env=env).returncode == 0
    got = cli_main("read", "timeouts.md", "Setting timeouts", "--docs-dir", str(root), "--json", env=env)
    answer = json.loads(got.stdout)
    assert answer["heading_path"] == "Timeouts > Setting and disabling timeouts"
    assert answer["resolved_from"] == "Setting timeouts"
    assert "'Setting timeouts'" in answer["message"] and "Setting and disabling timeouts" in answer["message"]
    text = cli_main("read", "timeouts.md", "Setting timeouts", "--docs-dir", str(root), env=env)
    assert text.returncode == 0 and "note: no heading 'Setting timeouts'" in text.stderr
    assert text.stdout.startswith("## Setting and disabling timeouts")  # the content stays verbatim
    exact = cli_main("read", "timeouts.md", "setting and disabling timeouts", "--docs-dir", str(root), "--json",
                     env=env)
    assert "resolved_from" not in json.loads(exact.stdout) and "message" not in json.loads(exact.stdout)
    quiet = cli_main("read", "timeouts.md", "Setting and disabling timeouts", "--docs-dir", str(root), env=env)
    assert "note:" not in quiet.stderr


def test_mcp_read_section_says_when_it_read_another_heading(root, tmp_path):
    runtime = Runtime(Settings.load(root, tmp_path / "mcp.db", "none", auto_index=False))
    try:
        mcp_call(runtime, "index_directory", lambda: runtime.index_directory(None, False))
        section = mcp_call(runtime, "read_section", lambda: runtime.answer("read_section", {
            "file_path": "timeouts.md", "heading_path": "timeouts > default timeout", "include_subsections": False,
            "cursor": None}))
        assert section["heading_path"] == "Timeouts > Setting a default timeout on a client"
        assert section["resolved_from"] == "timeouts > default timeout"
        assert "nearest" in section["message"]
    finally:
        runtime.shutdown()
