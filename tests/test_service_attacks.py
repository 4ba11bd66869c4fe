"""The resident service under attack (issue 37's findings 1-6), each over a real ``serve``
process: links planted in the runtime folder, a deeply nested request line, unterminated and
trickled lines, a connection flood, a file that is no index of ours named as the database,
damage under a running service, a full listen backlog and a refused runtime folder.

Reuses test_service.py's fixtures: ``runtime`` (a private runtime folder, the service stopped at
the end), ``wait_until`` and ``_lock_free``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from damage import overwrite_keyword_index_root
from test_service import _lock_free, runtime, wait_until  # noqa: F401 - runtime is a fixture

__all__ = ["runtime"]


def _send_raw(path: Path, payload: bytes, timeout: float = 30) -> dict[str, Any]:
    """Send ``payload`` on a new connection to the socket at ``path``; the one reply line."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(payload)
        line = sock.makefile("rb").readline()
    assert line, "the service closed the connection without a reply"
    reply: dict[str, Any] = json.loads(line)
    return reply


# -- finding 2: a request line nested 50,000 levels ---------------------------------------------

@pytest.mark.parametrize("opening, closing", [(b"[", b"]"), (b'{"a":', b"}")])
def test_a_deeply_nested_request_line_gets_the_protocol_refusal(runtime: Path, opening: bytes,  # noqa: F811
                                                                 closing: bytes) -> None:
    from markdown_memory.service import client

    pid = client.request("ping", {})["pid"]
    reply = _send_raw(runtime / "service.sock", opening * 50_000 + b"1" + closing * 50_000 + b"\n")
    assert reply["ok"] is False and reply["error"]["kind"] == "protocol", reply
    assert "nested too deeply" in reply["error"]["message"]
    assert client.request("ping", {}, start=False)["pid"] == pid  # and it still serves


# -- finding 1: nothing in the runtime folder is followed through a link --------------------------

SERVE = [__import__("sys").executable, "-m", "markdown_memory", "serve"]


def _precious(tmp_path: Path) -> Path:
    """A user's file (0644) a link in the runtime folder points at."""
    target = tmp_path / "precious.txt"
    target.write_text("a user's file: keep me\n")
    target.chmod(0o644)
    return target


def _unchanged(target: Path) -> bool:
    return target.read_text() == "a user's file: keep me\n" and (target.stat().st_mode & 0o777) == 0o644


def test_a_link_planted_at_the_lock_is_refused_not_truncated(runtime: Path, tmp_path: Path) -> None:  # noqa: F811
    import subprocess

    target = _precious(tmp_path)
    (runtime / "service.lock").symlink_to(target)
    done = subprocess.run([*SERVE, "--idle-timeout", "1"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done
    assert f"{runtime / 'service.lock'} is a symbolic link" in done.stderr and "remove it" in done.stderr
    assert _unchanged(target)
    assert not (runtime / "service.sock").exists()  # no service started
    (runtime / "service.lock").unlink()
    os.link(target, runtime / "service.lock")  # a hard link is refused the same way
    done = subprocess.run([*SERVE, "--idle-timeout", "1"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "a hard link to another file" in done.stderr, done
    assert _unchanged(target)


def test_a_link_planted_at_the_log_is_refused_not_appended_to(runtime: Path, tmp_path: Path) -> None:  # noqa: F811
    from markdown_memory.service import client

    target = _precious(tmp_path)
    (runtime / "service.log").symlink_to(target)
    with pytest.raises(client.ServiceUnavailable, match="service.log is a symbolic link"):
        client.request("ping", {})  # would start a service with its stderr appended to the target
    assert _unchanged(target)
    assert _lock_free(runtime / "service.lock")


def test_the_client_does_not_follow_a_linked_socket(runtime: Path, tmp_path: Path) -> None:  # noqa: F811
    """A link at service.sock pointing at another listener: the client refuses it and never
    connects there (it answers in process instead)."""
    from markdown_memory.service import client

    elsewhere = Path(tmp_path.parent / f"s{os.getpid()}.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(elsewhere))
    listener.listen(4)
    listener.settimeout(0.2)
    try:
        (runtime / "service.sock").symlink_to(elsewhere)
        with pytest.raises(client.ServiceUnavailable, match="service.sock is a symbolic link"):
            client.request("ping", {}, start=False, timeout=2)
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing connected through the link
    finally:
        listener.close()
        elsewhere.unlink()


# -- finding 3: the request line's size and time, and the connections at once -----------------------

def test_an_unterminated_line_past_the_request_cap_is_refused(runtime: Path) -> None:  # noqa: F811
    """2 MiB without a newline: refused once past MAX_REQUEST_LINE (the service read at most that
    much), not buffered up to 64 MiB; the service still serves."""
    import threading

    from markdown_memory.service import client
    from markdown_memory.service.protocol import MAX_REQUEST_LINE

    pid = client.request("ping", {})["pid"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(20)
        sock.connect(str(runtime / "service.sock"))
        sender = threading.Thread(target=lambda: _send_quietly(sock, b"x" * (2 * MAX_REQUEST_LINE)), daemon=True)
        sender.start()
        line = sock.makefile("rb").readline()  # main: no reply until 64 MiB came or 30 s passed
        sender.join(20)
    reply = json.loads(line)
    assert reply["ok"] is False and reply["error"]["kind"] == "protocol", reply
    assert f"more than {MAX_REQUEST_LINE} bytes" in reply["error"]["message"]
    assert client.request("ping", {}, start=False)["pid"] == pid


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    """``sendall``, ignoring the reset of a peer that stopped reading (it refused the line)."""
    try:
        sock.sendall(data)
    except OSError:
        pass


@pytest.mark.slow
def test_a_request_line_trickled_a_byte_at_a_time_is_cut_at_the_deadline(runtime: Path) -> None:  # noqa: F811
    """A byte every 2 s (each read well inside any per-read timeout): the whole line has one
    deadline, REQUEST_READ_TIMEOUT; past it the sender gets the protocol refusal, while it is
    still sending."""
    import threading

    from markdown_memory.service import client
    from markdown_memory.service.server import REQUEST_READ_TIMEOUT

    client.request("ping", {})
    done = threading.Event()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(runtime / "service.sock"))

        def trickle() -> None:
            while not done.wait(2.0):
                _send_quietly(sock, b" ")

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        started = time.monotonic()
        sock.settimeout(REQUEST_READ_TIMEOUT * 2)
        try:
            line = sock.makefile("rb").readline()
        except TimeoutError:
            line = b""
        waited = time.monotonic() - started
        done.set()
        sender.join(10)
    assert line, f"no reply within {waited:.0f} s while a byte came every 2 s"
    reply = json.loads(line)
    assert reply["error"]["kind"] == "protocol" and "time allowed" in reply["error"]["message"], reply
    assert waited >= REQUEST_READ_TIMEOUT - 1


def test_connections_past_the_cap_get_a_busy_refusal(runtime: Path) -> None:  # noqa: F811
    """MAX_CONNECTIONS connections held open without a request: the next one is refused at once
    with kind "busy" (no thread, no hang); a client retries briefly and is served once they go."""
    import threading

    from markdown_memory import __version__
    from markdown_memory.service import client
    from markdown_memory.service.server import MAX_CONNECTIONS

    pid = client.request("ping", {})["pid"]
    held = []
    try:
        for _ in range(MAX_CONNECTIONS):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(runtime / "service.sock"))
            held.append(sock)
        ping = json.dumps({"v": 1, "op": "ping", "version": __version__}).encode() + b"\n"
        reply = _send_raw(runtime / "service.sock", ping, timeout=10)
        assert reply["ok"] is False and reply["error"]["kind"] == "busy", reply
        assert str(MAX_CONNECTIONS) in reply["error"]["message"]
        answers: list[Any] = []
        asking = threading.Thread(target=lambda: answers.append(client.request("ping", {}, start=False)))
        asking.start()  # retries while busy
    finally:
        for sock in held:
            sock.close()
    asking.join(30)
    assert answers and answers[0]["pid"] == pid


# -- finding 6: a busy service is not an absent one; a refused folder is said ---------------------

def _service_pid(runtime: Path) -> int:
    from markdown_memory.service import client

    pid: int = client.request("ping", {})["pid"]
    return pid


def test_a_full_listen_backlog_is_busy_not_absent(runtime: Path) -> None:  # noqa: F811
    """The service stopped (SIGSTOP) while connects pile up until the kernel answers EAGAIN: a
    client retries briefly and gives up (answering in process) without starting a second service;
    once the service runs again the same one answers."""
    import resource
    import signal

    from markdown_memory.service import client

    pid = _service_pid(runtime)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    pending: list[socket.socket] = []
    os.kill(pid, signal.SIGSTOP)
    try:
        while len(pending) < hard - 100:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(str(runtime / "service.sock"))
            except BlockingIOError:
                sock.close()
                break
            pending.append(sock)
        else:
            pytest.skip(f"the backlog did not fill with {len(pending)} connects")
        with pytest.raises(client.ServiceUnavailable, match="busy"):
            client.request("ping", {})  # main: EAGAIN read as "not running": a second service spawned
        assert "already running" not in (runtime / "service.log").read_text()
    finally:
        os.kill(pid, signal.SIGCONT)
        for sock in pending:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(pending) > 64  # the backlog is no longer 64
    assert client.request("ping", {}, start=False)["pid"] == pid


def test_a_refused_connection_under_a_held_lock_is_busy_not_absent(runtime: Path) -> None:  # noqa: F811
    """A socket file that refuses connections while a process holds the lock (a service binding
    its socket, or going away): retried, then given up on, without spawning a second service."""
    import fcntl

    from markdown_memory.service import client

    refusing = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    refusing.bind(str(runtime / "service.sock"))  # bound, not listening: ECONNREFUSED
    with open(runtime / "service.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            with pytest.raises(client.ServiceUnavailable, match="busy"):
                client.request("ping", {})
            assert not (runtime / "service.log").exists()  # main: a service was started, saw the lock
        finally:
            refusing.close()
            (runtime / "service.sock").unlink()
    assert client.request("ping", {})["pid"] != os.getpid()  # lock free, socket gone: one starts


def test_a_refused_runtime_folder_is_said_once_on_stderr(tmp_path: Path) -> None:
    """MARKDOWN_MEMORY_RUNTIME_DIR naming a folder others can write: the CLI and the MCP server
    work in process and say why once on stderr (never on the MCP server's stdout)."""
    import shutil
    import subprocess
    import sys

    from test_server_stdio import RawServer

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    docs = tmp_path / "docs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "guide", docs)
    env = {**os.environ, "MARKDOWN_MEMORY_SERVICE": "auto", "MARKDOWN_MEMORY_RUNTIME_DIR": str(shared),
           "MARKDOWN_MEMORY_DB": str(tmp_path / "index.db"), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    said = "the resident service is not used"
    done = subprocess.run([sys.executable, "-m", "markdown_memory", "--docs-dir", str(docs), "search", "cache"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip(), done
    assert done.stderr.count(said) == 1 and "can be written by other users" in done.stderr, done.stderr

    server = RawServer(["--docs-dir", str(docs)], env)
    try:
        server.initialize()
        is_error, answer = server.tool("list_documents", {})
        assert not is_error, answer
        assert server.close_stdin_and_wait(30) == 0
    finally:
        server.kill()
    server.assert_stdout_is_jsonrpc()
    assert server.stderr_text.count(said) == 1, server.stderr_text
    assert not list(shared.iterdir())  # nothing made in the refused folder


# -- finding 4: a file that is not an index of ours is never moved aside or written ----------------

def _user_sqlite(path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE recipes(name TEXT, steps TEXT)")
    conn.execute("INSERT INTO recipes VALUES ('bread', 'knead')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("kind", ["text", "sqlite"])
def test_a_database_path_naming_a_users_file_is_refused(runtime: Path, tmp_path: Path, kind: str) -> None:  # noqa: F811
    """MARKDOWN_MEMORY_DB naming a user's text file or another program's SQLite database: the
    service's search refuses it with an error naming the file, and the file is left byte for
    byte (never renamed to .corrupt-..., never given our tables)."""
    import shutil
    import subprocess
    import sys

    docs = tmp_path / "docs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "guide", docs)
    users = tmp_path / ("notes.txt" if kind == "text" else "recipes.sqlite")
    if kind == "text":
        users.write_text("my notes, not an index\n" * 100)
    else:
        _user_sqlite(users)
    before = users.read_bytes()
    env = {**os.environ, "MARKDOWN_MEMORY_DB": str(users), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    done = subprocess.run([sys.executable, "-m", "markdown_memory", "--docs-dir", str(docs), "search", "cache"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != 0, done
    assert f"{str(users)!r} (the index database" in done.stderr and "is not a markdown-memory index" in done.stderr
    assert ("SQLite header" if kind == "text" else "another program (tables: recipes)") in done.stderr, done.stderr
    assert users.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(users.name)] == [users.name]
    assert (runtime / "service.sock").exists()  # it was the service that answered


# -- finding 5: pages damaged under a running service are found ----------------------------------

def test_pages_damaged_under_a_running_service_are_found_and_rebuilt(runtime: Path, tmp_path: Path,  # noqa: F811
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Random pages of the index overwritten while the service serves it (damage no query may
    touch): the page check the service runs once idle after use finds it, moves the file aside
    (kept), says so in its log, and the next search answers from the rebuilt index, whose file
    passes the integrity check."""
    import shutil
    import sqlite3
    import subprocess
    import sys

    from markdown_memory.store.testing import check_file

    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE_CHECK", "0.3")
    docs = tmp_path / "docs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "guide", docs)
    for i in range(300):  # enough pages that noise over most of the file hits live data
        (docs / f"topic{i}.md").write_text(f"# Topic {i}\n\nThe zebrafish{i} setting controls part {i}.\n\n"
                                           f"## Details\n\n{'Words about this part. ' * 20}\n")
    db = tmp_path / "index.db"
    env = {**os.environ, "MARKDOWN_MEMORY_DB": str(db), "MARKDOWN_MEMORY_EMBEDDER": "none"}

    def search(query: str) -> str:
        done = subprocess.run([sys.executable, "-m", "markdown_memory", "--docs-dir", str(docs), "search", query],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done
        return done.stdout

    assert "topic7.md" in search("zebrafish7 setting")
    log = runtime / "service.log"
    try:
        wait_until(lambda: f"page check of {db}: ok" in log.read_text(), 30, "the first page check")
    except AssertionError:
        raise AssertionError(log.read_text()) from None
    with sqlite3.connect(db) as conn:  # the WAL's pages into the file, so the noise lands on live pages
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(8 * 4096)
        f.write(os.urandom(size - 8 * 4096))
    from markdown_memory.service import client

    client.request("ping", {}, start=False)  # a request: the next idle moment checks again
    try:
        wait_until(lambda: "found damage" in log.read_text(), 30, "the page check to find the damage")
    except AssertionError:
        raise AssertionError(log.read_text()) from None
    assert f"page check of {db} found damage: moved aside to {db}.corrupt-" in log.read_text()
    assert [p for p in tmp_path.glob("index.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert "topic9.md" in search("zebrafish9 setting")  # answered from the rebuilt index
    checked = check_file(db)
    assert checked.integrity == "ok" and checked.documents == len(list(docs.rglob("*.md")))


def test_damage_surfacing_in_a_request_starts_the_page_check_at_once(runtime: Path, tmp_path: Path,  # noqa: F811
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With the idle check off, a search that meets the damage ("malformed") makes the service
    check and move the file aside at once; the search after it answers from the rebuilt index."""
    import shutil
    import subprocess
    import sys

    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE_CHECK", "0")
    docs = tmp_path / "docs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "guide", docs)
    for i in range(300):
        (docs / f"topic{i}.md").write_text(f"# Topic {i}\n\nThe zebrafish{i} setting controls part {i}.\n\n"
                                           f"## Details\n\n{'Words about this part. ' * 20}\n")
    db = tmp_path / "index.db"
    env = {**os.environ, "MARKDOWN_MEMORY_DB": str(db), "MARKDOWN_MEMORY_EMBEDDER": "none"}

    def search(query: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "markdown_memory", "--docs-dir", str(docs), "search", query],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, env=env)

    assert "topic7.md" in search("zebrafish7 setting").stdout
    overwrite_keyword_index_root(db)  # opening the file still works
    search("zebrafish8 setting")  # meets the damage (its own answer may come from the fallback)
    log = runtime / "service.log"
    try:
        wait_until(lambda: "found damage" in log.read_text(), 30, "the page check to find the damage")
    except AssertionError:
        raise AssertionError(log.read_text()) from None
    assert "topic9.md" in search("zebrafish9 setting").stdout


def test_a_busy_refusal_written_before_the_request_is_read_as_busy() -> None:
    """CI caught it: the service at its connection limit writes "busy" and closes before the
    client's request arrives; the client's send then fails (EPIPE), and the refusal waiting in
    its socket must still be read, so the client retries instead of calling the service gone."""
    import socket as socketlib

    from markdown_memory.service.client import _ask
    from markdown_memory.service.protocol import encode

    client_end, service_end = socketlib.socketpair(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    with client_end:
        service_end.sendall(encode({"v": 1, "ok": False, "error": {"kind": "busy", "message": "limit"}}))
        service_end.close()
        reply = _ask(client_end, encode({"v": 1, "op": "ping"}))
    assert reply["error"]["kind"] == "busy"


def test_a_send_to_a_service_gone_without_a_word_still_fails() -> None:
    """The other side of the rule above: a closed socket with nothing to read is an error."""
    import socket as socketlib

    from markdown_memory.service.client import _ask
    from markdown_memory.service.protocol import encode

    client_end, service_end = socketlib.socketpair(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    service_end.close()
    with client_end, pytest.raises(OSError):
        _ask(client_end, encode({"v": 1, "op": "ping"}))
