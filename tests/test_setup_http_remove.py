"""``setup <agent> --http --remove`` takes the agent's registration out too (issue 37): the
``markdown-memory`` entry the printed ``claude mcp add --scope user`` / ``codex mcp add`` line
made, with ``--yes``; without it, the plan and the exact command. Other servers are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("MARKDOWN_MEMORY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / "claude").mkdir()
    (tmp_path / "codex").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n")
    return {"claude": tmp_path / "claude" / ".claude.json", "codex": tmp_path / "codex" / "config.toml",
            "docs": tmp_path / "docs"}


def test_claude_code_http_remove_takes_the_entry_out(homes, cli_main):
    entry = {"type": "http", "url": "http://127.0.0.1:8765/r/x/mcp", "headers": {"Authorization": "Bearer t"}}
    homes["claude"].write_text(json.dumps({"mcpServers": {"markdown-memory": entry, "other": {"command": "x"}}}))
    assert cli_main("setup", "claude-code", "--http", "--yes", "--docs-dir", str(homes["docs"])).returncode == 0

    plan = cli_main("setup", "claude-code", "--http", "--remove", "--docs-dir", str(homes["docs"]))
    assert plan.returncode == 0, plan.stderr
    assert "--yes" in plan.stdout and "claude mcp remove --scope user markdown-memory" in plan.stdout, plan.stdout
    assert "markdown-memory" in json.loads(homes["claude"].read_text())["mcpServers"]

    done = cli_main("setup", "claude-code", "--http", "--remove", "--yes", "--docs-dir", str(homes["docs"]))
    assert done.returncode == 0, done.stderr
    assert json.loads(homes["claude"].read_text())["mcpServers"] == {"other": {"command": "x"}}
    again = cli_main("setup", "claude-code", "--http", "--remove", "--yes", "--docs-dir", str(homes["docs"]))
    assert "no markdown-memory entry" in again.stdout, again.stdout


def test_codex_http_remove_takes_the_table_out(homes, cli_main):
    homes["codex"].write_text('[mcp_servers.markdown-memory]\nurl = "http://127.0.0.1:8765/r/x/mcp"\n'
                              'bearer_token_env_var = "MARKDOWN_MEMORY_HTTP_TOKEN"\n\n[mcp_servers.other]\ncommand = "x"\n')
    done = cli_main("setup", "codex", "--http", "--remove", "--yes", "--docs-dir", str(homes["docs"]))
    assert done.returncode == 0, done.stderr
    text = homes["codex"].read_text()
    assert "markdown-memory" not in text and "[mcp_servers.other]" in text
