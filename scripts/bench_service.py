"""Thin clients of the resident service (issue 28): what the hook, CLI ``search`` and the stdio
MCP servers cost with the service up.

With the service running (its own short runtime folder; stopped at the end) over ``--corpus``
indexed with ``--embedder`` (built into ``--db`` in process when missing), it measures, each
as the median of ``--runs`` real subprocesses (the console script, as an agent runs it), once
with the machine as it is ("quiet") and once with two CPU-bound processes running
(``python -c "while True: pass"`` x2, "loaded"):

* ``hook_docs``: the prompt hook on a docs question of ``--queries`` (the service searches with
  vectors: its model is loaded), wall time from process start to exit; target <= 100 ms;
* ``hook_quiet``: the hook on a prompt of eval/hook-quiet-prompts.jsonl (turned away by the
  gate before any search); target <= 50 ms;
* ``search``: ``markdown-memory search QUERY --docs-dir CORPUS``; target <= 150 ms;
* and the median CPU time (user + system) of those client processes, and the floor under all
  of them: ``python -c pass`` (the interpreter starting and exiting), under the same load.

Then memory: four stdio MCP servers (relays to the service) each answer the same
``--mcp-searches`` search_docs calls; the RSS (and PSS) of the four relays plus the service's is
compared with one in-process stdio server (``MARKDOWN_MEMORY_SERVICE=off``) after the same
searches; target <= 1.3x. The service is restarted first, so it holds only what the four
sessions made it load. Prints a table and writes ``--json-out``. One run; medians.

Usage::

    python scripts/bench_service.py --corpus ../shared/eval-corpus --embedder minilm \\
        --db /tmp/mm-bench-service/index.db --json-out /tmp/mm-bench-service/bench.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
#: the workplace's shared material beside the checkout (a worktree sits one folder deeper)
SHARED = Path(os.environ.get("MARKDOWN_MEMORY_SHARED_DIR") or next(
    (p / "shared" for p in (HERE.parent, HERE.parent.parent) if (p / "shared").is_dir()), HERE.parent / "shared"))
TARGETS = {"hook_docs": 100.0, "hook_quiet": 50.0, "search": 150.0}


def script() -> list[str]:
    """The console script next to this interpreter (what an agent's settings run)."""
    found = Path(sys.executable).parent / "markdown-memory"
    return [str(found)] if found.exists() else [sys.executable, "-m", "markdown_memory"]


def payload(prompt: str, cwd: Path, session: str) -> str:
    return json.dumps({"session_id": session, "transcript_path": "/dev/null", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def timed(argv: list[str], stdin: str = "") -> tuple[float, float, str]:
    """(wall ms, CPU ms of the child, stdout) of one subprocess run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}: {proc.stderr[-500:]}")
    return wall, cpu, proc.stdout


def summary(samples: list[tuple[float, float, str]]) -> dict[str, float]:
    walls = sorted(s[0] for s in samples)
    return {"p50_ms": round(statistics.median(walls), 1), "p95_ms": round(walls[int(0.95 * (len(walls) - 1))], 1),
            "cpu_ms": round(statistics.median(s[1] for s in samples), 1), "runs": len(samples)}


def measure(corpus: Path, docs: list[str], quiet: list[str], runs: int) -> dict[str, Any]:
    """hook_docs, hook_quiet, search: one median each over ``runs`` runs, spread over the prompts."""
    mm = script()
    out: dict[str, Any] = {}
    # the floor under every figure: this interpreter starting and exiting, importing nothing
    out["python_start"] = summary([timed([sys.executable, "-c", "pass"]) for _ in range(runs)])
    docs_runs = [timed([*mm, "hook"], payload(docs[i % len(docs)], corpus, f"bench-{time.time_ns()}"))
                 for i in range(runs)]
    out["hook_docs"] = summary(docs_runs)
    out["hook_docs"]["injected"] = sum(1 for s in docs_runs if s[2].strip())
    out["hook_quiet"] = summary([timed([*mm, "hook"], payload(quiet[i % len(quiet)], corpus, "bench-quiet"))
                                 for i in range(runs)])
    out["search"] = summary([timed([*mm, "search", docs[i % len(docs)], "--docs-dir", str(corpus)])
                             for i in range(runs)])
    return out


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory(pid: int) -> dict[str, float]:
    return {"rss_mb": _status_kb(pid, "VmRSS") / 1024, "pss_mb": _pss_kb(pid) / 1024}


class Stdio:
    """A stdio MCP server process driven line by line."""

    def __init__(self, corpus: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([*script(), "--docs-dir", str(corpus)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                           "params": params}) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.next_id and "method" not in message:
                return dict(message)

    def start(self) -> None:
        assert self.proc.stdin is not None
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.proc.stdin.flush()

    def search(self, query: str) -> dict[str, Any]:
        reply = self.call("tools/call", {"name": "search_docs", "arguments": {"query": query}})
        return dict(json.loads(reply["result"]["content"][0]["text"]))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def memory_figures(corpus: Path, queries: list[str], servers: int = 4) -> dict[str, Any]:
    """RSS/PSS of ``servers`` relays + the service vs one in-process stdio server, each session
    having answered ``queries`` (see module docstring)."""
    from markdown_memory.service import client

    stop_service()
    relays = [Stdio(corpus, dict(os.environ)) for _ in range(servers)]
    try:
        for relay in relays:
            relay.start()
        keyword_only = []
        for relay in relays:
            keyword_only += [relay.search(q)["index_status"].get("keyword_only") for q in queries]
        service_pid = int(client.request("ping", {}, start=False)["pid"])
        relay_mem = [memory(r.proc.pid) for r in relays]
        service_mem = memory(service_pid)
    finally:
        for relay in relays:
            relay.close()
    alone = Stdio(corpus, {**os.environ, "MARKDOWN_MEMORY_SERVICE": "off"})
    try:
        alone.start()
        for q in queries:
            alone.search(q)
        alone_mem = memory(alone.proc.pid)
    finally:
        alone.close()
    total = {k: sum(m[k] for m in relay_mem) + service_mem[k] for k in ("rss_mb", "pss_mb")}
    return {"relay_rss_mb": [round(m["rss_mb"], 1) for m in relay_mem], "relay_pss_mb": [round(m["pss_mb"], 1) for m in relay_mem],
            "service_rss_mb": round(service_mem["rss_mb"], 1), "service_pss_mb": round(service_mem["pss_mb"], 1),
            "shared_total_rss_mb": round(total["rss_mb"], 1), "shared_total_pss_mb": round(total["pss_mb"], 1),
            "one_server_rss_mb": round(alone_mem["rss_mb"], 1), "one_server_pss_mb": round(alone_mem["pss_mb"], 1),
            "ratio_rss": round(total["rss_mb"] / alone_mem["rss_mb"], 2),
            "ratio_pss": round(total["pss_mb"] / max(alone_mem["pss_mb"], 1e-9), 2),
            "searches_per_session": len(queries), "vectors_used": not any(keyword_only)}


def stop_service() -> None:
    """Stop the bench's service (if any) and wait for its socket to go."""
    from markdown_memory.service import client

    with contextlib.suppress(client.ServiceUnavailable, client.ServiceError):
        client.request("stop", {}, start=False, timeout=10)
    deadline = time.monotonic() + 15
    while client.service_address_exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def ensure_index(corpus: Path, db: Path, embedder: str) -> None:
    if db.is_file():
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    print(f"indexing {corpus} into {db} ({embedder}) ...", file=sys.stderr)
    subprocess.run([*script(), "--embedder", embedder, "--db", str(db), "index", str(corpus)], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "MARKDOWN_MEMORY_SERVICE": "off"})


def load_prompts(queries: Path, quiet: Path) -> tuple[list[str], list[str]]:
    docs = [json.loads(line)["query"] for line in queries.read_text(encoding="utf-8").splitlines() if line.strip()]
    docs = [q for q in docs if q.isascii()][:40] or docs[:40]
    calm = [json.loads(line)["prompt"] for line in quiet.read_text(encoding="utf-8").splitlines() if line.strip()]
    return docs, calm


def print_table(results: dict[str, Any]) -> None:
    print(f"\n{'figure':<34}{'quiet':>12}{'loaded':>12}{'target':>10}")
    for name, target in TARGETS.items():
        row = [results[cond][name]["p50_ms"] for cond in ("quiet", "loaded")]
        print(f"{name + ' p50 (ms)':<34}{row[0]:>12.1f}{row[1]:>12.1f}{'<= ' + format(target, '.0f'):>10}")
        cpu = [results[cond][name]["cpu_ms"] for cond in ("quiet", "loaded")]
        print(f"{name + ' client CPU (ms)':<34}{cpu[0]:>12.1f}{cpu[1]:>12.1f}")
    start = [results[cond]["python_start"]["p50_ms"] for cond in ("quiet", "loaded")]
    print(f"{'python -c pass p50 (ms)':<34}{start[0]:>12.1f}{start[1]:>12.1f}{'(floor)':>10}")
    mem = results["memory"]
    print(f"\nfour relays + service: RSS {mem['shared_total_rss_mb']:.0f} MB (relays {mem['relay_rss_mb']}, service "
          f"{mem['service_rss_mb']:.0f}); PSS {mem['shared_total_pss_mb']:.0f} MB")
    print(f"one in-process server: RSS {mem['one_server_rss_mb']:.0f} MB; PSS {mem['one_server_pss_mb']:.0f} MB")
    print(f"ratio: RSS {mem['ratio_rss']}x, PSS {mem['ratio_pss']}x (target <= 1.3x); vectors used: {mem['vectors_used']}")
    print(f"load average at start: {results['loadavg']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--quiet-prompts", type=Path, default=HERE / "eval" / "hook-quiet-prompts.jsonl")
    parser.add_argument("--db", type=Path, default=Path("/tmp/mm-bench-service/index.db"))
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mcp-searches", type=int, default=20)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE / "src"))
    corpus = args.corpus.resolve()
    runtime = Path(tempfile.mkdtemp(prefix="mmb", dir="/tmp"))
    os.environ.update({"MARKDOWN_MEMORY_SERVICE": "auto", "MARKDOWN_MEMORY_RUNTIME_DIR": str(runtime),
                       "MARKDOWN_MEMORY_DB": str(args.db.resolve()), "MARKDOWN_MEMORY_EMBEDDER": args.embedder})
    ensure_index(corpus, args.db, args.embedder)
    docs, calm = load_prompts(args.queries, args.quiet_prompts)
    from markdown_memory.service import client

    results: dict[str, Any] = {"loadavg": os.getloadavg(), "corpus": str(corpus), "embedder": args.embedder}
    try:
        client.request("ping", {})  # the service up before the first measured call
        timed([*script(), "hook"], payload(docs[0], corpus, "bench-warm"))  # its engine and model loaded
        timed([*script(), "search", docs[0], "--docs-dir", str(corpus)])
        results["quiet"] = measure(corpus, docs, calm, args.runs)
        with cpu_hogs(2):
            results["loaded"] = measure(corpus, docs, calm, args.runs)
        results["memory"] = memory_figures(corpus, docs[: args.mcp_searches])
    finally:
        stop_service()
        shutil.rmtree(runtime, ignore_errors=True)
    print_table(results)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
