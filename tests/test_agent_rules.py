"""CLAUDE.md and AGENTS.md carry one identical block of rules for agents, in step with the
server's tools; .mcp.json runs this checkout."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import anyio
import pytest

REPO = Path(__file__).resolve().parents[1]
START, END = "<!-- agent-rules:start -->", "<!-- agent-rules:end -->"
#: snake_case result fields the rules may name besides tools and tool arguments
RESULT_FIELDS = {"index_status", "keyword_only", "next_cursor", "file_path", "heading_path", "already_sent"}


def _block(name: str) -> str:
    text = (REPO / name).read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1, f"{name} needs exactly one agent-rules block"
    return text[text.index(START) : text.index(END) + len(END)]


def _server_tools(tmp_path: Path) -> dict[str, dict]:
    from mcp import Client

    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.mcp.server import build_server

    server = build_server(Runtime(Settings.load(tmp_path, tmp_path / "i.db", "none")))

    async def listed():  # tools/list through an in-process client, as an agent sees it
        async with Client(server) as client:
            return (await client.list_tools()).tools

    return {t.name: t.input_schema for t in anyio.run(listed)}


def test_claude_md_and_agents_md_share_the_same_rules() -> None:
    assert _block("CLAUDE.md") == _block("AGENTS.md")


def test_rules_name_exactly_the_server_tools(tmp_path: Path) -> None:
    from markdown_memory.mcp.server import INSTRUCTIONS, TOOL_NAMES

    tools = _server_tools(tmp_path)
    assert set(tools) == set(TOOL_NAMES)
    block = _block("CLAUDE.md")
    for name in tools:
        assert f"`{name}" in block, f"the agent rules do not mention {name}"
    for name in ("search_docs", "get_document_outline", "read_section", "index_directory"):
        assert name in INSTRUCTIONS, f"server instructions omit {name}"
    arguments = {p for schema in tools.values() for p in schema.get("properties", {})}
    named = set(re.findall(r"`([a-z]+(?:_[a-z]+)+)", block))
    unknown = named - set(tools) - arguments - RESULT_FIELDS
    assert not unknown, f"agent rules name tools the server does not have: {sorted(unknown)}"
    called = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\(", block))
    assert called <= set(tools), called - set(tools)


def test_rules_tell_agents_to_search_before_reading() -> None:
    block = _block("AGENTS.md")
    assert block.index("search_docs") < block.index("get_document_outline") < block.index("read_section")
    assert re.search(r"never read .*whole markdown files", block, re.IGNORECASE | re.DOTALL)


def test_mcp_json_starts_this_checkouts_server(tmp_path: Path) -> None:
    config = json.loads((REPO / ".mcp.json").read_text(encoding="utf-8"))
    entry = config["mcpServers"]["markdown-memory"]
    command = REPO / entry["command"]
    if not command.exists():
        pytest.skip(f"{entry['command']} not found: run scripts/setup.sh to create .venv in the checkout")
    env = {**os.environ, **entry.get("env", {}), "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}}}
    out = subprocess.run([str(command), *entry.get("args", [])], input=json.dumps(init) + "\n", cwd=REPO,
                         capture_output=True, text=True, timeout=60, env=env)
    reply = json.loads(out.stdout.splitlines()[0])
    assert reply["result"]["serverInfo"]["name"] == "markdown-memory"


def test_setup_rules_are_the_block_of_claude_md() -> None:
    """``setup --rules`` writes one block, kept identical to this repository's (one source)."""
    from markdown_memory.agents.rules import RULES

    assert RULES == _block("CLAUDE.md")
