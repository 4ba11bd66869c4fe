"""The registration lines README.md and docs/ show, run against the real agent CLIs (issue 17).

``claude`` (@anthropic-ai/claude-code) and ``codex`` (@openai/codex) are installed from npm once
per test session into a private temp prefix; every line runs with a temporary HOME, so no
user's configuration is read or written. The lines come from the docs' code blocks
(:mod:`docs_text`), so a line that fails as written fails here. ``markdown-memory`` on PATH is
this checkout's CLI (a wrapper around this Python), serving a tiny docs folder.

The HTTP lines (``claude mcp add --transport http ...``, ``codex mcp add ... --url``) are run
with the URL and token of a real MCP-over-HTTP server started for the test (its docs root is
the tiny docs folder). Claude Code: ``claude mcp add ...``, then ``claude mcp get`` / ``claude mcp list`` must report the
server connected (Claude Code starts it and does the MCP handshake). Codex: ``codex mcp add ...``,
then ``codex mcp list --json`` must hold the command and environment, and that command, started
as Codex would, must answer the MCP handshake with the seven tools. The desktop clients' JSON
block is started the same way. Skipped, saying why, when npm is missing or cannot install.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from docs_text import REPO, blocks, commands_starting

pytestmark = [pytest.mark.agent_clis, pytest.mark.slow]  # CI only: README's fast suite deselects slow

NAME = "markdown-memory"
PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex")
README = [REPO / "README.md", REPO / "docs" / "agents.md"]
TOOLS = {"search_docs", "read_section", "get_document_outline", "get_links", "list_documents", "find_drift",
         "index_directory"}
#: placeholders of the docs' lines and what they stand for here
DOCS_PLACEHOLDERS = ("/absolute/path/to/docs", "/path/to/docs")


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The folder holding ``claude`` and ``codex``, installed from npm for this session."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, so the real claude and codex CLIs cannot be installed")
    prefix = Path(tempfile.mkdtemp(prefix="mm-agent-clis-"))
    try:
        done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                               "--loglevel=error", *PACKAGES], capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.skip("npm install of the claude and codex CLIs timed out (is the npm registry reachable?)")
    if done.returncode != 0:
        pytest.skip(f"npm could not install {' and '.join(PACKAGES)} (registry unreachable?): "
                    f"{done.stderr.strip()[-300:]}")
    return prefix / "node_modules" / ".bin"


@pytest.fixture
def world(tmp_path: Path, agent_bin: Path) -> dict:
    """A temp HOME, a project folder with one doc, and PATH with the agent CLIs and a
    ``markdown-memory`` that runs this checkout."""
    home, project, tools = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project, tools):
        folder.mkdir()
    (project / "guide.md").write_text("# Guide\n\n## Install\n\nRun the installer, then register the server.\n",
                                      encoding="utf-8")
    wrapper = tools / "markdown-memory"
    path = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    # the in-process server (these tests check registration; no resident service outlives them)
    wrapper.write_text(f"#!/bin/sh\nMARKDOWN_MEMORY_SERVICE=off PYTHONPATH={path!r} exec {sys.executable!r} "
                       "-m markdown_memory.cli \"$@\"\n",
                       encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MARKDOWN_MEMORY_", "CLAUDE", "CODEX", "ANTHROPIC",
                                                                      "OPENAI"))}
    env.update(HOME=str(home), PATH=os.pathsep.join([str(tools), str(agent_bin), "/usr/local/bin", "/usr/bin", "/bin"]),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), DISABLE_AUTOUPDATER="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               # every server an agent CLI starts (the registered console script too, whatever
               # command `setup` wrote) works in process: no resident service outlives a test
               MARKDOWN_MEMORY_SERVICE="off")
    return {"home": home, "project": project, "env": env}


def _placeholders(argv: list[str], docs: Path) -> list[str]:
    out = []
    for arg in argv:
        for ph in DOCS_PLACEHOLDERS:
            arg = arg.replace(ph, str(docs))
        out.append(arg)
    return out


def _run(argv: list[str], world: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=world["project"], env=world["env"], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _env_of(argv: list[str], flag: str) -> dict[str, str]:
    """KEY=VALUE pairs given after ``flag`` (``-e`` / ``--env``) before ``--``."""
    head = argv[: argv.index("--")] if "--" in argv else argv
    return dict(head[i + 1].split("=", 1) for i, a in enumerate(head) if a == flag)


def _handshake(command: str, args: list[str], env: dict[str, str], cwd: Path) -> set[str]:
    """Start an MCP stdio server as a client would; its tool names after initialize."""
    proc = subprocess.Popen([command, *args], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        def send(msg: dict) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
            proc.stdin.flush()

        def reply(ident: int) -> dict:
            assert proc.stdout is not None
            for line in proc.stdout:
                msg = json.loads(line)
                if msg.get("id") == ident:
                    return msg
            raise AssertionError(f"server closed stdout: {proc.stderr.read() if proc.stderr else ''}")

        send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                           "clientInfo": {"name": "pytest", "version": "0"}}})
        assert "result" in reply(1)
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list"})
        return {t["name"] for t in reply(2)["result"]["tools"]}
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _is_http(argv: list[str]) -> bool:
    """A registration of the HTTP endpoint (``--transport http`` / ``--url``), not of the stdio server."""
    return "--url" in argv or any(a == "--transport" and b == "http" for a, b in zip(argv, argv[1:], strict=False))


def _readme_lines(prefix: str) -> list[tuple[str, list[str]]]:
    lines = [(where, argv) for where, argv in commands_starting(prefix, README) if not _is_http(argv)]
    assert len(lines) >= 3, f"the docs show fewer than three `{prefix}` lines: {lines}"
    return lines


@pytest.mark.parametrize("index", [0, 1, 2])
def test_claude_code_registration_from_readme_connects(world, index):
    where, argv = _readme_lines("claude mcp add")[index]
    docs = world["project"]
    argv = _placeholders(argv, docs)
    added = _run(argv, world)
    assert added.returncode == 0, f"{where}: `{' '.join(argv)}` failed: {added.stderr or added.stdout}"
    name = NAME
    assert name in argv[: argv.index("--")]
    got = _run(["claude", "mcp", "get", name], world)
    assert got.returncode == 0, got.stderr
    assert "Connected" in got.stdout and "Failed" not in got.stdout, got.stdout
    for key, value in _env_of(argv, "-e").items():
        assert f"{key}={value}" in got.stdout, got.stdout
    if index == 0:
        listed = _run(["claude", "mcp", "list"], world)
        line = next(li for li in listed.stdout.splitlines() if li.startswith(f"{name}:"))
        assert "Connected" in line, listed.stdout


def test_claude_code_rejects_the_env_flag_before_the_name(world):
    """Why README puts the name before ``-e``: with ``-e`` first, Claude Code reads the name as
    another KEY=VALUE and fails (issue 17); README never shows that order."""
    broken = ["claude", "mcp", "add", "--scope", "user", "-e", "MARKDOWN_MEMORY_EMBEDDER=none", "markdown-memory",
              "--", "markdown-memory"]
    done = _run(broken, world)
    assert done.returncode != 0 and "commandOrUrl" in done.stderr, done.stderr
    for where, argv in commands_starting("claude mcp add"):
        assert argv[argv.index("add") + 1:][0] != "-e", f"{where}: `{' '.join(argv)}` puts -e before the name"


@pytest.mark.parametrize("index", [0, 1, 2])
def test_codex_registration_from_readme_starts_a_server(world, index):
    where, argv = _readme_lines("codex mcp add")[index]
    argv = _placeholders(argv, world["project"])
    added = _run(argv, world)
    assert added.returncode == 0, f"{where}: `{' '.join(argv)}` failed: {added.stderr or added.stdout}"
    listed = _run(["codex", "mcp", "list", "--json"], world)
    assert listed.returncode == 0, listed.stderr
    (server,) = [s for s in json.loads(listed.stdout) if s["name"] == NAME]
    transport = server["transport"]
    assert (transport["env"] or {}) == _env_of(argv, "--env")
    env = {**world["env"], **(transport["env"] or {})}
    assert _handshake(transport["command"], transport["args"], env, world["project"]) == TOOLS


def test_desktop_client_json_from_readme_starts_a_server(world):
    (block,) = [b for b in blocks("json", README) if '"mcpServers"' in b.body]
    config = json.loads(_placeholders([block.body], world["project"])[0])
    server = config["mcpServers"]["markdown-memory"]
    env = {**world["env"], **server.get("env", {})}
    assert Path(env["MARKDOWN_MEMORY_DOCS_DIR"]) == world["project"]
    # a desktop app starts servers in no particular folder: the env names the docs root
    assert _handshake(server["command"], server.get("args", []), env, world["home"]) == TOOLS


@pytest.fixture
def http_endpoint(world, monkeypatch):
    """The MCP-over-HTTP endpoint serving the world's project folder (keyword-only) on an
    ephemeral port: ``(url, token)``."""
    from markdown_memory.config import Settings
    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import HttpServer

    config = world["home"] / "mm-config"
    monkeypatch.setenv("MARKDOWN_MEMORY_CONFIG_DIR", str(config))
    settings = Settings.load(world["project"], world["home"] / "index.db", "none")
    ident = http_access.register(settings)
    token = http_access.load_token()
    server = HttpServer(0, token=token, lookup=lambda i: http_access.lookup(i, config))
    server.start()
    try:
        yield http_access.root_url(server.port, ident), token
    finally:
        server.stop()


def _live(argv: list[str], url: str, token: str) -> list[str]:
    """The docs' HTTP line with the live URL and token in place of the example ones."""
    out = []
    for arg in argv:
        if arg.startswith("http://127.0.0.1:"):
            arg = url
        elif arg.startswith("Authorization: Bearer "):
            arg = f"Authorization: Bearer {token}"
        out.append(arg)
    return out


def _http_lines(prefix: str) -> list[tuple[str, list[str]]]:
    lines = [(w, a) for w, a in commands_starting(prefix, README) if _is_http(a)]
    assert lines, f"the docs show no HTTP `{prefix}` line"
    return lines


def test_claude_code_http_registration_from_the_docs_connects(world, http_endpoint):
    url, token = http_endpoint
    for where, argv in _http_lines("claude mcp add"):
        argv = _live(argv, url, token)
        assert url in argv and f"Authorization: Bearer {token}" in argv, f"{where}: {argv}"
        added = _run(argv, world)
        assert added.returncode == 0, f"{where}: `{' '.join(argv)}` failed: {added.stderr or added.stdout}"
        got = _run(["claude", "mcp", "get", NAME], world)
        assert got.returncode == 0, got.stderr
        assert "Connected" in got.stdout and url in got.stdout, f"{where}: {got.stdout}"
        assert _run(["claude", "mcp", "remove", NAME, "--scope", "user"], world).returncode == 0
    # the same line with a wrong token does not connect
    (where, argv), *_ = _http_lines("claude mcp add")
    assert _run(_live(argv, url, "wrong-" + token), world).returncode == 0
    got = _run(["claude", "mcp", "get", NAME], world)
    assert "Connected" not in got.stdout, got.stdout


def test_codex_http_registration_from_the_docs_is_listed(world, http_endpoint):
    url, token = http_endpoint
    (where, argv), = _http_lines("codex mcp add")
    added = _run(_live(argv, url, token), world)
    assert added.returncode == 0, f"{where}: `{' '.join(argv)}` failed: {added.stderr or added.stdout}"
    listed = _run(["codex", "mcp", "list", "--json"], world)
    assert listed.returncode == 0, listed.stderr
    (server,) = [s for s in json.loads(listed.stdout) if s["name"] == NAME]
    assert server["transport"]["url"] == url, server
    assert server["transport"]["bearer_token_env_var"] == "MARKDOWN_MEMORY_HTTP_TOKEN", server
