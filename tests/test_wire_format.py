"""Golden wire format: every CLI ``--json`` answer and every MCP tool answer on the guide corpus.

The answers are recorded from the code as it is and stored under ``tests/fixtures/wire/`` (one
JSON file per suite); a normal run records them again and compares, field for field and in
key order. This pins what an agent or a script sees while the inside is refactored.

Only entry points that survive a refactor are driven: ``markdown_memory.cli.main([...])``
in-process (stdout captured, one JSON object per line) and the MCP server as a subprocess
(``python -m markdown_memory.cli``) spoken to in raw JSON-RPC lines.

Suites (one test each):

* ``cli-none``: the CLI keyword-only, before and after indexing, every command, the errors,
  an edit and a deletion after indexing (``--no-refresh`` shows stale hits);
* ``cli-minilm``: a few CLI answers with the real MiniLM model (each call loads it);
* ``mcp-none-manual``: a keyword-only server with ``--no-auto-index``: handshake, tools/list,
  every tool before and after ``index_directory``, the errors, the stale case;
* ``mcp-none-auto``: a keyword-only server with auto-index on, over an index the CLI built
  first; the catch-up run it starts on the first call is waited out before anything is
  recorded, then the auto-refresh of an edited file is recorded;
* ``mcp-minilm-manual``: one MiniLM server (``--no-auto-index``, ``index_directory`` first).

Volatile values are normalised in :func:`normalise`, by key (wall times) and by value (temp
paths); two recordings differed in nothing else. File mtimes are pinned (``os.utime``) so
``modified`` is recorded as it is. Scores are compared exactly: two recordings never differed
(they are rounded, rank-fusion figures), so no tolerance is applied.

``MM_RECORD_WIRE=1 pytest tests/test_wire_format.py`` rewrites the golden files.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, link_derived, requires_minilm

GOLDEN_DIR = FIXTURES / "wire"
RECORDING = os.environ.get("MM_RECORD_WIRE") == "1"
#: Seconds to wait before each recorded MCP call (default 0). A check that no answer depends on
#: how fast calls follow each other (status probes are reused for up to 0.5 s): the golden
#: files must match with MM_WIRE_PAUSE=0.6 as well.
PAUSE = float(os.environ.get("MM_WIRE_PAUSE") or 0)

#: Fixed file times (2023-11-14T22:13:20Z, then an hour later for edits), so ``modified`` in
#: list_documents answers is not volatile and a rewritten file surely differs from its index.
PINNED_MTIME = 1_700_000_000
EDITED_MTIME = PINNED_MTIME + 3600

#: Keys whose values are wall times (index reports' ``seconds``, ``last_run.at/when/seconds``).
#: Their value is replaced by ``<key:type>`` (null stays null), so presence, order and type
#: are still compared.
VOLATILE_KEYS = frozenset({"seconds", "at", "when"})


# -- normalising and comparing --------------------------------------------------------------------
class Paths:
    """The temp paths of one run, replaced inside string values by placeholders."""

    def __init__(self, root: Path, db: Path, tmp: Path) -> None:
        pairs = [(db, "<DB>"), (root, "<ROOT>"), (tmp, "<TMP>")]
        subs: list[tuple[str, str]] = []
        for path, label in pairs:
            for text in {str(path), os.path.realpath(path)}:
                subs.append((text, label))
        # longest first: the db and the root both sit inside tmp
        self.subs = sorted(subs, key=lambda s: -len(s[0]))
        self.tmp = str(tmp)

    def __call__(self, text: str) -> str:
        for old, new in self.subs:
            text = text.replace(old, new)
        return text


def normalise(obj: Any, paths: Paths) -> Any:
    """``obj`` with what truly varies between two runs replaced, key order kept: the values of
    VOLATILE_KEYS (wall times) become ``"<key:type>"``, and the run's temp paths (docs root,
    database, temp folder) inside any string become ``<ROOT>``, ``<DB>``, ``<TMP>``."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key in VOLATILE_KEYS and value is not None and not isinstance(value, (dict, list)):
                out[key] = f"<{key}:{type(value).__name__}>"
            else:
                out[paths(key) if isinstance(key, str) else key] = normalise(value, paths)
        return out
    if isinstance(obj, list):
        return [normalise(v, paths) for v in obj]
    if isinstance(obj, str):
        return paths(obj)
    return obj


def differences(golden: Any, fresh: Any, where: str) -> list[str]:
    """Readable differences between two JSON values: ``where`` is the answer and key path."""
    if type(golden) is not type(fresh):
        return [f"{where}: type {type(golden).__name__} {golden!r:.200} -> {type(fresh).__name__} {fresh!r:.200}"]
    if isinstance(golden, dict):
        out = []
        if list(golden) != list(fresh):
            out.append(f"{where}: keys {list(golden)} -> {list(fresh)}")
        for key in golden:
            if key in fresh:
                out += differences(golden[key], fresh[key], f"{where}.{key}")
        return out
    if isinstance(golden, list):
        out = [] if len(golden) == len(fresh) else [f"{where}: length {len(golden)} -> {len(fresh)}"]
        for i, (g, f) in enumerate(zip(golden, fresh)):
            out += differences(g, f, f"{where}[{i}]")
        return out
    if golden == fresh:
        return []
    if isinstance(golden, str) and len(golden) + len(fresh) > 200:  # show where a long text starts to differ
        at = next((i for i, (g, f) in enumerate(zip(golden, fresh)) if g != f), min(len(golden), len(fresh)))
        start = max(0, at - 40)
        return [f"{where}: differs at character {at}: ...{golden[start:at + 60]!r}... -> ...{fresh[start:at + 60]!r}..."]
    return [f"{where}: {golden!r:.300} -> {fresh!r:.300}"]


def check_or_record(suite: str, answers: dict[str, Any]) -> None:
    """Write ``answers`` as the golden file of ``suite`` (MM_RECORD_WIRE=1) or compare them with it."""
    path = GOLDEN_DIR / f"{suite}.json"
    text = json.dumps({"suite": suite, "answers": answers}, ensure_ascii=False, indent=1) + "\n"
    assert "/tmp" not in text and "pytest-of-" not in text, "a temp path escaped normalise()"
    if RECORDING:
        GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"no golden file {path}; record it with MM_RECORD_WIRE=1"
    golden = json.loads(path.read_text(encoding="utf-8"))["answers"]
    problems = []
    if list(golden) != list(answers):
        missing = [k for k in golden if k not in answers]
        extra = [k for k in answers if k not in golden]
        problems.append(f"answer names differ: missing {missing}, new {extra}" if missing or extra
                        else "answers recorded in another order")
    for name in golden:
        if name in answers:
            problems += differences(golden[name], answers[name], f"[{suite}] {name!r}")
    if not problems:  # the last word: the exact serialisation, key order included
        for name in golden:
            if json.dumps(golden[name], ensure_ascii=False) != json.dumps(answers[name], ensure_ascii=False):
                problems.append(f"[{suite}] {name!r}: serialisation differs")
    assert not problems, (f"{len(problems)} difference(s) from {path.name} (golden -> fresh); if the change is "
                          "meant, re-record with MM_RECORD_WIRE=1:\n  " + "\n  ".join(problems[:60]))


def json_line_format(line: str, obj: Any, **dumps_kwargs: Any) -> str:
    """``"canonical"`` when ``line`` is exactly ``json.dumps(obj, **dumps_kwargs)``, else ``"other"``:
    records the serialisation (separators, escaping of non-ASCII) without storing the raw text."""
    return "canonical" if json.dumps(obj, **dumps_kwargs) == line else "other"


# -- the corpus --------------------------------------------------------------------------------------
def make_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    for p in root.rglob("*.md"):
        os.utime(p, (PINNED_MTIME, PINNED_MTIME))
    return root


def edit_configuration(root: Path) -> None:
    """Rewrite configuration.md after indexing: one value changed and one section added."""
    path = root / "configuration.md"
    text = path.read_text(encoding="utf-8").replace("| `ACME_MAX_RETRIES` | 5 |", "| `ACME_MAX_RETRIES` | 7 |")
    text += "\n## Proxy\n\nSet `HTTP_PROXY` to route every outgoing request through a proxy server.\n"
    path.write_text(text, encoding="utf-8")
    os.utime(path, (EDITED_MTIME, EDITED_MTIME))


# -- the CLI, in-process -----------------------------------------------------------------------------
class Cli:
    """Runs ``cli.main`` in-process and records each answer under a name."""

    def __init__(self, capsys: pytest.CaptureFixture[str], root: Path, db: Path, tmp: Path, embedder: str) -> None:
        self.capsys = capsys
        self.root = root
        self.embedder = embedder
        self.paths = Paths(root, db, tmp)
        self.answers: dict[str, Any] = {}

    def __call__(self, name: str, *args: str) -> dict[str, Any]:
        """Run ``markdown-memory --embedder E ARGS...`` (``{root}`` in ARGS is the docs root)."""
        from markdown_memory.cli import main

        assert name not in self.answers, name
        argv = ["--embedder", self.embedder, *(a.replace("{root}", str(self.root)) for a in args)]
        self.capsys.readouterr()
        code = main(argv)
        out, err = self.capsys.readouterr()
        lines = out.splitlines()
        objects = [json.loads(line) for line in lines]
        entry = {
            "argv": argv,
            "exit": code,
            "stdout_format": [json_line_format(line, obj, ensure_ascii=False) for line, obj in zip(lines, objects)],
            "stdout": objects,
            # the CLI's own error line only (log lines depend on logging set-up across tests)
            "stderr": [line for line in err.splitlines() if line.startswith("markdown-memory: error:")],
        }
        self.answers[name] = normalise(entry, self.paths)
        return objects[0] if objects else {}


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = make_corpus(tmp_path)
    db = tmp_path / "index.db"
    monkeypatch.setenv("MARKDOWN_MEMORY_DB", str(db))
    monkeypatch.chdir(tmp_path)  # nothing may depend on the working directory: it is not the root
    return root, db


def test_cli_none(cli_env, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, db = cli_env
    cli = Cli(capsys, root, db, tmp_path, "none")
    d = ("--docs-dir", "{root}")

    cli("status before index", "status", *d, "--json")
    cli("search before index", "search", "ACME_MAX_RETRIES", *d, "--no-refresh", "--json")
    cli("list before index", "list", *d, "--json")
    cli("index", "index", "{root}", "--json")
    cli("index again", "index", "--docs-dir", "{root}", "--json")
    cli("index force", "index", "{root}", "--force", "--json")

    cli("search env var", "search", "ACME_MAX_RETRIES", *d, "--json")
    cli("search flag", "search", *d, "--json", "--", "--no-cache")
    cli("search error string", "search", "EADDRINUSE", *d, "--json")
    cli("search paraphrase", "search", "how long does the client wait before giving up", *d, "--json")
    cli("search quoted phrase", "search", '"port 8080"', *d, "--json")
    cli("search no match", "search", "kubernetes helm chart", *d, "--json")
    cli("search path prefix", "search", "slow", *d, "--path-prefix", "ops", "--json")
    cli("search path prefix file", "search", "server", *d, "--path-prefix", "ops/troubleshooting.md", "--json")
    cli("search prefix without documents", "search", "server", *d, "--path-prefix", "nothing/here", "--json")
    cli("search pointers top-k 2", "search", "network", *d, "--top-k", "2", "--max-tokens", "500", "--json")
    cli("search pointers top-k 5", "search", "acme", *d, "--top-k", "5", "--max-tokens", "500", "--json")
    cli("search heading word", "search", "Uninstall", *d, "--top-k", "1", "--json")

    cli("outline", "outline", "install.md", *d, "--json")
    cli("outline front matter", "outline", "configuration.md", *d, "--json")
    cli("outline max-depth 1", "outline", "configuration.md", *d, "--max-depth", "1", "--json")
    cli("outline suffix", "outline", "troubleshooting.md", *d, "--json")
    cli("links", "links", "install.md", *d, "--json")
    cli("read by note name", "read", "install#linux", *d, "--json")

    cli("read section", "read", "install.md", "Installation Guide > Linux", *d, "--json")
    cli("read with subsections", "read", "install.md", "Installation Guide", *d, "--include-subsections", "--json")
    cli("read own text only", "read", "install.md", "Installation Guide", *d, "--json")
    cli("read suffix and trailing heading", "read", "release-notes.md", "Version 2.0", *d, "--json")
    cli("read case-insensitive fragment", "read", "troubleshooting.md", "backups", *d, "--json")

    cli("status", "status", *d, "--json")
    cli("list root", "list", *d, "--json")
    cli("list folder", "list", "ops", *d, "--json")
    cli("list page", "list", *d, "--limit", "2", "--offset", "2", "--json")
    cli("list offset past end", "list", *d, "--offset", "10", "--json")
    cli("list missing folder", "list", "missing", *d, "--json")

    cli("error empty query", "search", "", *d, "--json")
    cli("error blank query", "search", "   ", *d, "--json")
    cli("error section not found", "read", "install.md", "Installation Guide > Solaris", *d, "--json")
    cli("error document not found", "read", "nope.md", "Intro", *d, "--json")
    cli("error outline document not found", "outline", "nope.md", *d, "--json")
    cli("error path outside root", "read", "../outside.md", "x", *d, "--json")
    cli("error absolute path outside root", "outline", "/etc/passwd", *d, "--json")
    cli("error path prefix outside root", "search", "server", *d, "--path-prefix", "../", "--json")
    cli("error usage top-k", "search", "server", *d, "--top-k", "0", "--json")
    cli("error usage unknown flag", "status", *d, "--bogus", "--json")
    cli("error two roots", "index", "{root}", "--docs-dir", str(tmp_path), "--json")

    edit_configuration(root)
    cli("edited search no-refresh", "search", "HTTP_PROXY", *d, "--no-refresh", "--json")
    cli("edited status", "status", *d, "--json")
    cli("edited read current text", "read", "configuration.md", "Environment variables", *d, "--json")
    cli("edited search refreshes", "search", "HTTP_PROXY", *d, "--json")
    (root / "ops" / "release-notes.md").unlink()
    cli("deleted search no-refresh", "search", "storage engine migrated", *d, "--no-refresh", "--json")
    cli("deleted read", "read", "ops/release-notes.md", "Version 1.5", *d, "--json")
    cli("deleted index", "index", "{root}", "--json")
    cli("deleted list", "list", *d, "--json")

    check_or_record("cli-none", cli.answers)


@requires_minilm
def test_cli_minilm(cli_env, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Few calls: each one loads the model."""
    root, db = cli_env
    cli = Cli(capsys, root, db, tmp_path, "minilm")
    d = ("--docs-dir", "{root}")
    cli("index", "index", "{root}", "--json")
    cli("search paraphrase", "search", "how long does the client wait before giving up", *d, "--no-refresh", "--json")
    cli("search env var", "search", "ACME_MAX_RETRIES", *d, "--no-refresh", "--json")
    cli("search pointers", "search", "install upgrade release", *d, "--top-k", "10", "--max-tokens", "500",
        "--no-refresh", "--json")
    cli("status", "status", *d, "--json")
    check_or_record("cli-minilm", cli.answers)


# -- the MCP server, a subprocess over raw JSON-RPC lines ---------------------------------------------
def _source_root() -> str:
    """The folder the imported markdown_memory package lives in: the subprocess runs that code."""
    import markdown_memory

    return str(Path(markdown_memory.__file__).resolve().parents[1])


class Wire:
    """A server subprocess spoken to in JSON-RPC lines; records each answer under a name."""

    def __init__(self, args: list[str], env: dict[str, str], paths: Paths, stderr_path: Path) -> None:
        self.paths = paths
        self.answers: dict[str, Any] = {}
        self._errlog = open(stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._errlog, env=env)
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:  # type: ignore[union-attr]
            self._lines.put(raw)
        self._lines.put(b"")

    def _send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        ident = None
        if not notify:
            self._next_id += 1
            ident = msg["id"] = self._next_id
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return ident

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 120) -> dict[str, Any]:
        ident = self._send(method, params)
        deadline = time.monotonic() + timeout
        while True:
            raw = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert raw, "server closed stdout"
            msg = json.loads(raw)
            assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", raw[:200]
            if msg.get("id") == ident:
                return msg

    def record(self, name: str, entry: dict[str, Any]) -> None:
        assert name not in self.answers, name
        self.answers[name] = normalise(entry, self.paths)

    def initialize(self) -> None:
        reply = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "wire-golden", "version": "0"}})
        self._send("notifications/initialized", notify=True)
        result = reply["result"]
        info = dict(result.get("serverInfo", {}))
        if "version" in info:  # the package version moves with releases, not with the refactor
            info["version"] = "<VERSION>"
        self.record("initialize", {"reply_keys": list(reply), "result": {**result, "serverInfo": info}})

    def list_tools(self) -> None:
        reply = self.request("tools/list", {})
        self.record("tools/list", {"reply_keys": list(reply), "result": reply["result"]})

    def call(self, name: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool``; records the result with each text block's JSON parsed (and whether the
        text was exactly the compact serialisation). Returns the first block's parsed body."""
        if PAUSE:
            time.sleep(PAUSE)
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in reply, reply
        result = dict(reply["result"])
        blocks = []
        for block in result.get("content", []):
            block = dict(block)
            if block.get("type") == "text":
                try:
                    parsed = json.loads(block["text"])
                except ValueError:
                    block["text_format"] = "plain"
                else:
                    block["text_format"] = json_line_format(block["text"], parsed, ensure_ascii=False,
                                                            separators=(",", ":"))
                    block["text"] = parsed
            blocks.append(block)
        result["content"] = blocks
        self.record(name, {"tool": tool, "arguments": arguments, "reply_keys": list(reply), "result": result})
        first = blocks[0]["text"] if blocks else None
        return first

    def close(self) -> int:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            return self.proc.wait(15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._errlog.close()


def start_server(tmp_path: Path, root: Path, db: Path, embedder: str, *flags: str) -> Wire:
    home = tmp_path / "server-home"
    env = {**os.environ, "MARKDOWN_MEMORY_DB": str(db), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CACHE_HOME": str(home / "cache"),
           # its own model cache sharing the session's derived int8 graph
           "MARKDOWN_MEMORY_MODEL_CACHE": str(link_derived(home / "models")),
           "PYTHONPATH": _source_root()}
    for name in ("MARKDOWN_MEMORY_DOCS_DIR", "MARKDOWN_MEMORY_EMBEDDER", "MARKDOWN_MEMORY_AUTO_INDEX",
                 "MARKDOWN_MEMORY_LOG_LEVEL", "CLAUDE_PROJECT_DIR", "MARKDOWN_MEMORY_EXCLUDE"):
        env.pop(name, None)
    wire = Wire(["--docs-dir", str(root), "--embedder", embedder, *flags], env, Paths(root, db, tmp_path),
                tmp_path / "server-stderr.log")
    wire.initialize()
    return wire


def test_mcp_none_manual(tmp_path: Path) -> None:
    root = make_corpus(tmp_path)
    db = tmp_path / "index.db"
    s = start_server(tmp_path, root, db, "none", "--no-auto-index")
    try:
        s.list_tools()
        s.call("search before index", "search_docs", {"query": "ACME_MAX_RETRIES"})
        s.call("list before index", "list_documents", {})
        s.call("outline before index", "get_document_outline", {"file_path": "install.md"})
        s.call("index_directory", "index_directory", {})
        s.call("index_directory again", "index_directory", {})
        s.call("index_directory folder", "index_directory", {"directory": "ops"})
        s.call("index_directory force", "index_directory", {"force": True})

        s.call("search env var", "search_docs", {"query": "ACME_MAX_RETRIES"})
        s.call("search flag", "search_docs", {"query": "--no-cache"})
        s.call("search error string", "search_docs", {"query": "EADDRINUSE"})
        s.call("search paraphrase", "search_docs", {"query": "how long does the client wait before giving up"})
        s.call("search quoted phrase", "search_docs", {"query": '"port 8080"'})
        s.call("search no match", "search_docs", {"query": "kubernetes helm chart"})
        s.call("search path prefix", "search_docs", {"query": "slow", "path_prefix": "ops"})
        s.call("search prefix without documents", "search_docs", {"query": "server", "path_prefix": "nothing/here"})
        s.call("search pointers top-k 2", "search_docs", {"query": "network", "top_k": 2, "max_tokens": 500})
        s.call("search pointers top-k 5", "search_docs", {"query": "acme", "top_k": 5, "max_tokens": 500})

        s.call("outline", "get_document_outline", {"file_path": "install.md"})
        s.call("outline max_depth 1", "get_document_outline", {"file_path": "configuration.md", "max_depth": 1})
        s.call("outline suffix", "get_document_outline", {"file_path": "troubleshooting.md"})
        s.call("links", "get_links", {"file_path": "install.md"})
        s.call("read by link target", "read_section", {"file_path": "[[install#Linux]]"})

        s.call("read section", "read_section", {"file_path": "install.md", "heading_path": "Installation Guide > Linux"})
        s.call("read with subsections", "read_section", {"file_path": "install.md", "heading_path": "Installation Guide",
                                                         "include_subsections": True})
        s.call("read suffix and fragment", "read_section", {"file_path": "troubleshooting.md", "heading_path": "backups"})
        s.call("read cursor 0", "read_section", {"file_path": "cli.md", "heading_path": "Command Line > Flags",
                                                 "cursor": 0})

        s.call("list root", "list_documents", {})
        s.call("list folder", "list_documents", {"directory": "ops"})
        s.call("list offset past end", "list_documents", {"offset": 10})
        s.call("list missing folder", "list_documents", {"directory": "missing"})

        s.call("error empty query", "search_docs", {"query": ""})
        s.call("error blank query", "search_docs", {"query": "   "})
        s.call("error missing query", "search_docs", {})
        s.call("error top_k 0", "search_docs", {"query": "x", "top_k": 0})
        s.call("error top_k type", "search_docs", {"query": "x", "top_k": "many"})
        s.call("error max_tokens", "search_docs", {"query": "x", "max_tokens": 50})
        s.call("error unknown argument", "search_docs", {"query": "x", "bogus": 1})
        s.call("error unknown tool", "read_everything", {})
        s.call("error section not found", "read_section", {"file_path": "install.md",
                                                           "heading_path": "Installation Guide > Solaris"})
        s.call("error document not found", "read_section", {"file_path": "nope.md", "heading_path": "Intro"})
        s.call("error outline document not found", "get_document_outline", {"file_path": "nope.md"})
        s.call("error path outside root", "read_section", {"file_path": "../outside.md", "heading_path": "x"})
        s.call("error absolute path outside root", "get_document_outline", {"file_path": "/etc/passwd"})
        s.call("error path prefix outside root", "search_docs", {"query": "server", "path_prefix": "../"})
        s.call("error cursor past end", "read_section", {"file_path": "cli.md", "heading_path": "Command Line > Flags",
                                                         "cursor": 999})
        s.call("error index folder outside root", "index_directory", {"directory": "../"})
        s.call("error index missing folder", "index_directory", {"directory": "missing"})

        edit_configuration(root)
        s.call("edited search stale", "search_docs", {"query": "HTTP_PROXY"})
        s.call("edited read current text", "read_section", {"file_path": "configuration.md",
                                                            "heading_path": "Environment variables"})
        s.call("edited list", "list_documents", {})
        s.call("edited index_directory", "index_directory", {})
        s.call("edited search fresh", "search_docs", {"query": "HTTP_PROXY"})
        (root / "ops" / "release-notes.md").unlink()
        s.call("deleted search stale", "search_docs", {"query": "storage engine migrated"})
        s.call("deleted read", "read_section", {"file_path": "ops/release-notes.md", "heading_path": "Version 1.5"})
        s.call("deleted index_directory", "index_directory", {})
    finally:
        code = s.close()
    assert code == 0
    check_or_record("mcp-none-manual", s.answers)


def test_mcp_none_auto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Auto-index on. The index is built by the CLI first, so the catch-up run the first call
    starts finds nothing to do; it is waited out (unrecorded polls of a call that starts no run)
    before anything is recorded, since the answer of the call that starts it races with it."""
    from markdown_memory.cli import main

    root = make_corpus(tmp_path)
    db = tmp_path / "index.db"
    monkeypatch.setenv("MARKDOWN_MEMORY_DB", str(db))
    assert main(["--embedder", "none", "index", str(root), "--json"]) == 0
    capsys.readouterr()
    s = start_server(tmp_path, root, db, "none")
    try:
        s.request("tools/call", {"name": "list_documents", "arguments": {}})  # starts the catch-up run
        deadline = time.monotonic() + 30
        while True:  # list_documents with a directory never starts a run
            reply = s.request("tools/call", {"name": "list_documents", "arguments": {"directory": "ops"}})
            if not json.loads(reply["result"]["content"][0]["text"])["index_status"]["indexing"]:
                break
            assert time.monotonic() < deadline, "the catch-up run did not finish"
            time.sleep(0.1)
        s.call("search env var", "search_docs", {"query": "ACME_MAX_RETRIES"})
        s.call("search pointers top-k 2", "search_docs", {"query": "network", "top_k": 2, "max_tokens": 500})
        s.call("outline", "get_document_outline", {"file_path": "install.md"})
        s.call("read section", "read_section", {"file_path": "install.md", "heading_path": "Installation Guide > Linux"})
        s.call("list root", "list_documents", {})
        s.call("index_directory", "index_directory", {})
        s.call("error section not found", "read_section", {"file_path": "install.md", "heading_path": "Solaris"})

        edit_configuration(root)
        time.sleep(0.6)  # past the refresh probe's longest reuse (0.5 s), so the edit is surely probed
        s.call("edited search refreshed", "search_docs", {"query": "HTTP_PROXY"})
        s.call("edited read", "read_section", {"file_path": "configuration.md", "heading_path": "Proxy"})
    finally:
        code = s.close()
    assert code == 0
    check_or_record("mcp-none-auto", s.answers)


@requires_minilm
def test_mcp_minilm_manual(tmp_path: Path) -> None:
    root = make_corpus(tmp_path)
    db = tmp_path / "index.db"
    s = start_server(tmp_path, root, db, "minilm", "--no-auto-index")
    try:
        s.call("index_directory", "index_directory", {})
        s.call("search paraphrase", "search_docs", {"query": "how long does the client wait before giving up"})
        s.call("search env var", "search_docs", {"query": "ACME_MAX_RETRIES"})
        s.call("search pointers", "search_docs", {"query": "install upgrade release", "top_k": 10, "max_tokens": 500})
        s.call("search path prefix", "search_docs", {"query": "server", "path_prefix": "ops"})
        s.call("search no match", "search_docs", {"query": "kubernetes helm chart"})
        s.call("list root", "list_documents", {})
        s.call("read section", "read_section", {"file_path": "troubleshooting.md", "heading_path": "backups"})
        s.call("outline", "get_document_outline", {"file_path": "configuration.md"})
        edit_configuration(root)
        s.call("edited search stale", "search_docs", {"query": "proxy for outgoing requests"})
    finally:
        code = s.close()
    assert code == 0
    check_or_record("mcp-minilm-manual", s.answers)
