"""A server started in the home directory answers the handshake and explains the refusal in
every tool result (instead of exiting before `initialize`, which a client shows only as
"connection closed")."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def rpc(proc, message):
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        line = proc.stdout.readline()
        assert line, "server closed stdout"
        reply = json.loads(line)
        if reply.get("id") == message["id"]:
            return reply


def test_server_in_home_directory_reports_refusal_as_tool_error(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.md").write_text("# Notes\n\nprivate\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MARKDOWN_MEMORY_", "CLAUDE_PROJECT_DIR"))}
    env.update(HOME=str(home), MARKDOWN_MEMORY_EMBEDDER="none")
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli"], cwd=home, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        init = rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        assert "result" in init
        rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert len(tools["result"]["tools"]) == 7  # server.TOOL_NAMES
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": "search_docs", "arguments": {"query": "private"}}})
        result = reply["result"]
        assert result.get("isError") is True
        text = result["content"][0]["text"]
        assert "refusing to index" in text and "--docs-dir" in text
    finally:
        proc.stdin.close()
        proc.wait(timeout=15)
