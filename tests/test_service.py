"""The resident service over real processes: start on demand, ping/stop, one per user, a stale
socket taken over, another user refused, idle exit, a killed service replaced, an MCP session over
the socket answering as the stdio server does, the TCP fallback's token, a client of another
version.

Every test turns the service on (``MARKDOWN_MEMORY_SERVICE=auto``) with its own short runtime
folder (AF_UNIX paths are limited to 107 bytes) and stops whatever it started in the fixture's
finalizer.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SERVE = [sys.executable, "-m", "markdown_memory", "serve"]


def _lock_free(lock: Path) -> bool:
    """True when no process holds the service lock (the service, if any, has exited)."""
    if not lock.exists():
        return True
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return True


def wait_until(predicate: Any, timeout: float = 30.0, what: str = "condition") -> None:
    """Poll ``predicate`` (an event: a lock released, a file gone) until true, or fail."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _pid_in_lock(lock: Path) -> int | None:
    try:
        text = lock.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The service switched on with a short private runtime folder; whatever service runs there
    at the end is stopped (``stop``, then SIGKILL) and waited for."""
    folder = Path(tempfile.mkdtemp(prefix="mm", dir="/tmp"))
    folder.chmod(0o700)
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "auto")
    monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE_IDLE", "120")  # a leaked service still goes away
    yield folder
    from markdown_memory.service import client

    lock = folder / "service.lock"
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "attach")  # a test may have switched it off
    if folder.is_file():  # a test blocked the folder with a file
        folder.unlink()
        folder.mkdir(mode=0o700)
    # a service spawned late by a racing client may take the lock after the first one stops:
    # stop again until the lock stays free
    for _ in range(3):
        _stop_the_service(client, lock)
        time.sleep(0.5)
        if _lock_free(lock):
            break
    shutil.rmtree(folder, ignore_errors=True)


def _stop_the_service(client: Any, lock: Path) -> None:
    """``stop`` whatever service holds ``lock`` (SIGKILL when it does not go) and wait for it."""
    with contextlib.suppress(client.ServiceUnavailable, client.ServiceError):
        client.request("stop", {}, start=False, timeout=10)
    try:
        wait_until(lambda: _lock_free(lock), 10, "the service to stop")
    except AssertionError:
        pid = _pid_in_lock(lock)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(lambda: _lock_free(lock), 10, "the killed service to go")


def test_client_imports_nothing_heavy() -> None:
    """The hook and the CLI reach the service through the client alone: it imports none of the
    heavy libraries (numpy, onnxruntime, markdown-it, sqlite-vec, the MCP SDK, anyio, pydantic)."""
    code = ("import markdown_memory.service.client, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'numpy','onnxruntime','markdown_it','sqlite_vec','mcp','anyio','pydantic'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ping_starts_the_service_and_stop_ends_it(runtime: Path) -> None:
    from markdown_memory import __version__
    from markdown_memory.service import client

    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {}, start=False)  # none yet, and not allowed to start one
    info = client.request("ping", {})
    assert info["version"] == __version__ and info["roots"] == [] and info["pid"] != os.getpid()
    assert client.request("ping", {}, start=False)["pid"] == info["pid"]  # the same service answers
    sock = runtime / "service.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700

    assert client.request("stop", {}) == {}
    wait_until(lambda: _lock_free(runtime / "service.lock"), what="the service to exit")
    assert not sock.exists()
    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {}, start=False)


def test_switch_off_and_attach(runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``off``: never contact or start one; ``attach``: use a running one, never start one."""
    from markdown_memory.service import client

    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "attach")
    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {})
    assert not (runtime / "service.sock").exists()
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "auto")
    pid = client.request("ping", {})["pid"]
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "attach")
    assert client.request("ping", {})["pid"] == pid
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "off")
    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {})


def test_unknown_op_is_an_error_reply(runtime: Path) -> None:
    from markdown_memory.service import client

    with pytest.raises(client.ServiceError) as caught:
        client.request("no-such-op", {})
    assert caught.value.kind == "unknown_op" and "ping" in caught.value.message


def test_second_service_exits_saying_already_running(runtime: Path) -> None:
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    second = subprocess.run(SERVE, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0
    assert f"already running (pid {pid})" in second.stderr
    assert client.request("ping", {}, start=False)["pid"] == pid  # the first one still serves


def test_stale_socket_is_taken_over(runtime: Path) -> None:
    """A service killed with SIGKILL leaves its socket file; the next start takes it over."""
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: _lock_free(runtime / "service.lock"), what="the killed service to go")
    assert (runtime / "service.sock").exists()  # left behind: stale
    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {}, start=False)
    new = client.request("ping", {})["pid"]
    assert new != pid
    assert "stale socket taken over" in (runtime / "service.log").read_text()


def test_killed_service_is_replaced_by_the_next_request(runtime: Path) -> None:
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: _lock_free(runtime / "service.lock"), what="the killed service to go")
    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {}, start=False)
    assert client.request("ping", {}, start=True)["pid"] not in (pid, None)


def test_sigterm_is_a_clean_exit(runtime: Path) -> None:
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    os.kill(pid, signal.SIGTERM)
    wait_until(lambda: _lock_free(runtime / "service.lock"), what="the service to exit")
    assert not (runtime / "service.sock").exists()


def test_idle_service_exits(runtime: Path) -> None:
    proc = subprocess.Popen([*SERVE, "--idle-timeout", "0.3"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert "idle" in err
    assert not (runtime / "service.sock").exists()


def _as_nobody(action: Any) -> str:
    """Run ``action()`` (returns a short text) in a forked child as uid/gid 65534; its text."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            text = action()
        except BaseException as exc:  # noqa: BLE001 - the parent asserts on the text
            text = f"raised {type(exc).__name__}: {exc}"
        os.write(write_end, text.encode()[:4000])
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        text = pipe.read().decode()
    os.waitpid(pid, 0)
    return text


def _raw_request(path: Path, message: dict[str, Any]) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall((json.dumps(message) + "\n").encode())
        return sock.makefile("rb").readline().decode()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to another uid")
def test_another_user_is_refused(runtime: Path) -> None:
    """Another uid cannot reach the socket (folder 0700, socket 0600), and with the permissions
    opened by hand the service itself refuses it (the peer's uid is checked)."""
    from markdown_memory import __version__
    from markdown_memory.service import client

    client.request("ping", {})
    sock = runtime / "service.sock"
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    ping = {"v": 1, "op": "ping", "version": __version__}
    assert "PermissionError" in _as_nobody(lambda: _raw_request(sock, ping))

    runtime.chmod(0o711)
    sock.chmod(0o666)
    reply = json.loads(_as_nobody(lambda: _raw_request(sock, ping)))
    assert reply["ok"] is False and reply["error"]["kind"] == "forbidden"
    runtime.chmod(0o700)


def test_runtime_folder_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_memory.errors import ConfigError
    from markdown_memory.service import client, paths

    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)
    else:  # pragma: no cover - not root: a symlink is refused the same way
        folder.rmdir()
        folder.symlink_to(tmp_path)
    monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "auto")
    with pytest.raises(ConfigError):
        paths.socket_path()
    with pytest.raises(client.ServiceUnavailable):
        client.request("ping", {})


def test_tcp_transport_needs_the_token(runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_memory import __version__
    from markdown_memory.service import client

    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE_TRANSPORT", "tcp")
    pid = client.request("ping", {})["pid"]
    assert not (runtime / "service.sock").exists()
    token = runtime / "service.token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    port = int((runtime / "service.port").read_text())
    for sent in ({}, {"token": "0" * 64}):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall((json.dumps({"v": 1, "op": "ping", "version": __version__, **sent}) + "\n").encode())
            reply = json.loads(sock.makefile("rb").readline())
        assert reply["ok"] is False and reply["error"]["kind"] == "forbidden"
        assert "pid" not in reply and "version" not in reply  # nothing about the service for a stranger
    real = token.read_text()
    token.write_text("0" * 64 + "\n")  # a client with a wrong token is refused, not taken for another version
    with pytest.raises(client.ServiceError, match="wrong or missing token"):
        client.request("ping", {}, start=False)
    token.write_text(real)
    assert client.request("ping", {}, start=False)["pid"] == pid
    client.request("stop", {})
    wait_until(lambda: _lock_free(runtime / "service.lock"), what="the service to exit")
    assert not (runtime / "service.port").exists()


def test_client_of_another_version_replaces_the_service(runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client of another version stops the running service and starts its own; when the new one
    still does not match (here: the same installation), the client gives up (in process)."""
    from markdown_memory import __version__
    from markdown_memory.service import client

    old = client.request("ping", {})["pid"]
    assert json.loads(_raw_request(runtime / "service.sock", {"v": 1, "op": "mcp", "version": "0.0.0-other"}))[
        "error"]["kind"] == "version_mismatch"
    monkeypatch.setattr(client, "__version__", "0.0.0-other")
    with pytest.raises(client.ServiceUnavailable, match="still version"):
        client.request("ping", {})
    monkeypatch.setattr(client, "__version__", __version__)
    assert client.request("ping", {}, start=False)["pid"] != old


# -- MCP over the socket ---------------------------------------------------------------------

class LineClient:
    """MCP JSON-RPC lines over a pair of binary streams."""

    def __init__(self, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        self.wire_in, self.wire_out = wire_in, wire_out
        self._next = 0

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        ident = None
        if not notify:
            self._next += 1
            ident = message["id"] = self._next
        self.wire_out.write((json.dumps(message) + "\n").encode())
        self.wire_out.flush()
        return ident

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        ident = self.send(method, params)
        while True:
            line = self.wire_in.readline()
            assert line, "the server closed the session"
            message = json.loads(line)
            if message.get("id") == ident:
                return message

    def session(self) -> tuple[list[str], dict[str, Any]]:
        """initialize, tools/list, index_directory, search_docs: (tool names, the search's payload)."""
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "pytest", "version": "0"}})
        assert init["result"]["serverInfo"]["name"]
        self.send("notifications/initialized", notify=True)
        tools = [t["name"] for t in self.request("tools/list")["result"]["tools"]]
        indexed = self.request("tools/call", {"name": "index_directory", "arguments": {}})["result"]
        assert not indexed.get("isError"), indexed
        result = self.request("tools/call", {"name": "search_docs",
                                             "arguments": {"query": "how do I configure the cache"}})["result"]
        assert not result.get("isError"), result
        return tools, json.loads(result["content"][0]["text"])


def _in_process_session(settings: Any) -> tuple[list[str], dict[str, Any]]:
    """The same session against ``serve_streams`` in this process on two pipes (the stdio server's
    code path)."""
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.mcp.server import serve_streams

    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    runtime = Runtime(settings)
    thread = threading.Thread(target=serve_streams, daemon=True,
                              args=(runtime, os.fdopen(to_server_r, "rb"), os.fdopen(from_server_w, "wb")))
    thread.start()
    wire_out, wire_in = os.fdopen(to_server_w, "wb"), os.fdopen(from_server_r, "rb")
    try:
        return LineClient(wire_in, wire_out).session()
    finally:
        wire_out.close()
        thread.join(30)
        runtime.shutdown(10)
        wire_in.close()


@pytest.mark.slow
def test_mcp_session_over_the_socket_answers_as_the_stdio_server(runtime: Path, tmp_path: Path) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.service import client

    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", docs)
    served = Settings.load(docs, tmp_path / "service.db", "minilm", auto_index=False)
    local = Settings.load(docs, tmp_path / "local.db", "minilm", auto_index=False)

    sock = client.open_session("mcp", {"settings": served.to_wire()})
    with sock, sock.makefile("rb") as wire_in, sock.makefile("wb") as wire_out:
        tools, answer = LineClient(wire_in, wire_out).session()
    assert client.request("ping", {})["roots"] == [str(docs)]

    local_tools, local_answer = _in_process_session(local)
    assert tools == local_tools and "search_docs" in tools
    assert answer["results"], answer
    assert answer["results"] == local_answer["results"]
    assert answer["index_status"]["embedder"] == local_answer["index_status"]["embedder"]


def test_mcp_op_refuses_missing_settings(runtime: Path) -> None:
    from markdown_memory.service import client

    with pytest.raises(client.ServiceError) as caught:
        client.open_session("mcp", {})
    assert caught.value.kind == "config"


# -- the model loaded once per process -------------------------------------------------------

def test_shared_models_load_each_preset_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the service's model sharing on, loaders of several docs roots asking for one preset
    (and thread count) get the same model, loaded once even when they ask at the same time."""
    from markdown_memory.embed import base, loader

    loads: list[tuple[str, int | None]] = []
    gate = threading.Event()

    def fake_get_embedder(name: str, threads: int | None = None) -> Any:
        gate.wait(10)
        loads.append((name, threads))
        return object()

    monkeypatch.setattr(base, "get_embedder", fake_get_embedder)
    monkeypatch.setattr(loader, "_shared", None)
    loader.share_models(True)
    loaders = [loader.ModelLoader("minilm", 2) for _ in range(4)] + [loader.ModelLoader("minilm", None)]
    threads = [threading.Thread(target=one.load) for one in loaders]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(20)
    assert sorted(loads, key=str) == [("minilm", 2), ("minilm", None)]
    assert len({id(one.embedder) for one in loaders[:4]}) == 1
    assert loaders[4].embedder is not loaders[0].embedder
    loader.share_models(False)
    assert loader.ModelLoader("minilm", 2).load() is not loaders[0].embedder  # off again: its own load


def test_serve_status_and_stop_commands(runtime: Path) -> None:
    """What a person types: ``serve --status`` and ``serve --stop`` (neither starts a service)."""
    from markdown_memory.service import client

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*SERVE, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)

    assert "not running" in cli("--status").stdout
    assert "not running" in cli("--stop").stdout
    assert not (runtime / "service.sock").exists()
    pid = client.request("ping", {})["pid"]
    assert f"running: pid {pid}" in cli("--status").stdout
    done = cli("--stop")
    assert done.returncode == 0 and f"stopped the service (pid {pid})" in done.stdout
    assert not (runtime / "service.sock").exists()
    assert not process_running(pid)  # --stop returned after the process had exited


def process_running(pid: int) -> bool:
    """Whether ``pid`` runs (an exited child of this test process, not yet reaped, does not)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return True


def test_stop_ends_open_sessions_and_a_new_service_starts_at_once(runtime: Path, tmp_path: Path) -> None:
    """``stop`` with an MCP session open: the session sees EOF, the service exits; the next request
    starts a new one even while the old one may still be releasing its lock."""
    from markdown_memory.config import Settings
    from markdown_memory.service import client

    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", docs)
    settings = Settings.load(docs, tmp_path / "i.db", "none", auto_index=False)
    sock = client.open_session("mcp", {"settings": settings.to_wire()})
    with sock, sock.makefile("rb") as wire_in, sock.makefile("wb") as wire_out:
        lines = LineClient(wire_in, wire_out)
        assert lines.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "pytest", "version": "0"}})["result"]
        old = client.stop_service()
        assert wire_in.readline() == b""  # the session was cut
    assert old is not None
    assert client.request("ping", {})["pid"] != old


def test_clients_starting_at_once_share_one_service(runtime: Path) -> None:
    """Several clients find no service at the same moment: each spawns one, one wins the lock, and
    every client gets its answer from that one."""
    from markdown_memory.service import client

    pids: list[int] = []
    errors: list[BaseException] = []

    def ping() -> None:
        try:
            pids.append(client.request("ping", {})["pid"])
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=ping) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(pids) == 4
    assert len(set(pids)) == 1


def test_pool_keeps_one_engine_per_database_and_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.embed import loader
    from markdown_memory.service.pool import Pool

    monkeypatch.setattr(loader, "_shared", None)  # Pool turns model sharing on for the process
    first, second = tmp_path / "a", tmp_path / "b"
    for root in (first, second):
        shutil.copytree(FIXTURES / "guide", root)
    pool = Pool()
    try:
        a = pool.engine(Settings.load(first, tmp_path / "a.db", "none", auto_index=False))
        assert pool.engine(Settings.load(first, tmp_path / "a.db", "none", auto_index=False)) is a
        b = pool.engine(Settings.load(second, tmp_path / "b.db", "none", auto_index=False))
        excluding = Settings.load(first, tmp_path / "a.db", "none", auto_index=False)
        excluding.exclude = ["ops/**"]  # the same database with another setting: an engine of its own
        other = pool.engine(excluding)
        assert len({id(a), id(b), id(other)}) == 3
        assert pool.roots() == sorted({str(first), str(second)})
        assert not pool.busy()
    finally:
        assert pool.shutdown(5)
        for engine in pool.engines():
            engine.close()


def test_serve_runs_extras_and_hooks_each_new_engine(runtime: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """What the integrator wires in: ``extras`` (an HTTP endpoint) start once the socket is bound
    and stop at shutdown; ``on_new_engine`` (the watcher) sees each engine the pool makes, and its
    stopper runs at shutdown. (The service runs in a thread of this process here.)"""
    from markdown_memory.config import Settings
    from markdown_memory.embed import loader
    from markdown_memory.service import client
    from markdown_memory.service.server import serve

    monkeypatch.setattr(loader, "_shared", None)
    events: list[str] = []

    def extra(service: Any) -> Any:
        events.append(f"extra started, socket there: {(runtime / 'service.sock').exists()}")
        return lambda: events.append("extra stopped")

    def hook(engine: Any) -> Any:
        events.append(f"engine for {engine.root.name}")
        return lambda: events.append("engine hook stopped")

    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", docs)
    thread = threading.Thread(target=serve, args=(0,), kwargs={"extras": [extra], "on_new_engine": hook})
    thread.start()
    try:
        wait_until(lambda: (runtime / "service.sock").exists(), what="the socket")
        sock = client.open_session("mcp", {"settings": Settings.load(docs, tmp_path / "i.db", "none",
                                                                      auto_index=False).to_wire()}, start=False)
        with sock, sock.makefile("rb") as wire_in, sock.makefile("wb") as wire_out:
            lines = LineClient(wire_in, wire_out)
            lines.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "pytest", "version": "0"}})
            lines.send("notifications/initialized", notify=True)
            listed = lines.request("tools/call", {"name": "list_documents", "arguments": {}})["result"]
            assert not listed.get("isError"), listed
    finally:
        client.stop_service()
        thread.join(30)
    assert events == ["extra started, socket there: True", "engine for docs", "extra stopped", "engine hook stopped"]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the service's mapped libraries in /proc")
def test_service_answers_before_loading_the_heavy_libraries(runtime: Path) -> None:
    """A service that has only answered pings has not loaded numpy or onnxruntime: it binds its
    socket first, and the engine (and the model) come with the first request that needs them."""
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    client.request("ping", {})
    maps = Path(f"/proc/{pid}/maps").read_text()
    assert "numpy" not in maps and "onnxruntime" not in maps and "sqlite_vec" not in maps


def test_a_service_dying_mid_call_is_unavailable(runtime: Path) -> None:
    """The connection closes before the reply (the service died mid-call): ServiceUnavailable,
    which the callers answer in process."""
    from markdown_memory.service import client

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(runtime / "service.sock"))
    listener.listen(1)

    def die_mid_call() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            conn.makefile("rb").readline()  # the request arrived; no reply
            conn.close()

    thread = threading.Thread(target=die_mid_call)
    thread.start()
    try:
        with pytest.raises(client.ServiceUnavailable, match="did not answer"):
            client.request("ping", {}, start=False)
        with pytest.raises(client.ServiceUnavailable, match="did not answer"):
            client.request("ping", {}, start=True)  # not retried on a new service: the caller falls back now
        assert not (runtime / "service.log").exists()  # no service was started
    finally:
        thread.join(10)
        listener.close()
        (runtime / "service.sock").unlink()


def test_runtime_folder_and_transport_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the user names is used as it is when only they can write it (never chmod-ed); a
    path too long for an AF_UNIX address, or the switch, picks the TCP transport."""
    from markdown_memory.service import paths

    short = Path(tempfile.mkdtemp(prefix="mm", dir="/tmp"))
    try:
        short.chmod(0o755)
        monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(short))
        monkeypatch.delenv("MARKDOWN_MEMORY_SERVICE_TRANSPORT", raising=False)
        assert paths.transport() == "unix"
        assert stat.S_IMODE(short.stat().st_mode) == 0o755
        monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE_TRANSPORT", "tcp")
        assert paths.transport() == "tcp"
    finally:
        shutil.rmtree(short)
    monkeypatch.delenv("MARKDOWN_MEMORY_SERVICE_TRANSPORT")
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(deep))
    assert paths.transport() == "tcp" and paths.runtime_dir().is_dir()


def _on_a_terminal(*args: str) -> subprocess.CompletedProcess[str]:
    """``markdown-memory serve ARGS`` with a terminal as stdin (the detached start a person gets)."""
    import pty

    parent, child = pty.openpty()
    try:
        return subprocess.run([*SERVE, *args], stdin=child, capture_output=True, text=True, timeout=60)
    finally:
        os.close(child)
        os.close(parent)


def test_detached_start_passes_the_idle_timeout_on(runtime: Path) -> None:
    """``serve --idle-timeout 1`` on a terminal: the service it starts in the background exits
    after 1 s idle (not the default)."""
    done = _on_a_terminal("--idle-timeout", "1")
    assert done.returncode == 0 and "the service is running" in done.stdout, done.stderr
    wait_until(lambda: _lock_free(runtime / "service.lock"), 15, "the idle service to exit")
    assert "idle exit after 1 s" in (runtime / "service.log").read_text()


def test_a_shared_runtime_folder_is_refused_not_chmodded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MARKDOWN_MEMORY_RUNTIME_DIR naming an existing folder others can write (a 1777 shared
    folder, /tmp): refused with a clear message, its mode untouched, even by ``serve --status``;
    a folder that does not exist yet is made 0700, and a default one of ours is tightened."""
    from markdown_memory.errors import ConfigError
    from markdown_memory.service import paths

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(shared))
    with pytest.raises(ConfigError, match="can be written by other users"):
        paths.runtime_dir()
    status = subprocess.run([*SERVE, "--status"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "MARKDOWN_MEMORY_SERVICE": "auto"})
    assert status.returncode == 2 and "can be written by other users (mode 1777)" in status.stderr, status.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    fresh = shared / "mine"
    monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(fresh))
    assert paths.runtime_dir() == fresh and stat.S_IMODE(fresh.stat().st_mode) == 0o700
    monkeypatch.delenv("MARKDOWN_MEMORY_RUNTIME_DIR")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "markdown-memory").mkdir(mode=0o755)
    assert stat.S_IMODE(paths.runtime_dir().stat().st_mode) == 0o700


def test_stop_waits_for_the_process_to_exit_not_only_its_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """The socket goes first, then the process closes its database and exits: ``stop_service``
    (``serve --stop``) returns after the exit, or says it timed out."""
    from markdown_memory.service import client

    lingering = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    monkeypatch.setattr(client, "_exchange", lambda *a, **k: (socket.socket(), {"pid": lingering.pid}))
    monkeypatch.setattr(client, "service_address_exists", lambda: False)
    try:
        with pytest.raises(client.ServiceUnavailable, match="did not exit"):
            client.stop_service(wait=0.2)
    finally:
        assert lingering.stdin is not None
        lingering.stdin.close()
        lingering.wait(30)
    assert client.stop_service(wait=5) == lingering.pid
