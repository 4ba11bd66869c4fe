"""``markdown-memory setup claude-code|codex`` against the real agent CLIs (issue 15).

The CLIs come from npm (the fixtures of tests/test_agent_registration.py: a temporary HOME, a
project folder, skipped with the reason when npm cannot install them). ``markdown-memory`` on
PATH here is a console script like the one pip writes (a Python file running
``markdown_memory.cli.main``), so setup registers that absolute path, as it would for a user.
Before setup the user already has another server registered; after setup the agents' own CLIs
must show ours (``claude mcp get`` / ``claude mcp list`` connected: Claude Code starts it and
does the MCP handshake), and after ``--remove`` they must not, with the other server kept.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from test_agent_registration import _handshake, _run, agent_bin, world  # noqa: F401 - fixtures

pytestmark = [pytest.mark.agent_clis, pytest.mark.slow]  # CI only: README's fast suite deselects slow

TOOLS = {"search_docs", "read_section", "get_document_outline", "get_links", "list_documents", "find_drift",
         "index_directory"}


@pytest.fixture
def setup_world(world):  # noqa: F811 - the imported fixture
    """``world`` whose ``markdown-memory`` is a console script (its own path is ``sys.argv[0]``)."""
    script = Path(world["env"]["PATH"].split(":")[0]) / "markdown-memory"
    paths = [str(Path(p).resolve()) for p in sys.path if p]
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.path[:0] = {paths!r}\n"
                      "from markdown_memory.cli import main\nraise SystemExit(main())\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    world["program"] = str(script)
    return world


def _setup(box: dict, *args: str) -> str:
    done = _run(["markdown-memory", "setup", *args], box)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def test_claude_code_setup_connects_and_remove_takes_it_out(setup_world):
    box = setup_world
    home, project, program = box["home"], box["project"], box["program"]
    assert _run(["claude", "mcp", "add", "--scope", "user", "other", "--", "/bin/true"], box).returncode == 0
    docs: list[str] = []
    plan = _setup(box, "claude-code", "--embedder", "none", "--hook", "--rules", *docs)
    assert "--yes" in plan and not (project / "CLAUDE.md").exists()
    assert _run(["claude", "mcp", "get", "markdown-memory"], box).returncode != 0  # the plan changed nothing

    done = _setup(box, "claude-code", "--embedder", "none", "--hook", "--rules", *docs, "--yes")
    assert "changed 3 files" in done, done
    got = _run(["claude", "mcp", "get", "markdown-memory"], box)
    assert got.returncode == 0, got.stderr
    assert "Connected" in got.stdout and program in got.stdout, got.stdout
    assert "User" in got.stdout or "user" in got.stdout, got.stdout
    listed = _run(["claude", "mcp", "list"], box).stdout
    line = next(li for li in listed.splitlines() if li.startswith("markdown-memory:"))
    assert "Connected" in line, listed
    assert any(li.startswith("other:") for li in listed.splitlines()), listed
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    (group,) = settings["hooks"]["UserPromptSubmit"]
    hook = " ".join([program, "--embedder", "none", "hook", *docs])
    assert group["hooks"] == [{"type": "command", "command": hook, "timeout": 10}]
    assert "<!-- agent-rules:start -->" in (project / "CLAUDE.md").read_text(encoding="utf-8")

    again = _setup(box, "claude-code", "--embedder", "none", "--hook", "--rules", *docs, "--yes")
    assert again.startswith("nothing to change"), again

    removed = _setup(box, "claude-code", "--remove", "--rules", "--yes")
    assert "changed 3 files" in removed, removed
    assert _run(["claude", "mcp", "get", "markdown-memory"], box).returncode != 0
    listed = _run(["claude", "mcp", "list"], box).stdout
    assert "markdown-memory" not in listed and "other:" in listed, listed
    assert not (home / ".claude" / "settings.json").exists()  # it held only the hook setup added
    assert not (project / "CLAUDE.md").exists()
    assert _setup(box, "claude-code", "--remove", "--rules").startswith("nothing to change")


def test_claude_code_setup_with_a_pinned_docs_folder_connects(setup_world, tmp_path):
    """``--docs-dir`` pins one folder: the server (started by Claude Code in the project) and
    the hook get it, so every session serves those docs."""
    box = setup_world
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nPinned.\n", encoding="utf-8")
    _setup(box, "claude-code", "--embedder", "none", "--hook", "--docs-dir", str(docs), "--yes")
    got = _run(["claude", "mcp", "get", "markdown-memory"], box)
    assert "Connected" in got.stdout and f"--docs-dir {docs}" in got.stdout, got.stdout
    settings = json.loads((box["home"] / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == f"{box['program']} --embedder none hook --docs-dir {docs}"


def test_codex_setup_lists_the_server_and_remove_takes_it_out(setup_world):
    box = setup_world
    program = box["program"]
    assert _run(["codex", "mcp", "add", "other", "--", "/bin/true"], box).returncode == 0
    done = _setup(box, "codex", "--embedder", "none", "--hook", "--rules", "--yes")
    assert "changed 3 files" in done, done
    listed = _run(["codex", "mcp", "list", "--json"], box)
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert set(servers) == {"other", "markdown-memory"}
    transport = servers["markdown-memory"]["transport"]
    assert (transport["command"], transport["args"]) == (program, ["--embedder", "none"])
    assert _handshake(transport["command"], transport["args"], box["env"], box["project"]) == TOOLS
    plain = _run(["codex", "mcp", "list"], box).stdout
    assert "markdown-memory" in plain, plain
    hooks = json.loads((box["home"] / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    assert hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == f"{program} --embedder none hook"
    assert (box["project"] / "AGENTS.md").is_file()
    assert _setup(box, "codex", "--embedder", "none", "--hook", "--rules").startswith("nothing to change")

    _setup(box, "codex", "--remove", "--yes")
    names = {s["name"] for s in json.loads(_run(["codex", "mcp", "list", "--json"], box).stdout)}
    assert names == {"other"}
    assert not (box["home"] / ".codex" / "hooks.json").exists()
    assert (box["project"] / "AGENTS.md").is_file()  # the rules go only with --remove --rules
