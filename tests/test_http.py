"""MCP over streamable HTTP (issue 28): a real server on an ephemeral loopback port in a thread,
real HTTP requests (urllib), the token file in a temporary config folder.

What a user would notice: a request without the token or with a wrong one is refused (401),
a web page's foreign ``Origin`` is refused (403), a foreign ``Host`` too (421), an unknown root
id is a 404; with the token a full MCP session works (initialize, the seven tools, search_docs
answering what the stdio server's runtime answers), each session with its own memory of sent
texts. Through the resident service: ``setup --http`` prints the line, ``serve --http-port``
serves it (and runs without HTTP when the port is taken). The MCP Inspector CLI (npx) lists the
tools with the token (slow, agent_clis); the real ``claude`` and ``codex`` CLIs take the docs'
HTTP lines in tests/test_agent_registration.py.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_service import runtime  # noqa: F401 - the fixture: the service on, a private runtime folder

FIXTURES = Path(__file__).parent / "fixtures"
TOOLS = {"search_docs", "read_section", "get_document_outline", "get_links", "list_documents", "find_drift",
         "index_directory"}
PROTOCOL = "2025-06-18"


class Reply:
    def __init__(self, status: int, headers: Any, body: str) -> None:
        self.status, self.headers, self.body = status, headers, body

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages of the body: one JSON object, or SSE ``data:`` lines."""
        if self.headers.get("content-type", "").startswith("application/json"):
            return [json.loads(self.body)]
        return [json.loads(line[5:]) for line in self.body.splitlines() if line.startswith("data:") and line[5:].strip()]


def post(url: str, message: dict[str, Any] | None, headers: dict[str, str], method: str = "POST") -> Reply:
    data = json.dumps(message).encode("utf-8") if message is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return Reply(resp.status, resp.headers, resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.headers, exc.read().decode("utf-8"))


class Session:
    """One MCP client session over HTTP (initialize done in the constructor)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.headers, self._id = url, {"Authorization": f"Bearer {token}"}, 1
        reply = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}}},
            self.headers)
        assert reply.status == 200, reply.body
        self.init = reply.messages()[-1]["result"]
        self.headers.update({"Mcp-Session-Id": reply.headers["mcp-session-id"], "Mcp-Protocol-Version": PROTOCOL})
        done = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers)
        assert done.status == 202, done.body

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        reply = post(self.url, {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}},
                     self.headers)
        assert reply.status == 200, reply.body
        (answer,) = [m for m in reply.messages() if m.get("id") == self._id]
        return answer

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.call("tools/call", {"name": name, "arguments": arguments})["result"]
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])

    def close(self) -> None:
        post(self.url, None, self.headers, method="DELETE")


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("MARKDOWN_MEMORY_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm) -> Iterator[dict[str, Any]]:
    """One indexed copy of tests/fixtures/guide, registered, and the HTTP server serving it with
    that engine (as the service's pool would hand it out)."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import HttpServer

    base = tmp_path_factory.mktemp("http")
    root = base / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MARKDOWN_MEMORY_CONFIG_DIR", str(base / "config"))
        env.setenv("XDG_DATA_HOME", str(base / "data"))
        engine = Engine(Settings.load(root, base / "index.db", "minilm"), embedder=minilm)
        assert not engine.index().failed
        ident = http_access.register(engine.settings)
        token = http_access.load_token()
        # the server thread reads the config folder of this module, whatever each test's env says
        config = base / "config"
        server = HttpServer(0, engine_factory=lambda settings: engine, token=token,
                            lookup=lambda ident: http_access.lookup(ident, config, base / "data" / "nothing"))
        server.start()
        try:
            yield {"url": http_access.root_url(server.port, ident), "port": server.port, "token": token,
                   "engine": engine, "ident": ident, "config": base / "config", "root": root}
        finally:
            server.stop()
            engine.close()


def test_missing_token_is_refused(served):
    reply = post(served["url"], {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
    assert reply.status == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")
    message = reply.messages()[0]["error"]["message"]
    assert "bearer token" in message and "markdown-memory setup claude-code --http" in message
    assert "http-token" not in message and str(served["config"]) not in message  # no path for strangers


def test_wrong_token_is_refused(served):
    wrong = served["token"][:-1] + ("A" if served["token"][-1] != "A" else "B")
    for header, invalid in ((f"Bearer {wrong}", True), (f"bearer  {wrong} ", True), (f"Basic {served['token']}", False),
                            ("Bearer", False)):
        reply = post(served["url"], {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"Authorization": header})
        assert reply.status == 401, header
        # RFC 6750 3.1: the error code only for a bearer token presented (another scheme has none)
        assert ('error="invalid_token"' in reply.headers["www-authenticate"]) is invalid, header


def test_foreign_origin_is_refused_even_with_the_token(served):
    auth = {"Authorization": f"Bearer {served['token']}"}
    for origin in ("http://evil.example", f"http://evil.example:{served['port']}", "null"):
        reply = post(served["url"], {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {**auth, "Origin": origin})
        assert reply.status == 403, origin
    # the server's own origin is a local client: allowed
    session_reply = post(served["url"], {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {**auth, "Origin": f"http://127.0.0.1:{served['port']}"})
    assert session_reply.status == 200, session_reply.body


def test_foreign_host_is_refused(served):
    """A DNS-rebinding page reaches 127.0.0.1 under its own host name."""
    auth = {"Authorization": f"Bearer {served['token']}", "Host": f"evil.example:{served['port']}"}
    reply = post(served["url"], {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, auth)
    assert reply.status == 421


def test_unknown_root_id_is_not_found(served):
    from markdown_memory.mcp import http_access

    auth = {"Authorization": f"Bearer {served['token']}"}
    for ident in ("nothing-0123456789ab", "../etc", "docs"):
        reply = post(http_access.root_url(served["port"], ident), {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     auth)
        assert reply.status == 404, ident
    other = post(f"http://127.0.0.1:{served['port']}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, auth)
    assert other.status == 404
    # without the token an unknown id is a 401, not a 404: no probing of which roots exist
    assert post(http_access.root_url(served["port"], "nothing-0123456789ab"), {}, {}).status == 401


def test_a_full_session_answers_like_stdio(served):
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.models import SearchRequest

    session = Session(served["url"], served["token"])
    try:
        assert session.init["serverInfo"]["name"] == "markdown-memory"
        tools = session.call("tools/list")["result"]["tools"]
        assert {t["name"] for t in tools} == TOOLS
        answer = session.tool("search_docs", query="install on linux")
        # the stdio server's runtime over the same engine answers the same
        direct = Runtime(served["engine"].settings, engine_factory=lambda s: served["engine"])
        assert answer == direct.search_docs(SearchRequest("install on linux"))
        assert answer["results"] and answer["results"][0]["content"]
        first = answer["results"][0]
        section = session.tool("read_section", file_path=first["file_path"], heading_path=first["heading_path"])
        assert section["content"] == first["content"]
        # the session remembers what it was sent, as a stdio session does
        again = session.tool("search_docs", query="install on linux")
        assert again["results"][0].get("already_sent") is True
    finally:
        session.close()


def test_each_session_has_its_own_memory_of_sent_texts(served):
    one, two = Session(served["url"], served["token"]), Session(served["url"], served["token"])
    try:
        assert one.tool("search_docs", query="configuration file")["results"][0]["content"]
        fresh = two.tool("search_docs", query="configuration file")["results"][0]
        assert fresh["content"] and not fresh.get("already_sent")
    finally:
        one.close()
        two.close()


def test_token_file_is_private_and_kept(config_dir):
    from markdown_memory.mcp import http_access

    token = http_access.load_token()
    path = config_dir / "http-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(config_dir.stat().st_mode) == 0o700
    assert len(token) >= 32 and http_access.load_token() == token  # made once, then read


def test_a_token_file_others_can_read_is_refused(config_dir):
    from markdown_memory.errors import ConfigError
    from markdown_memory.mcp import http_access

    http_access.load_token()
    (config_dir / "http-token").chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        http_access.load_token()


def test_a_root_indexed_at_the_default_place_is_served_without_registering(config_dir, tmp_path, monkeypatch,
                                                                            minilm):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp import http_access

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    root = tmp_path / "notes"
    shutil.copytree(FIXTURES / "guide", root)
    engine = Engine(Settings.load(root, embedder="minilm"), embedder=minilm)
    try:
        engine.index()
    finally:
        engine.close()
    found = http_access.lookup(http_access.root_id(root))
    assert found is not None and found.docs_root == root.resolve()
    assert found.db_path == engine.settings.db_path
    assert http_access.lookup("notes-0123456789ab") is None


def _setup_line(cli_main: Any, root: Path, *extra: str) -> str:
    res = cli_main("setup", "claude-code", "--http", "--yes", "--docs-dir", str(root), *extra)
    assert res.returncode == 0, res.stderr
    (line,) = [li.strip() for li in res.stdout.splitlines() if li.strip().startswith("claude mcp add")]
    return line


def test_setup_http_prints_the_registration_line(config_dir, tmp_path, cli_main):
    from markdown_memory.mcp import http_access

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    line = _setup_line(cli_main, root, "--http-port", "9123")
    token = (config_dir / "http-token").read_text(encoding="utf-8").strip()
    ident = http_access.root_id(root.resolve())
    assert shlex.split(line) == ["claude", "mcp", "add", "--transport", "http", "--scope", "user", "markdown-memory",
                                 f"http://127.0.0.1:9123/roots/{ident}/mcp", "--header",
                                 f"Authorization: Bearer {token}"]
    found = http_access.lookup(ident)  # registered: the service can map the id back
    assert found is not None and found.docs_root == root.resolve()


def test_setup_http_without_yes_prints_the_plan_and_writes_nothing(config_dir, tmp_path, cli_main):
    """Trial finding 6: `setup --http` wrote the token and http-roots.json without `--yes`,
    though setup changes files only with `--yes`: now it prints what it would write and the
    line (TOKEN standing for the token), and `--yes` does it."""
    from markdown_memory.mcp import http_access

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    ident = http_access.root_id(root.resolve())
    plan = cli_main("setup", "claude-code", "--http", "--docs-dir", str(root), "--http-port", "9123")
    assert plan.returncode == 0, plan.stderr
    assert "would write" in plan.stdout and "http-roots.json: register" in plan.stdout
    assert f"{config_dir / 'http-token'}: make the bearer token" in plan.stdout
    assert "--yes" in plan.stdout and "Authorization: Bearer TOKEN" in plan.stdout
    assert f"http://127.0.0.1:9123/roots/{ident}/mcp" in plan.stdout
    assert not (config_dir / "http-token").exists() and not (config_dir / "http-roots.json").exists()
    assert http_access.lookup(ident) is None
    line = _setup_line(cli_main, root, "--http-port", "9123")  # with --yes
    assert (config_dir / "http-token").exists() and http_access.lookup(ident) is not None
    assert "TOKEN" not in line


# -- through the resident service ----------------------------------------------------------


@pytest.mark.usefixtures("runtime")
def test_serve_with_an_http_port_answers_the_registered_url(config_dir, tmp_path, cli_main, free_tcp_port):
    """`setup --http` registers a root and prints its line; `serve --http-port` serves that URL
    with the service's shared engine (keyword-only here), stops cleanly with the service."""
    import sys

    from markdown_memory.service import client
    from test_service import wait_until

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    port = free_tcp_port
    res = cli_main("--embedder", "none", "setup", "claude-code", "--http", "--yes", "--docs-dir", str(root),
                   "--http-port", str(port))
    assert res.returncode == 0, res.stderr
    argv = shlex.split(next(li.strip() for li in res.stdout.splitlines() if li.strip().startswith("claude mcp add")))
    url, token = argv[argv.index("markdown-memory") + 1], argv[-1].removeprefix("Authorization: Bearer ")
    log = (tmp_path / "service.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory", "serve", "--foreground", "--http-port", str(port)],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        def up() -> bool:
            try:
                return client.request("ping", {}, start=False).get("http_port") == port
            except client.ServiceUnavailable:
                assert proc.poll() is None, (tmp_path / "service.log").read_text()
                return False
        wait_until(up, 60, "the service with HTTP")
        session = Session(url, token)
        assert {t["name"] for t in session.call("tools/list")["result"]["tools"]} == TOOLS
        session.tool("index_directory")
        answer = session.tool("search_docs", query="install on linux")
        assert answer["results"][0]["file_path"] == "install.md", answer
        assert answer["index_status"]["keyword_only"] is True
        assert str(root.resolve()) in client.request("ping", {}, start=False)["roots"]
        session.close()
        assert post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {}).status == 401
        client.request("stop", {}, start=False)
        assert proc.wait(timeout=30) == 0

    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.mark.usefixtures("runtime")
def test_a_taken_http_port_leaves_the_service_running_without_http(config_dir, tmp_path, free_tcp_port,
                                                                    monkeypatch):
    """The socket's clients keep their service, which says why HTTP is off (``serve --status``)
    and still exits when idle (not never, as a service with HTTP does)."""
    import socket
    import sys

    from markdown_memory.service import client
    from test_service import SERVE, wait_until

    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE_IDLE", "6")
    log_path = tmp_path / "service.log"
    with socket.socket() as taken, log_path.open("w") as log:
        taken.bind(("127.0.0.1", free_tcp_port))
        taken.listen(1)
        proc = subprocess.Popen([sys.executable, "-m", "markdown_memory", "serve", "--foreground", "--http-port",
                                 str(free_tcp_port)], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            def up() -> bool:
                try:
                    return bool(client.request("ping", {}, start=False))
                except client.ServiceUnavailable:
                    assert proc.poll() is None, log_path.read_text()
                    return False
            wait_until(up, 60, "the service")
            assert client.request("ping", {}, start=False)["http_port"] is None
            assert f"MCP over HTTP is off: cannot listen on 127.0.0.1:{free_tcp_port}" in log_path.read_text()
            status = subprocess.run([*SERVE, "--status"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                    timeout=60).stdout
            assert f"MCP over HTTP: off, it could not start: cannot listen on 127.0.0.1:{free_tcp_port}" in status
            assert proc.wait(timeout=30) == 0  # its idle exit, with no stop asked for
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def test_bad_http_ports_are_refused(cli_main):
    # with every mode: `serve --http-port 99999 --status` was accepted silently (trial finding 12)
    for mode in ("--foreground", "--status", "--stop"):
        for bad in ("0", "70000", "99999", "-1", "http"):
            res = cli_main("serve", mode, "--http-port", bad)
            assert res.returncode == 2 and "--http-port" in res.stderr, res.stderr
            assert "65535" in res.stderr or "not an integer" in res.stderr, res.stderr
    res = cli_main("serve", "--foreground", env={"MARKDOWN_MEMORY_HTTP_PORT": "http"})
    assert res.returncode == 2 and "MARKDOWN_MEMORY_HTTP_PORT" in res.stderr, res.stderr


# -- the real clients ---------------------------------------------------------------------


def _npx() -> str:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed, so the MCP Inspector CLI cannot be run")
    return npx


@pytest.mark.slow
@pytest.mark.agent_clis
def test_mcp_inspector_cli_lists_the_tools_with_the_token(served):
    npx = _npx()
    home = Path(tempfile.mkdtemp(prefix="mm-npx-"))  # its catalog (~/.mcp-inspector) and npm cache
    env = {**os.environ, "HOME": str(home), "npm_config_cache": str(home / "npm"),
           "npm_config_update_notifier": "false"}
    argv = [npx, "-y", "@modelcontextprotocol/inspector@latest", "--cli", served["url"], "--transport", "http",
            "--method", "tools/list", "--header", f"Authorization: Bearer {served['token']}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.skip("npx could not fetch the MCP Inspector in time (is the npm registry reachable?)")
    if done.returncode != 0 and "npm" in done.stderr and "ERR" in done.stderr:
        pytest.skip(f"npx could not install the MCP Inspector: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    assert {t["name"] for t in json.loads(done.stdout)["tools"]} == TOOLS
    refused = subprocess.run(argv[:-1] + ["Authorization: Bearer wrong-token-wrong-token"], capture_output=True,
                             text=True, timeout=600, env=env, stdin=subprocess.DEVNULL)
    assert refused.returncode != 0


@pytest.mark.usefixtures("runtime", "config_dir")
def test_a_taken_http_port_on_a_terminal_says_why_and_leaves_no_service(free_tcp_port):
    """``serve --http-port P`` on a terminal with P taken: exit 2 with the real reason, and the
    service it started is not left running."""
    import socket

    from test_service import _lock_free, _on_a_terminal, wait_until

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", free_tcp_port))
        taken.listen(1)
        done = _on_a_terminal("--http-port", str(free_tcp_port))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"MCP over HTTP could not start, so the service was stopped: cannot listen on 127.0.0.1:{free_tcp_port}" \
        in done.stderr
    # stopped: its socket is gone at once, its lock when the process has exited (a moment later)
    lock = Path(os.environ["MARKDOWN_MEMORY_RUNTIME_DIR"]) / "service.lock"
    wait_until(lambda: _lock_free(lock), 20, "the stopped service to exit")


@pytest.mark.usefixtures("runtime", "config_dir")
def test_serve_with_http_without_a_terminal_fails_when_a_service_without_http_runs(free_tcp_port):
    """systemd's ``ExecStart=markdown-memory serve --http-port P`` while an agent's service (no
    HTTP) runs: exit 2 saying so, so the unit shows a failure."""
    from markdown_memory.service import client
    from test_service import SERVE

    pid = client.request("ping", {})["pid"]
    done = subprocess.run([*SERVE, "--http-port", str(free_tcp_port)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"a service already runs (pid {pid}) without HTTP, not on port {free_tcp_port}" in done.stderr
    assert "serve --stop" in done.stderr


@pytest.fixture
def own_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm) -> Iterator[dict[str, Any]]:
    """A registered copy of the guide served by its own HTTP server; ``seen``: the settings each
    engine was asked for."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import HttpServer

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    monkeypatch.setenv("MARKDOWN_MEMORY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    settings = Settings.load(root, tmp_path / "index.db", "minilm")
    engine = Engine(settings, embedder=minilm)
    assert not engine.index().failed
    ident = http_access.register(settings)
    assert http_access.lookup(ident) == http_access.lookup(ident)  # the same settings each time
    token = http_access.load_token()
    seen: list[Any] = []

    def factory(wanted: Any) -> Any:
        seen.append(wanted)
        return engine

    config = tmp_path / "config"
    server = HttpServer(0, engine_factory=factory, token=token,
                        lookup=lambda ident: http_access.lookup(ident, config, tmp_path / "nothing"))
    server.start()
    try:
        yield {"url": http_access.root_url(server.port, ident), "token": token, "root": root, "seen": seen,
               "settings": settings}
    finally:
        server.stop()
        engine.close()


def test_setup_http_again_takes_effect_without_a_restart(own_server):
    """Re-registering a root with other settings (another embedder): the next session uses them."""
    import time

    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import RECHECK_SECONDS

    Session(own_server["url"], own_server["token"]).tool("list_documents")
    assert own_server["seen"][-1].embedder == "minilm"
    http_access.register(own_server["settings"].__class__.load(own_server["root"], own_server["settings"].db_path, "none"))
    time.sleep(RECHECK_SECONDS + 0.1)  # the time-based rule: settings are trusted this long
    Session(own_server["url"], own_server["token"]).tool("list_documents")
    assert own_server["seen"][-1].embedder == "none"


def test_a_deleted_docs_root_gets_the_http_advice_and_no_traceback(own_server, caplog):
    import logging

    session = Session(own_server["url"], own_server["token"])
    session.tool("list_documents")
    shutil.rmtree(own_server["root"])
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            reply = post(own_server["url"], {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                             "params": {"name": "list_documents", "arguments": {}}}, session.headers)
            assert reply.status == 404, reply.body
            message = reply.messages()[0]["error"]["message"]
            assert "setup claude-code --http" in message and "MARKDOWN_MEMORY_DOCS_DIR" not in message
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert sum("its folder is gone" in r.getMessage() for r in caplog.records) == 1


def test_live_sessions_per_root_are_capped(own_server, monkeypatch):
    """A client that keeps initializing without closing: past the cap a new session is refused
    (503), so memory stays bounded; closing one makes room."""
    from markdown_memory.mcp import http

    monkeypatch.setattr(http, "MAX_SESSIONS_PER_ROOT", 3)  # read when the root is first served
    sessions = [Session(own_server["url"], own_server["token"]) for _ in range(3)]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}}}
    assert post(own_server["url"], init, {"Authorization": f"Bearer {own_server['token']}"}).status == 503
    sessions[0].close()
    Session(own_server["url"], own_server["token"]).tool("list_documents")


def test_roots_show_the_url_id_and_http_roots_can_be_unregistered(config_dir, tmp_path, cli_main, monkeypatch):
    """`roots` (text and --json) shows each root's id (the URL's `<id>`); `setup --http --remove`
    unregisters a root; `roots --prune --yes` drops the registrations of roots that are gone."""
    from markdown_memory.mcp import http_access

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    for root in (kept, gone):
        shutil.copytree(FIXTURES / "guide", root)
        assert cli_main("--embedder", "none", "index", str(root)).returncode == 0
        _setup_line(cli_main, root)
    ident = http_access.root_id(kept.resolve())
    assert f"[id {ident}]" in cli_main("roots").stdout
    assert ident in [e["id"] for e in json.loads(cli_main("roots", "--json").stdout)["indexes"]]

    gone_id = http_access.root_id(gone.resolve())
    shutil.rmtree(gone)
    plan = cli_main("roots", "--prune")
    assert f"would unregister 1 MCP-over-HTTP root(s) whose folder is gone: {gone_id}" in plan.stdout, plan.stdout
    assert http_access.lookup(gone_id) is None and gone_id in json.loads((config_dir / "http-roots.json").read_text())["roots"]
    assert cli_main("roots", "--prune", "--yes").returncode == 0
    assert gone_id not in json.loads((config_dir / "http-roots.json").read_text())["roots"]

    plan = cli_main("setup", "claude-code", "--http", "--remove", "--docs-dir", str(kept))
    assert plan.returncode == 0 and f"would unregister {kept.resolve()} (id {ident})" in plan.stdout, plan.stderr
    assert ident in json.loads((config_dir / "http-roots.json").read_text())["roots"]
    res = cli_main("setup", "claude-code", "--http", "--remove", "--yes", "--docs-dir", str(kept))
    assert res.returncode == 0 and f"unregistered {kept.resolve()} (id {ident})" in res.stdout, res.stderr
    assert json.loads((config_dir / "http-roots.json").read_text())["roots"] == {}
