"""The thin clients of the resident service, over real processes: the stdio MCP relay, the prompt
hook and CLI ``search`` get the same answers through the service as in process, share one
service, and survive its death (the relay resumes the session on a new service or an in-process
child, replaying what was unanswered; the CLI and the hook answer in process).

Every test turns the service on (``MARKDOWN_MEMORY_SERVICE=auto``) with its own short runtime
folder (AF_UNIX paths are limited to 107 bytes) and stops whatever service runs there at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import test_service
from conftest import indexed_engine
from test_service import _lock_free, wait_until

#: the service on with a short private runtime folder, stopped at the end (test_service's fixture)
runtime = test_service.runtime

MM = [sys.executable, "-m", "markdown_memory"]
DOCS_PROMPT = "how do I install acme on linux with systemd?"
QUIET_PROMPT = "run the tests and fix what fails"


def ping() -> dict[str, Any] | None:
    """The running service's ping answer, or None when none answers (never starts one)."""
    from markdown_memory.service import client

    try:
        return dict(client.request("ping", {}, start=False, timeout=10))
    except (client.ServiceUnavailable, client.ServiceError):
        return None


@pytest.fixture
def indexed(docs_root: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The guide docs indexed with MiniLM; every process of the test finds its database through
    MARKDOWN_MEMORY_DB. Returns the docs root."""
    indexed_engine(docs_root, "minilm", minilm).close()
    monkeypatch.setenv("MARKDOWN_MEMORY_DB", str(docs_root.parent / "index.db"))
    return docs_root.resolve()


def run_cli(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> tuple[str, str, int]:
    """``python -m markdown_memory ARGS`` in a subprocess: (stdout, stderr, exit status)."""
    proc = subprocess.run([*MM, *args], input=stdin, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    return proc.stdout, proc.stderr, proc.returncode


def hook_stdin(prompt: str, root: Path, session: str) -> str:
    return json.dumps({"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                       "cwd": str(root)})


class McpProcess:
    """A stdio MCP server process (the relay, or the in-process server) driven line by line."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([*MM, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[bytes] = []
        self.responses: dict[Any, dict[str, Any]] = {}
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr or []), daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self, request_id: int, timeout: float = 90.0) -> dict[str, Any]:
        """The response to ``request_id`` (responses read meanwhile are kept for their own call)."""
        deadline = time.monotonic() + timeout
        while request_id not in self.responses:
            message = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if message is None:
                raise AssertionError(f"the server closed stdout; stderr: {b''.join(self.stderr).decode()[-2000:]}")
            if "id" in message and "method" not in message:
                assert message["id"] not in self.responses, f"two answers to request {message['id']}"
                self.responses[message["id"]] = message
        return self.responses[request_id]

    def handshake(self) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}}})
        answer = self.reply(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call_search(self, request_id: int, query: str) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": "search_docs", "arguments": {"query": query}}})

    def search(self, request_id: int, query: str) -> dict[str, Any]:
        """search_docs's answer (the tool's JSON body)."""
        self.call_search(request_id, query)
        return result_of(self.reply(request_id))

    def close(self) -> int:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def result_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    assert not reply["result"].get("isError"), reply
    return dict(json.loads(reply["result"]["content"][0]["text"]))


def hits(answer: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(h["file_path"], h["heading_path"], h.get("content")) for h in answer["results"]]


@contextlib.contextmanager
def mcp_process(args: list[str], env: dict[str, str] | None = None) -> Iterator[McpProcess]:
    server = McpProcess(args, env)
    try:
        yield server
    finally:
        server.close()


# -- CLI search ---------------------------------------------------------------------------------
SEARCHES = [
    ("search", "install on linux"),
    ("search", "install on linux", "--json", "--top-k", "3"),
    ("search", "configure the server", "--path-prefix", "ops"),
    ("search", "", "--json"),  # an error: empty query (exit 2, the error object on stdout)
    ("search", "install", "--path-prefix", "../outside"),  # an error, in text
]


@pytest.mark.slow  # ~10 in-process searches, each loading the model in its own process
def test_cli_search_through_the_service_prints_what_the_process_prints(runtime: Path, indexed: Path) -> None:
    ping_before = None
    from markdown_memory.service import client

    client.request("ping", {})  # start the service with this test's environment
    ping_before = ping()
    assert ping_before is not None
    # the client's own process could not load the model: only the service's answer can match
    broken = {"MARKDOWN_MEMORY_MINILM_DIR": str(runtime.parent / "no-such-model")}
    for args in SEARCHES:
        here = run_cli(*args, "--docs-dir", str(indexed), env={"MARKDOWN_MEMORY_SERVICE": "off"})
        served = run_cli(*args, "--docs-dir", str(indexed), env=broken)
        assert served == here, args
    assert "keyword+vector" in run_cli("search", "install on linux", "--docs-dir", str(indexed), env=broken)[0]
    after = ping()
    assert after is not None and after["pid"] == ping_before["pid"]
    assert after["roots"] == [str(indexed)]  # `serve --status` names the root the CLI searched


@pytest.mark.slow  # kills the service and starts another
def test_cli_search_falls_back_when_the_service_is_killed(runtime: Path, indexed: Path) -> None:
    args = ("search", "install on linux", "--json", "--docs-dir", str(indexed))
    here = run_cli(*args, env={"MARKDOWN_MEMORY_SERVICE": "off"})
    first = run_cli(*args)
    assert first == here
    pid = ping()["pid"]  # type: ignore[index]
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: _lock_free(runtime / "service.lock"), what="the killed service to go")
    # attach: use a running service, never start one -> the search runs in process
    assert run_cli(*args, env={"MARKDOWN_MEMORY_SERVICE": "attach"}) == here
    assert ping() is None
    # auto: the next call starts a new service (the stale socket is taken over)
    assert run_cli(*args) == here
    again = ping()
    assert again is not None and again["pid"] != pid


# -- the hook -----------------------------------------------------------------------------------
def test_hook_answers_in_process_and_starts_the_service_for_the_next_prompt(runtime: Path, indexed: Path) -> None:
    """In process the hook searches keywords only, where no answer clears the hook's 85%
    precision bar (issue 34): it adds nothing, starts the service, and the service (vectors)
    answers the next prompt."""
    assert ping() is None
    out, err, status = run_cli("hook", stdin=hook_stdin(DOCS_PROMPT, indexed, "s1"))
    assert (out, status) == ("", 0), err
    wait_until(lambda: ping() is not None, what="the service the hook started")
    # the next prompt is answered by it: the service now serves this docs root
    out2, err2, _ = run_cli("hook", stdin=hook_stdin(DOCS_PROMPT, indexed, "s2"))
    assert "install.md · Installation Guide > Linux" in out2, err2
    assert str(indexed) in ping()["roots"]  # type: ignore[index]


def test_hook_through_the_service_injects_what_the_keyword_only_process_may_not(runtime: Path, indexed: Path) -> None:
    """The service searches with vectors and injects above its bar; the same hook in process
    (keyword-only, no bar reaches 85% precision: issue 34) adds nothing. A quiet prompt gets
    nothing either way."""
    from markdown_memory.service import client

    client.request("ping", {})
    for n, prompt in enumerate([DOCS_PROMPT, QUIET_PROMPT, "what is the upgrade procedure for acme releases?"]):
        here = run_cli("hook", stdin=hook_stdin(prompt, indexed, f"here-{n}"), env={"MARKDOWN_MEMORY_SERVICE": "off"})
        assert here == ("", "", 0), prompt
    assert "install.md · Installation Guide > Linux" in run_cli("hook", stdin=hook_stdin(DOCS_PROMPT, indexed, "served-0"))[0]
    assert run_cli("hook", stdin=hook_stdin(QUIET_PROMPT, indexed, "served-1")) == ("", "", 0)
    assert str(indexed) in ping()["roots"]  # type: ignore[index]
    # the session memory is the same too: a section is injected once per session
    again = run_cli("hook", stdin=hook_stdin(DOCS_PROMPT, indexed, "served-0"))
    assert again == ("", "", 0)


# -- the stdio MCP relay ------------------------------------------------------------------------
@pytest.mark.slow  # two relays, a hook and an in-process server
def test_two_relays_and_the_hook_share_one_service(runtime: Path, indexed: Path) -> None:
    args = ["--docs-dir", str(indexed)]
    with mcp_process(args, {"MARKDOWN_MEMORY_SERVICE": "off"}) as alone:
        alone.handshake()
        expected = hits(alone.search(1, "install on linux"))
    with mcp_process(args) as first, mcp_process(args) as second:
        first.handshake()
        pid = ping()["pid"]  # type: ignore[index]
        second.handshake()
        assert hits(first.search(1, "install on linux")) == expected
        assert hits(second.search(7, "install on linux")) == expected
        out, _err, _ = run_cli("hook", stdin=hook_stdin(DOCS_PROMPT, indexed, "shared"))
        assert "Installation Guide > Linux" in out
        assert second.search(8, "configure the server")["results"]
        info = ping()
        assert info is not None and info["pid"] == pid and info["roots"] == [str(indexed)]
        # neither relay runs a server of its own: no child process
        for relay in (first, second):
            assert not _children(relay.proc.pid)
    assert first.proc.returncode == 0 and second.proc.returncode == 0


def _children(pid: int) -> list[str]:
    """The command lines of ``pid``'s live child processes other than a service it started (a
    relay that starts the service is its parent)."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    lines = []
    for kid in kids:
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{kid}/cmdline").read_bytes().split(b"\0")
            if argv != [b""] and b"serve" not in argv:  # a zombie has no command line
                lines.append(b" ".join(argv).decode(errors="replace"))
    return lines


@pytest.mark.slow  # kills the service twice mid-session
def test_relay_resumes_on_a_new_service_after_a_kill(runtime: Path, indexed: Path) -> None:
    with mcp_process(["--docs-dir", str(indexed)]) as relay:
        relay.handshake()
        expected = hits(relay.search(1, "configure the server"))
        pid = ping()["pid"]  # type: ignore[index]
        os.kill(pid, signal.SIGKILL)
        # the next call is answered (the relay replays initialize and initialized to a new service)
        assert hits(relay.search(2, "configure the server")) == expected
        second = ping()
        assert second is not None and second["pid"] != pid, b"".join(relay.stderr).decode()[-3000:]
        # killed while a call is unanswered: the call is replayed, its answer arrives once
        relay.call_search(3, "install on linux")
        os.kill(second["pid"], signal.SIGKILL)
        assert relay.search(4, "upgrade")["results"]
        assert relay.reply(3)  # answered (before or after the kill)
        third = ping()
        assert third is not None and third["pid"] not in (pid, second["pid"])
    assert relay.proc.returncode == 0


@pytest.mark.slow  # kills the service, then runs the in-process server as the relay's child
def test_relay_falls_back_to_an_in_process_server_when_no_service_can_start(runtime: Path, indexed: Path) -> None:
    with mcp_process(["--docs-dir", str(indexed)]) as relay:
        relay.handshake()
        expected = hits(relay.search(1, "install on linux"))
        pid = ping()["pid"]  # type: ignore[index]
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: _lock_free(runtime / "service.lock"), what="the killed service to go")
        shutil.rmtree(runtime)
        runtime.write_text("not a folder: no service can start here\n")
        assert hits(relay.search(2, "install on linux")) == expected
        assert _children(relay.proc.pid)  # the in-process server
    assert relay.proc.returncode == 0


HEAVY = ("numpy", "onnxruntime", "markdown_it", "sqlite_vec", "mcp", "anyio", "pydantic", "markdown_memory.engine")


def imported(stderr: str) -> set[str]:
    """The modules a ``python -X importtime`` run imported (from its stderr)."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_client_paths_import_nothing_heavy(runtime: Path, indexed: Path) -> None:
    from markdown_memory.service import client

    client.request("ping", {})
    hook = subprocess.run([sys.executable, "-X", "importtime", "-m", "markdown_memory", "hook"], capture_output=True,
                          text=True, input=hook_stdin(DOCS_PROMPT, indexed, "light"), timeout=120)
    assert "Installation Guide > Linux" in hook.stdout
    search = subprocess.run([sys.executable, "-X", "importtime", "-m", "markdown_memory", "search", "install on linux",
                             "--docs-dir", str(indexed)], capture_output=True, text=True, timeout=120)
    assert "keyword+vector" in search.stdout
    for run in (hook, search):
        modules = imported(run.stderr)
        assert "markdown_memory.service.client" in modules
        assert not {m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY}
    # the search's client path reads its bounds from limits.py, not the models (~20 ms of imports)
    assert "markdown_memory.models" not in imported(search.stderr)
