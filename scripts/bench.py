#!/usr/bin/env python3
"""Benchmark markdown-memory on a docs corpus (default: ../shared/eval-corpus) with one preset.

Prints, from one run: files, sections, passages, vectors embedded (passages given a fresh
vector; ``texts_embedded`` counts the model inputs: packed runs and identical texts embed
once), index wall seconds, vectors/s, peak RSS of the indexing process (MB), no-change re-index (ms, in process, median of
5), one-file-edited re-index (ms, in process), query latency p50/p95 (ms) keyword-only and
hybrid over the dev queries, MCP handshake (ms from process start to the ``initialize``
result, median of 5), and database size (MB). ``--json-out FILE`` writes the same figures.

``mcp_query_p50_ms`` / ``p95``: hybrid ``search_docs`` round trips through the stdio MCP server
(one session, one untimed warm-up call). scripts/bench_reference.py prints the same figures
for the reference implementation and the ratios; README.md, "Performance" holds a run and the
table of measured levers (packing, code heads, batch size, graph optimisation, arena).

Absolute times vary from machine to machine and with load; compare ratios from one run.
Usage: python scripts/bench.py [--corpus DIR] [--queries FILE] [--embedder minilm] [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def _db_size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file() and not p.name.endswith(".lock"))


def index_subprocess(corpus: Path, db: Path, embedder: str) -> tuple[dict, float, float]:
    """Index in a child process; returns (report, wall seconds, peak RSS MB of the child)."""
    env = dict(os.environ, MARKDOWN_MEMORY_DB=str(db))
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "markdown_memory.cli", "--embedder", embedder, "index", str(corpus), "--json"],
        capture_output=True, text=True, env=env, check=True,
    )
    wall = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return json.loads(proc.stdout), wall, peak_kb / 1024


_INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}},
}


def _rpc_line(proc: subprocess.Popen, message: dict) -> dict | None:
    """Send one JSON-RPC message (newline-delimited stdio) and read lines until the reply with
    the same id (notifications and log lines are skipped); None when the server closed stdout."""
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            return None
        if not line.strip().startswith("{"):
            continue
        reply = json.loads(line)
        if reply.get("id") == message.get("id"):
            return reply


def _stop(proc: subprocess.Popen) -> None:
    if proc.stdin:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def mcp_handshake_ms(corpus: Path | None = None, db: Path | None = None, embedder: str = "minilm", runs: int = 5,
                     *, cmd: list[str] | None = None, env: dict[str, str] | None = None) -> float | None:
    """Median ms from spawning the MCP server (default: ours, ``python -m markdown_memory.cli``)
    to its ``initialize`` result; None when the server does not answer with JSON."""
    if cmd is None:
        cmd = [sys.executable, "-m", "markdown_memory.cli"]
        env = dict(os.environ, MARKDOWN_MEMORY_DB=str(db), MARKDOWN_MEMORY_DOCS_DIR=str(corpus),
                   MARKDOWN_MEMORY_EMBEDDER=embedder)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env, text=True)
        reply = _rpc_line(proc, _INITIALIZE)
        elapsed = (time.perf_counter() - started) * 1000
        _stop(proc)
        if reply is None or "result" not in reply:
            return None
        times.append(elapsed)
    return statistics.median(times) if times else None


def mcp_query_latency(queries: list[str], *, cmd: list[str], env: dict[str, str], tool: str = "search_docs",
                      extra_args: dict | None = None) -> dict[str, float] | None:
    """Hybrid query latency through the MCP server: one session, ``initialize``, one untimed
    warm-up call (model load, catch-up), then one timed ``tools/call`` per query.

    Returns ``{"p50": ms, "p95": ms}`` of the round trips, or None when a call fails."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, text=True)
    try:
        if _rpc_line(proc, _INITIALIZE) is None:
            return None
        assert proc.stdin
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.flush()
        lat = []
        for n, query in enumerate([queries[0]] + queries):
            call = {"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
                    "params": {"name": tool, "arguments": {"query": query, **(extra_args or {})}}}
            t = time.perf_counter()
            reply = _rpc_line(proc, call)
            if reply is None or "result" not in reply or reply["result"].get("isError"):
                print(f"MCP {tool} failed: {str(reply)[:300]}", file=sys.stderr)
                return None
            if n:
                lat.append((time.perf_counter() - t) * 1000)
        return {"p50": round(statistics.median(lat), 1), "p95": round(_percentile(lat, 95), 1)}
    finally:
        _stop(proc)


def load_queries(path: Path) -> list[str]:
    """The ``query`` field of each JSON line of ``path``."""
    return [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "embeddinggemma", "none"])
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE.parent / "src"))
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.models import SearchRequest

    work = Path(tempfile.mkdtemp(prefix="mm-bench-"))
    try:
        corpus = work / "corpus"
        shutil.copytree(args.corpus, corpus, symlinks=True)
        db = work / "index.db"
        indexed, wall, peak_mb = index_subprocess(corpus, db, args.embedder)
        results: dict[str, object] = {
            "embedder": args.embedder,
            "cores": os.cpu_count(),
            "files": indexed["scanned"],
            "sections": indexed["sections"],
            "passages": indexed["passages"],
            "vectors_embedded": indexed["vectors_embedded"],
            "vectors_reused": indexed["vectors_reused"],
            "index_seconds": round(wall, 2),
            "vectors_per_second": round(indexed["vectors_embedded"] / wall, 1) if wall else None,
            "peak_rss_mb": round(peak_mb, 1),
        }
        engine = Engine(Settings.load(corpus, db, args.embedder))
        # model inputs: packed runs and identical texts share one embed_key (one model call each)
        results["texts_embedded"] = engine.store.conn.execute(
            "SELECT count(DISTINCT embed_key) FROM passages WHERE has_vector = 1").fetchone()[0]
        engine.load_model()  # model load is not part of a re-index measurement
        noop = []
        for _ in range(5):
            t = time.perf_counter()
            engine.index()
            noop.append((time.perf_counter() - t) * 1000)
        results["noop_reindex_ms"] = round(statistics.median(noop), 1)
        victim = sorted(corpus.rglob("*.md"))[len(list(corpus.rglob("*.md"))) // 2]
        victim.write_text(victim.read_text(encoding="utf-8", errors="replace") + "\n\nAn added closing paragraph.\n",
                          encoding="utf-8")
        t = time.perf_counter()
        engine.index()
        results["one_file_edit_reindex_ms"] = round((time.perf_counter() - t) * 1000, 1)
        queries = load_queries(args.queries)
        keyword = Engine(Settings.load(corpus, db, "none"))
        for label, eng in (("keyword", keyword), ("hybrid", engine)):
            eng.search(SearchRequest(queries[0]))  # warm-up (model session, page cache)
            lat = []
            for q in queries:
                t = time.perf_counter()
                eng.search(SearchRequest(q))
                lat.append((time.perf_counter() - t) * 1000)
            results[f"query_{label}_p50_ms"] = round(statistics.median(lat), 1)
            results[f"query_{label}_p95_ms"] = round(_percentile(lat, 95), 1)
        keyword.close()
        engine.close()
        server_env = dict(os.environ, MARKDOWN_MEMORY_DB=str(db), MARKDOWN_MEMORY_DOCS_DIR=str(corpus),
                          MARKDOWN_MEMORY_EMBEDDER=args.embedder)
        mcp = mcp_query_latency(queries, cmd=[sys.executable, "-m", "markdown_memory.cli"], env=server_env)
        results["mcp_query_p50_ms"] = mcp["p50"] if mcp else None
        results["mcp_query_p95_ms"] = mcp["p95"] if mcp else None
        handshake = mcp_handshake_ms(corpus, db, args.embedder)
        results["mcp_handshake_ms"] = round(handshake, 1) if handshake else None
        results["db_mb"] = round(_db_size(db) / 1e6, 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(results, args.json_out)
    return 0


def report(results: dict[str, object], json_out: Path | None) -> None:
    """Print ``results`` as an aligned two-column table; also write them as JSON to ``json_out``."""
    width = max(len(k) for k in results)
    for key, value in results.items():
        print(f"{key:<{width}}  {value}")
    if json_out:
        json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
